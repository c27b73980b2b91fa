#!/bin/bash
# tests/run.sh: runs every test suite (unit binaries under build/tests and
# tests/integration/test_*.sh) and ends with one line
# "check: N passed, N failed" over all of them. Exit 0 only when none failed.
# Lanes run side by side: the emulated-cluster suites, one at a time; the suites
# that mostly wait for their faults' deadlines ("# lane: waiting"); every other
# suite. Each suite's block is printed when it ends, with its seconds; the
# timeline (build/test-logs/timeline) gives each suite's start, end and CPU
# seconds. CCDIAG_TEST_JOBS=1 runs the lanes one after the other.
# TESTS=pattern limits the suites run (a substring of the suite name; several
# patterns separated by spaces run the suites that match any).
# CCDIAG_TEST_HOG=1 runs them with a CPU hog beside them: one busy loop per
# core at normal priority, each ended after CCDIAG_TEST_HOG_S seconds (3600)
# or when the suites are done; suites that repeat runs under load read it too
# (test_netpair: 5 healthy runs of 4 and of 6 hosts). `make check-loaded`.
set -u
cd "$(dirname "$0")/.." || exit 1

log_dir=build/test-logs
rm -rf "$log_dir"
mkdir -p "$log_dir"
print_lock=$log_dir/.print.lock

# run_suite KIND NAME CMD...: runs one suite into its log, then prints its block
# (failures, counts, seconds) at once, under a lock so two lanes never interleave
# lines, and leaves "passed failed skipped rc" in its .result file for the total.
run_suite() {
	local kind=$1 name=$2 log rc p f s t0 block lines
	shift 2
	local pat hit=0
	for pat in ${TESTS:-""}; do
		case "$name" in *"$pat"*) hit=1 ;; esac
	done
	[ -z "${TESTS:-}" ] || [ "$hit" -eq 1 ] || return 0
	log="$log_dir/$kind-$name.log"
	t0=$SECONDS
	# a lane that yields to the others (LANE_NICE) does so only on a quiet machine, measured at
	# the suite's start (tests/busy.sh): beside another job's busy loops a niced suite gets a
	# tenth of a core and its deadlines run out (test_soak's hung soak once timed out in its
	# warm-up, not in the interval it asserts)
	local nice=() load
	if [ "${LANE_NICE:-0}" != 0 ]; then
		if load=$(tests/busy.sh); then
			echo "$name: $load: not niced" >>"$log_dir/load"
		else
			nice=(nice -n "$LANE_NICE")
		fi
	fi
	if [ -x /usr/bin/time ]; then
		# the CPU seconds of the suite and what it waited for (user sys), for the timeline
		"${nice[@]}" /usr/bin/time -f '%U %S' -o "$log.cpu" "$@" >"$log" 2>&1
	else
		"${nice[@]}" "$@" >"$log" 2>&1
	fi
	rc=$?
	if grep -q '^\[==========\]' "$log"; then
		# cmocka: "[  PASSED  ] N test(s)." and "[  FAILED  ] N test(s), listed below:"
		p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
		f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test(s), listed.*/\1/p' "$log" | tail -1)
		s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
	else
		# shell suites (tests/lib.sh): "SUITE: N passed, N failed, N skipped"
		read -r p f s < <(sed -n 's/^[a-z_0-9]*: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p' "$log" | tail -1)
	fi
	p=${p:-0} f=${f:-0} s=${s:-0}
	block="=== $name ($((SECONDS - t0)) s)"
	lines=$(grep -E '^(FAIL|SKIP) |^\[  FAILED  \] [a-z]|^\[  ERROR   \]' "$log")
	[ -z "$lines" ] || block+=$'\n'$lines
	block+=$'\n'"$name: $p passed, $f failed, $s skipped"
	# a suite that crashed or failed without counting a failure still fails
	if [ "$rc" -ne 0 ] && ! grep -qE '^FAIL |^\[  FAILED  \]' "$log"; then
		f=$((f + 1))
		block+=$'\n'"$name: exited $rc without a counted failure (see $log)"
	fi
	echo "$p $f $s $rc" >"$log_dir/$kind-$name.result"
	# the lanes' timeline, seconds since the start (bash's SECONDS), and the CPU seconds
	# (user, sys) the suite used: where the wall time goes
	printf '%d %d %s %s\n' "$t0" "$SECONDS" "$name" "$(tail -n 1 "$log.cpu" 2>/dev/null)" >>"$log_dir/timeline"
	{ flock 9; printf '%s\n' "$block"; } 9>"$print_lock"
}

hogs=()
if [ "${CCDIAG_TEST_HOG:-0}" = 1 ]; then
	export CCDIAG_TEST_HOG
	for ((i = 0; i < $(nproc); i++)); do
		timeout "${CCDIAG_TEST_HOG_S:-3600}" bash -c 'while :; do :; done' &
		hogs+=($!)
	done
	echo "cpu hog: ${#hogs[@]} busy loop(s), one per core, beside the suites"
fi

