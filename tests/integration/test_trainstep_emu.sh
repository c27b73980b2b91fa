#!/bin/bash
# tests/integration/test_trainstep_emu.sh: the measured training step on 4 emulated hosts at
# 1 Gb/s (docs/estimate.md, "Measured against a real step"): ccprobe trainstep and
# workloads/torch_step.py (PyTorch DDP over gloo) end to end on two shapes, one
# communication-bound (8 MB of gradients, 16 tokens a rank) and one where overlap matters
# (4 MB, 512 tokens a rank), beside an all_reduce sweep; ccreport judges their records. The
# estimate given each step's measured compute and overlap must be within 50 % of that step
# (a wrong model is off by far more; a clean-clone make check read shape A at -35 % with
# steady steps: 4 hosts sharing 2 CPUs with the other lanes),
# asserted only when the measured steps are steady (cv <= 15 %), and the sweep that priced the
# sync too: a noisy run says so (a skip) instead of failing. Then node2's links at 20 Mb/s (emucluster --degrade): a small shape's step is
# slower and the report names the rank it waits for. No speed is asserted. ~90 s on a
# quiet 2-core machine (167 s at load 10, most of it importing torch on 4 ranks).
source "$(dirname "$0")/../lib.sh"
P=$T_ROOT/build/ccprobe
R=$T_ROOT/build/ccreport
EMU=$T_ROOT/scripts/emucluster
PROF=$T_ROOT/tests/fixtures/trainstep/step-emu.ini
for b in "$P" "$R"; do [ -x "$b" ] || { t_fail "no $b (make)"; t_done; exit; }; done
if "$P" --list | grep -q '^  trainstep .*not built'; then t_skip "trainstep not built"; t_done; exit; fi

t_emu_suite "the measured step on the emulated cluster needs root (network namespaces)"
command -v jq >/dev/null || { t_fail "needs jq"; t_done; exit; }
PY=""
for py in $(type -P -a python3) /usr/bin/python3; do
	if "$py" -c 'import torch, torch.distributed' >/dev/null 2>&1; then PY=$py; break; fi
done

if ! "$EMU" up 4 --rate 1gbit >"$T_TMP/up.log" 2>&1; then
	t_fail "emucluster up 4: $(tail -1 "$T_TMP/up.log")"
	t_done
	exit
fi
# the model's busbw: an all_reduce sweep over both buckets and the last, partial ones (48 KiB, 635 KiB),
# 5 operations a repetition: one operation after a barrier times the ranks' skew in leaving it too
# (at load 10 that read 2.4x a step's buckets all-reduced back to back)
timeout 120 "$EMU" mpirun -np 4 "$P" -q -b 32K -e 2M -n 5 -w 1 -r 3 --time-per-size 0 -o "$T_TMP/ar.jsonl" all_reduce \
	>"$T_TMP/ar.log" 2>&1
t_check "all_reduce sweep, 32 KiB to 2 MiB" jq -e -s 'any(.[]; .name == "all_reduce" and .bytes == 1048576)' \
	"$T_TMP/ar.jsonl"

