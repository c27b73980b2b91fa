#!/bin/bash
# tests/gpu/run.sh: on a machine with NVIDIA GPUs, builds ccprobe and runs
# every GPU probe (pcie, nvlink, hbm, gemm with gpuhealth before and after)
# and an NCCL all_reduce sweep from 8 B to 1 GiB on one host, one rank per
# GPU, then prints the figures with their units. Meant to finish in under 5 minutes on an 8-GPU host.
#
#   tests/gpu/run.sh                 # all GPUs of this host
#   NGPU=2 OUT=/tmp/gpu tests/gpu/run.sh
#   CCDIAG_FAKECUDA_GPUS=2 NGPU=2 SIZES="-b 1M -e 4M" NCCL_MAX=1M GEMM_SHAPES=256 GEMM_SECONDS=1 tests/gpu/run.sh
#                                    # a dry run of this script under the CUDA test double
#                                    # (tests/fakes/fake.h): its figures are not measurements
#   CCDIAG_PREBUILT=1 tests/gpu/run.sh   # use build/ccprobe and build/ccreport as they are (built
#                                    # on another machine), without make
#
# Exit status: 0 when every step ran and ended "complete" with no failure,
# 1 when a step failed, 2 when there is no GPU here.
# Compare with nvbandwidth, p2pBandwidthLatencyTest and nccl-tests as
# docs/gpu.md describes.
set -u
cd "$(dirname "$0")/../.." || exit 2

if [ -z "${NGPU:-}" ]; then
	if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
		NGPU=$(tr ',' '\n' <<<"$CUDA_VISIBLE_DEVICES" | grep -c .)
	else
		NGPU=$(ls -d /dev/nvidia[0-9]* 2>/dev/null | wc -l)
	fi
fi
OUT=${OUT:-results/gpu}
if [ "$NGPU" -lt 1 ] && [ -z "${CCDIAG_FAKECUDA_GPUS:-}" ]; then
	echo "tests/gpu/run.sh: no NVIDIA GPU here (/dev/nvidia0 missing); nothing to measure" >&2
	exit 2
fi
mkdir -p "$OUT" || exit 1

# one host: shared memory and TCP for MPI; root is allowed (containers)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_pml=${OMPI_MCA_pml:-ob1} OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader,tcp}
export OMPI_MCA_osc=${OMPI_MCA_osc:-^ucx} OMPI_MCA_btl_base_warn_component_unused=0

t0=$(date +%s)
if [ -n "${CCDIAG_PREBUILT:-}" ]; then
	# binaries built elsewhere (a machine without the build's packages): use them as they are
	echo "== prebuilt: $(build/ccprobe --version 2>&1 | head -1)"
	[ -x build/ccprobe ] && [ -x build/ccreport ] || { echo "CCDIAG_PREBUILT set but build/ccprobe or build/ccreport missing"; exit 1; }
else
	echo "== build"
	make -j"$(nproc)" USE_CUDA=yes build/ccprobe build/ccreport 2>&1 | tail -3
	[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "build failed"; exit 1; }
fi
P=build/ccprobe
MPI=(mpirun --oversubscribe --bind-to none -np "$NGPU")
if [ -n "${CCDIAG_FAKECUDA_GPUS:-}" ]; then
	make build/tests/libfakecuda.so >/dev/null || exit 1
	echo "== dry run under the CUDA test double: the figures below are NOT measurements"
	MPI+=(-x LD_PRELOAD="$PWD/build/tests/libfakecuda.so" -x LD_LIBRARY_PATH="$PWD/build/tests/fakecuda"
	      -x CCDIAG_FAKECUDA_GPUS)
fi
fail=0

step() {  # step NAME TIMEOUT ARGS...: one ccprobe run into $OUT/NAME.jsonl
	local name=$1 limit=$2 rc
	shift 2
	echo "== $name: ccprobe $*"
	timeout "$limit" "${MPI[@]}" "$P" -o "$OUT/$name.jsonl" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
	rc=$?
	if [ "$rc" -ne 0 ] || ! jq -e -s '.[-1].type == "end" and .[-1].status == "complete"' \
		"$OUT/$name.jsonl" >/dev/null 2>&1; then
		echo "   FAILED (exit $rc); see $OUT/$name.err:"
		tail -5 "$OUT/$name.err"
		fail=1
	fi
	jq -r 'select(.type == "skip" or .type == "error") | "   \(.type): \(.name): \(.reason // .message)"' \
		"$OUT/$name.jsonl" 2>/dev/null
}

