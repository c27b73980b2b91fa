#!/bin/bash
# tests/gpu/run.sh: the one prepared script for a machine with NVIDIA GPUs. Gets a
# ccprobe (built here, or the carried build/gpu-bundle: tests/gpu/bundle.sh), runs every
# GPU probe (pcie, nvlink, hbm; gemm with gpuhealth before and after) and an NCCL
# all_reduce sweep on one host, one rank per GPU, the training step on one rank (ccprobe
# trainstep; workloads/torch_step.py with CCDIAG_PYTHON, else the first python3 on PATH, when
# it imports torch with CUDA), judges the records with the GPU's
# shipped profile, and prints the figures with their units: HBM copy kernel, triad and
# copy engine (TB/s, % of the memory's rate), GEMM bf16/fp8 TFLOP/s and accumulation
# mode, PCIe, the sustained phase's clock-event (throttle) reasons, gpuhealth's XID
# fields. Each step has its own deadline and a failed step never stops the next; the
# whole run stays within TOTAL_S seconds (default 210: a one-GPU H200 takes about 1.5
# minutes with the bundle).
#
#   tests/gpu/run.sh                 # all GPUs of this host
#   NGPU=2 RESULTS=/tmp/gpu tests/gpu/run.sh
#   CCDIAG_FAKECUDA_GPUS=2 NGPU=2 SIZES="-b 1M -e 4M" NCCL_MAX=1M GEMM_SHAPES=256 GEMM_SECONDS=1 tests/gpu/run.sh
#                                    # a dry run of this script under the CUDA test double
#                                    # (tests/fakes/fake.h): its figures are not measurements
#
# Where things go: every file in RESULTS (default results/gpu); when OUT is set (the
# device machine's folder that comes back), summary.txt, env.txt, logs.txt, the three
# records files, the report's summary.json and train.tar (the training steps' records) are
# copied there too (8 files).
# BUILD=auto (default: the bundle when build/gpu-bundle is here, else make), bundle, make,
# prebuilt (build/ccprobe and build/ccreport as they are, built on another machine;
# CCDIAG_PREBUILT=1 says the same).
# Without mpirun (the bundle), ccprobe runs as one MPI singleton rank: the first GPU.
#
# Exit status: 0 when every step ran and ended "complete" with no failure, 1 when a
# step failed, 2 when there is no GPU here (nothing run; the summary says so).
# Compare with nvbandwidth, BabelStream, p2pBandwidthLatencyTest and nccl-tests as
# docs/gpu.md describes.
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD
RESULTS=${RESULTS:-results/gpu}
mkdir -p "$RESULTS" || exit 1
RESULTS=$(cd "$RESULTS" && pwd)
SUMMARY=$RESULTS/summary.txt
: >"$SUMMARY"
t0=$(date +%s)
TOTAL_S=${TOTAL_S:-210}
fail=0
STEPS=()

