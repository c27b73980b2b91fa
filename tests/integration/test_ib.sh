#!/bin/bash
# tests/integration/test_ib.sh: the ib probe where there is no RDMA hardware
# (this machine, CI): without devices every rank agrees on one skip record
# "skipped: no RDMA devices" after the per-host inventory, and the run ends
# complete with exit 0; a build without verbs (make USE_VERBS=no) says "not
# built"; bad --ib-* values are usage errors; a rank that hangs in the
# probe's discovery is named by the watchdog's timeout record. Measurements
# on real devices: tests/rdma/run.sh.
source "$(dirname "$0")/../lib.sh"
P=$T_ROOT/build/ccprobe
NV=$T_ROOT/build-noverbs/ccprobe

if [ ! -x "$P" ] || ! command -v jq >/dev/null; then
	t_fail "needs build/ccprobe and jq"
	t_done
	exit
fi
has_devices() { [ -n "$(ls -A /sys/class/infiniband 2>/dev/null)" ]; }
verbs_built() { "$P" --list | grep -E '^  ib ' | grep -vq 'not built'; }

# --- no devices: a skip, the inventory, a normal end
if has_devices; then
	t_skip "no-device cases: this machine has RDMA devices (tests/rdma/run.sh measures them)"
elif ! verbs_built; then
	t_skip "no-device cases: build/ccprobe was built without verbs"
else
	out=$T_TMP/nodev.jsonl
	mpirun --oversubscribe -np 3 "$P" -q -o "$out" ib >/dev/null 2>"$T_TMP/err"
	rc=$?
	t_check "no devices: exit 0 (rc $rc)" [ "$rc" -eq 0 ]
	t_check "no devices: one skip record 'skipped: no RDMA devices'" \
		jq -e -s '[.[] | select(.type == "skip")] | length == 1 and
			(.[0].name == "ib") and (.[0].reason | startswith("skipped: no RDMA devices"))' "$out"
	t_check "no devices: an rdma inventory per host with no devices and the reason" \
		jq -e -s '[.[] | select(.type == "inventory")] | length == 1 and .[0].kind == "rdma" and
			.[0].devices == [] and .[0].rails == [] and (.[0].host | length) > 0 and
			(.[0].reason | startswith("no RDMA devices")) and (.[0].versions | type) == "object"' "$out"
	t_check "no devices: nothing measured, no error, end complete" \
		jq -e -s '([.[] | select(.type == "measurement" or .type == "error")] | length) == 0 and
			.[-1].type == "end" and .[-1].status == "complete" and .[-1].exit_code == 0' "$out"
	t_check "no devices: the header says verbs were built in" \
		jq -e -s '.[0].type == "run" and .[0].features.verbs == true' "$out"
	# one rank, and the probe beside a collective: the run goes on after the skip
	out=$T_TMP/nodev1.jsonl
	mpirun --oversubscribe -np 1 "$P" -q -o "$out" -b 8 -e 64 -n 2 -r 2 ib all_reduce \
		>/dev/null 2>&1
	rc=$?
	t_check "no devices, one rank, then all_reduce: exit 0 and the collective measured" \
		jq -e -s --argjson rc "$rc" '$rc == 0 and
			([.[] | select(.type == "skip" and .name == "ib")] | length) == 1 and
			([.[] | select(.type == "measurement" and .name == "all_reduce")] | length) == 4' "$out"
fi

# --- a rank that hangs in discovery (a wedged driver) is named
if has_devices || ! verbs_built; then
	t_skip "hang in discovery: needs a verbs build on a machine without devices"
else
	out=$T_TMP/hang.jsonl
	timeout 60 mpirun --oversubscribe -np 3 -x CCPROBE_FAULT=hang:1 "$P" --timeout 2 -q \
		-o "$out" ib >/dev/null 2>"$T_TMP/err"
	rc=$?
	t_check "hang in discovery: exit 4 (rc $rc)" [ "$rc" -eq 4 ]
	t_check "hang in discovery: timeout record names the step and rank 1 as never started" \
		jq -e -s '[.[] | select(.type == "timeout")][0] | .name == "ib discovery" and
			.deadline_s == 2 and (.not_started | map(.rank)) == [1] and
			(.not_started[0].host | length) > 0' "$out"
	t_check "hang in discovery: end record says timeout" \
		jq -e -s '.[-1].type == "end" and .[-1].status == "timeout"' "$out"
fi

# --- bad parameters are usage errors, before MPI starts
usage() {
	local desc=$1 pat=$2 rc
	shift 2
	"$P" "$@" ib >"$T_TMP/out" 2>"$T_TMP/err"
	rc=$?
	if [ "$rc" -eq 2 ] && grep -q -- "$pat" "$T_TMP/err" &&
		[ "$(grep -c '^ccprobe: error: ' "$T_TMP/err")" -eq 1 ]; then
		t_pass "usage: $desc"
	else
		t_fail "usage: $desc: exit $rc, $(head -c 200 "$T_TMP/err")"
	fi
}
usage "--ib-mem must be host or gpu" "--ib-mem takes host or gpu" --ib-mem disk
usage "--ib-lat-sizes 0" "--ib-lat-sizes takes" --ib-lat-sizes 0
usage "--ib-lat-sizes junk" "--ib-lat-sizes takes" --ib-lat-sizes 2,x
usage "--ib-gid-index 300" "--ib-gid-index takes auto or 0 to 255" --ib-gid-index 300
usage "--ib-size 0" "--ib-size must be" --ib-size 0
usage "--ib-depth 0" "--ib-depth must be" --ib-depth 0
usage "--ib-retry 8" "--ib-retry" --ib-retry 8
"$P" --help | grep -q -- '--ib-lat-sizes' && t_pass "--help lists the --ib-* options" ||
	t_fail "--help lacks --ib-lat-sizes"

# --- built without verbs: the probe exists and says why it cannot run
if ! make -C "$T_ROOT" --no-print-directory -j2 USE_VERBS=no B=build-noverbs \
	build-noverbs/ccprobe >"$T_TMP/make.log" 2>&1; then
	t_fail "make USE_VERBS=no: $(tail -c 400 "$T_TMP/make.log")"
else
	if grep -qE 'warning|error' "$T_TMP/make.log"; then
		t_fail "make USE_VERBS=no: warnings: $(grep -m3 -E 'warning|error' "$T_TMP/make.log")"
	else
		t_pass "make USE_VERBS=no builds without warnings"
	fi
	"$NV" --list | grep -E '^  ib ' | grep -q 'not built: built without libibverbs' &&
		t_pass "no verbs: --list says ib is not built" || t_fail "no verbs: --list: $("$NV" --list | grep ib)"
	out=$T_TMP/noverbs.jsonl
	mpirun --oversubscribe -np 2 "$NV" -q -o "$out" ib >/dev/null 2>&1
	rc=$?
	t_check "no verbs: exit 0 (rc $rc)" [ "$rc" -eq 0 ]
	t_check "no verbs: one skip record 'not built: ...', nothing else from ib, end complete" \
		jq -e -s '([.[] | select(.name == "ib" or .kind == "rdma")] | length) == 1 and
			([.[] | select(.type == "skip")][0].reason | startswith("not built: ")) and
			.[0].features.verbs == false and .[-1].status == "complete"' "$out"
fi

t_done
