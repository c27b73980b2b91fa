#ifndef CCDIAG_LT_H
#define CCDIAG_LT_H

/*
 * cuBLASLt, opened when a GPU probe first needs it (the gemm and trainstep
 * probes), not linked into ccprobe: loading it relocates about 100 MB of its
 * pages, 0.14 s of CPU and that much private memory in every process that
 * starts, every rank of every probe. The calls go through the pointers below
 * (same names, same types); a test double preloaded before it (tests/fakes)
 * is found first.
 */
#if defined(HAVE_CUDA) && defined(HAVE_CUBLASLT)
#include <cublasLt.h>
#include <stddef.h>

#define LT_FUNCS(X) X(cublasLtCreate) X(cublasLtDestroy) X(cublasLtGetVersion) X(cublasLtMatmul) \
	X(cublasLtMatmulAlgoCheck) X(cublasLtMatmulAlgoConfigGetAttribute) \
	X(cublasLtMatmulAlgoGetHeuristic) X(cublasLtMatmulDescCreate) X(cublasLtMatmulDescDestroy) \
	X(cublasLtMatmulDescSetAttribute) X(cublasLtMatmulPreferenceCreate) \
	X(cublasLtMatmulPreferenceDestroy) X(cublasLtMatmulPreferenceSetAttribute) \
	X(cublasLtMatrixLayoutCreate) X(cublasLtMatrixLayoutDestroy)
#define LT_PTR_DECL(f) extern __typeof__(f) *lt_##f;
LT_FUNCS(LT_PTR_DECL)
#undef LT_PTR_DECL
#define cublasLtCreate (*lt_cublasLtCreate)
#define cublasLtDestroy (*lt_cublasLtDestroy)
#define cublasLtGetVersion (*lt_cublasLtGetVersion)
#define cublasLtMatmul (*lt_cublasLtMatmul)
#define cublasLtMatmulAlgoCheck (*lt_cublasLtMatmulAlgoCheck)
#define cublasLtMatmulAlgoConfigGetAttribute (*lt_cublasLtMatmulAlgoConfigGetAttribute)
#define cublasLtMatmulAlgoGetHeuristic (*lt_cublasLtMatmulAlgoGetHeuristic)
#define cublasLtMatmulDescCreate (*lt_cublasLtMatmulDescCreate)
#define cublasLtMatmulDescDestroy (*lt_cublasLtMatmulDescDestroy)
#define cublasLtMatmulDescSetAttribute (*lt_cublasLtMatmulDescSetAttribute)
#define cublasLtMatmulPreferenceCreate (*lt_cublasLtMatmulPreferenceCreate)
#define cublasLtMatmulPreferenceDestroy (*lt_cublasLtMatmulPreferenceDestroy)
#define cublasLtMatmulPreferenceSetAttribute (*lt_cublasLtMatmulPreferenceSetAttribute)
#define cublasLtMatrixLayoutCreate (*lt_cublasLtMatrixLayoutCreate)
#define cublasLtMatrixLayoutDestroy (*lt_cublasLtMatrixLayoutDestroy)

/* Sets every pointer above (once per process): 0, or -1 with why ("cannot load libcublasLt.so.N: ..."). */
int lt_open(char *why, size_t len);

/* One product's descriptors and the algorithm chosen for it. */
struct lt_desc {
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t la, lb, lc;
	cublasLtMatmulAlgo_t algo;
	float alpha, beta;
};

/* Destroys what l holds and zeroes it (a zeroed one is left as it is). */
void lt_desc_free(struct lt_desc *l);
#endif

#endif