# Two lanes side by side (CCDIAG_TEST_JOBS=1: one after the other). The suites
# that build the emulated cluster spend most of their time waiting on shaped
# links and timeouts, so the other suites run beside them. The emulated lane
# takes a host-wide lock: its namespace names are global, so two test runs (or
# a test and make demo) must not overlap.
EMU_LOCK=/run/lock/ccdiag-emucluster.lock
emu_suites=() local_suites=() wait_suites=()
for t in tests/integration/test_*.sh; do
	[ -f "$t" ] || continue
	# a suite that builds the emulated cluster calls t_emu_suite (tests/lib.sh); one that
	# spends most of its time waiting for its faults' deadlines to run out, not on a
	# CPU, says "# lane: waiting" and runs in a third lane beside the other two (on a
	# quiet machine: under the CPU hog the local lane runs it, as before)
	if grep -q '^t_emu_suite ' "$t"; then
		emu_suites+=("$t")
	elif grep -q '^# lane: waiting' "$t" && [ "${CCDIAG_TEST_HOG:-0}" != 1 ]; then
		wait_suites+=("$t")
	else
		local_suites+=("$t")
	fi
done

# local_lane: first builds what its suites need (CCDIAG_TEST_BUILD, a command: make
# check's unit binaries, built beside the emulated lane's first suite; counted as the
# suite test-bins whatever TESTS says, so a failed build is a failed suite), then runs
# the unit binaries and the other suites
local_lane() {
	local t
	[ -z "${CCDIAG_TEST_BUILD:-}" ] || TESTS="" run_suite build test-bins bash -c "$CCDIAG_TEST_BUILD"
	for t in build/tests/test_*; do
		[ -x "$t" ] || continue
		run_suite unit "$(basename "$t")" "$t"
	done
	run_scripts "${local_suites[@]}"
}

# run_scripts SUITE...: the shell suites given, one after the other
run_scripts() {
	local t
	for t; do
		run_suite integration "$(basename "$t" .sh)" bash "$t"
	done
}

emu_lane() {
	local t
	for t in "${emu_suites[@]}"; do
		if command -v flock >/dev/null && [ -w /run/lock ]; then
			run_suite integration "$(basename "$t" .sh)" flock -w 1800 "$EMU_LOCK" bash "$t"
		else
			run_suite integration "$(basename "$t" .sh)" bash "$t"
		fi
	done
}

# The local and waiting lanes' suites run at a lower priority (nice 10, CCDIAG_TEST_LOCAL_NICE)
# on a quiet machine: the emulated lane is the longer one, and its suites wait on shaped links,
# ping-pongs and deadlines, so it must get a core the moment it wants one; the local
# suites fill the rest. On a busy machine (measured at each suite's start, tests/busy.sh; the
# CPU hog is one) a suite keeps the normal priority: a niced suite beside busy loops would be
# starved far beyond what another job on a node does.
if [ "${CCDIAG_TEST_HOG:-0}" = 1 ]; then
	LOCAL_NICE=${CCDIAG_TEST_LOCAL_NICE:-0}
else
	LOCAL_NICE=${CCDIAG_TEST_LOCAL_NICE:-10}
fi

lane_pid= wait_pid=
trap '[ -n "$lane_pid" ] && kill "$lane_pid" 2>/dev/null; [ -n "$wait_pid" ] && kill "$wait_pid" 2>/dev/null; [ ${#hogs[@]} -eq 0 ] || kill "${hogs[@]}" 2>/dev/null' EXIT
if [ "${CCDIAG_TEST_JOBS:-2}" -gt 1 ]; then
	(
		LANE_NICE=$LOCAL_NICE
		local_lane
	) &
	lane_pid=$!
	if [ ${#wait_suites[@]} -gt 0 ]; then
		(
			LANE_NICE=$LOCAL_NICE
			# after the unit binaries' build (the local lane's first suite): they may need it
			while [ ! -e "$log_dir/build-test-bins.result" ] && [ -n "${CCDIAG_TEST_BUILD:-}" ] &&
				kill -0 "$lane_pid" 2>/dev/null; do
				sleep 1
			done
			run_scripts "${wait_suites[@]}"
		) &
		wait_pid=$!
	fi
	emu_lane
	wait "$lane_pid"
	lane_pid=
	[ -z "$wait_pid" ] || wait "$wait_pid"
	wait_pid=
else
	local_lane
	run_scripts "${wait_suites[@]}"
	emu_lane
fi

passed=0 failed=0 skipped=0 bad_suites=()
for r in "$log_dir"/*.result; do
	[ -f "$r" ] || continue
	read -r p f s rc <"$r"
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	name=$(basename "$r" .result)
	[ "$rc" -eq 0 ] || bad_suites+=("${name#*-}")
done
[ ${#bad_suites[@]} -eq 0 ] || echo "failing suites: ${bad_suites[*]} (logs in $log_dir)"
[ "$skipped" -eq 0 ] || echo "($skipped skipped)"
echo "check: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ ${#bad_suites[@]} -eq 0 ]