# shape NAME PARAMS TOKENS BUCKET: trainstep and torch_step of one shape, then ccreport
shape() {
	local n=$1 params=$2 tokens=$3 bucket=$4 rc trc=skipped
	timeout 240 "$EMU" mpirun -np 4 "$P" -q -o "$T_TMP/ts$n.jsonl" --train-params "$params" --train-layers 4 \
		--train-tokens "$tokens" --train-bucket "$bucket" --train-steps 5 --train-warmup 1 trainstep \
		>"$T_TMP/ts$n.log" 2>&1
	rc=$?
	t_check "shape $n: trainstep on 4 hosts: exit 0, a summary of its steps (exit $rc)" \
		jq -e -s '[.[] | select(.test == "summary")] | length == 1' "$T_TMP/ts$n.jsonl"
	if [ -n "$PY" ]; then
		timeout 240 "$EMU" mpirun -np 4 "$PY" "$T_ROOT/workloads/torch_step.py" --master node0 \
			--params "$params" --layers 4 --tokens "$tokens" --bucket "$bucket" --steps 5 --warmup 1 \
			-o "$T_TMP/torch$n.jsonl" >"$T_TMP/torch$n.log" 2>&1
		trc=$?
		t_check "shape $n: torch_step (DDP, gloo) on 4 hosts: exit 0, every rank joined, a summary (exit $trc)" \
			jq -e -s 'any(.[]; .test == "init" and .joined) and any(.[]; .test == "summary" and .losses_agree)' \
			"$T_TMP/torch$n.jsonl"
	else
		t_skip "shape $n: torch_step: no python3 here imports torch (scripts/deps.sh installs python3-torch)"
	fi
	"$R" -q -p "$PROF" -o "$T_TMP/rep$n" "$T_TMP/ar.jsonl" "$T_TMP/ts$n.jsonl" \
		$([ -n "$PY" ] && echo "$T_TMP/torch$n.jsonl") >/dev/null 2>&1
	t_check "shape $n: ccreport judges the steps: estimate_error judged" \
		jq -e '[.criteria[] | select(.id == "est-error") | .verdict] | .[0] != "incomplete"' "$T_TMP/rep$n/summary.json"
	[ -z "$PY" ] || t_check "shape $n: framework readiness judged: every rank joined, steps ran, losses finite and equal" \
		jq -e '[.criteria[] | select(.id == "framework") | .verdict] | .[0] == "pass"' "$T_TMP/rep$n/summary.json"
	for src in trainstep torch_step; do
		local e
		e=$(jq -r --arg s "$src" '.estimate.measured_steps[] | select(.source == $s) |
			"\(.made) \(.steady) \(.error_pct // "null") \(.measured.step_cv // "null") \(.measured.step_s // "null") \(.estimate.step_s // "null") \(.ratio // "null") \(.estimate.sync_cv // "null") \(.sync_ratio // "null")"' \
			"$T_TMP/rep$n/summary.json" 2>/dev/null)
		[ -n "$e" ] || { [ "$src" = torch_step ] && [ -z "$PY" ] && continue; t_fail "shape $n $src: no measured step in the report"; continue; }
		read -r made steady err cv meas est ratio scv sratio <<<"$e"
		echo "FIGURE shape $n $src: measured $meas s (cv $cv), estimate $est s, estimate/measured $ratio, error $err %; sync/comm alone $sratio (the sweep's cv there $scv)"
		if [ "$made" != true ]; then
			t_fail "shape $n $src: the estimate was not made: $(jq -r --arg s "$src" '.estimate.measured_steps[] | select(.source == $s) | .reason' "$T_TMP/rep$n/summary.json")"
		elif [ "$steady" != true ]; then
			t_skip "shape $n $src: $(jq -r --arg s "$src" '.estimate.measured_steps[] | select(.source == $s) | .note' "$T_TMP/rep$n/summary.json"): estimate/measured $ratio not asserted"
		elif [ "$sratio" != null ] && awk -v r="$sratio" 'BEGIN { exit !(r < 0.5 || r > 2) }'; then
			# the sweep ran before the steps: the other lanes' load changed in between (once 3.3x,
			# the sweep beside test_trainstep, shape B's steps alone); what the sync costs is then
			# not the step's, and the comparison says nothing of the model
			t_skip "shape $n $src: the sweep priced the step's all-reduces at $sratio times its own comm alone (load changed between them): estimate/measured $ratio not asserted"
		else
			t_check "shape $n $src: the estimate is within 50 % of the measured step (error $err %)" \
				awk -v e="$err" 'BEGIN { exit !(e >= -50 && e <= 50) }'
		fi
	done
}
shape A 2e6 16 1M
shape B 1e6 512 256K

# a slowed host: node2's links at 20 Mb/s, a 50th of the others', with a small communication-bound
# shape (0.8 MB of gradients, 256 KiB buckets: a second a step there), run healthy first. At
# 100 Mb/s a healthy transfer of trainstep's link check read a quarter of node2's on a quiet
# machine, and under load (CI, the local lane beside it) once close enough that no rank stood out.
SLOW=(--train-params 2e5 --train-layers 4 --train-tokens 16 --train-bucket 256K --train-steps 3 --train-warmup 1)
timeout 120 "$EMU" mpirun -np 4 "$P" -q -o "$T_TMP/fast.jsonl" "${SLOW[@]}" trainstep >"$T_TMP/fast.log" 2>&1
hsteps=$(jq -r 'select(.test == "summary") | .step_s' "$T_TMP/fast.jsonl")
if ! "$EMU" up 4 --rate 1gbit --degrade node2=20mbit >"$T_TMP/up2.log" 2>&1; then
	t_fail "emucluster up 4 --degrade node2=20mbit: $(tail -1 "$T_TMP/up2.log")"
	t_done
	exit
fi
timeout 120 "$EMU" mpirun -np 4 "$P" -q -o "$T_TMP/slow.jsonl" "${SLOW[@]}" trainstep >"$T_TMP/slow.log" 2>&1
ssteps=$(jq -r 'select(.test == "summary") | .step_s' "$T_TMP/slow.jsonl")
echo "FIGURE small shape healthy step $hsteps s, node2 at 20 Mb/s $ssteps s"
t_check "node2 at 20 Mb/s: the step is slower than on the healthy cluster ($hsteps s -> $ssteps s)" \
	awk -v a="$hsteps" -v b="$ssteps" 'BEGIN { exit !(a > 0 && b > a) }'
t_check "node2 at 20 Mb/s: trainstep's summary says the step waits for rank 2 on node2" \
	jq -e -s 'map(select(.test == "summary"))[0].waits_for | .rank == 2 and .host == "node2"' "$T_TMP/slow.jsonl"
echo "FIGURE node2 at 20 Mb/s: $(jq -c 'select(.test == "summary") | {straggler, waits_for, rank_ready_s, link_s: .link_s.matrix}' "$T_TMP/slow.jsonl")"
"$R" -q -p "$PROF" -o "$T_TMP/repslow" "$T_TMP/slow.jsonl" >/dev/null 2>&1
t_check "node2 at 20 Mb/s: the report names the rank the step waits for (summary.json, report.md)" \
	bash -c "jq -e '.estimate.measured_steps[0].waits_for.host == \"node2\"' '$T_TMP/repslow/summary.json' >/dev/null &&
		grep -q 'the step waits for rank 2 on node2' '$T_TMP/repslow/report.md'"
t_done
