#!/bin/bash
# ccprobe trainstep on this host (docs/estimate.md, "Measured against a real step"): the
# records ccreport puts beside the estimate, the estimate_error criterion judged, and a rank
# made 4x slower (CCPROBE_FAULT=slow:1:4) named as the straggler; the GPU step through the
# CUDA/NCCL/cuBLASLt test double (its records marked fake, never judged; a slow GPU named, a
# hung bucket a timeout naming its rank); workloads/torch_step.py on 2 local ranks judged
# framework-ready, and not ready when one rank's losses differ. Asserts behaviour, not speed.
# shellcheck source=SCRIPTDIR/../lib.sh disable=SC1091
source "$(dirname "$0")/../lib.sh"
P=$T_ROOT/build/ccprobe
R=$T_ROOT/build/ccreport
PROF=$T_ROOT/tests/fixtures/trainstep/step-local.ini
if "$P" --list | grep -q '^  trainstep .*not built'; then t_skip "trainstep not built"; t_done; exit; fi
# the host step needs OpenBLAS: without it trainstep skips with the reason
if ! "$P" --plan 1 trainstep >/dev/null 2>&1 || [ "$(mpirun --oversubscribe -np 1 "$P" -q -o "$T_TMP/probe.jsonl" \
	--train-hidden 16 --train-tokens 8 --train-steps 1 --train-warmup 0 trainstep >/dev/null 2>&1;
	jq -r 'select(.type == "skip") | .reason' "$T_TMP/probe.jsonl" 2>/dev/null)" != "" ]; then
	t_skip "trainstep's host step not built: $(jq -r 'select(.type == "skip") | .reason' "$T_TMP/probe.jsonl" 2>/dev/null)"
	t_done
	exit
fi
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
		grep -q '^| trainstep (proxy, mpi, 2 ranks, [^|]*) | [0-9.]* s | [0-9.]* s | [-0-9.]*% | ' '$T_TMP/rep/report.md' &&
		grep -q '^- Days quoted from the measured step (trainstep): [0-9.]* days (the model alone: ' '$T_TMP/rep/report.md'"
g=$T_TMP/slow.jsonl
mpirun --oversubscribe -np 2 -x CCPROBE_FAULT=slow:1:4 "$P" -q -o "$g" --train-hidden 96 \
	--train-tokens 128 --train-bucket 256K --train-steps 4 trainstep >"$g.log" 2>&1
t_check "a rank 4x slower: the summary names rank 1 the straggler, the rank the step waits for (its compute)" \
	jq -e -s 'map(select(.test == "summary"))[0] | .straggler.rank == 1 and .waits_for.rank == 1 and
		.waits_for.cause == "compute"' "$g"

# ---- GPUs, through the test double: cuBLASLt products, NCCL on the communication stream
if t_fakecuda_built && "$P" --list | grep -q '^  trainstep' && ! "$P" -B nccl --plan 1 trainstep 2>&1 | grep -q 'not built'; then
	fk() {  # fk OUT ENV... -- ARGS...: ccprobe -B nccl trainstep on 2 ranks under the double
		local out=$1 env=()
		shift
		while [ "$1" != "--" ]; do env+=(-x "$1"); shift; done
		shift
		timeout 120 mpirun --oversubscribe -np 2 "${T_FAKECUDA[@]}" -x CCDIAG_FAKECUDA_GPUS=2 "${env[@]}" \
			"$P" -B nccl -q -o "$out" --train-hidden 64 --train-tokens 64 --train-bucket 64K "$@" trainstep \
			>"$out.log" 2>&1
	}
	fk "$T_TMP/gpu.jsonl" -- --train-steps 4
	grc=$?
	t_check "GPU step (test double): exit 0, cuBLASLt and NCCL named, each bucket checked, the records marked fake (exit $grc)" \
		jq -e -s '[.[] | select(.test == "summary")][0] | .backend == "nccl" and .transport == "fake" and
			(.compute | test("cuBLASLt")) and (.comm | test("ncclAllReduce on a communication stream")) and .steps == 4' \
		"$T_TMP/gpu.jsonl"
	"$R" -q --no-render -p "$PROF" -o "$T_TMP/gpurep" "$T_TMP/gpu.jsonl" >/dev/null 2>&1
	t_check "GPU step (test double): ccreport never judges it (not compared: a test double ran it)" \
		jq -e '(.estimate.measured_steps[0] | .made == false and (.reason | test("test double"))) and
			([.criteria[] | select(.id == "est-error") | .verdict] | .[0] == "incomplete")' "$T_TMP/gpurep/summary.json"
	fk "$T_TMP/gpuslow.jsonl" CCDIAG_FAKECUDA_SLOW=1:20 -- --train-steps 4
	t_check "GPU step (test double): a GPU 20x slower is the rank the step waits for (its compute)" \
		jq -e -s '[.[] | select(.test == "summary")][0].waits_for | .rank == 1 and .cause == "compute"' \
		"$T_TMP/gpuslow.jsonl"
	fk "$T_TMP/gpuhang.jsonl" CCDIAG_FAKEGEMM_HANG=1 -- --train-steps 2 --timeout 5
	hrc=$?
	t_check "GPU step (test double): a bucket that never completes ends as a timeout naming rank 1, exit 4 (exit $hrc)" \
		bash -c "[ $hrc -eq 4 ] && jq -e -s 'any(.[]; .type == \"timeout\" and .probe == \"trainstep\" and
			[.not_done[].rank] == [1]) and .[-1].status == \"timeout\"' '$T_TMP/gpuhang.jsonl' >/dev/null"
