#!/bin/bash
# The dcgm probe (probes/dcgm.c, docs/compute.md) with the test double of
# dcgmi on PATH (tests/fakes/dcgmi): one `dcgmi diag -r LEVEL -j` per node
# whatever the ranks per node, per-GPU records named by host (marked as the
# double's, never judged; judged as on hardware once unmarked), no dcgmi or no
# host engine a skip with the reason, a hung dcgmi killed at its deadline with
# the host named, a bad level a usage error, and the level the plan asks.
source "$(dirname "$0")/../lib.sh"
CCPROBE=$T_ROOT/build/ccprobe
CCREPORT=$T_ROOT/build/ccreport
CCDIAG=$T_ROOT/build/ccdiag
[ -x "$CCPROBE" ] && [ -x "$CCREPORT" ] || { t_fail "no $CCPROBE or $CCREPORT (make)"; t_done; exit; }
command -v jq >/dev/null || { t_skip "jq missing (the double writes its JSON with it)"; t_done; exit; }
cd "$T_TMP" || exit 1
mkdir -p bin
ln -s "$T_ROOT/tests/fakes/dcgmi" bin/dcgmi
export PATH=$T_TMP/bin:$PATH CCDIAG_FAKE_DCGMI_ARGS=$T_TMP/args.txt
host=$(hostname)

probe() {  # probe OUT MODE CCPROBE-OPTIONS...: 2 ranks on this host; the exit status
	local out=$1 mode=$2
	shift 2
	: >args.txt
	CCDIAG_FAKE_DCGMI=$mode timeout 120 mpirun -np 2 -x PATH -x CCDIAG_FAKE_DCGMI -x CCDIAG_FAKE_DCGMI_ARGS \
		"$CCPROBE" -q -o "$out" "$@" dcgm >"$out.log" 2>&1
}

# ---- healthy: per GPU and test, once per node ----
probe pass.jsonl pass --dcgm-level 2
rc=$?
t_check "dcgm level 2, healthy double: exit $rc" test "$rc" -eq 0
t_check "dcgmi ran once on the node (2 ranks), with 'diag -r 2 -j': $(tr '\n' '|' <args.txt)" \
	test "$(cat args.txt)" = "diag -r 2 -j"
t_check "per GPU a dcgm_diag record (level 2 implied by its tests) and one per test, named HOST/gpuN, marked the double's" \
	jq -se --arg h "$host" '[.[] | select(.type == "measurement")] as $m |
		($m | map(select(.test == "dcgm_diag")) | length == 2 and all(.dcgm.level == 2 and .dcgm.failed == 0)) and
		($m | map(.test) | unique == ["dcgm_diag", "dcgm_memory", "dcgm_pcie", "dcgm_software"]) and
		($m | all(.name == "dcgm" and .host == $h and (.element | startswith($h + "/gpu")) and .transport == "fake"))' \
	pass.jsonl
t_check "an inventory of DCGM's version per host (the consistency check compares them)" \
	jq -se --arg h "$host" 'map(select(.type == "inventory" and .kind == "dcgm")) | length == 1 and
		.[0].host == $h and .[0].versions.dcgm == "4.2.3"' pass.jsonl
"$CCREPORT" -q --no-render -p h100-sxm-8x-ndr400 -o rep-pass pass.jsonl >/dev/null 2>&1
t_check "ccreport: the double's DCGM records are not judged" \
	jq -e '[.criteria[] | select(.probe == "dcgm")] | length == 2 and all(.verdict == "incomplete" and
		(.reason | test("not judged")))' rep-pass/summary.json

# ---- a failing GPU: judged as on hardware once the mark is gone ----
probe fail.jsonl fail:1:memory --dcgm-level 2
rc=$?
t_check "a failing memory test on GPU 1: the run completes (exit $rc; ccreport judges it)" test "$rc" -eq 0
jq -c 'del(.transport)' fail.jsonl >unmarked.jsonl
"$CCREPORT" -q --no-render -p h100-sxm-8x-ndr400 -o rep-fail unmarked.jsonl >/dev/null 2>&1
t_check "as on hardware: dcgm_diag fails naming $host/gpu1 with DCGM's message" \
	jq -e --arg e "$host/gpu1" '.criteria[] | select(.id == "dcgm_diag") | .verdict == "fail" and
		([.failures[].element] == [$e])' rep-fail/summary.json
