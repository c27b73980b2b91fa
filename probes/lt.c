/* probes/lt.c: cuBLASLt opened at run time (lt.h) */
#if defined(HAVE_CUDA) && defined(HAVE_CUBLASLT)
#include "lt.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define LT_STR(x) #x
#define LT_XSTR(x) LT_STR(x)
#define LT_SONAME "libcublasLt.so." LT_XSTR(CUBLAS_VER_MAJOR)

/* the pointers lt.h names: defined here without its macros in the way */
#undef cublasLtCreate
#undef cublasLtDestroy
#undef cublasLtGetVersion
#undef cublasLtMatmul
#undef cublasLtMatmulAlgoCheck
#undef cublasLtMatmulAlgoConfigGetAttribute
#undef cublasLtMatmulAlgoGetHeuristic
#undef cublasLtMatmulDescCreate
#undef cublasLtMatmulDescDestroy
#undef cublasLtMatmulDescSetAttribute
#undef cublasLtMatmulPreferenceCreate
#undef cublasLtMatmulPreferenceDestroy
#undef cublasLtMatmulPreferenceSetAttribute
#undef cublasLtMatrixLayoutCreate
#undef cublasLtMatrixLayoutDestroy
#define LT_PTR(f) __typeof__(f) *lt_##f;
LT_FUNCS(LT_PTR)

int lt_open(char *why, size_t len)
{
	static int state;        /* 0: not tried, 1: open, -1: failed */
	static char err[300];
	void *h = RTLD_DEFAULT;

	if (state) {
		snprintf(why, len, "%s", err);
		return state > 0 ? 0 : -1;
	}
	state = -1;
	if (!dlsym(RTLD_DEFAULT, "cublasLtCreate") && !(h = dlopen(LT_SONAME, RTLD_NOW | RTLD_LOCAL))) {
		snprintf(err, sizeof(err), "cannot load %s: %s", LT_SONAME, dlerror());
		snprintf(why, len, "%s", err);
		return -1;
	}
#define LT_SYM(f) \
	if (!(*(void **)&lt_##f = dlsym(h, #f))) { \
		snprintf(err, sizeof(err), "%s has no %s", LT_SONAME, #f); \
		snprintf(why, len, "%s", err); \
		return -1; \
	}
	LT_FUNCS(LT_SYM)
#undef LT_SYM
	state = 1;
	return 0;
}

void lt_desc_free(struct lt_desc *l)
{
	if (l->op)
		lt_cublasLtMatmulDescDestroy(l->op);
	if (l->la)
		lt_cublasLtMatrixLayoutDestroy(l->la);
	if (l->lb)
		lt_cublasLtMatrixLayoutDestroy(l->lb);
	if (l->lc)
		lt_cublasLtMatrixLayoutDestroy(l->lc);
	memset(l, 0, sizeof(*l));
}
#endif
