#!/bin/bash
# ccprobe's command line: help, list, version, and every bad input ends with
# one error line, a usage hint and exit 2, printed once even under mpirun.
source "$(dirname "$0")/../lib.sh"
P=$T_ROOT/build/ccprobe

# expect_error DESC CODE PATTERN ARGS...: exit CODE, stderr has one error line matching PATTERN
expect_error() {
	local desc=$1 code=$2 pat=$3 rc n
	shift 3
	"$P" "$@" >"$T_TMP/out" 2>"$T_TMP/err"
	rc=$?
	n=$(grep -c '^ccprobe: error: ' "$T_TMP/err")
	if [ "$rc" -eq "$code" ] && [ "$n" -eq 1 ] && grep -q -- "$pat" "$T_TMP/err" &&
		grep -q "Try 'ccprobe --help'" "$T_TMP/err" && [ ! -s "$T_TMP/out" ]; then
		t_pass "$desc: exit $code, one line"
	else
		t_fail "$desc: exit $rc (want $code), $n error lines: $(head -c 300 "$T_TMP/err")"
	fi
}

expect_error "unknown option" 2 "unknown option '--bogus'" --bogus
expect_error "bad size suffix" 2 "invalid size '12Q' for -b" -b 12Q
expect_error "negative size" 2 "invalid size '-5' for -e" -e -5
expect_error "min above max" 2 "minimum size 1G (-b) is above maximum size 1M (-e)" -b 1G -e 1M
expect_error "unknown name" 2 "unknown collective or probe 'allreduce'" allreduce
expect_error "unknown backend" 2 "unknown backend 'gloo'" -B gloo
expect_error "unknown datatype" 2 "unknown data type 'bf16'" -d bf16
expect_error "missing value" 2 "option '-n' needs a value" -n
expect_error "zero minimum" 2 "at least 1 byte" -b 0

# under mpirun: the error is printed by rank 0 only, and the job exits 2
mpirun --oversubscribe -np 3 "$P" -b 12Q >"$T_TMP/out" 2>"$T_TMP/err"
rc=$?
n=$(grep -c '^ccprobe: error: ' "$T_TMP/err")
if [ "$rc" -eq 2 ] && [ "$n" -eq 1 ]; then
	t_pass "bad size under mpirun -np 3: exit 2, one error line"
else
	t_fail "bad size under mpirun -np 3: exit $rc, $n error lines"
fi

"$P" --help >"$T_TMP/out" 2>&1
if [ $? -eq 0 ] && grep -q '^usage: ccprobe' "$T_TMP/out" && grep -q 'Exit codes:' "$T_TMP/out" &&
	grep -q 'GB/s = 1e9 bytes/s' "$T_TMP/out" && grep -q -- '--pair-bw-size' "$T_TMP/out"; then
	t_pass "--help: usage, units, exit codes and probe options"
else
	t_fail "--help output: $(head -c 200 "$T_TMP/out")"
fi
"$P" --list >"$T_TMP/out" 2>&1
if [ $? -eq 0 ] && grep -q 'all_reduce' "$T_TMP/out" && grep -q 'reduce_scatter' "$T_TMP/out" &&
	grep -q '^  mpi' "$T_TMP/out" && grep -q 'netpair' "$T_TMP/out"; then
	t_pass "--list: collectives, backends, probes"
else
	t_fail "--list output: $(head -c 200 "$T_TMP/out")"
fi
t_check "--version" bash -c "'$P' --version | grep -q '^ccprobe [0-9]'"
t_check "--help: exit code 6 (nothing measured) is documented" grep -q '6 nothing measured' <("$P" --help)
"$P" --plan 4:8:400 all_reduce netpair >"$T_TMP/out" 2>&1
t_check "--plan: a header names the columns with their units (seconds, nodes, ranks, Gb/s), then one line per name" \
	bash -c "head -1 '$T_TMP/out' | grep -qP '^# name\tphase\tseconds \(s, estimated\)\twhat: on 4 node\(s\) x 8 rank\(s\) per node, 400 Gb/s per node$' &&
		[ \$(grep -vc '^#' '$T_TMP/out') -eq 2 ]"
# sizes for people in binary units: the sweep's peak at 32 KiB, not "32K B"
mpirun --oversubscribe -np 2 "$P" -b 1K -e 32K -f 32 -n 2 -w 1 -r 2 -o "$T_TMP/peak.jsonl" all_reduce >"$T_TMP/out" 2>&1
t_check "the sweep's peak line gives its size in KiB/MiB" grep -qE '^# all_reduce float sum: peak busbw [0-9.]+ GB/s at (1|32) KiB$' "$T_TMP/out"

# an unwritable results path fails before anything is measured: exit 3, nothing on stdout
mpirun --oversubscribe -np 2 "$P" -o /nonexistent-dir/r.jsonl all_reduce >"$T_TMP/out" 2>"$T_TMP/err"
rc=$?
if [ "$rc" -eq 3 ] && grep -q "cannot open results file '/nonexistent-dir/r.jsonl'" "$T_TMP/err" &&
	! grep -q 'all_reduce' "$T_TMP/out"; then
	t_pass "unwritable results path: exit 3 before any measurement"
else
	t_fail "unwritable results path: exit $rc; $(head -c 300 "$T_TMP/err")"
fi

# a plain make on a machine without the build's packages (an empty dpkg database
# stands in for a fresh machine; as a user, so nothing is installed): one line
# naming the packages and scripts/deps.sh, exit 2, nothing built (a top-level
# make: under make check this runs in a sub-make, which skips the check)
if t_is_root && command -v setpriv >/dev/null; then
	(cd "$T_ROOT" && env -u MAKELEVEL -u MAKEFLAGS -u MFLAGS CCDIAG_DPKG_ADMINDIR=/nonexistent setpriv --reuid=65534 --regid=65534 \
		--clear-groups make B="$T_TMP/nobuild" all) >"$T_TMP/out" 2>"$T_TMP/err"
	rc=$?
	if [ "$rc" -eq 2 ] && [ "$(wc -l <"$T_TMP/err")" -eq 1 ] &&
		grep -q 'missing packages: gcc make openmpi-bin libopenmpi-dev libjansson-dev libinih-dev libsqlite3-dev libssl-dev; run scripts/deps.sh as root' "$T_TMP/err" &&
		[ ! -e "$T_TMP/nobuild" ]; then
		t_pass "make on a machine without its packages: one line naming them and scripts/deps.sh"
	else
		t_fail "make without packages: exit $rc; $(head -c 400 "$T_TMP/err")"
	fi
	# make install and make deb also need help2man (the man pages) and dpkg-dev
	(cd "$T_ROOT" && env -u MAKELEVEL -u MAKEFLAGS -u MFLAGS CCDIAG_DPKG_ADMINDIR=/nonexistent setpriv --reuid=65534 --regid=65534 \
		--clear-groups make -n B="$T_TMP/nobuild" install) >"$T_TMP/out" 2>"$T_TMP/err"
	rc=$?
	t_check "make install on a machine without its packages: the line names help2man and dpkg-dev too" \
		bash -c "[ $rc -eq 2 ] && [ \$(wc -l <'$T_TMP/err') -eq 1 ] && grep -q 'libssl-dev help2man dpkg-dev; run scripts/deps.sh as root' '$T_TMP/err'"
else
	t_skip "make without packages: needs root and setpriv (runs as nobody)"
fi

t_done
