#!/bin/bash
# scripts/demo.sh (make demo): runs ccprobe end to end. As root, on a 4-host
# emulated cluster (scripts/emucluster) with node2's link degraded to
# 100mbit: the all_reduce sweep on 1, 2 and 4 nodes (--scale) and the netpair
# matrix, then what the diagnosis flagged, then the acceptance report
# (ccreport, profile emu-1g: with the scaling chart and the training estimate
# of a toy workload, a model) with its verdict and the path of index.html. Without root, 4 local ranks and no
# cluster (the report is then incomplete: netpair needs two hosts).
set -u
cd "$(dirname "$0")/.."
OUT_DIR=results/demo
OUT=$OUT_DIR/results.jsonl
mkdir -p "$OUT_DIR"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# short sweeps: the demo shows the flow in about a minute, not a full acceptance run
SWEEP=(-b 8 -e 1M -n 5 -r 5 -w 2)
degraded=""

# the emulated cluster's namespace names are global: wait for a test run using it
if [ "$(id -u)" -eq 0 ] && command -v flock >/dev/null; then
	exec 9>/run/lock/ccdiag-emucluster.lock
	flock -w 1800 9 || echo "demo: another emulated cluster is still up after 30 min" >&2
fi
# storage phase (docs/storage.md): with GlusterFS installed the cluster gets a storage host
STORAGE=() SOUT=$OUT_DIR/storage.jsonl
rm -f "$SOUT"
command -v glusterd >/dev/null && command -v mount.glusterfs >/dev/null && STORAGE=(--storage 1)
if [ "$(id -u)" -eq 0 ] && scripts/emucluster up 4 --rate 1gbit --degrade node2=100mbit "${STORAGE[@]}"; then
	trap 'scripts/emucluster down' EXIT
	degraded=", as expected with node2 degraded"
	echo "demo: 4 emulated hosts (node0..node3), 1gbit links, node2 degraded to 100mbit"
	scripts/emucluster mpirun -np 4 build/ccprobe --scale "${SWEEP[@]}" -o "$OUT" all_reduce netpair
	rc=$?
	if [ ${#STORAGE[@]} -gt 0 ]; then
		echo "demo: storage phase: 4 ranks write, read back (checked) and stat on the emulated GlusterFS volume"
		scripts/emucluster mpirun -np 4 build/ccprobe -q -o "$SOUT" --storage-dir /run/ccdiag-emu/storage \
			--storage-size 8M --storage-reps 2 --storage-files 100 --storage-reads 100 storage
		jq -r 'select(.type == "measurement" and .name == "storage" and .scope == "cluster") |
			"demo: storage \(.test): " + (if .bw_GBps then "\(.bw_GBps * 1000 | round / 1000) GB/s" else
			"\(.ops_per_s | round) ops/s" end) + (if .wrong != null then ", wrong = \(.wrong)" else "" end)' "$SOUT"
	fi
else
	echo "demo: not root (or no network namespaces): running 4 local ranks instead of an emulated cluster"
	export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp OMPI_MCA_osc=^ucx
	mpirun --oversubscribe -np 4 build/ccprobe "${SWEEP[@]}" -o "$OUT" all_reduce netpair
	rc=$?
fi

echo
echo "demo: results in $OUT ($(wc -l <"$OUT") records; schema in docs/results.md)"
jq -r -s '
	(.[0] | "demo: \(.world_size) ranks on \(.nodes) host(s): \([.hosts[].name] | join(", "))"),
	([.[] | select(.type == "measurement" and .kind == "collective" and .name == "all_reduce")] |
		group_by(.nodes)[] | max_by(.busbw_GBps) // empty |
		"demo: all_reduce on \(.nodes) node(s): peak busbw \(.busbw_GBps * 1000 | round / 1000) GB/s at \(.bytes) B, wrong = \(.wrong)"),
	([.[] | select(.type == "diagnosis" and .subject == "node" and .verdict != "ok")][] |
		"demo: netpair: node \(.host) \(.verdict): \(.evidence.summary)"),
	([.[] | select(.type == "diagnosis" and .subject == "link" and
		(.verdict == "bad" or .verdict == "ambiguous"))][] |
		"demo: netpair: link \(.a)-\(.b) \(.verdict)"),
	([.[] | select(.type == "diagnosis" and .subject == "summary")][] |
		"demo: netpair verdict \(.verdict): \(.bad_nodes | length) bad node(s), \(.bad_links | length) bad link(s)" +
		(if .note then "; \(.note)" else "" end)),
	([.[] | select(.type == "skip")][] | "demo: skipped \(.name): \(.reason)"),
	(.[-1] | if .type == "end" then "demo: run \(.status) in \(.elapsed_s | floor) s" else "demo: no end record (the run died)" end)
' "$OUT"
case $rc in
0) echo "demo: ccprobe exit 0" ;;
1) echo "demo: ccprobe exit 1: a measurement failed$degraded" ;;
*) echo "demo: ccprobe exit $rc (see README.md, exit codes)"; exit "$rc" ;;
esac

# the acceptance report of this run: verdict first, then where to read it
echo
echo "demo: ccreport -p emu-1g -o $OUT_DIR/report $OUT"
build/ccreport -p emu-1g -n 6 -o "$OUT_DIR/report" "$OUT" $([ -s "$SOUT" ] && echo "$SOUT")
rrc=$?
case $rrc in
0 | 1 | 4)
	verdict=$(jq -r .verdict "$OUT_DIR/report/summary.json")
	case "$verdict:$degraded" in
	fail:?*) echo "demo: report verdict fail$degraded (names the node and its links above)" ;;
	*) echo "demo: report verdict $verdict" ;;
	esac
	jq -r '(.charts.scaling[]? | "demo: scaling of \(.name) \(.backend): " +
			([.efficiency[] | select(.eff_base != null) | "\(.nodes) nodes \(.eff_base * 100 | round) %"] |
			join(", ")) + " of \(.base_nodes) nodes"),
		(.estimate | select(. != null) | if .made then
			"demo: estimate (a model, not a measurement): toy workload, comm fraction \(.outputs.comm_fraction * 100 | round) %, \(.outputs.days * 24 * 10 | round / 10) hours"
			else "demo: no estimate: \(.reason)" end)' "$OUT_DIR/report/summary.json"
	if [ -f "$OUT_DIR/report/index.html" ]; then
		echo "demo: open $(realpath "$OUT_DIR/report/index.html")"
	fi
	;;
*) echo "demo: ccreport exit $rrc (see ccreport --help)"; exit "$rrc" ;;
esac
