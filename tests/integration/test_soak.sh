#!/bin/bash
# tests/integration/test_soak.sh: ccprobe --soak on this host: what cannot soak is
# refused, a hung interval ends in a timeout record naming the rank and host, and records
# already measured survive a kill. The emulated cluster's soaks are in test_soak_emu.sh.
# ~10 s.
# lane: waiting (tests/run.sh: its time goes mostly to deadlines that run out, not to a CPU)
source "$(dirname "$0")/../lib.sh"
P=$T_ROOT/build/ccprobe
R=$T_ROOT/build/ccreport
D=$T_ROOT/build/ccdiag
for b in "$P" "$R" "$D"; do [ -x "$b" ] || { t_fail "no $b (make)"; t_done; exit; }; done

# ---- on this host
"$P" --soak 10 pcie >"$T_TMP/u.out" 2>"$T_TMP/u.err"
rc=$?
t_check "--soak of a probe that cannot soak: exit 2, naming what can" \
	bash -c "[ $rc -eq 2 ] && grep -q \"probe 'pcie' cannot soak (--soak: the collectives, netpair)\" '$T_TMP/u.err'"
"$P" --soak 10 --scale all_reduce >/dev/null 2>"$T_TMP/u.err"
t_check "--soak with --scale: exit 2" bash -c "[ $? -eq 2 ] && grep -q 'cannot be combined' '$T_TMP/u.err'"
"$P" --soak 1 --soak-interval 2 all_reduce >/dev/null 2>"$T_TMP/u.err"
t_check "--soak-interval longer than the soak: exit 2" bash -c "[ $? -eq 2 ] && grep -q 'longer than the --soak' '$T_TMP/u.err'"

# a rank that hangs before its first interval: the watchdog's timeout names it and its host.
# The deadline (--timeout) also bounds the backend's start and the warm-up before it: 10 s,
# so that only the hang can run it out on a busy machine (3 s missed the interval's record once)
f=$T_TMP/hang.jsonl
CCPROBE_FAULT=hang:1 mpirun --oversubscribe -np 2 -x CCPROBE_FAULT "$P" -q --soak 20 --soak-interval 0.2 \
	-e 64K --timeout 10 -o "$f" all_reduce >"$f.log" 2>&1
rc=$?
t_check "hung soak: exit 4, a timeout record for the soak's interval naming rank 1 on $(hostname) as never started" \
	jq -e -s --arg h "$(hostname)" --argjson rc "$rc" '$rc == 4 and ([.[] | select(.type == "timeout")] | length == 1) and
		(.[] | select(.type == "timeout") | (.name | test("^soak all_reduce float sum 65536 B interval 0$")) and
			.kind == "soak" and .not_started == [{"rank": 1, "host": $h}])' "$f"
jq -e -s 'map(select(.type == "timeout")) | length == 1' "$f" >/dev/null 2>&1 || {
	t_load
	echo "  exit $rc; $T_LOAD; records: $(jq -c 'select(.type != "measurement")' "$f" 2>&1 | head -c 1200)"
	tail -n 8 "$f.log" | sed 's/^/  /'
}

# a collective soaks 3 intervals at least (the fewest ccreport judges), even when the
# duration holds one: a loaded host once ended 3 s of 0.25 s intervals after 2
f=$T_TMP/least.jsonl
mpirun --oversubscribe -np 2 "$P" -q --soak 0.3 --soak-interval 0.25 -e 64K -o "$f" all_reduce >"$f.log" 2>&1
rc=$?
t_check "--soak 0.3 of 0.25 s intervals: exit 0, 3 intervals, each checked" \
	jq -e -s --argjson rc "$rc" '$rc == 0 and ([.[] | select(.kind == "soak")] | length == 3 and
		all(.wrong == 0 and .check_iters == 1) and map(.interval) == [0, 1, 2])' "$f"

# records stream as each interval ends: a job killed mid-soak keeps them
f=$T_TMP/kill.jsonl
mpirun --oversubscribe -np 2 "$P" -q --soak 60 --soak-interval 0.2 -e 64K -o "$f" all_reduce >"$f.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
	n=$(grep -c '"kind":"soak"' "$f" 2>/dev/null)
	[ "${n:-0}" -ge 3 ] && break
	sleep 0.2
done
kill -TERM "$pid"
wait "$pid"
t_check "killed mid-soak: the intervals measured are in the file, checked, then the interrupted end" \
	jq -e -s '([.[] | select(.kind == "soak")] | length >= 3 and all(.wrong == 0 and .check_iters == 1 and .ops >= 1 and
			.time_s > 0 and .busbw_GBps >= 0) and (map(.interval) == [range(length)])) and
		.[-1].type == "end" and .[-1].status == "interrupted" and (.[-1].during | test("^soak all_reduce"))' "$f"

t_done
