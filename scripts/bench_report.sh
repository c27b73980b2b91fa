#!/bin/bash
# scripts/bench_report.sh (make bench-report): ccreport's time and peak memory
# on synthetic results of NODES x 8 GPUs (tests/report/gen_results.c; 1024
# nodes = 1.34 million records: PCIe, NVLink, HBM, IB per rail, counters,
# NCCL all_reduce and the node-pair matrix both ways), judged with the
# h100-sxm-8x-ndr400 profile. Rows:
#   full        the whole file
#   twice       the same file given twice: twice the records, the same elements
#   no-netpair  without the node-pair matrix (its N(N-1)/2 links are most elements)
# Memory follows the elements judged (GPUs, pairs, links), not the records:
# "twice" must not grow. Target: at most 2.8 s per million records (s_per_M, wall
# time on a quiet machine; the load average is printed below the table).
set -eu
cd "$(dirname "$0")/.."
NODES=${NODES:-1024}
make -s build/ccreport build/tests/gen_results >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

build/tests/gen_results -n "$NODES" >"$tmp/full.jsonl"
build/tests/gen_results -n "$NODES" nonetpair >"$tmp/nonet.jsonl"
# a second run of the same size (another run id: the same one twice is refused)
sed '1s/"run_id":"[0-9a-f]*"/"run_id":"0123456789abcdef"/' "$tmp/full.jsonl" >"$tmp/full2.jsonl"
printf '%-11s %9s %8s %9s %9s %9s %9s %9s %s\n' case records MB wall_s s_per_M user_s sys_s peak_MB verdict
run() {  # run NAME FILE...
	local name=$1 recs=0 mb=0 f
	shift
	for f in "$@"; do
		recs=$((recs + $(wc -l <"$f")))
		mb=$((mb + $(stat -c %s "$f") / 1000000))
	done
	/usr/bin/time -f '%e %U %S %M' -o "$tmp/time" \
		build/ccreport -p h100-sxm-8x-ndr400 --no-render -q -o "$tmp/out-$name" "$@" || true
	# GNU time writes "Command exited with non-zero status N" first when ccreport exits non-zero
	read -r wall user sys kb < <(tail -1 "$tmp/time")
	printf '%-11s %9d %8d %9s %9s %9s %9s %9d %s\n' "$name" "$recs" "$mb" "$wall" \
		"$(awk -v w="$wall" -v r="$recs" 'BEGIN { printf "%.2f", w * 1e6 / r }')" "$user" "$sys" \
		$((kb / 1024)) "$(jq -r .verdict "$tmp/out-$name/summary.json" 2>/dev/null || echo "no summary")"
}
run full "$tmp/full.jsonl"
run twice "$tmp/full.jsonl" "$tmp/full2.jsonl"
run no-netpair "$tmp/nonet.jsonl"
echo "(load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; wall time includes waiting for them)"
