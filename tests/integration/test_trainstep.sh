#!/bin/bash
# ccprobe trainstep on this host (docs/estimate.md, "Measured against a real step"): the
# records ccreport puts beside the estimate, the estimate_error criterion judged, and a rank
# made 4x slower (CCPROBE_FAULT=slow:1:4) named as the straggler. Asserts behaviour, not speed.
# shellcheck source=SCRIPTDIR/../lib.sh disable=SC1091
source "$(dirname "$0")/../lib.sh"
P=$T_ROOT/build/ccprobe
R=$T_ROOT/build/ccreport
PROF=$T_ROOT/tests/fixtures/trainstep/step-local.ini
if "$P" --list | grep -q '^trainstep.*not built'; then t_skip "trainstep not built (no OpenBLAS)"; t_done; exit; fi
f=$T_TMP/ts.jsonl
mpirun --oversubscribe -np 2 "$P" -q -b 4K -e 1M --time-per-size 0.2 -o "$f" --train-hidden 96 \
	--train-tokens 128 --train-bucket 256K --train-steps 4 all_reduce trainstep >"$f.log" 2>&1
prc=$?
"$R" --no-charts -p "$PROF" -o "$T_TMP/rep" "$f" >"$T_TMP/rep.out" 2>&1
t_check "trainstep: exit 0, a summary, the estimate beside it with a signed error, estimate_error judged (exit $prc)" \
	bash -c "[ $prc -eq 0 ] && jq -e '.estimate.measured_steps[0] | .source == \"trainstep\" and .made and (.error_pct | type) == \"number\"' '$T_TMP/rep/summary.json' >/dev/null &&
		jq -e '[.criteria[] | select(.id == \"est-error\") | .verdict] | .[0] != \"incomplete\"' '$T_TMP/rep/summary.json' >/dev/null"
t_check "the decision's estimate headline has the measured step beside the model; report.md the measured steps' table" \
	bash -c "grep -q '^  estimate (a model, not a measurement): .* s step; not extrapolated (within what was measured); measured step (trainstep): [0-9.]* s, [0-9.]* days from it$' '$T_TMP/rep.out' &&
		grep -q '^| trainstep | [0-9.\\]* s | [0-9.\\]* s | .*% | ' '$T_TMP/rep/report.md' &&
		grep -q '^From the measured step (trainstep): a step of ' '$T_TMP/rep/report.md'"
g=$T_TMP/slow.jsonl
mpirun --oversubscribe -np 2 -x CCPROBE_FAULT=slow:1:4 "$P" -q -o "$g" --train-hidden 96 \
	--train-tokens 128 --train-bucket 256K --train-steps 4 trainstep >"$g.log" 2>&1
t_check "a rank 4x slower: the summary names rank 1 the straggler" \
	jq -e -s 'map(select(.test == "summary"))[0].straggler.rank == 1' "$g"
t_done
