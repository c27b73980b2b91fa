/* Data types, operators and the test pattern shared by every collective. */
#include "coll.h"

#include <string.h>

static const char *const dtype_names[CC_NDTYPES] = { "float", "double", "int32" };
static const size_t dtype_sizes[CC_NDTYPES] = { 4, 8, 4 };
static const char *const redop_names[CC_NOPS] = { "sum", "prod", "min", "max" };

size_t dtype_size(enum cc_dtype t)
{
	return dtype_sizes[t];
}

const char *dtype_name(enum cc_dtype t)
{
	return dtype_names[t];
}

int dtype_parse(const char *s, enum cc_dtype *t)
{
	for (int i = 0; i < CC_NDTYPES; i++)
		if (!strcmp(s, dtype_names[i])) {
			*t = (enum cc_dtype)i;
			return 0;
		}
	return -1;
}

const char *redop_name(enum cc_redop op)
{
	return redop_names[op];
}

int redop_parse(const char *s, enum cc_redop *op)
{
	for (int i = 0; i < CC_NOPS; i++)
		if (!strcmp(s, redop_names[i])) {
			*op = (enum cc_redop)i;
			return 0;
		}
	return -1;
}

void dtype_store(void *buf, enum cc_dtype t, size_t i, double v)
{
	switch (t) {
	case CC_FLOAT: ((float *)buf)[i] = (float)v; break;
	case CC_DOUBLE: ((double *)buf)[i] = v; break;
	case CC_INT32: ((int32_t *)buf)[i] = (int32_t)v; break;
	default: break;
	}
}

double dtype_load(const void *buf, enum cc_dtype t, size_t i)
{
	switch (t) {
	case CC_FLOAT: return ((const float *)buf)[i];
	case CC_DOUBLE: return ((const double *)buf)[i];
	case CC_INT32: return ((const int32_t *)buf)[i];
	default: return 0.0;
	}
}

/*
 * (7r + 3i) mod 11 visits every residue once as r runs over 11 consecutive
 * ranks (7 is invertible mod 11), which gives the reductions closed forms.
 */
static unsigned residue(int rank, size_t i)
{
	return (unsigned)((7u * (unsigned)(rank % 11) + 3u * (unsigned)(i % 11)) % 11u);
}

double pattern_value(enum cc_redop op, int rank, int nranks, size_t i)
{
	if (op == CC_PROD)
		return (size_t)rank == i % (size_t)nranks ? 2.0 : 1.0;
	return 1.0 + residue(rank, i);
}

double pattern_reduced(enum cc_redop op, int nranks, size_t i)
{
	int full = nranks / 11, rest = nranks % 11, r;
	double acc;

	switch (op) {
	case CC_PROD:
		return 2.0;
	case CC_SUM:
		acc = 66.0 * full;  /* 1 + 2 + ... + 11 per full period */
		for (r = full * 11; r < nranks; r++)
			acc += 1.0 + residue(r, i);
		return acc;
	case CC_MIN:
		if (full)
			return 1.0;
		acc = 12.0;
		for (r = 0; r < rest; r++)
			if (1.0 + residue(r, i) < acc)
				acc = 1.0 + residue(r, i);
		return acc;
	case CC_MAX:
		if (full)
			return 11.0;
		acc = 0.0;
		for (r = 0; r < rest; r++)
			if (1.0 + residue(r, i) > acc)
				acc = 1.0 + residue(r, i);
		return acc;
	default:
		return 0.0;
	}
}

void pattern_fill(void *buf, enum cc_dtype t, enum cc_redop op, int rank, int nranks,
		  size_t n, size_t base)
{
	for (size_t k = 0; k < n; k++)
		dtype_store(buf, t, k, pattern_value(op, rank, nranks, base + k));
}
