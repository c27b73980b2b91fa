#!/bin/bash
# Every collective over the mpi backend on 2 and 4 local ranks, 8 B to 16 MiB:
# every results line parses, has its fields, and the data checks out.
source "$(dirname "$0")/../lib.sh"
P=$T_ROOT/build/ccprobe
# short timing: these runs check behaviour, not speed
FAST=(-n 3 -w 1 -r 3)

for np in 2 4; do
	out=$T_TMP/np$np.jsonl
	mpirun --oversubscribe -np $np "$P" "${FAST[@]}" -b 8 -e 16M -q -o "$out" \
		>"$T_TMP/stdout" 2>"$T_TMP/stderr"
	rc=$?
	t_check "np=$np: exit 0" [ "$rc" -eq 0 ]
	if jq -e . "$out" >/dev/null 2>&1; then
		t_pass "np=$np: every line is JSON"
	else
		t_fail "np=$np: a line is not JSON"
	fi
	t_check "np=$np: first record is the run header" \
		jq -e -s --argjson np $np '.[0].type == "run" and .[0].world_size == $np and
			.[0].schema == 1 and (.[0].run_id | length) == 16 and
			(.[0].hosts | length) == 1 and .[0].features.mpi == true and
			(.[0].mpi_library | test("Open MPI"))' "$out"
	t_check "np=$np: last record is end, complete" \
		jq -e -s '.[-1].type == "end" and .[-1].status == "complete" and .[-1].elapsed_s > 0' "$out"
	for c in all_reduce all_gather reduce_scatter alltoall broadcast; do
		# 16 MiB is the last size; small sizes that hold no element per rank are not run
		if jq -e -s --arg c "$c" --argjson np $np '
			[.[] | select(.type == "measurement" and .name == $c)] as $m
			| ($m | length) >= 19
			and ($m | map(.bytes) | max) == 16777216
			and all($m[]; .wrong == 0 and .ranks == $np and .busbw_GBps > 0
				and .algbw_GBps > 0 and .time_us.min <= .time_us.median
				and .time_us.median <= .time_us.p99 and .time_us.n == 3
				and .backend == "mpi" and .dtype == "float" and (.slowest.host | length) > 0
				and ((.busbw_GBps / .algbw_GBps) - .busbw_factor | fabs) < 1e-9)' \
			"$out" >/dev/null; then
			t_pass "np=$np: $c swept 8 B..16 MiB, wrong = 0, fields present"
		else
			t_fail "np=$np: $c records incomplete or wrong"
		fi
	done
	t_check "np=$np: busbw factors follow nccl-tests" \
		jq -e -s --argjson n $np '[.[] | select(.type == "measurement")] | all(
			if .name == "all_reduce" then .busbw_factor == (2 * ($n - 1) / $n)
			elif .name == "broadcast" then .busbw_factor == 1
			else .busbw_factor == (($n - 1) / $n) end)' "$out"
done

# other types and operators: exact results everywhere
out=$T_TMP/types.jsonl
mpirun --oversubscribe -np 3 "$P" "${FAST[@]}" -b 4K -e 64K -d float,double,int32 \
	--op sum,prod,min,max -q -o "$out" all_reduce reduce_scatter >/dev/null 2>"$T_TMP/stderr"
t_check "3 ranks, 3 types x 4 ops: exit 0" [ $? -eq 0 ]
t_check "3 ranks, 3 types x 4 ops: 24 series, wrong = 0" \
	jq -e -s '[.[] | select(.type == "measurement")] |
		(map([.name, .dtype, .op]) | unique | length) == 24 and all(.wrong == 0)' "$out"

# --time-per-size: a budget far below one 16 MiB operation leaves the stated minimum
# (1 warm-up, 1 iteration, 3 repetitions) and the records say so; one far above every
# operation (and 0, no budget) keeps -w, -n and -r as given
out=$T_TMP/budget.jsonl
mpirun --oversubscribe -np 2 "$P" -n 20 -w 5 -r 10 -b 8 -e 16M --time-per-size 1e-6 -q \
	-o "$out" all_reduce >/dev/null 2>"$T_TMP/stderr"
t_check "--time-per-size 1e-6: exit 0" [ $? -eq 0 ]
t_check "--time-per-size 1e-6: every size at the minimum counts, data checked, n = reps" \
	jq -e -s '.[0].options.time_per_size_s == 1e-6 and
		([.[] | select(.type == "measurement")] | length == 22 and
		all(.warmup == 1 and .iters == 1 and .reps == 3 and .time_us.n == 3 and .wrong == 0))' "$out"
for tps in 1e5 0; do
	mpirun --oversubscribe -np 2 "$P" -n 4 -w 2 -r 5 -b 8 -e 64K --time-per-size $tps -q \
		-o "$out" all_reduce >/dev/null 2>"$T_TMP/stderr"
	t_check "--time-per-size $tps: the counts asked for" \
		jq -e -s '[.[] | select(.type == "measurement")] | length == 14 and
			all(.warmup == 2 and .iters == 4 and .reps == 5 and .time_us.n == 5)' "$out"
done
# -r below the minimum is kept, not raised
mpirun --oversubscribe -np 2 "$P" -r 2 -b 16M -e 16M --time-per-size 1e-6 -q \
	-o "$out" all_reduce >/dev/null 2>"$T_TMP/stderr"
t_check "--time-per-size with -r 2: 2 reps" \
	jq -e -s '[.[] | select(.type == "measurement")] | length == 1 and .[0].reps == 2' "$out"

# the table on stdout: nccl-tests columns with units
mpirun --oversubscribe -np 2 "$P" "${FAST[@]}" -b 1M -e 1M -o "$T_TMP/t.jsonl" all_reduce \
	>"$T_TMP/stdout" 2>&1
if grep -q 'algbw' "$T_TMP/stdout" && grep -q '(GB/s)' "$T_TMP/stdout" &&
	grep -qE '^ +1048576 +262144 +float +sum' "$T_TMP/stdout" &&
	grep -q "# results: $T_TMP/t.jsonl" "$T_TMP/stdout"; then
	t_pass "table: columns, units, a 1 MiB row, results path"
else
	t_fail "table: $(head -c 400 "$T_TMP/stdout")"
fi

t_done
