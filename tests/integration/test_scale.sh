#!/bin/bash
# ccprobe --scale: the collective sweep on the first 1, 2, 4 ... N nodes in one
# job, with a Hockney fit per series. Local ranks (one node: only nodes = 1),
# then the emulated cluster (scripts/emucluster, needs root): 4 hosts with 1
# and 2 ranks each, 3 hosts (N not a power of two), and a rank that hangs
# while the ranks of the nodes left out wait: only members are named.
source "$(dirname "$0")/../lib.sh"

EMU=$T_ROOT/scripts/emucluster
P=$T_ROOT/build/ccprobe
FAST=(-n 3 -w 1 -r 3 -b 8 -e 1M -q)

# nodes FILE COLL: the node counts of COLL's collective records, e.g. [1,2,4]
nodes() {
	jq -c -s --arg c "$2" '[.[] | select(.type == "measurement" and .kind == "collective" and
		.name == $c) | .nodes] | unique' "$1"
}

# check_run FILE DESC NODES_JSON RANKS_PER_NODE COLL...: the records of a --scale run
check_run() {
	local f=$1 desc=$2 want=$3 ppn=$4 c got
	shift 4
	for c in "$@"; do
		got=$(nodes "$f" "$c")
		t_check "$desc: $c records for nodes $want (got $got)" [ "$got" = "$want" ]
		# up to the largest size at every node count, data checked, ranks = nodes x ranks per node
		t_check "$desc: $c records carry scale, ranks, nodes; wrong == 0" \
			jq -e -s --arg c "$c" --argjson ppn "$ppn" '
			[.[] | select(.type == "measurement" and .kind == "collective" and .name == $c)]
			| length > 0 and all(.scale == true and .wrong == 0 and .ranks == .nodes * $ppn
				and (.slowest.host | test("^(node[0-9]+|.+)$")))
			and (group_by(.nodes) | all(map(.bytes) | max == 1048576))' "$f"
		t_check "$desc: $c has one Hockney fit per node count, alpha and beta or a reason" \
			jq -e -s --arg c "$c" --argjson want "$want" '
			[.[] | select(.type == "measurement" and .kind == "fit" and .name == $c)] as $f
			| ($f | map(.nodes)) == $want and all($f[]; .model == "hockney" and .scale == true
				and .n >= 3 and .min_bytes >= 8 and .max_bytes == 1048576
				and ((.alpha_us | type == "number") and .beta_GBps > 0 and .rel_rms >= 0
					and .r2 <= 1 or (.alpha_us == null and (.reason | length) > 0)))' "$f"
	done
}

# ---------------------------------------------------------------- local
out=$T_TMP/local.jsonl
mpirun --oversubscribe -np 4 "$P" --scale "${FAST[@]}" -o "$out" all_reduce all_gather \
	>"$T_TMP/local.log" 2>&1
rc=$?
t_check "4 local ranks: exit 0 (rc=$rc)" [ "$rc" -eq 0 ]
check_run "$out" "4 local ranks" '[1]' 4 all_reduce all_gather
t_check "4 local ranks: ends complete; the header says --scale" \
	jq -e -s '.[-1].status == "complete" and .[0].options.scale == true' "$out"

# without --scale nothing changes: no scale field, no fit records
out=$T_TMP/plain.jsonl
mpirun --oversubscribe -np 2 "$P" "${FAST[@]}" -o "$out" all_reduce >/dev/null 2>&1
t_check "without --scale: no scale field and no fit record" jq -e -s '
	[.[] | select(.type == "measurement")] | length > 0 and
	all(.kind == "collective" and has("scale") == false)' "$out"

# ---------------------------------------------------------------- emulated
t_emu_suite "--scale on an emulated cluster (needs root for network namespaces)"