say() { echo "$*" | tee -a "$SUMMARY"; }
left() { echo $((TOTAL_S - ($(date +%s) - t0))); }
# the seconds a step may take: its own cap, within what is left of TOTAL_S (10 s kept
# for the report and the summary)
limit() { local l=$(($(left) - 10)); [ "$l" -gt "$1" ] && l=$1; [ "$l" -lt 5 ] && l=5; echo "$l"; }
# the files that come back from a device machine: at most 8
finish() {
	say ""
	say "steps: ${STEPS[*]:-none}; $(( $(date +%s) - t0 )) s; exit $1"
	if [ -n "${OUT:-}" ] && mkdir -p "$OUT" 2>/dev/null; then
		cp "$SUMMARY" "$RESULTS/env.txt" "$OUT/" 2>/dev/null
		for f in probes nccl compute; do
			[ -f "$RESULTS/$f.jsonl" ] && cp "$RESULTS/$f.jsonl" "$OUT/"
		done
		[ -f "$RESULTS/report/summary.json" ] && cp "$RESULTS/report/summary.json" "$OUT/report-summary.json"
		# the training steps' records, one file (a device returns 8 at most)
		(cd "$RESULTS" && ls trainstep.jsonl torch_step.jsonl 2>/dev/null | tar -cf "$OUT/train.tar" -T - 2>/dev/null)
		for f in "$RESULTS"/*.out "$RESULTS"/*.err "$RESULTS"/build.log; do
			[ -s "$f" ] && { echo "==== $(basename "$f")"; tail -n 60 "$f"; }
		done >"$OUT/logs.txt" 2>/dev/null
	fi
	exit "$1"
}

# ---- what this machine has
if [ -z "${NGPU:-}" ]; then
	if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
		NGPU=$(tr ',' '\n' <<<"$CUDA_VISIBLE_DEVICES" | grep -c .)
	else
		NGPU=$(ls -d /dev/nvidia[0-9]* 2>/dev/null | wc -l)
	fi
fi
{
	echo "host $(hostname) $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
	(. /etc/os-release 2>/dev/null && echo "os $PRETTY_NAME"); echo "glibc $(ldd --version 2>/dev/null | sed -n '1s/.* //p')"
	nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit \
		--format=csv 2>&1 | head -20
	for c in nvcc mpicc mpirun gcc make jq python3; do echo "$c: $(command -v $c || echo missing)"; done
	echo "missing build packages: $(scripts/deps.sh --missing-build 2>/dev/null || echo '?')"
	[ -f build/gpu-bundle/BUILT ] && sed 's/^/bundle: /' build/gpu-bundle/BUILT
} >"$RESULTS/env.txt" 2>&1
say "tests/gpu/run.sh: $NGPU GPU(s); results in $RESULTS${OUT:+ (and $OUT)}; budget ${TOTAL_S} s"
sed -n '1,2p;/^index/,/^nvcc/p' "$RESULTS/env.txt" | grep -v '^nvcc' | sed 's/^/  /' | tee -a "$SUMMARY"
if [ "$NGPU" -lt 1 ] && [ -z "${CCDIAG_FAKECUDA_GPUS:-}" ]; then
	say "skipped: no NVIDIA GPU here (/dev/nvidia0 missing); nothing to measure"
	finish 2
fi

# one host: shared memory and TCP for MPI; root is allowed (containers)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_pml=${OMPI_MCA_pml:-ob1} OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader,tcp}
export OMPI_MCA_osc=${OMPI_MCA_osc:-^ucx} OMPI_MCA_btl_base_warn_component_unused=0
# a one-rank run needs no launcher: an MPI singleton that starts no daemon
export OMPI_MCA_ess_singleton_isolated=1

# a library directory of the CUDA pip packages (nvidia/NAME/lib), if python3 has them
pylib() {
	python3 -c "import os, nvidia.$1 as m; print(os.path.join(list(m.__path__)[0], 'lib'))" 2>/dev/null
}

# ccprobe links NCCL, which a bundle or a binary built elsewhere leaves to this host: find it
find_nccl() {
	for d in "$(pylib nccl)" /usr/local/cuda/lib64 /usr/lib/x86_64-linux-gnu; do
		ldd "$P" 2>/dev/null | grep -q 'libnccl.so.2 => not found' || break
		[ -n "$d" ] && [ -e "$d/libnccl.so.2" ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d"
	done
}

# ---- ccprobe: the carried bundle, or built here
BUILD=${BUILD:-auto}
[ -n "${CCDIAG_PREBUILT:-}" ] && BUILD=prebuilt
B=$ROOT/build/gpu-bundle
[ "$BUILD" = auto ] && { [ -x "$B/bin/ccprobe" ] && BUILD=bundle || BUILD=make; }
P=; R=
if [ "$BUILD" = bundle ]; then
	if [ -x "$B/bin/ccprobe" ]; then
		. "$B/bundle.env"
		jq -n 1 >/dev/null 2>&1 || export PATH="$B/bin:$PATH"
		P=$B/bin/ccprobe R=$B/bin/ccreport
		find_nccl
		if ldd "$P" 2>/dev/null | grep -q 'not found'; then
			say "bundle: ccprobe lacks $(ldd "$P" | awk '/not found/ {print $1}' | tr '\n' ' ')-> ccprobe-nonccl (no NCCL step)"
			P=$B/bin/ccprobe-nonccl
		fi
		say "== ccprobe: the carried bundle ($(head -1 "$B/BUILT" 2>/dev/null))"
		STEPS+=("build:bundle")
	else
		say "== build: BUILD=bundle but no $B (tests/gpu/bundle.sh makes it)"
		STEPS+=("build:FAILED")
	fi
elif [ "$BUILD" = prebuilt ]; then
	if [ -x build/ccprobe ] && [ -x build/ccreport ]; then
		P=$ROOT/build/ccprobe R=$ROOT/build/ccreport
		find_nccl
		say "== prebuilt: $("$P" --version 2>&1 | head -1)"
		STEPS+=("build:prebuilt")
	else
		say "== prebuilt: build/ccprobe or build/ccreport missing"
		STEPS+=("build:FAILED")
	fi
else
	missing=$(scripts/deps.sh --missing-build 2>/dev/null)
	if [ -n "$missing" ]; then
		say "== build: cannot build here: missing $missing(and no build/gpu-bundle: make one with tests/gpu/bundle.sh and carry it)"
		STEPS+=("build:FAILED")
	else
		say "== build: make USE_CUDA=yes (up to $(limit 150) s)"
		timeout "$(limit 150)" make -j"$(nproc)" USE_CUDA=yes build/ccprobe build/ccreport >"$RESULTS/build.log" 2>&1
		rc=$?
		if [ "$rc" -eq 0 ]; then
			P=$ROOT/build/ccprobe R=$ROOT/build/ccreport
			make -s features 2>/dev/null | sed 's/^/   /' | tee -a "$SUMMARY"
			STEPS+=("build:ok")
		else
			say "   FAILED (exit $rc): $(tail -3 "$RESULTS/build.log" | tr '\n' ' ')"
			STEPS+=("build:FAILED")
		fi
	fi
fi
# the gemm probe opens libcublasLt at run time: the pip package's, when the toolkit has none here
[ -n "$(pylib cublas)" ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$(pylib cublas)"
[ -n "$P" ] || finish 1

RANKS=$NGPU
FAKE=()
if [ -n "${CCDIAG_FAKECUDA_GPUS:-}" ]; then
	make build/tests/libfakecuda.so >/dev/null || finish 1
	say "== dry run under the CUDA test double: the figures below are NOT measurements"
	FAKE=(LD_PRELOAD="$ROOT/build/tests/libfakecuda.so"
	      LD_LIBRARY_PATH="$ROOT/build/tests/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
fi
if [ "$RANKS" -gt 1 ] && command -v mpirun >/dev/null && [ "$BUILD" != bundle ]; then
	LAUNCH=(mpirun --oversubscribe --bind-to none -np "$RANKS")
	for v in "${FAKE[@]}" ${CCDIAG_FAKECUDA_GPUS:+CCDIAG_FAKECUDA_GPUS}; do LAUNCH+=(-x "$v"); done
else
	[ "$RANKS" -gt 1 ] && say "   no mpirun to start $RANKS ranks with: one rank, GPU 0 only"
	RANKS=1
	LAUNCH=(env "${FAKE[@]}")
fi

failed() {  # failed NAME RC LIMIT: the step's failure, the tail of its stderr
	say "   FAILED (exit $2$([ "$2" -eq 124 ] && echo ": past its $3 s"))"
	tail -5 "$RESULTS/$1.err" | sed 's/^/   | /' | tee -a "$SUMMARY"
	STEPS+=("$1:FAILED")
	fail=1
}

step() {  # step NAME CAP ARGS...: one ccprobe run into $RESULTS/NAME.jsonl, within CAP seconds
	local name=$1 cap=$2 rc lim
	shift 2
	lim=$(limit "$cap")
	say "== $name (up to $lim s): ccprobe $*"
	timeout "$lim" "${LAUNCH[@]}" "$P" -o "$RESULTS/$name.jsonl" "$@" >"$RESULTS/$name.out" 2>"$RESULTS/$name.err"
	rc=$?
	if [ "$rc" -ne 0 ] || ! jq -e -s '.[-1].type == "end" and .[-1].status == "complete"' \
		"$RESULTS/$name.jsonl" >/dev/null 2>&1; then
		failed "$name" "$rc" "$lim"
	else
		STEPS+=("$name:ok")
	fi
	jq -r 'select(.type == "skip" or .type == "error") | "   \(.type): \(.name) \(.test // ""): \(.reason // .message)"' \
		"$RESULTS/$name.jsonl" 2>/dev/null | tee -a "$SUMMARY"
	return 0
}

# probes: 20 copies per sample, 5 samples, 5 warm-up copies; default sizes (hbm 256 MiB-1 GiB)
step probes 60 -n 20 -w 5 -r 5 ${SIZES:-} pcie nvlink hbm
# matmul: bf16 and fp8 (skipped by the probe below compute capability 8.9), two shapes,
# 20 timed products each, sustained seconds on 8192^3; gpuhealth before and after
step compute 90 --gemm-dtypes bf16,fp8 --gemm-shapes "${GEMM_SHAPES:-8192,4096}" --gemm-iters 20 \
	--gemm-warmup 5 --gemm-seconds "${GEMM_SECONDS:-10}" gpuhealth gemm
# NCCL all_reduce, float sum, 8 B .. 256 MiB, 1 s per size at most
if [ "$(basename "$P")" = ccprobe-nonccl ]; then
	say "== nccl: skipped (no libnccl.so.2 on this host for the bundle's ccprobe)"
	STEPS+=("nccl:skipped")
else
	step nccl 45 -B nccl -b 8 -e "${NCCL_MAX:-256M}" -f 2 -n 20 -w 5 -r 5 --time-per-size 1 all_reduce
fi

# a hung rank under NCCL: the watchdog must name it and end the job (exit 4)
if [ "$RANKS" -ge 2 ] && [ "$(left)" -gt 40 ]; then
	say "== nccl hang: rank 1 stops before its 1 MiB all_reduce; --timeout 15"
	timeout 60 "${LAUNCH[@]}" -x CCPROBE_FAULT=hang:1:1048576 "$P" -B nccl -b 1M -e 1M -n 5 -w 1 \
		-r 2 --timeout 15 -o "$RESULTS/hang.jsonl" all_reduce >"$RESULTS/hang.out" 2>"$RESULTS/hang.err"
	rc=$?
	if [ "$rc" -eq 4 ] && jq -e -s 'any(.[]; .type == "timeout" and
		any(.not_started[]; .rank == 1)) and .[-1].status == "timeout"' "$RESULTS/hang.jsonl" >/dev/null; then
		say "   ok: exit 4, timeout record names rank 1 as never started"
		STEPS+=("hang:ok")
	else
		say "   FAILED: exit $rc; $(jq -c 'select(.type == "timeout" or .type == "end")' "$RESULTS/hang.jsonl" 2>/dev/null | head -c 400)"
		STEPS+=("hang:FAILED")
		fail=1
	fi
fi

# ---- the training step (issue 34; docs/estimate.md, "Measured against a real step"): ccprobe
# trainstep on one rank (cuBLASLt bf16 products, each bucket's ncclAllReduce on the
# communication stream after its event), then workloads/torch_step.py on CUDA when a python3
# here imports torch with CUDA. One rank, an MPI singleton: no launcher needed. ~30 s of GPU.
TS_SHAPE=${TS_SHAPE:---train-params 1e8 --train-layers 8 --train-tokens 4096 --train-bucket 25M}
if [ "$(basename "$P")" = ccprobe-nonccl ]; then
	say "== trainstep: skipped (no libnccl.so.2 on this host for the bundle's ccprobe)"
	STEPS+=("trainstep:skipped")
elif [ "$(left)" -gt 30 ]; then
	lim=$(limit 40)
	say "== trainstep (up to $lim s, 1 rank): ccprobe -B nccl $TS_SHAPE --train-steps 10 trainstep"
	# shellcheck disable=SC2086
	timeout "$lim" env "${FAKE[@]}" "$P" -B nccl $TS_SHAPE --train-steps 10 --train-mem 8G --timeout 30 \
		-o "$RESULTS/trainstep.jsonl" trainstep >"$RESULTS/trainstep.out" 2>"$RESULTS/trainstep.err"
	rc=$?
	if [ "$rc" -eq 0 ] && jq -e -s 'any(.[]; .test == "summary" and .backend == "nccl") and
		.[-1].status == "complete"' "$RESULTS/trainstep.jsonl" >/dev/null 2>&1; then
		jq -r 'select(.test == "summary") | "trainstep  \(.ranks) rank, hidden \(.hidden), \(.layers) layers, \(.tokens_per_rank) tokens, \(.params / 1e6 | round) M params, \(.buckets) bucket(s) of \(.bucket_bytes) B: step \(.step_s * 1e5 | round / 100) ms (cv \(.step_stats_s.cv * 100 | round) %), compute alone \(.compute_s * 1e5 | round / 100) ms, comm alone \(.comm_alone_s * 1e5 | round / 100) ms, overlap \(.overlap * 100 | round) %, \(.compute_flops_per_rank / 1e12 | round) TFLOP/s per GPU (compute alone)\(if .transport then " [" + .transport + "]" else "" end)"' \
			"$RESULTS/trainstep.jsonl" | tee -a "$SUMMARY"
		STEPS+=("trainstep:ok")
	else
		failed trainstep "$rc" "$lim"
		jq -r 'select(.type == "skip" or .type == "error" or .type == "timeout") | "   \(.type): \(.reason // .message // .name)"' \
			"$RESULTS/trainstep.jsonl" 2>/dev/null | tee -a "$SUMMARY"
	fi
	# the interpreter, as ccdiag finds it (docs/ccdiag.md): CCDIAG_PYTHON alone when set, else
	# the first python3 on PATH that imports torch with CUDA; each try within what is left
	tpy="" tried=""
	if [ -z "${CCDIAG_FAKECUDA_GPUS:-}" ]; then
		if [ -n "${CCDIAG_PYTHON:-}" ]; then cands=("$CCDIAG_PYTHON"); else mapfile -t cands < <(type -P -a python3 | awk '!seen[$0]++'); fi
		for py in "${cands[@]}"; do
			[ "$(left)" -gt 50 ] || break
			tried+=" $py"
			if timeout "$(limit 45)" "$py" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' \
				>/dev/null 2>&1; then
				tpy=$py
				break
			fi
		done
	fi
	if [ -n "${CCDIAG_FAKECUDA_GPUS:-}" ]; then
		say "== torch_step: skipped (the CUDA test double cannot run PyTorch)"
		STEPS+=("torch_step:skipped")
	elif [ -z "$tpy" ]; then
		say "== torch_step: skipped: ${CCDIAG_PYTHON:+CCDIAG_PYTHON=}${tried:+tried$tried: }no python3 here imports torch with CUDA available (CCDIAG_PYTHON names one)"
		STEPS+=("torch_step:skipped")
	elif [ "$(left)" -gt 40 ]; then
		lim=$(limit 90)
		say "== torch_step (up to $lim s, 1 rank, CUDA): $tpy workloads/torch_step.py --params 1e8 --layers 8 --tokens 4096 --bucket 25M"
		timeout "$lim" "$tpy" workloads/torch_step.py --params 1e8 --layers 8 --tokens 4096 --seq 512 --bucket 25M \
			--steps 10 --warmup 3 -o "$RESULTS/torch_step.jsonl" >"$RESULTS/torch_step.out" 2>"$RESULTS/torch_step.err"
		rc=$?
		if [ "$rc" -eq 0 ] && jq -e -s 'any(.[]; .test == "summary")' "$RESULTS/torch_step.jsonl" >/dev/null 2>&1; then
			jq -r 'select(.test == "summary") | "torch_step \(.framework), \(.backend), \(.dtype), \(.ranks) rank, \(.params / 1e6 | round) M params: step \(.step_s * 1e5 | round / 100) ms (cv \(.step_stats_s.cv * 100 | round) %), compute alone \(.compute_s * 1e5 | round / 100) ms, comm alone \(.comm_alone_s * 1e5 | round / 100) ms, \((.compute_flops_per_rank // 0) / 1e12 | round) TFLOP/s per GPU (compute alone), losses agree \(.losses_agree); python \(.python)"' \
				"$RESULTS/torch_step.jsonl" | tee -a "$SUMMARY"
			STEPS+=("torch_step:ok")
		else
			failed torch_step "$rc" "$lim"
		fi
	else
		say "== torch_step: skipped: under 40 s left of TOTAL_S"
		STEPS+=("torch_step:skipped")
	fi
else
	say "== trainstep: skipped: under 30 s left of TOTAL_S"
	STEPS+=("trainstep:skipped")
fi

say ""
say "== figures ($RANKS GPU(s) measured; GB/s = 1e9 bytes/s, TB/s = 1e12; median of repetitions)"
if ! jq -n 1 >/dev/null 2>&1; then
	say "   jq missing: no figures printed; the records are in $RESULTS"
	finish 1
fi
{
jq -r -s '
	def r1: . * 10 | round / 10;
	def tb: . / 1000 * 100 | round / 100;
	(.[] | select(.type == "inventory" and .kind == "gpu") | .gpus[] |
	 "inventory  \(.element): \(.name), \(.memory_bytes / 1e9 | floor) GB, bus \(.bus_id), NUMA \(.numa_node), PCIe at rest gen \(.pcie.current.gen // "?") x\(.pcie.current.width // "?") (max gen \(.pcie.max.gen // "?") x\(.pcie.max.width // "?")), ACS redirect \(if .pcie_path.acs_redirect == null then "unknown" else .pcie_path.acs_redirect end), IOMMU \(.pcie_path.iommu_group_type // "none")"),
	(.[] | select(.type == "inventory" and .kind == "gpu") | "versions   \(.host): \(.versions | to_entries | map("\(.key) \(.value)") | join(", "))"),
	([.[] | select(.type == "measurement" and .name == "hbm")] as $h | ($h | map(.bytes) | max) as $max
	 | ($h | map(select(.bytes == $max)) | group_by(.element)[]
	    | (map({key: .test, value: .}) | from_entries) as $t
	    | "hbm        \(.[0].element) at \($max) B: copy (kernel, judged) \($t.copy.bw_GBps // 0 | tb) TB/s" +
	      (if $t.copy.pct_of_rate then " = \($t.copy.pct_of_rate | round)% of \($t.copy.rate_GBps | tb) TB/s" else "" end) +
	      "; triad \($t.triad.bw_GBps // 0 | tb) TB/s" +
	      (if $t.triad.pct_of_rate then " (\($t.triad.pct_of_rate | round)%)" else "" end) +
	      "; copy_engine \($t.copy_engine.bw_GBps // 0 | tb) TB/s" +
	      (if $t.copy_engine.pct_of_rate then " (\($t.copy_engine.pct_of_rate | round)%)" else "" end) +
	      " [read + write counted; triad 3 x]")),
	([.[] | select(.type == "measurement" and .name == "pcie" and .test == "h2d")] | unique_by(.element)[]
	 | "pcie link  \(.element) under load: gen \(.link.gen // "?") x\(.link.width // "?") of gen \(.link.max_gen // "?") x\(.link.max_width // "?") (\(.link.state // "?"), \(.link.source // "?")), downtrained \(if .downtrained == null then "unknown" else .downtrained end)"),
	([.[] | select(.type == "measurement" and .name == "pcie")] as $p
	 | ($p | map(.bytes) | max) as $max
	 | $p[] | select(.bytes == $max)
	 | "pcie       \(.element) \(.test): \(.bw_GBps | r1) GB/s at \(.bytes) B" +
	   (if .rate_GBps then " (\(.pct_of_rate | round)% of \(.rate_GBps | r1) GB/s)" else "" end)),
	([.[] | select(.type == "measurement" and .name == "nvlink")] as $n
	 | (["p2p_uni", "p2p_bidir"][] as $t | [$n[] | select(.test == $t) | .bw_GBps] as $v
	    | select($v | length > 0)
	    | "nvlink     \($t): \($v | min | round)..\($v | max | round) GB/s over \($v | length) pairs"))
' "$RESULTS/probes.jsonl"
jq -r -s '
	(.[] | select(.type == "measurement" and .name == "gemm" and .test == "matmul")
	 | "gemm       \(.element) \(.dtype) \(.shape): \(.tflops | round) TFLOP/s median (min \(.tflops_stats.min | round), p99 \(.tflops_stats.p99 | round)), accumulation \(.accumulation // "default")" +
	   (if .peak_tflops then ", \(.pct_of_peak | round)% of \(.peak_tflops) dense peak" else "" end)),
	(.[] | select(.type == "measurement" and .name == "gemm" and .test == "sustained")
	 | "sustained  \(.element) \(.dtype) \(.shape) \(.seconds | round) s: \(.tflops | round) TFLOP/s, first 10% \(.tflops_first | round), last 10% \(.tflops_last | round) (drop \(.drop_pct * 10 | round / 10)%)" +
	   (if .sm_clock_mhz then "; SM \(.sm_clock_mhz.min)..\(.sm_clock_mhz.max) MHz, power max \(.power_w.max | round) W, temperature max \(.temp_c.max) C" else "; NVML: \(.nvml)" end)),
	(.[] | select(.type == "measurement" and .name == "gemm" and .test == "sustained" and .throttle_samples)
	 | "throttle   \(.element): reasons seen \(.throttle_reasons | join(",") | if . == "" then "none" else . end); samples of \(.samples): \(.throttle_samples | to_entries | map(select(.value > 0) | "\(.key) \(.value)") | join(", ") | if . == "" then "none" else . end) (slowdown = HW slowdown, thermal, power brake; SW power cap is not one)"),
	(.[] | select(.type == "measurement" and .name == "gemm" and .test == "sdc")
	 | "sdc        \(.element): checksum \(.checksum), \(if .wrong == 0 then "agrees with" else "DIFFERS from" end) \(.compared_with) other GPU(s), sms \(.sms // "?")"),
	(.[] | select(.type == "measurement" and .name == "gpuhealth")
	 | "gpuhealth  \(.element) \(.phase): memory \(.mem_free_bytes / 1e9 * 10 | round / 10) of \(.mem_total_bytes / 1e9 * 10 | round / 10) GB free; remap pending \(.health.remap_pending // "?"), uncorrected ECC \(.health.ecc_uncorrected_volatile // "?"); xid_critical \(.health.xid_critical // "absent") (kernel log: \(.xid_log // "?")), xid_event_critical \(.health.xid_event_critical // "absent") (NVML events)" +
	   (if .unknown then "; unknown: \(.unknown | tostring | .[0:160])" else "" end) + "; NVML \(.nvml)")
' "$RESULTS/compute.jsonl"
jq -r -s '
	[.[] | select(.type == "measurement" and .kind == "collective")] as $m
	| select($m | length > 0)
	| ($m | max_by(.busbw_GBps)) as $best
	| ($m | max_by(.bytes)) as $big
	| ($m | min_by(.bytes)) as $small
	| "nccl       all_reduce \($m[0].ranks) rank(s): busbw \($big.busbw_GBps * 100 | round / 100) GB/s at \($big.bytes) B (peak \($best.busbw_GBps * 100 | round / 100) at \($best.bytes) B); \($small.time_us.median * 100 | round / 100) us at \($small.bytes) B; wrong \([$m[].wrong] | add)",
	  "versions   nccl \(.[0].versions.nccl // "?"), cuda runtime \(.[0].versions.cuda_runtime // "?")"
' "$RESULTS/nccl.jsonl"
} 2>/dev/null | tee -a "$SUMMARY"

# the shipped profile of this GPU judges the records: every GPU criterion must find
# them (a probe field the profile does not know shows as "no measurement of ...")
model=$(jq -r 'select(.type == "inventory" and .kind == "gpu") | .gpus[0].name // empty' \
	"$RESULTS/probes.jsonl" "$RESULTS/compute.jsonl" 2>/dev/null | head -1)
case "$model" in
*H200*) prof=h200-sxm-8x-ndr400 ;;
*A100*) prof=a100-sxm-8x-hdr200 ;;
*) prof=h100-sxm-8x-ndr400 ;;
esac
say ""
say "== ccreport -p $prof (GPU model '$model'; one host, so IB and multi-node criteria stay incomplete)"
inputs=()
for f in probes nccl compute; do [ -s "$RESULTS/$f.jsonl" ] && inputs+=("$RESULTS/$f.jsonl"); done
if [ "${#inputs[@]}" -gt 0 ]; then
	timeout 30 "$R" -p "profiles/$prof.ini" --no-render -n 40 -o "$RESULTS/report" "${inputs[@]}" \
		>"$RESULTS/report.out" 2>&1
	head -4 "$RESULTS/report.out" | tee -a "$SUMMARY"
	jq -r '.criteria[] | select(.probe // "" | test("^(pcie|nvlink|hbm|gemm|gpuhealth)$")) |
		"   \(.id): \(.verdict)\(if .worst then ", worst \(.worst.element) \(.worst.value) \(.worst.unit)" else "" end); \(.reason | .[0:140])"' \
		"$RESULTS/report/summary.json" 2>/dev/null | tee -a "$SUMMARY"
	# (dcgm_*: evidence imported from dcgmi diag, which no probe writes; one rank has no
	# bus bandwidth, so allreduce_node needs 2 GPUs or more; one GPU passed through alone
	# to a VM has no NVLink and NVML no NVLink counters, so gpu_nvlink_errors needs 2 too)
	missing=$(jq -c --argjson ranks "$RANKS" '[.criteria[] | select((.probe // "" | test("^(pcie|nvlink|hbm|gemm|gpuhealth)$")) or
			(.id == "allreduce_node" and $ranks > 1) or .id == "allreduce_data") |
			select(.id != "gpu_nvlink_errors" or $ranks > 1) |
			select(.id | startswith("dcgm_") | not) |
			select(.reason | startswith("no measurement of")) | .id]' "$RESULTS/report/summary.json" 2>/dev/null)
	if [ "$missing" = "[]" ]; then
		say "   ok: every GPU criterion of $prof found the probes' records"
		STEPS+=("report:ok")
	else
		say "   FAILED: GPU criteria that found no records: ${missing:-no summary.json}"
		STEPS+=("report:FAILED")
		fail=1
	fi
else
	say "   nothing to judge: no records"
	STEPS+=("report:FAILED")
	fail=1
fi
say "tables: $RESULTS/*.out; records: $RESULTS/*.jsonl; report: $RESULTS/report"
finish $fail
