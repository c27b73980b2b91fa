#!/bin/bash
# Faults end in records, not frozen jobs: a hung rank gives a timeout record
# naming the measurement, deadline and ranks not done; a signal gives an
# interrupted end record; everything measured before stays readable.
source "$(dirname "$0")/../lib.sh"
P=$T_ROOT/build/ccprobe
FAST=(-n 3 -w 1 -r 3)

out=$T_TMP/hang.jsonl
start=$(date +%s)
# rank 1 hangs from 64 KiB on; the deadline is 2 s per measurement
timeout 60 mpirun --oversubscribe -np 3 -x CCPROBE_FAULT=hang:1:65536 "$P" "${FAST[@]}" \
	-b 1K -e 1M --timeout 2 -q -o "$out" all_reduce >/dev/null 2>"$T_TMP/err"
rc=$?
took=$(($(date +%s) - start))
t_check "hung rank: exit 4 (timeout), took ${took}s" [ "$rc" -eq 4 ]
t_check "hung rank: measurements before the hang are intact" \
	jq -e -s '[.[] | select(.type == "measurement")] | length == 6 and all(.wrong == 0) and
		(map(.bytes) | max) == 32768' "$out"
t_check "hung rank: timeout record names the measurement, deadline and ranks" \
	jq -e -s '[.[] | select(.type == "timeout")][0] | .collective == "all_reduce" and
		.bytes == 65536 and .deadline_s == 2 and .ranks_known == true and
		(.not_done | map(.rank) | sort) == [0, 1, 2] and (.not_done[0].host | length) > 0' "$out"
t_check "hung rank: the rank that never started the measurement is named" \
	jq -e -s '[.[] | select(.type == "timeout")][0].not_started | map(.rank) == [1]' "$out"
t_check "hung rank: end record says timeout" \
	jq -e -s '.[-1].type == "end" and .[-1].status == "timeout"' "$out"
if grep -q "did not finish within its deadline of 2 s" "$T_TMP/err" &&
	grep -q "never started: rank 1 on " "$T_TMP/err"; then
	t_pass "hung rank: stderr names the deadline and the rank that never started"
else
	t_fail "hung rank: stderr: $(head -c 300 "$T_TMP/err")"
fi

# SIGTERM to the job: an interrupted end record after the finished measurements
out=$T_TMP/sig.jsonl
mpirun --oversubscribe -np 2 "$P" -n 20 -r 1000 -b 1M -e 1M -q -o "$out" all_reduce \
	>/dev/null 2>"$T_TMP/err" &
pid=$!
for _ in $(seq 1 100); do
	[ -s "$out" ] && break
	sleep 0.1
done
sleep 1
kill -TERM $pid
wait $pid
rc=$?
t_check "SIGTERM: job ends (exit $rc is not 0)" [ "$rc" -ne 0 ]
t_check "SIGTERM: header first, interrupted end record last" \
	jq -e -s '.[0].type == "run" and .[-1].type == "end" and .[-1].status == "interrupted" and
		.[-1].signal == "SIGTERM" and (.[-1].during | test("all_reduce"))' "$out"

t_done