if "$EMU" up 4 --rate 1gbit >"$T_TMP/up.log" 2>&1; then
	out=$T_TMP/emu4.jsonl
	"$EMU" mpirun -np 4 "$P" --scale "${FAST[@]}" -o "$out" all_reduce alltoall \
		>"$T_TMP/emu4.log" 2>&1
	rc=$?
	t_check "4 hosts x 1 rank: exit 0 (rc=$rc)" [ "$rc" -eq 0 ]
	check_run "$out" "4 hosts x 1 rank" '[1,2,4]' 1 all_reduce alltoall
	t_check "4 hosts x 1 rank: at 2 nodes only node0 and node1 are the slowest" \
		jq -e -s '[.[] | select(.kind == "collective" and .nodes == 2) | .slowest.host]
			| all(. == "node0" or . == "node1")' "$out"
	jq -r -s '.[] | select(.kind == "fit" and .name == "all_reduce") |
		"   all_reduce on \(.nodes) node(s): alpha \(.alpha_us) us, beta \(.beta_GBps) GB/s, rel. RMS \(.rel_rms)"' \
		"$out"
	jq -r -s '.[] | select(.kind == "collective" and .name == "all_reduce" and .bytes == 1048576) |
		"   all_reduce 1 MiB on \(.nodes) node(s): busbw \(.busbw_GBps) GB/s"' "$out"

	out=$T_TMP/emu4x2.jsonl
	"$EMU" mpirun --ppn 2 -np 8 "$P" --scale "${FAST[@]}" -o "$out" all_reduce \
		>"$T_TMP/emu4x2.log" 2>&1
	rc=$?
	t_check "4 hosts x 2 ranks: exit 0 (rc=$rc)" [ "$rc" -eq 0 ]
	check_run "$out" "4 hosts x 2 ranks" '[1,2,4]' 2 all_reduce
else
	t_fail "emucluster up 4: $(tail -3 "$T_TMP/up.log")"
fi

if "$EMU" up 3 --rate 1gbit >"$T_TMP/up.log" 2>&1; then
	out=$T_TMP/emu3.jsonl
	"$EMU" mpirun -np 3 "$P" --scale "${FAST[@]}" -o "$out" all_reduce >"$T_TMP/emu3.log" 2>&1
	rc=$?
	t_check "3 hosts: exit 0 (rc=$rc)" [ "$rc" -eq 0 ]
	check_run "$out" "3 hosts" '[1,2,3]' 1 all_reduce

	# rank 1 hangs from 64 KiB on: it takes part from 2 nodes on; node2's rank
	# waits at the barrier meanwhile and must not be named. (odls_base_sigkill_timeout 0: the
	# timeout record is written before the exit 4; mpirun need not wait ~4 s to kill the hung rank)
	out=$T_TMP/hang.jsonl
	CCPROBE_FAULT=hang:1:65536 timeout 120 "$EMU" mpirun --mca odls_base_sigkill_timeout 0 -np 3 -x CCPROBE_FAULT "$P" --scale \
		"${FAST[@]}" --timeout 3 -o "$out" all_reduce >"$T_TMP/hang.log" 2>&1
	rc=$?
	t_check "hang under --scale: exit 4 (rc=$rc)" [ "$rc" -eq 4 ]
	t_check "hang under --scale: 1-node records complete, 2-node ones up to 32 KiB" \
		jq -e -s '[.[] | select(.kind == "collective")] as $m
			| ($m | map(select(.nodes == 1)) | length) == 18
			and ($m | map(select(.nodes == 2)) | map(.bytes) | max) == 32768
			and ($m | map(select(.nodes == 3)) | length) == 0' "$out"
	t_check "hang under --scale: timeout names ranks 0 and 1 not done, 1 never started, not rank 2" \
		jq -e -s '[.[] | select(.type == "timeout")][0] | .bytes == 65536 and
			(.not_done | map(.rank) | sort) == [0, 1] and
			(.not_started | map(.rank)) == [1] and .not_started[0].host == "node1"' "$out"
else
	t_fail "emucluster up 3: $(tail -3 "$T_TMP/up.log")"
fi

"$EMU" down >/dev/null 2>&1
t_done
