#ifndef CCDIAG_GEMM_H
#define CCDIAG_GEMM_H

/*
 * The plain-C half of the gemm probe (probes/gemm.c): option parsing, the
 * dense peak table, the random inputs, checksums and the arithmetic of the
 * records. Built with or without CUDA, so unit tests cover it everywhere.
 * docs/compute.md describes the method.
 */
#include <stddef.h>

enum gemm_dtype { GEMM_BF16, GEMM_FP16, GEMM_TF32, GEMM_FP8, GEMM_NDTYPES };

/* "bf16", "fp16", "tf32", "fp8" */
const char *gemm_dtype_name(int dtype);

/* bytes of one input element (fp8: 1; tf32 reads fp32: 4) */
size_t gemm_in_size(int dtype);

/* bytes of one output element: fp32 for tf32, bf16 for fp8 (its D), else the input's */
size_t gemm_out_size(int dtype);

/*
 * Parses --gemm-dtypes: a comma list of bf16, fp16, tf32, fp8, or "all".
 * Sets *order to the dtypes in the order given (the first is the main
 * dtype: sustained phase and silent-data-corruption check) and returns how
 * many, or -1 with a one-line message in err.
 */
int gemm_parse_dtypes(const char *s, int *order, char *err, size_t len);

struct gemm_shape {
	long m, n, k;
};
#define GEMM_MAX_SHAPES 16
#define GEMM_MAX_DIM 65536L

/*
 * Parses --gemm-shapes: a comma list of N (N x N x N) or MxNxK, each
 * dimension from 16 to GEMM_MAX_DIM and a multiple of 16 (what the tensor
 * cores and fp8 need). The first is the main shape. Returns how many, or
 * -1 with a one-line message in err.
 */
int gemm_parse_shapes(const char *s, struct gemm_shape *out, int max, char *err, size_t len);

/* "8192x8192x8192" into buf */
void gemm_shape_name(const struct gemm_shape *s, char *buf, size_t len);

/* FLOPs of one product: 2 m n k */
double gemm_flops(const struct gemm_shape *s);

/*
 * The dense (no sparsity) peak TFLOP/s of a GPU for dtype, from its CUDA
 * name ("NVIDIA H100 80GB HBM3"); 0 when unknown. Sources in gemm.c.
 */
double gemm_peak_tflops(const char *gpu_name, int dtype);

/* Whether a GPU of compute capability major.minor runs dtype (fp8: 8.9 and later; others 8.0). */
int gemm_dtype_supported(int dtype, int major, int minor);

/*
 * Fills count elements of dtype into buf with random values, element i of
 * the matrix being a function of (seed, matrix, offset + i) only: every
 * GPU, and every chunk of a large matrix, gets the same numbers. Values
 * are finite, of both signs, magnitude below 1 and never zero, so that
 * products of any k here stay in range.
 */
void gemm_fill(int dtype, void *buf, size_t count, unsigned long long seed, int matrix,
	       size_t offset);

/* 64-bit FNV-1a over n bytes, continuing from h (start: GEMM_FNV_START) */
#define GEMM_FNV_START 0xcbf29ce484222325ULL
unsigned long long gemm_fnv(const void *p, size_t n, unsigned long long h);

/*
 * The silent-data-corruption verdict: sum[i] is GPU i's checksum, group[i]
 * its group (GPUs of one model, cuBLASLt and algorithm compute the same
 * bits; -1: no checksum). expected[i] gets the value most GPUs of the
 * group hold, wrong[i] 1 where sum[i] differs. When no value has more
 * votes than every other (two GPUs that disagree, a 2-2 split) no GPU can
 * be named the wrong one: every GPU of the group gets wrong[i] 2
 * ("disagree") and expected[i] its own sum. A group of one has nothing to
 * compare with: expected = its own. Returns how many are wrong or disagree.
 */
int gemm_sdc_judge(const unsigned long long *sum, const int *group, int n,
		   unsigned long long *expected, int *wrong);

/*
 * The means of the first and the last frac (0.1: 10 %) of v[0..n) (at
 * least one value each); 0 with both set, -1 when n < 1.
 */
int gemm_window(const double *v, int n, double frac, double *first, double *last);

#endif