# probes: 20 copies per sample, 5 samples, 5 warm-up copies; default sizes
step probes 180 -n 20 -w 5 -r 5 ${SIZES:-} pcie nvlink hbm
# NCCL all_reduce, float sum, 8 B .. 1 GiB
step nccl 150 -B nccl -b 8 -e "${NCCL_MAX:-1G}" -f 2 -n 20 -w 5 -r 5 all_reduce
# matmul: bf16 and fp8 (skipped by the probe below compute capability 8.9), two shapes,
# 20 timed products each, 10 s sustained on 8192^3; gpuhealth before and after
step compute 180 --gemm-dtypes bf16,fp8 --gemm-shapes "${GEMM_SHAPES:-8192,4096}" --gemm-iters 20 --gemm-warmup 5 \
	--gemm-seconds "${GEMM_SECONDS:-10}" gpuhealth gemm

# a hung rank under NCCL: the watchdog must name it and end the job (exit 4)
if [ "$NGPU" -ge 2 ]; then
	echo "== nccl hang: rank 1 stops before its 1 MiB all_reduce; --timeout 15"
	timeout 120 "${MPI[@]}" -x CCPROBE_FAULT=hang:1:1048576 "$P" -B nccl -b 1M -e 1M -n 5 -w 1 \
		-r 2 --timeout 15 -o "$OUT/hang.jsonl" all_reduce >"$OUT/hang.out" 2>"$OUT/hang.err"
	rc=$?
	if [ "$rc" -eq 4 ] && jq -e -s 'any(.[]; .type == "timeout" and
		any(.not_started[]; .rank == 1)) and .[-1].status == "timeout"' "$OUT/hang.jsonl" >/dev/null; then
		echo "   ok: exit 4, timeout record names rank 1 as never started"
	else
		echo "   FAILED: exit $rc; $(jq -c 'select(.type == "timeout" or .type == "end")' "$OUT/hang.jsonl" 2>/dev/null | head -c 400)"
		fail=1
	fi
fi

echo
echo "== figures ($NGPU GPU(s); GB/s = 1e9 bytes/s; median of repetitions)"
jq -r -s '
	(.[] | select(.type == "inventory") | .gpus[] |
	 "inventory  \(.element): \(.name), \(.memory_bytes / 1e9 | floor) GB, bus \(.bus_id), NUMA \(.numa_node), PCIe at rest gen \(.pcie.current.gen // "?") x\(.pcie.current.width // "?") (max gen \(.pcie.max.gen // "?") x\(.pcie.max.width // "?")), ACS redirect \(if .pcie_path.acs_redirect == null then "unknown" else .pcie_path.acs_redirect end), IOMMU \(.pcie_path.iommu_group_type // "none")"),
	([.[] | select(.type == "measurement" and .name == "pcie" and .test == "h2d")] | unique_by(.element)[]
	 | "pcie link  \(.element) under load: gen \(.link.gen // "?") x\(.link.width // "?") of gen \(.link.max_gen // "?") x\(.link.max_width // "?") (\(.link.state // "?"), \(.link.source // "?")), downtrained \(if .downtrained == null then "unknown" else .downtrained end)"),
	(.[] | select(.type == "inventory") | "versions   \(.host): \(.versions | to_entries | map("\(.key) \(.value)") | join(", "))"),
	([.[] | select(.type == "measurement" and .name == "pcie")] as $p
	 | ($p | map(.bytes) | max) as $max
	 | $p[] | select(.bytes == $max)
	 | "pcie       \(.element) \(.test): \(.bw_GBps * 100 | round / 100) GB/s at \(.bytes) B" +
	   (if .rate_GBps then " (\(.pct_of_rate | round)% of \(.rate_GBps * 10 | round / 10) GB/s)" else "" end)),
	(.[] | select(.type == "measurement" and .name == "hbm")
	 | "hbm        \(.element) copy: \(.bw_GBps | round) GB/s at \(.bytes) B (read + write; \(.copy_GBps // 0 | round) GB/s counted once)" +
	   (if .rate_GBps then ", \(.pct_of_rate | round)% of \(.rate_GBps | round) GB/s" else "" end)),
	([.[] | select(.type == "measurement" and .name == "nvlink")] as $n
	 | (["p2p_uni", "p2p_bidir"][] as $t | [$n[] | select(.test == $t) | .bw_GBps] as $v
	    | select($v | length > 0)
	    | "nvlink     \($t): \($v | min | round)..\($v | max | round) GB/s over \($v | length) pairs"),
	   ([$n[] | select(.test == "p2p_lat") | .lat_us.median] as $v | select($v | length > 0)
	    | "nvlink     p2p_lat: \($v | min * 100 | round / 100)..\($v | max * 100 | round / 100) us over \($v | length) pairs"))
