#!/bin/bash
# scripts/bench_compare.sh (make bench-compare): time and peak memory of
#   compare   ccreport compare of three NODES-node clusters (default 1024 nodes x 8
#             GPUs, tests/report/gen_results.c; one with a slower all_reduce, one with
#             a slow GPU) from their summary.json, charts drawn
#   append    ccreport history DB --add: the first and the RUNS-th append of a
#             HIST_NODES-node summary (per-element values of every GPU, NIC and pair)
#   history   ccreport history DB over RUNS runs (default 100), drift judged, charts drawn
# Summaries are judged with the shipped H100 profile (every criterion) and a 7B workload.
# Prints figures; asserts nothing (tests assert behaviour, never speed).
set -eu
cd "$(dirname "$0")/.."
NODES=${NODES:-1024}
HIST_NODES=${HIST_NODES:-$NODES}
RUNS=${RUNS:-100}
make -s build/ccreport build/tests/gen_results >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
P=profiles/h100-sxm-8x-ndr400.ini
W=(-w params=7e9 -w tokens_per_step=65536 -w total_tokens=1e11 -w peak_tflops=989 -w mfu=0.4)

timed() {  # timed NAME CMD...: one row; exit 1 (a failing run, drift) is an answer, not an error
	local name=$1 rc=0
	shift
	/usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || rc=$?
	[ "$rc" -le 1 ] || sed 's/^/# error: /' "$tmp/err" | head -3
	read -r wall user sys kb < <(tail -1 "$tmp/time")
	printf '%-24s %9s %9s %9s %9d\n' "$name" "$wall" "$user" "$sys" $((kb / 1024))
}
summary() {  # summary N NODES FAULT...: results generated, judged, removed
	local n=$1 nodes=$2
	shift 2
	build/tests/gen_results -n "$nodes" -s "$n" "$@" >"$tmp/r.jsonl"
	build/ccreport -q --no-render -p "$P" "${W[@]}" -o "$tmp/s$n" "$tmp/r.jsonl" || true
	rm -f "$tmp/r.jsonl"
}

summary 1 "$NODES"
summary 2 "$NODES" slow=cluster:all_reduce:0.8
summary 3 "$NODES" slow=node7/gpu3:copy:0.1
printf '%-24s %9s %9s %9s %9s\n' case wall_s user_s sys_s peak_MB
echo "# summaries of $NODES nodes: $(du -m "$tmp/s1/summary.json" | cut -f1) MB each"
timed "compare 3 x $NODES nodes" build/ccreport compare -q --price A=2 --price B=1.5 -o "$tmp/cmp" \
	A="$tmp/s1" B="$tmp/s2" C="$tmp/s3"
[ "$HIST_NODES" = "$NODES" ] || summary 1 "$HIST_NODES"
add=(build/ccreport history --add-only --cluster bench --add "$tmp/s1/summary.json" "$tmp/h.db")
timed "append run 1" "${add[@]}"
for _ in $(seq 2 $((RUNS - 1))); do "${add[@]}" >/dev/null 2>&1 || true; done
timed "append run $RUNS" "${add[@]}"
echo "# history database: $RUNS runs of $HIST_NODES nodes, $(du -m "$tmp/h.db" | cut -f1) MB," \
	"$(sqlite3 "$tmp/h.db" 'select count(*) from elements') element rows"
timed "history of $RUNS runs" build/ccreport history -q -o "$tmp/hist" "$tmp/h.db"
echo "(load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; wall time includes waiting for them)"
