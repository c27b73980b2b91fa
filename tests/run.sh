#!/bin/bash
# tests/run.sh: runs every test suite (unit binaries under build/tests, then
# tests/integration/test_*.sh) and ends with one line
# "check: N passed, N failed" over all of them. Exit 0 only when none failed.
# TESTS=pattern limits the suites run (a substring of the suite name; several
# patterns separated by spaces run the suites that match any).
# CCDIAG_TEST_HOG=1 runs them with a CPU hog beside them: one busy loop per
# core at normal priority, each ended after CCDIAG_TEST_HOG_S seconds (3600)
# or when the suites are done; suites that repeat runs under load read it too
# (test_netpair: 5 healthy runs of 4 and of 6 hosts). `make check-loaded`.
set -u
cd "$(dirname "$0")/.." || exit 1

passed=0
failed=0
skipped=0
bad_suites=()
log_dir=build/test-logs
rm -rf "$log_dir"
mkdir -p "$log_dir"

count() {  # count SUITE LOG: adds the suite's counts from its output
	local suite=$1 log=$2 p f s
	if grep -q '^\[==========\]' "$log"; then
		# cmocka: "[  PASSED  ] N test(s)." and "[  FAILED  ] N test(s), listed below:"
		p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
		f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test(s), listed.*/\1/p' "$log" | tail -1)
		s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
	else
		# shell suites (tests/lib.sh): "SUITE: N passed, N failed, N skipped"
		read -r p f s < <(sed -n 's/^[a-z_0-9]*: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p' "$log" | tail -1)
	fi
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	skipped=$((skipped + ${s:-0}))
	printf '%s\n' "$suite: ${p:-0} passed, ${f:-0} failed, ${s:-0} skipped"
}

run_suite() {  # run_suite KIND NAME CMD...
	local kind=$1 name=$2 log rc
	shift 2
	local pat hit=0
	for pat in ${TESTS:-""}; do
		case "$name" in *"$pat"*) hit=1 ;; esac
	done
	[ -z "${TESTS:-}" ] || [ "$hit" -eq 1 ] || return
	log="$log_dir/$kind-$name.log"
	echo "=== $name"
	"$@" >"$log" 2>&1
	rc=$?
	grep -E '^(FAIL|SKIP) |^\[  FAILED  \] [a-z]|^\[  ERROR   \]' "$log"
	count "$name" "$log"
	# a suite that crashed or failed without counting a failure still fails
	if [ "$rc" -ne 0 ]; then
		bad_suites+=("$name")
		if ! grep -qE '^FAIL |^\[  FAILED  \]' "$log"; then
			failed=$((failed + 1))
			echo "$name: exited $rc without a counted failure (see $log)"
		fi
	fi
}

hogs=()
if [ "${CCDIAG_TEST_HOG:-0}" = 1 ]; then
	export CCDIAG_TEST_HOG
	for ((i = 0; i < $(nproc); i++)); do
		timeout "${CCDIAG_TEST_HOG_S:-3600}" bash -c 'while :; do :; done' &
		hogs+=($!)
	done
	trap 'kill "${hogs[@]}" 2>/dev/null' EXIT
	echo "cpu hog: ${#hogs[@]} busy loop(s), one per core, beside the suites"
fi

for t in build/tests/test_*; do
	[ -x "$t" ] || continue
	run_suite unit "$(basename "$t")" "$t"
done
# Suites that build the emulated cluster take a host-wide lock: its namespace
# names are global, so two test runs (or a test and make demo) must not overlap.
EMU_LOCK=/run/lock/ccdiag-emucluster.lock
for t in tests/integration/test_*.sh; do
	[ -f "$t" ] || continue
	if grep -q 'emucluster' "$t" && command -v flock >/dev/null && [ -w /run/lock ]; then
		run_suite integration "$(basename "$t" .sh)" flock -w 1800 "$EMU_LOCK" bash "$t"
	else
		run_suite integration "$(basename "$t" .sh)" bash "$t"
	fi
done

[ ${#bad_suites[@]} -eq 0 ] || echo "failing suites: ${bad_suites[*]} (logs in $log_dir)"
[ "$skipped" -eq 0 ] || echo "($skipped skipped)"
echo "check: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ ${#bad_suites[@]} -eq 0 ]
