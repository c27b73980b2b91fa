#!/bin/bash
# scripts/demo.sh (make demo): a whole acceptance run through ccdiag
# (docs/ccdiag.md). As root, on a 4-host emulated cluster (scripts/emucluster,
# built and removed by ccdiag) with node2's link degraded to 100mbit: the plan
# of profile emu-1g with its estimate, the netpair phase, the all_reduce phase
# on 1, 2 and 4 nodes (--scale, the profile's scaling criterion), the storage
# phase on an emulated GlusterFS volume when GlusterFS is installed, the report
# (ccreport: scaling chart, the training estimate of a toy workload, a model,
# beside the training steps its train phases measured: ccprobe trainstep and
# PyTorch DDP when python3-torch is installed) with its verdict, and the node
# to drain. Without root, this host alone (the
# report is then incomplete: netpair needs two hosts).
set -u
cd "$(dirname "$0")/.."
OUT_DIR=results/demo
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# the demo shows the flow in about a minute: 1 s per size, not an acceptance run's 2
RUN=(-p emu-1g -o "$OUT_DIR" --time-per-size 1 --drain-list "$OUT_DIR/drain.txt")

if [ "$(id -u)" -eq 0 ] && command -v flock >/dev/null; then
	# the emulated cluster's namespace names are global: wait for a test run using it
	exec 9>/run/lock/ccdiag-emucluster.lock
	flock -w 1800 9 || echo "demo: another emulated cluster is still up after 30 min" >&2
	# the storage phase (docs/storage.md) when GlusterFS is installed: a storage host,
	# and a small checkpoint (8 MiB per rank) so it takes seconds
	STORAGE=()
	command -v glusterd >/dev/null && command -v mount.glusterfs >/dev/null &&
		STORAGE=(--storage 1 -- --storage-size 8M --storage-reps 2 --storage-files 100 --storage-reads 100)
	echo "demo: ccdiag run ${RUN[*]} --emulated 4 --degrade node2=100mbit ${STORAGE[*]}"
	build/ccdiag run "${RUN[@]}" --emulated 4 --degrade node2=100mbit "${STORAGE[@]}"
	rc=$?
else
	echo "demo: not root (no network namespaces): ccdiag on this host alone"
	export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp OMPI_MCA_osc=^ucx
	build/ccdiag run "${RUN[@]}"
	rc=$?
fi

echo
case $rc in
0 | 1 | 4)
	jq -r '"demo: report verdict \(.verdict)" +
			(if .verdict == "fail" then " (node2 is degraded on purpose; named above)" else "" end),
		(.charts.scaling[]? | "demo: scaling of \(.name) \(.backend): " +
			([.efficiency[] | select(.eff_base != null) | "\(.nodes) nodes \(.eff_base * 100 | round) %"] |
			join(", ")) + " of \(.base_nodes) nodes"),
		(.estimate | select(. != null) | if .made then
			"demo: estimate (a model, not a measurement): toy workload, comm fraction \(.outputs.comm_fraction * 100 | round) %, \(.outputs.days * 24 * 10 | round / 10) hours"
			else "demo: no estimate: \(.reason)" end),
		(.estimate.measured_steps[]? | if .made then
			"demo: \(.source) measured \(.measured.step_s * 1000 | round) ms a step (cv \(.measured.step_cv * 100 | round) %), the model on its shape \(.estimate.step_s * 1000 | round) ms (\(if .error_pct > 0 then "+" else "" end)\(.error_pct | round) %)" +
				(if .waits_for then "; the step waits for \(.waits_for.host) (\(if .waits_for.cause == "network" then "its links" else "its compute" end))" else "" end)
			else "demo: \(.source): \(.reason)" end)' "$OUT_DIR/report/summary.json"
	[ -s "$OUT_DIR/drain.txt" ] && echo "demo: to drain (xargs -L1 scontrol update < $OUT_DIR/drain.txt):" &&
		sed 's/^/demo:   /' "$OUT_DIR/drain.txt"
	echo "demo: results in $OUT_DIR/phase-*.jsonl, launcher output in $OUT_DIR/phase-*.log"
	[ -f "$OUT_DIR/report/index.html" ] && echo "demo: open $(realpath "$OUT_DIR/report/index.html")"
	exit 0
	;;
*) echo "demo: ccdiag exit $rc (docs/ccdiag.md)"; exit "$rc" ;;
esac
