#!/bin/bash
# scripts/bench_train.sh (make bench-train): the estimate against the measured training
# step, the figures the tests only bound (docs/estimate.md, "Measured against a real step").
# On 4 emulated hosts at 1 Gb/s (root; holds the emulated cluster's lock): an all_reduce
# sweep, then for each of two shapes, twice: ccprobe trainstep and workloads/torch_step.py
# (PyTorch DDP over gloo), each judged by ccreport. One line per run: the measured step
# and its spread (cv over its steps), the estimate given the step's measured compute and
# overlap, estimate/measured, and the sync the model used against the step's own buckets
# all-reduced alone. The machine's load before and after.
#   A: communication-bound: 2e6 parameters (8 MB of fp32 gradients), 16 tokens a rank, 1 MiB buckets
#   B: overlap matters:     1e6 parameters (4 MB), 512 tokens a rank, 256 KiB buckets
# STEPS (default 8) timed steps each; RUNS (default 2) runs of each shape.
set -u
cd "$(dirname "$0")/.." || exit 2
[ "$(id -u)" -eq 0 ] || { echo "bench-train: needs root (network namespaces)"; exit 2; }
[ -n "${BENCH_TRAIN_LOCKED:-}" ] || exec env BENCH_TRAIN_LOCKED=1 flock -w 1800 /run/lock/ccdiag-emucluster.lock "$0" "$@"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
P=$PWD/build/ccprobe
R=$PWD/build/ccreport
EMU=$PWD/scripts/emucluster
PROF=$PWD/tests/fixtures/trainstep/step-emu.ini
STEPS=${STEPS:-8}
RUNS=${RUNS:-2}
O=$(mktemp -d /var/tmp/bench-train.XXXXXX)
trap '"$EMU" down >/dev/null 2>&1; rm -rf "$O"' EXIT
PY=""
for py in $(type -P -a python3) /usr/bin/python3; do
	if "$py" -c 'import torch, torch.distributed' >/dev/null 2>&1; then PY=$py; break; fi
done
echo "bench-train: load before: $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min; $(nproc) CPUs)"
"$EMU" up 4 --rate 1gbit >"$O/up.log" 2>&1 || { echo "emucluster up failed: $(tail -1 "$O/up.log")"; exit 1; }
timeout 300 "$EMU" mpirun -np 4 "$P" -q -b 16K -e 2M -n 10 -w 2 -r 3 --time-per-size 0 -o "$O/ar.jsonl" all_reduce >/dev/null 2>&1
jq -r 'select(.name == "all_reduce" and (.bytes == 262144 or .bytes == 1048576)) |
	"sweep: all_reduce \(.bytes) B: busbw \(.busbw_GBps * 1000 | round / 1000) GB/s (cv \(.time_us.cv * 100 | round) %)"' "$O/ar.jsonl"
printf '%-5s %-3s %-10s %10s %6s %10s %9s %9s %9s\n' shape run step measured_s cv estimate_s est/meas sync/alone overlap
for shape in A B; do
	case $shape in
	A) params=2e6 tokens=16 bucket=1M ;;
	B) params=1e6 tokens=512 bucket=256K ;;
	esac
	for run in $(seq 1 "$RUNS"); do
		timeout 600 "$EMU" mpirun -np 4 "$P" -q -o "$O/ts.jsonl" --train-params "$params" --train-layers 4 \
			--train-tokens "$tokens" --train-bucket "$bucket" --train-steps "$STEPS" --train-warmup 1 trainstep \
			>/dev/null 2>&1
		files=("$O/ar.jsonl" "$O/ts.jsonl")
		if [ -n "$PY" ]; then
			timeout 600 "$EMU" mpirun -np 4 "$PY" "$PWD/workloads/torch_step.py" --master node0 --params "$params" \
				--layers 4 --tokens "$tokens" --bucket "$bucket" --steps "$STEPS" --warmup 1 \
				-o "$O/torch.jsonl" >/dev/null 2>&1
			files+=("$O/torch.jsonl")
		fi
		"$R" -q --no-render -p "$PROF" -o "$O/rep" "${files[@]}" >/dev/null 2>&1
		jq -r --arg sh "$shape" --arg run "$run" '.estimate.measured_steps[] |
			def f(x; d): if x == null then "n/a" else (x * d | round / d | tostring) end;
			"\($sh)     \($run)   \(.source)  \(f(.measured.step_s; 1000))  \(f(.measured.step_cv * 100; 1))%  \(f(.estimate.step_s; 1000))  \(f(.ratio; 100))  \(f(.sync_ratio; 100))  \(f(.measured.overlap; 100))\(if .made then "" else "  not compared: " + .reason end)"' \
			"$O/rep/summary.json" | awk '{ printf "%-5s %-3s %-10s %10s %6s %10s %9s %9s %9s", $1, $2, $3, $4, $5, $6, $7, $8, $9; for (i = 10; i <= NF; i++) printf " %s", $i; print "" }'
	done
done
[ -n "$PY" ] || echo "torch_step: not run (no python3 here imports torch; scripts/deps.sh installs python3-torch)"
echo "bench-train: load after: $(cut -d' ' -f1-3 /proc/loadavg)"