else
	t_skip "GPU step: no test double (a build without CUDA) or trainstep's GPU engine not built"
fi

# ---- the framework's step on 2 local ranks: ready, then one rank's losses differ
PY=""
for py in $(type -P -a python3) /usr/bin/python3; do
	if "$py" -c 'import torch, torch.distributed' >/dev/null 2>&1; then PY=$py; break; fi
done
if [ -n "$PY" ]; then
	ts() {  # ts OUT [FAULT]: torch_step.py on 2 local ranks
		timeout 240 mpirun --oversubscribe -np 2 ${2:+-x CCPROBE_FAULT=$2} "$PY" "$T_ROOT/workloads/torch_step.py" \
			--params 1e5 --layers 2 --tokens 32 --bucket 64K --steps 3 --warmup 1 ${NONCE:+--nonce "$NONCE"} \
			-o "$1" >"$1.log" 2>&1
	}
	NONCE=cust-42:x/y= ts "$T_TMP/torch.jsonl"
	trc=$?
	# ccdiag --nonce reaches the framework's phase too: its header carries it (ccdiag verify checks)
	t_check "torch_step --nonce: the header carries the value as given" \
		jq -e -s '.[0].type == "run" and .[0].nonce == "cust-42:x/y="' "$T_TMP/torch.jsonl"
	"$PY" "$T_ROOT/workloads/torch_step.py" --nonce 'a b' -o "$T_TMP/badnonce.jsonl" >"$T_TMP/badnonce.out" 2>&1
	rc=$?
	t_check "torch_step --nonce 'a b': exit 2, one line naming --nonce, no records (exit $rc)" \
		bash -c "[ $rc -eq 2 ] && grep -q \"invalid value 'a b' for --nonce\" '$T_TMP/badnonce.out' && [ ! -e '$T_TMP/badnonce.jsonl' ]"
	"$R" -q --no-render -p "$PROF" -o "$T_TMP/trep" "$T_TMP/torch.jsonl" >/dev/null 2>&1
	t_check "torch_step on 2 ranks (gloo): exit 0, the interpreter named, framework_ready passes (exit $trc)" \
		bash -c "[ $trc -eq 0 ] && jq -e '([.criteria[] | select(.id == \"framework\") | .verdict] | .[0] == \"pass\") and
			.estimate.measured_steps[0].python == \"$PY\"' '$T_TMP/trep/summary.json' >/dev/null"
	ts "$T_TMP/torchbad.jsonl" seed:1
	trc=$?
	"$R" -q --no-render -p "$PROF" -o "$T_TMP/trepbad" "$T_TMP/torchbad.jsonl" >/dev/null 2>&1
	t_check "torch_step, rank 1 fed other tokens: exit 1, framework_ready fails and says the losses differ (exit $trc)" \
		bash -c "[ $trc -eq 1 ] && jq -e '.criteria[] | select(.id == \"framework\") | .verdict == \"fail\" and
			(.failures[0].element | test(\"losses differ\"))' '$T_TMP/trepbad/summary.json' >/dev/null"
else
	t_skip "torch_step: no python3 here imports torch (scripts/deps.sh installs python3-torch)"
fi
# the framework absent: ccdiag's not-run record makes framework_ready incomplete with its reason
cat >"$T_TMP/notrun.jsonl" <<'NR'
{"type":"run","schema":1,"run_id":"0000000000000000","start_utc":"2026-12-04T00:00:00Z","tool":"ccdiag","version":"0.1.0","phase":"train","world_size":0,"nodes":2,"hosts":[]}
{"type":"skip","kind":"probe","name":"torch_step","reason":"not run: the framework is not present: no python3 imports torch"}
{"type":"end","status":"not_run","reason":"the framework is not present: no python3 imports torch"}
NR
"$R" -q --no-render -p "$PROF" -o "$T_TMP/nrrep" "$T_TMP/notrun.jsonl" >/dev/null 2>&1
t_check "the framework absent (ccdiag's not-run record): framework_ready not judged, with the reason" \
	jq -e '.criteria[] | select(.id == "framework") | (.verdict == "incomplete" or .verdict == "not_judged") and
		(.reason | test("the framework is not present"))' "$T_TMP/nrrep/summary.json"
t_done
