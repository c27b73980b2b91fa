#!/bin/bash
# tests/integration/test_gemm_fake.sh: the gemm and gpuhealth probes end to
# end through the CUDA/cuBLASLt/NVML test double (tests/fakes/, LD_PRELOADed)
# on 4 local ranks, each fault made large: GPU 1 computes 10x slower and has
# 40 GiB, GPU 2 corrupts its product and delivers an NVML XID 48, GPU 3
# throttles (HW thermal) with a critical XID 79 in the kernel log, GPU 0 has
# a row remap pending. The probe's own checks (the corrupt GPU's error record,
# the hung GPU's timeout record, skips, exit codes) are asserted on its
# records. The double's records are never judged ("transport": "fake"), so
# ccreport is then run on a copy with the mark removed, to show what it makes
# of such records on hardware: each fault named on its GPU. No speed is
# asserted: the double's time is virtual.
source "$(dirname "$0")/../lib.sh"
P=$T_ROOT/build/ccprobe
R=$T_ROOT/build/ccreport
FAST=(--gemm-shapes 256,128 --gemm-iters 5 --gemm-warmup 2 --gemm-seconds 1)

if ! t_fakecuda_built; then
	t_skip "no build/tests/libfakecuda.so (a build without CUDA): nothing to run"
	t_done
	exit
fi
if ! "$P" --list | grep -q '^  gemm .*cross-GPU result check$'; then
	t_skip "ccprobe was built without cuBLASLt: gemm reports not built"
	t_done
	exit
fi

fk() {  # fk NP OUT ENV... -- ARGS...: ccprobe on NP ranks under the test double
	local np=$1 out=$2 env=()
	shift 2
	while [ "$1" != "--" ]; do env+=(-x "$1"); shift; done
	shift
	timeout 120 mpirun --oversubscribe -np "$np" "${T_FAKECUDA[@]}" "${env[@]}" \
		"$P" -q -o "$out" "$@" >"$out.stdout" 2>"$out.stderr"
}

# a kernel log in dmesg form: an XID 79 on GPU 3 five seconds ago, one on GPU 1 long
# before the window, one on GPU 0 that is not critical
up=$(cut -d' ' -f1 /proc/uptime)
klog=$T_TMP/kmsg
awk -v u="$up" 'BEGIN {
	printf "[%12.6f] NVRM: Xid (PCI:0000:5d:00): 79, pid=1, GPU has fallen off the bus.\n", u - 5
	printf "[%12.6f] NVRM: Xid (PCI:0000:2a:00): 79, pid=1, GPU has fallen off the bus.\n", (u > 700 ? u - 600 : 0)
	printf "[%12.6f] NVRM: Xid (PCI:0000:18:00): 13, Graphics SM Warp Exception\n", u - 3
	printf "[%12.6f] usb 1-1: new high-speed USB device\n", u - 2 }' >"$klog"

out=$T_TMP/faults.jsonl
fk 4 "$out" CCDIAG_FAKECUDA_GPUS=4 CCDIAG_FAKECUDA_SLOW=1:10 CCDIAG_FAKECUDA_MEM_GB=1:40 \
	CCDIAG_FAKEGEMM_CORRUPT=2 CCDIAG_FAKENVML_XID=2:48 CCDIAG_FAKENVML_THROTTLE=3:0x40 \
	CCDIAG_FAKENVML_REMAP_PENDING=0 -- "${FAST[@]}" --xid-log "$klog" --xid-since 120s \
	gemm gpuhealth
rc=$?
t_check "faults: exit 1 (the corrupt GPU is an error; rc $rc)" [ "$rc" -eq 1 ]
t_check "faults: the run ends complete with one failure" \
	jq -e -s '.[-1].type == "end" and .[-1].status == "complete" and .[-1].failures == 1' "$out"
t_check "gpuhealth runs before gemm and again after it, though named last" \
	jq -e -s '[.[] | select(.type == "measurement") | "\(.name)/\(.phase // "")"] |
		(map(select(startswith("gpuhealth"))) | length) == 8 and
		.[0:4] == ["gpuhealth/before", "gpuhealth/before", "gpuhealth/before", "gpuhealth/before"] and
		.[-4:] == ["gpuhealth/after", "gpuhealth/after", "gpuhealth/after", "gpuhealth/after"]' "$out"
t_check "gemm: bf16 matmul on both shapes, a sustained and an sdc record on every GPU, marked fake" \
	jq -e -s '[.[] | select(.type == "measurement" and .name == "gemm")] as $m |
		all($m[]; .transport == "fake") and
		([$m[] | select(.test == "matmul") | "\(.gpu) \(.shape)"] | unique | length) == 8 and
		([$m[] | select(.test == "sustained") | .gpu] | sort) == [0, 1, 2, 3] and
		([$m[] | select(.test == "sdc") | .gpu] | sort) == [0, 1, 2, 3]' "$out"
