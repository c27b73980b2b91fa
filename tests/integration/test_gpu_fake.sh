#!/bin/bash
# tests/integration/test_gpu_fake.sh: the GPU probes (pcie, nvlink, hbm) and
# -B nccl end to end through the CUDA/NVML/NCCL test double
# (tests/fakes/fake.h, LD_PRELOADed), on 2 and 4 local ranks: every GPU is
# measured, records and the inventory say "transport": "fake", and ccreport
# leaves them unjudged. The defect cases of issue 11 follow, one per check.
source "$(dirname "$0")/../lib.sh"
P=$T_ROOT/build/ccprobe
FAST=(-n 2 -w 1 -r 2 -b 1M -e 2M)

if ! t_fakecuda_built; then
	t_skip "no build/tests/libfakecuda.so (a build without CUDA): nothing to run"
	t_done
	exit
fi

# fk NP OUT ENV... -- ARGS...: ccprobe on NP ranks under the test double
fk() {
	local np=$1 out=$2 env=()
	shift 2
	while [ "$1" != "--" ]; do env+=(-x "$1"); shift; done
	shift
	timeout 120 mpirun --oversubscribe -np "$np" "${T_FAKECUDA[@]}" "${env[@]}" \
		"$P" -q -o "$out" "$@" >"$out.stdout" 2>"$out.stderr" || { local rc=$?; cp "$out.stderr" "$T_ROOT/build/test-logs/$(basename "$out").stderr" 2>/dev/null; return $rc; }
}

for np in 2 4; do
	out=$T_TMP/probes$np.jsonl
	fk $np "$out" CCDIAG_FAKECUDA_GPUS=$np -- "${FAST[@]}" pcie nvlink hbm
	rc=$?
	t_check "np=$np: pcie nvlink hbm under the test double: exit 0 (rc $rc)" [ "$rc" -eq 0 ]
	t_check "np=$np: one gpu inventory of $np GPUs in PCI order, marked fake" \
		jq -e -s --argjson n $np '[.[] | select(.type == "inventory" and .kind == "gpu")] |
			length == 1 and .[0].transport == "fake" and (.[0].gpus | length) == $n and
			(.[0].gpus | map(.bus_id)) == (.[0].gpus | map(.bus_id) | sort) and
			(.[0].gpus[0].name | test("test double"))' "$out"
	t_check "np=$np: pcie h2d, d2h, bidir measured on every GPU, all marked fake" \
		jq -e -s --argjson n $np '[.[] | select(.type == "measurement" and .name == "pcie")] as $m |
			all($m[]; .transport == "fake") and
			([$m[] | select(.test == "h2d") | .gpu] | unique) == [range($n)] and
			([$m[] | select(.test == "d2h") | .gpu] | unique) == [range($n)] and
			([$m[] | select(.test == "bidir") | .gpu] | unique) == [range($n)]' "$out"
	t_check "np=$np: hbm measured on every GPU" \
		jq -e -s --argjson n $np '[.[] | select(.type == "measurement" and .name == "hbm") | .gpu] |
			unique == [range($n)]' "$out"
	t_check "np=$np: nvlink: every ordered pair of the $np GPUs" \
		jq -e -s --argjson n $np '[.[] | select(.type == "measurement" and .test == "p2p_uni") |
			"\(.src_gpu)-\(.dst_gpu)"] | unique | length == ($n * ($n - 1))' "$out"
	t_check "np=$np: no error, end complete" \
		jq -e -s '([.[] | select(.type == "error" or .type == "skip")] | length) == 0 and
			.[-1].status == "complete" and .[-1].exit_code == 0' "$out"

	out=$T_TMP/nccl$np.jsonl
	fk $np "$out" CCDIAG_FAKECUDA_GPUS=$np -- -B nccl -n 2 -w 1 -r 2 -b 8 -e 64K all_reduce all_gather
	rc=$?
	t_check "np=$np: -B nccl all_reduce all_gather: exit 0 (rc $rc)" [ "$rc" -eq 0 ]
	t_check "np=$np: -B nccl: every size measured with its data checked, marked fake" \
		jq -e -s '[.[] | select(.type == "measurement" and .kind == "collective")] as $m |
			([$m[] | select(.name == "all_reduce")] | length) == 14 and
			([$m[] | select(.name == "all_gather")] | length) >= 13 and
			all($m[]; .transport == "fake" and .backend == "nccl" and .wrong == 0)' "$out"
done

# ccreport never judges the test double's figures
out=$T_TMP/probes2.jsonl
"$T_ROOT/build/ccreport" -p "$T_ROOT/profiles/h100-sxm-8x-ndr400.ini" -q --no-render \
	-o "$T_TMP/rep" "$out" "$T_TMP/nccl2.jsonl" >/dev/null 2>&1
t_check "ccreport: no pcie/nvlink/hbm criterion judged on test double records" \
	jq -e '[.criteria[] | select(.probe == "pcie" or .probe == "nvlink" or .probe == "hbm")] as $c |
		($c | length) > 0 and ($c | all(.verdict == "incomplete")) and
		([$c[] | select(.reason | test("^not judged: "))] | length) >= 6' \
	"$T_TMP/rep/summary.json"

t_done
