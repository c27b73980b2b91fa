#!/bin/bash
# Faults end in records, not frozen jobs: a hung rank gives a timeout record
# naming the measurement, deadline and ranks not done; a signal gives an
# interrupted end record; everything measured before stays readable.
# lane: waiting (tests/run.sh: its time goes mostly to deadlines that run out, not to a CPU)
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
mpirun --oversubscribe -np 2 "$P" --time-per-size 0 -n 20 -r 1000 -b 1M -e 1M -q -o "$out" all_reduce \
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

# a results file that fills up (a 16 KiB tmpfs, in a mount namespace of its own):
# the run stops at once with exit 3 and one line naming the file and errno, the
# file ends at its last complete record, and ccreport calls the run incomplete
if t_is_root && command -v unshare >/dev/null; then
	mnt=$T_TMP/full
	mkdir -p "$mnt" "$T_TMP/fullcopy"
	# every collective, 8 B to 1 MiB: ~100 records, far more than 16 KiB
	unshare --mount --propagation private sh -c '
		mount -t tmpfs -o size=16k tmpfs "$1" || exit 99
		timeout 120 mpirun --oversubscribe -np 2 "$2" -b 8 -e 1M -n 2 -w 1 -r 2 -q -o "$1/r.jsonl"
		rc=$?
		cp "$1/r.jsonl" "$3/"
		exit $rc' sh "$mnt" "$P" "$T_TMP/fullcopy" >"$T_TMP/full.out" 2>"$T_TMP/full.err"
	rc=$?
	f=$T_TMP/fullcopy/r.jsonl
	lines=$(grep -c "cannot write the results file '$mnt/r.jsonl': No space left on device (errno 28); stopping the run" "$T_TMP/full.err")
	if [ "$rc" -eq 99 ]; then
		t_skip "full results file: cannot mount a tmpfs here"
	else
		t_check "full results file: exit 3 (rc $rc), one line naming the file and errno ($lines)" \
			[ "$rc" -eq 3 ] && [ "$lines" -eq 1 ]
		t_check "full results file: cut back to its last complete record, all readable, no end record" \
			bash -c "[ \"\$(tail -c 1 '$f' | od -An -c | tr -d ' ')\" = '\\n' ] &&
				jq -e -s '.[0].type == \"run\" and length > 3 and all(.type != \"end\")' '$f'"
		# judged by the data check alone: emu-1g's busbw bound failed the cut run once on a busy
		# machine (exit 1, fail outranks incomplete), which says nothing about the cut file
		printf '[hardware]\ngpus_per_node = 0\n[criterion allreduce_data]\ncollective = all_reduce\nbackend = mpi\nmetric = wrong\nsize = any\nbound = <= 0\n' \
			>"$T_TMP/data-only.ini"
		"$T_ROOT/build/ccreport" -p "$T_TMP/data-only.ini" -q --no-render -o "$T_TMP/fullrep" "$f" >/dev/null 2>&1
		t_check "full results file: ccreport says incomplete (exit 4, end missing), not malformed" \
			jq -e --argjson rc "$?" '$rc == 4 and .verdict == "incomplete" and .inputs[0].end == "missing"' \
			"$T_TMP/fullrep/summary.json"
	fi
else
	t_skip "full results file: needs root (a tmpfs in a mount namespace)"
fi

t_done