t_check "gemm: each record carries the dense peak and pct_of_peak, the same algorithm on every GPU" \
	jq -e -s '[.[] | select(.type == "measurement" and .test == "matmul")] as $m |
		all($m[]; .peak_tflops == 989.4 and (.pct_of_peak > 0) and .split_k == 1) and
		([$m[] | .algo_hash] | unique | length) == 1' "$out"
t_check "sdc: one error record naming vm's GPU 2 with expected and got checksums" \
	jq -e -s '[.[] | select(.type == "error")] as $e | ($e | length) == 1 and
		$e[0].name == "gemm" and $e[0].test == "sdc" and ($e[0].element | endswith("/gpu2")) and
		$e[0].expected != $e[0].got and ($e[0].message | test("silent data corruption"))' "$out"
t_check "sdc: the other three GPUs agree and say so (wrong 0, compared with 3)" \
	jq -e -s '[.[] | select(.type == "measurement" and .test == "sdc")] |
		(map(select(.wrong == 1) | .gpu) == [2]) and all(.[]; .compared_with == 3)' "$out"
t_check "sustained: every GPU at its SW power cap under load, only GPU 3 slowed down (hw_thermal)" \
	jq -e -s '[.[] | select(.type == "measurement" and .test == "sustained")] as $s |
		($s | map(select(.throttle_samples.slowdown > 0) | .gpu)) == [3] and
		all($s[]; .throttle_samples.sw_power_cap > 0) and
		([$s[] | select(.gpu != 3) | .throttle_reasons] | unique) == [["sw_power_cap"]] and
		($s[] | select(.gpu == 3) | .throttle_reasons == ["sw_power_cap", "hw_thermal"] and
			.throttle_samples.hw_thermal == .throttle_samples.slowdown and .temp_c.max == 92 and
			.samples > 0 and .sm_clock_mhz.median == 990)' "$out"
t_check "gpuhealth: remap pending on GPU 0 only, 40 GiB on GPU 1, NVML read" \
	jq -e -s '[.[] | select(.type == "measurement" and .name == "gpuhealth")] as $h |
		($h | map(select(.health.remap_pending == 1) | .gpu) | unique) == [0] and
		($h | map(select(.mem_total_bytes == 42949672960) | .gpu) | unique) == [1] and
		all($h[]; .nvml == "available")' "$out"
t_check "gpuhealth: the kernel log's XID 79 of GPU 3 in the window is critical; GPU 1's old one is not counted" \
	jq -e -s '[.[] | select(.type == "measurement" and .name == "gpuhealth")] as $h |
		($h | map(select(.gpu == 3) | .health.xid_critical) | unique) == [1] and
		($h | map(select(.gpu == 1) | .health.xid_total) | unique) == [0] and
		($h | map(select(.gpu == 0) | .health.xid_critical) | unique) == [0] and
		($h | map(select(.gpu == 0) | .health.xid_total) | unique) == [1]' "$out"
t_check "gpuhealth: GPU 2's NVML XID 48 arrives in the after record, with counter_delta" \
	jq -e -s '[.[] | select(.type == "measurement" and .name == "gpuhealth" and .gpu == 2)] as $h |
		($h[] | select(.phase == "before") | .health.xid_event_critical == 0 and
			.health.xid_critical == 0) and
		($h[] | select(.phase == "after") | (.xids | map(.code)) == [48] and
			.health.xid_event_critical == 1 and .counter_delta.xid_event_critical == 1 and
			.health.xid_critical == 0)' "$out"

# the double's records are never judged (the dcgm_* criteria are the dcgm probe's: not asked here)
"$R" -p h100-sxm-8x-ndr400 --no-render -q -o "$T_TMP/rep-fake" "$out" >/dev/null 2>&1
t_check "ccreport: the double's gemm and gpuhealth records are not judged" \
	jq -e '[.criteria[] | select(.probe == "gemm" or .probe == "gpuhealth")] |
		all(.verdict == "incomplete") and
		all(.[] | select(.id != "gemm_fp8"); .reason | test("not judged"))' "$T_TMP/rep-fake/summary.json"

