#!/bin/bash
# GPU probes (pcie, nvlink, hbm) and the nccl backend where there is no GPU:
# under mpirun with 2 and 4 local ranks each writes a skip record whose
# reason carries CUDA's own error text and says so on stderr, the run ends
# "complete" with exit 6 (nothing measured; 0 when something else was) and
# nothing hangs; a build without CUDA reports them "not built: ...".
# On a machine with a GPU these cases are skipped: tests/gpu/run.sh measures.
source "$(dirname "$0")/../lib.sh"
P=$T_ROOT/build/ccprobe
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
FAST=(-n 2 -w 1 -r 2)

if ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
	t_skip "a GPU is present: the no-GPU behaviour is not testable here (see tests/gpu/run.sh)"
	t_done
	exit $?
fi

if ! "$P" --list | grep -q '^  pcie .*vs the PCIe link rate$'; then
	t_skip "ccprobe was built without CUDA: the CUDA skip path is not in this binary"
	cuda_built=0
else
	cuda_built=1
fi

# What CUDA itself says on this machine, asked independently of ccprobe
expect=""
if [ -r "$CUDA_HOME/lib64/libcudart.so" ] && command -v python3 >/dev/null; then
	expect=$(python3 - "$CUDA_HOME/lib64/libcudart.so" <<'EOF' 2>/dev/null
import ctypes, sys
rt = ctypes.CDLL(sys.argv[1])
n = ctypes.c_int(-1)
e = rt.cudaGetDeviceCount(ctypes.byref(n))
rt.cudaGetErrorString.restype = ctypes.c_char_p
print(rt.cudaGetErrorString(e).decode() if e else "")
EOF
)
fi

check_skips() {  # check_skips NP OUT NAMES...: every name skipped with the CUDA text
	local np=$1 out=$2 name kind
	shift 2
	for name in "$@"; do
		kind=probe
		[ "$name" = all_reduce ] && kind=collective
		if jq -e -s --arg n "$name" --arg k "$kind" --arg want "$expect" '
			[.[] | select(.type == "skip" and .name == $n and .kind == $k)] as $s
			| ($s | length) == 1
			and ($s[0].reason | test("^skipped: CUDA: .+ \\(rank [0-9]+ on [^ ]+\\)$"))
			and ($want == "" or ($s[0].reason | contains("CUDA: " + $want)))' \
			"$out" >/dev/null; then
			t_pass "np=$np: $name writes a skip record with the CUDA error text"
		else
			t_fail "np=$np: $name: $(jq -c -s --arg n "$name" '[.[] | select(.name == $n)]' "$out" | head -c 400)"
		fi
	done
	t_check "np=$np: no measurement, error or inventory record" \
		jq -e -s 'all(.[]; .type != "measurement" and .type != "error" and .type != "inventory")' "$out"
	t_check "np=$np: the run ends complete with no failure, exit_code 6 (nothing measured)" \
		jq -e -s '.[-1].type == "end" and .[-1].status == "complete" and
			.[-1].failures == 0 and .[-1].exit_code == 6' "$out"
}

