/*
 * probes/gemm_util.c: the plain-C half of the gemm probe (probes/gemm.h).
 */
#include "gemm.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const dtype_names[GEMM_NDTYPES] = { "bf16", "fp16", "tf32", "fp8" };

const char *gemm_dtype_name(int d)
{
	return d >= 0 && d < GEMM_NDTYPES ? dtype_names[d] : "?";
}

size_t gemm_in_size(int d)
{
	return d == GEMM_FP8 ? 1 : d == GEMM_TF32 ? 4 : 2;
}

size_t gemm_out_size(int d)
{
	return d == GEMM_TF32 ? 4 : 2;
}

int gemm_parse_dtypes(const char *s, int *order, char *err, size_t len)
{
	const char *p = s;
	int n = 0;

	if (!s || !*s) {
		snprintf(err, len, "empty --gemm-dtypes (use e.g. bf16,fp8 or all)");
		return -1;
	}
	if (!strcmp(s, "all")) {
		for (int d = 0; d < GEMM_NDTYPES; d++)
			order[n++] = d;
		return n;
	}
	while (*p) {
		size_t l = strcspn(p, ",");
		int d;

		for (d = 0; d < GEMM_NDTYPES; d++)
			if (strlen(dtype_names[d]) == l && !strncmp(p, dtype_names[d], l))
				break;
		if (d == GEMM_NDTYPES) {
			snprintf(err, len, "invalid --gemm-dtypes item '%.*s' (bf16, fp16, tf32, fp8 or all)",
				 (int)l, p);
			return -1;
		}
		for (int k = 0; k < n; k++)
			if (order[k] == d) {
				snprintf(err, len, "dtype %s appears twice in --gemm-dtypes", dtype_names[d]);
				return -1;
			}
		order[n++] = d;
		p += l;
		if (*p == ',' && !*++p) {
			snprintf(err, len, "--gemm-dtypes ends with a comma");
			return -1;
		}
	}
	return n;
}

static int parse_dim(const char *s, const char *end, long *v)
{
	long x = 0;

	if (s == end)
		return -1;
	for (const char *c = s; c < end; c++) {
		if (!isdigit((unsigned char)*c))
			return -1;
		x = x * 10 + (*c - '0');
		if (x > GEMM_MAX_DIM)
			return -1;
	}
	if (x < 16 || x % 16)
		return -1;
	*v = x;
	return 0;
}

int gemm_parse_shapes(const char *s, struct gemm_shape *out, int max, char *err, size_t len)
{
	const char *p = s;
	int n = 0;

	if (!s || !*s) {
		snprintf(err, len, "empty --gemm-shapes (use e.g. 8192,4096 or 8192x8192x4096)");
		return -1;
	}
	while (*p) {
		const char *end = p + strcspn(p, ","), *x1 = memchr(p, 'x', (size_t)(end - p));
		const char *x2 = x1 ? memchr(x1 + 1, 'x', (size_t)(end - x1 - 1)) : NULL;
		struct gemm_shape sh;
		int bad;

		if (x1 && x2)
			bad = parse_dim(p, x1, &sh.m) || parse_dim(x1 + 1, x2, &sh.n) ||
			      parse_dim(x2 + 1, end, &sh.k) || memchr(x2 + 1, 'x', (size_t)(end - x2 - 1));
		else if (!x1)
			bad = parse_dim(p, end, &sh.m), sh.n = sh.k = sh.m;
		else
			bad = 1;
		if (bad) {
			snprintf(err, len, "invalid --gemm-shapes item '%.*s' (N or MxNxK, each a multiple "
				 "of 16 from 16 to %ld)", (int)(end - p), p, GEMM_MAX_DIM);
			return -1;
		}
		if (n >= max) {
			snprintf(err, len, "more than %d shapes in --gemm-shapes", max);
			return -1;
		}
		out[n++] = sh;
		p = *end ? end + 1 : end;
		if (*end && !*p) {
			snprintf(err, len, "--gemm-shapes ends with a comma");
			return -1;
		}
	}
	return n;
}

void gemm_shape_name(const struct gemm_shape *s, char *buf, size_t len)
{
	snprintf(buf, len, "%ldx%ldx%ld", s->m, s->n, s->k);
}

double gemm_flops(const struct gemm_shape *s)
{
	return 2.0 * (double)s->m * (double)s->n * (double)s->k;
}

/*
 * Dense peaks, TFLOP/s = 1e12 FLOP/s, without sparsity (the datasheets
 * print the sparse figure, twice these). Sources: NVIDIA H100 Tensor Core
 * GPU datasheet (SXM: FP8 1979, BF16/FP16 989, TF32 495; PCIe: 1513, 756,
 * 378), H200 datasheet (the H100 SXM figures), A100 datasheet (BF16/FP16
 * 312, TF32 156; no FP8); the H100 SXM bf16 and fp8 figures are those
 * docs/sources.md quotes from mamf-finder. First match wins: the GH200 and
 * H100 NVL, whose figures are not checked here, stay unknown.
 */