t_check "as on hardware: level 2 is below the profile's level 3" \
	jq -e '.criteria[] | select(.id == "dcgm_level") | .verdict == "fail"' rep-fail/summary.json
t_check "DCGM's message is kept on the failing GPU's record" \
	jq -se '.[] | select(.test? == "dcgm_diag" and .gpu == 1) | .messages | any(test("memory errors found"))' \
	fail.jsonl

# ---- no dcgmi, no host engine, a diagnostic that cannot start: skips with the reason ----
probe none.jsonl pass --dcgmi no-such-dcgmi
rc=$?
t_check "no dcgmi: exit $rc, a skip naming the program and the host" \
	jq -se --arg h "$host" '(map(select(.type == "measurement")) | length == 0) and
		(map(select(.type == "skip")) | length == 1 and .[0].host == $h and
		 (.[0].reason | test("^skipped: no .no-such-dcgmi. on ")))' none.jsonl
"$CCREPORT" -q --no-render -p h100-sxm-8x-ndr400 -o rep-none none.jsonl >/dev/null 2>&1
t_check "ccreport: without dcgmi the DCGM criteria are incomplete with the skip's reason, never pass" \
	jq -e '[.criteria[] | select(.probe == "dcgm")] | length == 2 and all(.verdict == "incomplete" and
		(.reason | test("no .no-such-dcgmi.")))' rep-none/summary.json
probe noengine.jsonl noengine
t_check "no host engine: a skip carrying dcgmi's own message" \
	jq -se 'map(select(.type == "skip")) | length == 1 and
		(.[0].reason | test("exited 246 .*Unable to connect to host engine"))' noengine.jsonl
probe runtime.jsonl runtime
t_check "a diagnostic that could not start: a skip with DCGM's runtime error" \
	jq -se 'map(select(.type == "skip")) | length == 1 and (.[0].reason | test("GPUs are in use"))' runtime.jsonl
probe garbage.jsonl garbage
t_check "half a JSON document: a skip, never a pass" \
	jq -se '(map(select(.type == "skip")) | length == 1) and (map(select(.type == "measurement")) | length == 0)' \
	garbage.jsonl

# ---- a hung dcgmi: killed at its deadline, the host named ----
SECONDS=0
probe hang.jsonl hang --dcgm-timeout 3
rc=$?
took=$SECONDS
t_check "a hung dcgmi: exit 1 after its deadline, not the watchdog's (exit $rc)" test "$rc" -eq 1
t_check "the error names the host and the deadline; the run's end record is complete" \
	jq -se --arg h "$host" '(map(select(.type == "error")) | length == 1 and .[0].host == $h and
		(.[0].message | test("^" + $h + ": .* did not finish within its deadline of 3 s"))) and
		(.[-1].type == "end" and .[-1].status == "complete")' hang.jsonl
t_check "nothing the double started is left running (its process group killed)" \
	bash -c '! pgrep -f "sleep 10000[0]" >/dev/null'

# ---- options and the plan ----
"$CCPROBE" --dcgm-level 5 dcgm >bad.out 2>bad.err
rc=$?
t_check "--dcgm-level 5: usage error before MPI starts, exit $rc, the option named" \
	bash -c "[ $rc -eq 2 ] && head -1 bad.err | grep -q 'error: invalid --dcgm-level 5 (1, 2, 3 or 4)'"
t_check "the plan's estimate of level 4: 90 minutes (ccprobe --plan)" \
	bash -c "'$CCPROBE' --plan 2:8 --dcgm-level 4 dcgm | grep -qx \$'dcgm\tnode\t5400.0\tmodel'"
if [ -x "$CCDIAG" ]; then
	printf 'nodeA\nnodeB\n' >hosts.txt
	"$CCDIAG" run -p h100-sxm-8x-ndr400 --hosts hosts.txt --dry-run -o plan >plan.out 2>&1
	t_check "ccdiag's node phase runs dcgm at the profile's level (>= 3): $(grep -o -- '--dcgm-level [0-9]' plan.out | head -1)" \
		grep -q -- 'ccprobe --dcgm-level 3 .*dcgm' plan.out
fi
t_done