# as on hardware: the same records without the mark
jq -c 'del(.transport)' "$out" >"$T_TMP/unmarked.jsonl"
"$R" -p h100-sxm-8x-ndr400 --no-render -q -o "$T_TMP/rep" "$T_TMP/unmarked.jsonl" >/dev/null 2>&1
rc=$?
s=$T_TMP/rep/summary.json
fails() {  # fails ID: the failing elements of criterion ID, sorted, comma-joined
	jq -r --arg id "$1" '[.criteria[] | select(.id == $id) | .failures[].element] | sort | join(",")' "$s"
}
verdict() { jq -r --arg id "$1" '.criteria[] | select(.id == $id) | .verdict' "$s"; }
t_check "ccreport on the unmarked records: verdict fail, exit 1 (rc $rc)" \
	jq -e '.verdict == "fail"' "$s"
t_check "the slow GPU is named: gemm_bf16 and gemm_bf16_node fail vm/gpu1 only" \
	[ "$(verdict gemm_bf16_node)/$(fails gemm_bf16_node)/$(fails gemm_bf16)" = "fail/vm/gpu1/vm/gpu1" ]
t_check "the corrupt GPU is named: gemm_sdc fails vm/gpu2 only" \
	[ "$(verdict gemm_sdc)/$(fails gemm_sdc)" = "fail/vm/gpu2" ]
t_check "the throttling GPU gets a warning: gemm_throttle and gemm_temperature warn on vm/gpu3" \
	[ "$(verdict gemm_throttle)/$(fails gemm_throttle)/$(verdict gemm_temperature)/$(fails gemm_temperature)" = \
	  "warn/vm/gpu3/warn/vm/gpu3" ]
t_check "remap pending fails: gpu_remap_pending names vm/gpu0 only" \
	[ "$(verdict gpu_remap_pending)/$(fails gpu_remap_pending)" = "fail/vm/gpu0" ]
t_check "critical XIDs fail: vm/gpu3 (kernel log 79) and, as an event, vm/gpu2 (NVML event 48)" \
	[ "$(verdict gpu_xid_critical)/$(fails gpu_xid_critical)/$(verdict gpu_xid_event)/$(fails gpu_xid_event)" = \
	  "fail/vm/gpu3/fail/vm/gpu2" ]
t_check "the GPU short of memory fails the hardware check by name" \
	jq -e '[.hardware[] | select(.key == "gpu_memory")] | length == 1 and .[0].element == "vm/gpu1" and
		.[0].found == "42.9 GB" and .[0].expected == ">= 80 GB"' "$s"
t_check "healthy GPUs pass the floors: gemm_bf16 judged 4 GPUs, 3 within 700 TFLOP/s" \
	jq -e '.criteria[] | select(.id == "gemm_bf16") | .elements == 4 and (.failures | length) == 1' "$s"

# /dev/kmsg not readable (a user without CAP_SYSLOG): NVML's events register, but they
# know nothing from before the run; the kernel-log count is absent, never a 0 that passes
out=$T_TMP/nokmsg.jsonl
fk 2 "$out" CCDIAG_FAKECUDA_GPUS=2 CCDIAG_FAKECUDA_KMSG=denied CCDIAG_FAKENVML_XID=1:79 -- \
	"${FAST[@]}" gpuhealth gemm
rc=$?
t_check "kmsg denied: exit 0, xid_critical absent with the reason, NVML events counted apart (rc $rc)" \
	jq -e -s --argjson rc $rc '[.[] | select(.type == "measurement" and .name == "gpuhealth")] as $h |
		$rc == 0 and ($h | length) == 4 and
		all($h[]; (.health | has("xid_critical") | not) and (.xid_log | test("Operation not permitted")) and
			(.unknown["health.xid_critical"] | test("CAP_SYSLOG")) and .xid_events == "registered") and
		([$h[] | select(.phase == "after") | .health.xid_event_critical] == [0, 1])' "$out"
jq -c 'del(.transport)' "$out" >"$T_TMP/nokmsg-unmarked.jsonl"
"$R" -p h100-sxm-8x-ndr400 --no-render -q -o "$T_TMP/rep-nokmsg" "$T_TMP/nokmsg-unmarked.jsonl" >/dev/null 2>&1
s=$T_TMP/rep-nokmsg/summary.json
t_check "kmsg denied: gpu_xid_critical is incomplete and says why; gpu_xid_event fails vm/gpu1" \
	[ "$(verdict gpu_xid_critical)/$(verdict gpu_xid_event)/$(fails gpu_xid_event)" = "incomplete/fail/vm/gpu1" ]
t_check "kmsg denied: gpu_xid_critical's reason says how to make the log readable" \
	jq -e '.criteria[] | select(.id == "gpu_xid_critical") | .reason | test("run as root or grant CAP_SYSLOG")' "$s"

