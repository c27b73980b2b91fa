#!/bin/bash
# scripts/bench_allreduce.sh: ccprobe's all_reduce time against a bare
# MPI_Allreduce loop timed with MPI_Wtime, 2 local ranks, 1, 4 and 16 MiB.
# Both use the same method (warm-up, barrier, ITERS ops per rep, slowest
# rank, median of REPS) and alternate ROUNDS times so machine noise hits
# both alike. Prints a table of medians and ccprobe's overhead in percent.
set -eu
cd "$(dirname "$0")/.."
ITERS=${ITERS:-20} REPS=${REPS:-5} WARMUP=${WARMUP:-5} ROUNDS=${ROUNDS:-5} NP=${NP:-2}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp OMPI_MCA_osc=^ucx
make -s build/ccprobe build/bare_allreduce >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for round in $(seq 1 "$ROUNDS"); do
	for bytes in 1048576 4194304 16777216; do
		mpirun --oversubscribe -np "$NP" build/bare_allreduce "$bytes" "$ITERS" "$REPS" "$WARMUP" \
			>>"$tmp/bare.txt"
	done
	mpirun --oversubscribe -np "$NP" build/ccprobe -b 1M -e 16M -f 4 -n "$ITERS" -r "$REPS" \
		-w "$WARMUP" -c 0 -q -o "$tmp/cc$round.jsonl" all_reduce
	jq -r 'select(.type == "measurement") | "\(.bytes) \(.time_us.median)"' \
		"$tmp/cc$round.jsonl" >>"$tmp/cc.txt"
	echo "round $round of $ROUNDS done" >&2
done

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }
lowest() { sort -g | head -1; }
printf '%10s %12s %12s %9s   %12s %12s %9s\n' "size(B)" "bare med" "ccprobe med" "diff(%)" "bare min" "ccprobe min" "diff(%)"
for bytes in 1048576 4194304 16777216; do
	b=$(awk -v s="$bytes" '$1 == s {print $2}' "$tmp/bare.txt" | median)
	c=$(awk -v s="$bytes" '$1 == s {print $2}' "$tmp/cc.txt" | median)
	bl=$(awk -v s="$bytes" '$1 == s {print $2}' "$tmp/bare.txt" | lowest)
	cl=$(awk -v s="$bytes" '$1 == s {print $2}' "$tmp/cc.txt" | lowest)
	awk -v s="$bytes" -v b="$b" -v c="$c" -v bl="$bl" -v cl="$cl" 'BEGIN {
		printf "%10d %12.1f %12.1f %+9.1f   %12.1f %12.1f %+9.1f\n", s, b, c, (c - b) / b * 100, bl, cl, (cl - bl) / bl * 100 }'
done
echo "times in us, per operation: each round gives one median of $REPS reps x $ITERS iters ($WARMUP warm-up, $NP ranks);"
echo "'med' is the median over $ROUNDS alternating rounds, 'min' the best round"