static const struct peak {
	const char *name;        /* a substring of the CUDA device name */
	double tflops[GEMM_NDTYPES];   /* bf16, fp16, tf32, fp8 */
} peaks[] = {
	{ "GH200", { 0, 0, 0, 0 } },
	{ "H100 NVL", { 0, 0, 0, 0 } },
	{ "H100 PCIe", { 756.5, 756.5, 378.0, 1513.0 } },
	{ "H200", { 989.4, 989.4, 494.7, 1978.9 } },
	{ "H100", { 989.4, 989.4, 494.7, 1978.9 } },
	{ "A100", { 312.0, 312.0, 156.0, 0 } },
};

double gemm_peak_tflops(const char *gpu_name, int dtype)
{
	if (!gpu_name || dtype < 0 || dtype >= GEMM_NDTYPES)
		return 0;
	for (size_t i = 0; i < sizeof(peaks) / sizeof(peaks[0]); i++)
		if (strstr(gpu_name, peaks[i].name))
			return peaks[i].tflops[dtype];
	return 0;
}

int gemm_dtype_supported(int dtype, int major, int minor)
{
	if (dtype == GEMM_FP8)
		return major > 8 || (major == 8 && minor >= 9);
	return major >= 8;
}

/* splitmix64: a counter-based generator, so any element can be made alone */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

void gemm_fill(int dtype, void *buf, size_t count, unsigned long long seed, int matrix,
	       size_t offset)
{
	uint64_t base = mix(seed * 4 + (uint64_t)matrix);

	for (size_t i = 0; i < count; i++) {
		uint64_t r = mix(base ^ (uint64_t)(offset + i));
		unsigned sign = (unsigned)(r >> 63);

		/* a random mantissa and an exponent from 2^-7 up to just below 1 */
		switch (dtype) {
		case GEMM_BF16:   /* 1-8-7, bias 127 */
			((uint16_t *)buf)[i] = (uint16_t)(sign << 15 | (120 + r % 7) << 7 | ((r >> 8) & 0x7f));
			break;
		case GEMM_FP16:   /* 1-5-10, bias 15 */
			((uint16_t *)buf)[i] = (uint16_t)(sign << 15 | (8 + r % 7) << 10 | ((r >> 8) & 0x3ff));
			break;
		case GEMM_TF32:   /* fp32 storage, 1-8-23 */
			((uint32_t *)buf)[i] = (uint32_t)sign << 31 | (uint32_t)(120 + r % 7) << 23 |
					       (uint32_t)((r >> 8) & 0x7fffff);
			break;
		default:          /* fp8 e4m3, 1-4-3, bias 7: exponent fields 1..6, never NaN */
			((uint8_t *)buf)[i] = (uint8_t)(sign << 7 | (1 + r % 6) << 3 | ((r >> 8) & 0x7));
			break;
		}
	}
}

unsigned long long gemm_fnv(const void *p, size_t n, unsigned long long h)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

int gemm_sdc_judge(const unsigned long long *sum, const int *group, int n,
		   unsigned long long *expected, int *wrong)
{
	int bad = 0;

	for (int i = 0; i < n; i++) {
		int best = -1, best_votes = 0, tie = 0;

		wrong[i] = 0;
		expected[i] = sum[i];
		if (group[i] < 0)
			continue;
		/* the value most GPUs of the group hold, if one value has more votes than any other */
		for (int k = 0; k < n; k++) {
			int votes = 0;

			if (group[k] != group[i] || (best >= 0 && sum[k] == sum[best]))
				continue;
			for (int j = 0; j < n; j++)
				votes += group[j] == group[i] && sum[j] == sum[k];
			if (votes > best_votes) {
				best_votes = votes;
				best = k;
				tie = 0;
			} else if (votes == best_votes) {
				tie = 1;
			}
		}
		if (tie) {
			/* no majority (two GPUs that disagree): which one is wrong is not known */
			wrong[i] = 2;
			bad++;
			continue;
		}
		expected[i] = sum[best];
		wrong[i] = sum[i] != expected[i];
		bad += wrong[i];
	}
	return bad;
}

int gemm_window(const double *v, int n, double frac, double *first, double *last)
{
	int w;
	double a = 0, b = 0;

	if (n < 1)
		return -1;
	w = (int)(n * frac);
	if (w < 1)
		w = 1;
	for (int i = 0; i < w; i++) {
		a += v[i];
		b += v[n - w + i];
	}
	*first = a / w;
	*last = b / w;
	return 0;
}