# a GPU that hangs mid-product: its own timeout record, the other finishes
out=$T_TMP/hang.jsonl
fk 2 "$out" CCDIAG_FAKECUDA_GPUS=2 CCDIAG_FAKEGEMM_HANG=1 -- "${FAST[@]}" --timeout 10 gemm
rc=$?
t_check "hang: exit 1, the run ends complete (rc $rc)" \
	jq -e -s --argjson rc $rc '$rc == 1 and .[-1].status == "complete"' "$out"
t_check "hang: an error record names GPU 1 with a timeout; GPU 0 measured all phases" \
	jq -e -s '[.[] | select(.type == "error")] as $e | ($e | length) == 1 and
		($e[0].element | endswith("/gpu1")) and ($e[0].message | test("^timeout: ")) and
		([.[] | select(.type == "measurement" and .gpu == 0) | .test] | unique) == ["matmul", "sdc", "sustained"]' "$out"

# fp8 where the GPU has it; no NVML: the fields say why and gemm still runs
out=$T_TMP/nonvml.jsonl
rm -f "$T_TMP/fake-report"
timeout 120 mpirun --oversubscribe -np 2 -x LD_PRELOAD="$T_FAKELIB" -x CCDIAG_FAKECUDA_GPUS=2 \
	-x CCDIAG_FAKECUDA_REPORT="$T_TMP/fake-report" \
	"$P" -q -o "$out" "${FAST[@]}" --gemm-dtypes bf16,fp8 gemm gpuhealth >/dev/null 2>&1
rc=$?
t_check "no NVML: exit 0 (rc $rc)" [ "$rc" -eq 0 ]
t_check "fp8: every product with fast accumulation (the double counts the mode), records say so" \
	bash -c "[ \"\$(awk '/fp8_products/ { f += \$5; s += \$7 } END { print (f > 0) \"/\" s }' \
		'$T_TMP/fake-report')\" = 1/0 ]"
t_check "fp8: the records say accumulation fast" \
	jq -e -s '[.[] | select(.type == "measurement" and .name == "gemm" and .dtype == "fp8")] |
		length > 0 and all(.[]; .accumulation == "fast")' "$out"
t_check "no NVML: sustained says why, gemm measured bf16 and fp8 on both GPUs" \
	jq -e -s '[.[] | select(.type == "measurement" and .name == "gemm")] as $m |
		([$m[] | select(.test == "sustained") | .nvml | test("NVML: .*libnvidia-ml")] | all) and
		([$m[] | select(.test == "matmul") | .dtype] | unique) == ["bf16", "fp8"]' "$out"
t_check "no NVML: gpuhealth still reports memory and says why NVML is missing" \
	jq -e -s '[.[] | select(.type == "measurement" and .name == "gpuhealth")] |
		length == 4 and all(.[]; (.nvml | test("libnvidia-ml")) and .mem_total_bytes > 0)' "$out"

# bad values: exit 2, one line naming the option
for bad in "--gemm-shapes 100" "--gemm-dtypes int8" "--gemm-iters 0" "--gemm-seconds 1e9" \
	"--xid-since 2x"; do
	# shellcheck disable=SC2086
	"$P" $bad gemm gpuhealth >/dev/null 2>"$T_TMP/err"
	rc=$?
	t_check "$bad: exit 2 with one error line naming it (rc $rc)" \
		bash -c "[ $rc -eq 2 ] && head -1 '$T_TMP/err' | grep -q -- '^ccprobe: error: .*${bad%% *}'"
done

# built without cuBLASLt: gemm exists and says so (build-lean: no verbs either)
NB=$T_LEAN
if t_make_lean; then
	t_check "USE_CUBLASLT=no: --list says gemm is not built, and why" \
		grep -q "^  gemm .*not built: built without cuBLASLt" < <("$NB/ccprobe" --list)
	out=$T_TMP/nocublaslt.jsonl
	timeout 60 mpirun --oversubscribe -np 2 "$NB/ccprobe" -q -o "$out" gemm >/dev/null 2>&1
	t_check "USE_CUBLASLT=no: gemm writes a not-built skip, exit 0" \
		jq -e -s '[.[] | select(.type == "skip" and .name == "gemm")] | length == 1 and
			(.[0].reason | startswith("not built: built without cuBLASLt"))' "$out"
	t_check "USE_CUBLASLT=no: the header's features say cublaslt false" \
		jq -e -s '.[0].features.cublaslt == false' "$out"
else
	t_fail "make USE_CUBLASLT=no USE_VERBS=no failed or warned: $(grep -m3 -E 'warning|error' "$T_TMP/make.log" || tail -3 "$T_TMP/make.log")"
fi

t_done