if [ "$cuda_built" = 1 ]; then
	[ -n "$expect" ] && t_pass "CUDA's own error text on this machine: '$expect'"
	for np in 2 4; do
		out=$T_TMP/probes$np.jsonl
		timeout 120 mpirun --oversubscribe -np $np "$P" "${FAST[@]}" -q -o "$out" \
			pcie nvlink hbm >"$T_TMP/stdout" 2>"$T_TMP/stderr"
		rc=$?
		t_check "np=$np: pcie nvlink hbm: exit 6, nothing measured (got $rc)" [ "$rc" -eq 6 ]
		t_check "np=$np: one stderr line per skipped probe with its reason, then '3 of 3 probes skipped'" \
			bash -c "[ \$(grep -c \"^[^ ]*:0: warning: probe '[a-z]*' skipped: CUDA: \" '$T_TMP/stderr') -eq 3 ] &&
				grep -q \"^ccprobe: 3 of 3 probes skipped: nothing was measured (the skip records in $out say why)\$\" '$T_TMP/stderr'"
		check_skips $np "$out" pcie nvlink hbm

		out=$T_TMP/nccl$np.jsonl
		timeout 120 mpirun --oversubscribe -np $np "$P" "${FAST[@]}" -B nccl -q -o "$out" \
			all_reduce all_gather >"$T_TMP/stdout" 2>"$T_TMP/stderr"
		rc=$?
		t_check "np=$np: -B nccl all_reduce all_gather: exit 6, nothing measured (got $rc)" [ "$rc" -eq 6 ]
		t_check "np=$np: -B nccl: '2 of 2 collectives skipped' on stderr" \
			grep -q "^ccprobe: 2 of 2 collectives skipped: nothing was measured" "$T_TMP/stderr"
		check_skips $np "$out" all_reduce
		t_check "np=$np: -B nccl: the second collective is skipped too" \
			jq -e -s 'any(.[]; .type == "skip" and .name == "all_gather")' "$out"
		t_check "np=$np: the header names the NCCL and CUDA runtime versions" \
			jq -e -s '.[0].versions.nccl | test("^[0-9]+\\.[0-9]+\\.[0-9]+$")' "$out"
	done

	# GPU probes mixed with a collective on the mpi backend: the run goes on
	out=$T_TMP/mixed.jsonl
	timeout 120 mpirun --oversubscribe -np 2 "$P" "${FAST[@]}" -b 8 -e 1K -q -o "$out" \
		pcie all_reduce hbm >/dev/null 2>"$T_TMP/stderr"
	t_check "mixed run: exit 0 (the collective measured)" [ $? -eq 0 ]
	t_check "mixed run: '2 of 3 probes and collectives skipped' on stderr" \
		grep -q "^ccprobe: 2 of 3 probes and collectives skipped (the skip records" "$T_TMP/stderr"
	t_check "mixed run: the mpi collective still measured after the pcie skip" \
		jq -e -s '[.[] | select(.type == "measurement" and .name == "all_reduce")] | length == 8' "$out"

	# a bad --gpus list is a usage error, before MPI starts
	"$P" --gpus 0,0 pcie >/dev/null 2>"$T_TMP/err"
	rc=$?
	t_check "--gpus 0,0: exit 2 (got $rc)" [ "$rc" -eq 2 ]
	t_check "--gpus 0,0: one clear line" grep -q "^ccprobe: error: device 0 appears twice in --gpus$" "$T_TMP/err"
fi

# a build without CUDA: every GPU part exists and says it was not built
NB=$T_ROOT/build-nocuda
if make -C "$T_ROOT" --no-print-directory -s -j2 USE_CUDA=no B=build-nocuda build-nocuda/ccprobe \
	>"$T_TMP/make.log" 2>&1; then
	t_pass "make USE_CUDA=no B=build-nocuda builds"
	t_check "no-CUDA build: the nccl backend is listed as not built" \
		grep -q "^  nccl .*not built: built without CUDA and NCCL" < <("$NB/ccprobe" --list)
	out=$T_TMP/nocuda.jsonl
	timeout 120 mpirun --oversubscribe -np 2 "$NB/ccprobe" "${FAST[@]}" -B nccl -q -o "$out" \
		pcie nvlink hbm all_reduce >/dev/null 2>"$T_TMP/stderr"
	t_check "no-CUDA build: exit 6 (nothing measured)" [ $? -eq 6 ]
	t_check "no-CUDA build: each 'not built' said on stderr" \
		bash -c "[ \$(grep -c \"warning: [a-z]* '[a-z_]*' not built: built without CUDA\" '$T_TMP/stderr') -eq 4 ]"
	for name in pcie nvlink hbm all_reduce; do
		t_check "no-CUDA build: $name reports not built" \
			jq -e -s --arg n "$name" 'any(.[]; .type == "skip" and .name == $n and
				(.reason | startswith("not built: built without CUDA")))' "$out"
	done
	t_check "no-CUDA build: header features say cuda false" \
		jq -e -s '.[0].features.cuda == false and .[0].features.nccl == false and
			(.[0].versions | has("nccl") | not)' "$out"
else
	t_fail "make USE_CUDA=no B=build-nocuda failed: $(tail -5 "$T_TMP/make.log")"
fi

# tests/gpu/run.sh, the script a GPU host runs, on this machine without one: a clean skip
# that still leaves its summary where the device machine's files come back (OUT)
env -u CUDA_VISIBLE_DEVICES -u CCDIAG_FAKECUDA_GPUS -u NGPU RESULTS="$T_TMP/gpurun" OUT="$T_TMP/gpuout" \
	"$T_ROOT/tests/gpu/run.sh" >"$T_TMP/gpurun.out" 2>&1
rc=$?
t_check "tests/gpu/run.sh without a GPU: exit 2, 'skipped: no NVIDIA GPU here' in the summary, summary and env in OUT (rc $rc)" \
	bash -c "[ $rc -eq 2 ] && grep -q '^skipped: no NVIDIA GPU here' '$T_TMP/gpuout/summary.txt' &&
		grep -q '^steps: none; .*exit 2' '$T_TMP/gpuout/summary.txt' && [ -s '$T_TMP/gpuout/env.txt' ]"

t_done