' "$OUT/probes.jsonl" 2>/dev/null
jq -r -s '
	[.[] | select(.type == "measurement" and .kind == "collective")] as $m
	| select($m | length > 0)
	| ($m | max_by(.busbw_GBps)) as $best
	| ($m | max_by(.bytes)) as $big
	| ($m | min_by(.bytes)) as $small
	| "nccl       all_reduce \($m[0].ranks) ranks: busbw \($big.busbw_GBps * 100 | round / 100) GB/s at \($big.bytes) B (peak \($best.busbw_GBps * 100 | round / 100) at \($best.bytes) B); \($small.time_us.median * 100 | round / 100) us at \($small.bytes) B; wrong \([$m[].wrong] | add)",
	  "versions   nccl \(.[0].versions.nccl // "?"), cuda runtime \(.[0].versions.cuda_runtime // "?")"
' "$OUT/nccl.jsonl" 2>/dev/null

jq -r -s '
	(.[] | select(.type == "measurement" and .name == "gemm" and .test == "matmul")
	 | "gemm       \(.element) \(.dtype) \(.shape): \(.tflops | round) TFLOP/s median (min \(.tflops_stats.min | round), p99 \(.tflops_stats.p99 | round))" +
	   (if .peak_tflops then ", \(.pct_of_peak | round)% of \(.peak_tflops) dense peak" else "" end)),
	(.[] | select(.type == "measurement" and .name == "gemm" and .test == "sustained")
	 | "sustained  \(.element) \(.dtype) \(.shape) \(.seconds | round) s: \(.tflops | round) TFLOP/s, first 10% \(.tflops_first | round), last 10% \(.tflops_last | round) (drop \(.drop_pct * 10 | round / 10)%)" +
	   (if .sm_clock_mhz then "; SM \(.sm_clock_mhz.min)..\(.sm_clock_mhz.max) MHz, mem \(.mem_clock_mhz.median) MHz, power max \(.power_w.max | round) W, temperature max \(.temp_c.max) C, reasons \(.throttle_reasons | join(",") | if . == "" then "none" else . end)" else "; NVML: \(.nvml)" end)),
	(.[] | select(.type == "measurement" and .name == "gemm" and .test == "sdc")
	 | "sdc        \(.element): checksum \(.checksum), \(if .wrong == 0 then "agrees with" else "DIFFERS from" end) \(.compared_with) other GPU(s)"),
	(.[] | select(.type == "skip" or .type == "error") | "           \(.type): \(.name) \(.dtype // ""): \(.reason // .message)"),
	(.[] | select(.type == "measurement" and .name == "gpuhealth")
	 | "gpuhealth  \(.element) \(.phase): memory \(.mem_free_bytes / 1e9 * 10 | round / 10) of \(.mem_total_bytes / 1e9 * 10 | round / 10) GB free; " +
	   "remap pending \(.health.remap_pending // "?"), uncorrected ECC \(.health.ecc_uncorrected_volatile // "?"), critical XIDs \(.health.xid_critical // "?") (\(.xid_log // "")), NVML \(.nvml)")
' "$OUT/compute.jsonl" 2>/dev/null

# the shipped profile of this GPU judges the records: every GPU criterion must find
# them (a probe field the profile does not know shows as "no measurement of ...")
model=$(jq -r 'select(.type == "inventory" and .kind == "gpu") | .gpus[0].name // empty' \
	"$OUT/probes.jsonl" 2>/dev/null | head -1)
case "$model" in
*H200*) prof=h200-sxm-8x-ndr400 ;;
*A100*) prof=a100-sxm-8x-hdr200 ;;
*) prof=h100-sxm-8x-ndr400 ;;
esac
echo
echo "== ccreport -p $prof (GPU model '$model'; one host, so IB and multi-node criteria stay incomplete)"
build/ccreport -p "profiles/$prof.ini" --no-render -n 40 -o "$OUT/report" "$OUT/probes.jsonl" \
	"$OUT/nccl.jsonl" "$OUT/compute.jsonl"
missing=$(jq -c '[.criteria[] | select((.probe // "" | test("^(pcie|nvlink|hbm|gemm|gpuhealth)$")) or
		.id == "allreduce_node" or .id == "allreduce_data") |
		select(.reason | startswith("no measurement of")) | .id]' "$OUT/report/summary.json" 2>/dev/null)
if [ "$missing" = "[]" ]; then
	echo "   ok: every GPU criterion of $prof found the probes' records"
else
	echo "   FAILED: GPU criteria that found no records: ${missing:-no summary.json}"
	fail=1
fi

echo
echo "tables: $OUT/probes.out $OUT/nccl.out; records: $OUT/*.jsonl; report: $OUT/report; $(( $(date +%s) - t0 )) s"
exit $fail
