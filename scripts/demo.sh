#!/bin/bash
# scripts/demo.sh (make demo): runs ccprobe end to end on 4 local ranks,
# every collective, and summarises the results file.
set -u
cd "$(dirname "$0")/.."
OUT_DIR=results/demo
OUT=$OUT_DIR/results.jsonl
mkdir -p "$OUT_DIR"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp OMPI_MCA_osc=^ucx
mpirun --oversubscribe -np 4 build/ccprobe -b 8 -e 4M -n 5 -r 5 -w 2 -o "$OUT"
rc=$?
echo
echo "demo: results in $OUT ($(wc -l <"$OUT") records; schema in docs/results.md)"
jq -r -s '
	([.[] | select(.type == "measurement")] | group_by(.name)[] | max_by(.busbw_GBps) |
		"demo: \(.name) peak busbw \(.busbw_GBps * 1000 | round / 1000) GB/s at \(.bytes) B, wrong = \(.wrong)"),
	(.[-1] | if .type == "end" then "demo: run \(.status) in \(.elapsed_s | floor) s" else "demo: no end record (the run died)" end)
' "$OUT"
exit $rc
