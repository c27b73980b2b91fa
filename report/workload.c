/*
 * report/workload.c: the target workload of the training estimate, from a
 * profile's [workload] section and ccreport's --workload KEY=VALUE flags
 * (the flags win). Each key is checked as it is read, so a profile's mistake
 * names its line (docs/estimate.md, "Inputs ccreport fills").
 */
#include "workload.h"
#include "estimate.h"
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum wl_type { T_POS, T_INT, T_STAGE, T_FRAC, T_NONNEG, T_BYTES, T_STR, T_EVERY };

static const struct wl_def {
	const char *name;
	enum wl_type type;
	int required;
	double dflt;             /* NaN: none (required, or filled from the measurement) */
} defs[WL_N] = {
	[WL_PARAMS] = { "params", T_POS, 1, NAN },
	[WL_BYTES_PER_GRAD] = { "bytes_per_grad", T_POS, 0, 2 },
	[WL_DP_SIZE] = { "dp_size", T_INT, 0, NAN },
	[WL_GPUS] = { "gpus", T_INT, 0, NAN },
	[WL_STAGE] = { "stage", T_STAGE, 0, EST_DDP },
	[WL_TOKENS_PER_STEP] = { "tokens_per_step", T_POS, 1, NAN },
	[WL_TOTAL_TOKENS] = { "total_tokens", T_POS, 1, NAN },
	[WL_PEAK_TFLOPS] = { "peak_tflops", T_POS, 1, NAN },
	[WL_MFU] = { "mfu", T_FRAC, 1, NAN },
	[WL_PRICE] = { "price_per_gpu_hour", T_NONNEG, 0, 0 },
	[WL_BUCKET] = { "bucket_bytes", T_BYTES, 0, 25 << 20 },
	[WL_OVERLAP] = { "overlap", T_FRAC, 0, 0 },
	[WL_BACKEND] = { "backend", T_STR, 0, NAN },
	[WL_DTYPE] = { "dtype", T_STR, 0, NAN },
	[WL_TP] = { "tp", T_INT, 0, 1 },
	[WL_PP] = { "pp", T_INT, 0, 1 },
	[WL_GPUS_PER_NODE] = { "gpus_per_node", T_INT, 0, NAN },
	[WL_GA_STEPS] = { "ga_steps", T_INT, 0, 1 },
	[WL_BYTES_PER_PARAM] = { "bytes_per_param", T_POS, 0, NAN },
	[WL_LAYERS] = { "layers", T_INT, 0, NAN },
	[WL_ACT_BYTES] = { "act_bytes", T_BYTES, 0, NAN },
	/* measured compute and memory (report/model_compute.c, docs/compute.md) */
	[WL_COMPUTE_DTYPE] = { "compute_dtype", T_STR, 0, NAN },     /* NaN: bf16 */
	[WL_MATMUL_EFF] = { "matmul_efficiency", T_FRAC, 0, 0.5 },
	[WL_WEIGHT_BYTES] = { "weight_bytes", T_POS, 0, 2 },
	[WL_OPTIM_BYTES] = { "optimizer_bytes", T_NONNEG, 0, 12 },
	/* the checkpoint estimate (model_ckpt.c): default 16 B per parameter */
	[WL_CKPT_BYTES] = { "checkpoint_bytes", T_BYTES, 0, NAN },
	[WL_CKPT_EVERY] = { "checkpoint_every", T_EVERY, 0, NAN },
};

const char *wl_key_name(int k)
{
	return k >= 0 && k < WL_N ? defs[k].name : "?";
}

static int number(const char *v, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(v, &end);
	while (*end == ' ')
		end++;
	return end == v || errno || *end || !isfinite(*out) ? -1 : 0;
}

/* "0.4" or "40%": (0, 1] for mfu, [0, 1] for overlap */
static int fraction(const char *v, double *out)
{
	char buf[64];
	size_t n = strlen(v);

	if (n == 0 || n >= sizeof(buf))
		return -1;
	strcpy(buf, v);
	if (buf[n - 1] == '%') {
		buf[n - 1] = '\0';
		if (number(buf, out))
			return -1;
		*out /= 100;
		return 0;
	}
	return number(buf, out);
}

/* checkpoint_every: "500" or "500 steps" (> 0), or "30 min", "2 h", "90 s" (-seconds) */
static int every(const struct wl_def *d, const char *v, double *x, char *err, size_t len)
{
	static const struct { const char *unit; double s; } units[] = {
		{ "", 0 }, { "steps", 0 }, { "step", 0 }, { "s", 1 }, { "min", 60 }, { "m", 60 },
		{ "h", 3600 },
	};
	char *end;
	double n;

	errno = 0;
	n = strtod(v, &end);
	while (*end == ' ')
		end++;
	for (size_t i = 0; end != v && !errno && isfinite(n) && n > 0 &&
	     i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		*x = units[i].s ? -n * units[i].s : n;
		return 0;
	}
	snprintf(err, len, "%s '%s': expected steps (500, 500 steps) or a time (30 min, 2 h, 90 s) above 0",
		 d->name, v);
	return -1;
}

static int parse(const struct wl_def *d, const char *v, double *x, char *err, size_t len)
{
	enum est_stage st;
	long long b;

	switch (d->type) {
	case T_POS:
		if (!number(v, x) && *x > 0)
			return 0;
		snprintf(err, len, "%s '%s': expected a number above 0 (7e9, 4096)", d->name, v);
		return -1;
	case T_INT:
		if (!number(v, x) && *x >= 1 && *x <= 1e9 && *x == floor(*x))
			return 0;
		snprintf(err, len, "%s '%s': expected a whole number of at least 1", d->name, v);
		return -1;
	case T_STAGE:
		if (!est_stage_parse(v, &st)) {
			*x = st;
			return 0;
		}
		snprintf(err, len, "%s '%s': expected ddp, zero1, zero2 or zero3", d->name, v);
		return -1;
	case T_FRAC:
		if (!fraction(v, x) && *x <= 1 && (*x > 0 || (*x == 0 && d->dflt == 0)))
			return 0;
		snprintf(err, len, "%s '%s': expected a fraction %s (0.4 or 40%%)", d->name, v,
			 d->dflt == 0 ? "from 0 to 1" : "above 0 and at most 1");
		return -1;
	case T_NONNEG:
		if (!number(v, x) && *x >= 0)
			return 0;
		snprintf(err, len, "%s '%s': expected a number, 0 or more", d->name, v);
		return -1;
	case T_BYTES:
		if (!rpt_parse_size(v, &b) && b > 0) {
			*x = (double)b;
			return 0;
		}
		if (!number(v, x) && *x >= 1 && *x < 9e18)
			return 0;
		snprintf(err, len, "%s '%s': expected bytes above 0 (26214400, 25M: powers of 1024)",
			 d->name, v);
		return -1;
	case T_EVERY:
		return every(d, v, x, err, len);
	case T_STR:
		break;
	}
	return 0;
}

int workload_set(struct workload *w, const char *key, const char *value, int from,
		 char *err, size_t len)
{
	int k;
	double x = 0;

	for (k = 0; k < WL_N && strcmp(defs[k].name, key); k++)
		;
	if (k == WL_N) {
		snprintf(err, len, "unknown workload key '%s' (known: params, bytes_per_grad, dp_size, "
			 "gpus, stage, tokens_per_step, total_tokens, peak_tflops, mfu, "
			 "price_per_gpu_hour, bucket_bytes, overlap, backend, dtype, tp, pp, "
			 "gpus_per_node, ga_steps, bytes_per_param, layers, act_bytes, compute_dtype, "
			 "matmul_efficiency, weight_bytes, optimizer_bytes, checkpoint_bytes, "
			 "checkpoint_every)", key);
		return -1;
	}
	if (from > 0 && w->from[k] > 0) {
		snprintf(err, len, "'%s' given twice", key);
		return -1;
	}
	if (defs[k].type == T_STR) {
		if (!*value || strlen(value) > 32 || strspn(value, "abcdefghijklmnopqrstuvwxyz0123456789_")
		    != strlen(value)) {
			snprintf(err, len, "%s '%s': expected a name (mpi, nccl, float, bfloat16)", key, value);
			return -1;
		}
		free(w->s[k]);
		w->s[k] = strdup(value);
		if (!w->s[k]) {
			snprintf(err, len, "out of memory");
			return -1;
		}
	} else if (parse(&defs[k], value, &x, err, len)) {
		return -1;
	}
	w->v[k] = x;
	w->from[k] = from;
	w->any = 1;
	if (from > 0 && !w->line)
		w->line = from;
	return 0;
}

int workload_flag(struct workload *w, const char *arg, char *err, size_t len)
{
	const char *eq = strchr(arg, '=');
	char key[64], e[400];

	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(key)) {
		snprintf(err, len, "ccreport: --workload '%s': expected KEY=VALUE", arg);
		return -1;
	}
	memcpy(key, arg, eq - arg);
	key[eq - arg] = '\0';
	if (workload_set(w, key, eq + 1, -1, e, sizeof(e))) {
		snprintf(err, len, "ccreport: --workload: %s", e);
		return -1;
	}
	return 0;
}

int workload_check(const struct workload *w, const char *profile_name, char *err, size_t len)
{
	char why[160];
	double mp;
	int k;

	if (!w->any)
		return 0;
	for (k = 0; k < WL_N && !(defs[k].required && !w->from[k]); k++)
		;
	if (k < WL_N) {
		if (w->line)
			snprintf(err, len, "%s:%d: [workload] needs '%s' (in the profile or --workload %s=...)",
				 profile_name, w->line, defs[k].name, defs[k].name);
		else
			snprintf(err, len, "ccreport: --workload: the estimate needs '%s' too", defs[k].name);
		return -1;
	}
	mp = workload_value(w, WL_TP) * workload_value(w, WL_PP);
	/* GPUs = tp x pp x dp: no model-parallel degree is guessed from a ratio */
	if (w->from[WL_GPUS] && (w->from[WL_DP_SIZE] ? w->v[WL_GPUS] != mp * w->v[WL_DP_SIZE] :
				 fmod(w->v[WL_GPUS], mp))) {
		int from = w->from[WL_GPUS] > 0 ? w->from[WL_GPUS] : w->from[WL_DP_SIZE];

		if (w->from[WL_DP_SIZE])
			snprintf(why, sizeof(why), "gpus %.0f is not tp %.0f x pp %.0f x dp_size %.0f",
				 w->v[WL_GPUS], workload_value(w, WL_TP), workload_value(w, WL_PP),
				 w->v[WL_DP_SIZE]);
		else
			snprintf(why, sizeof(why), "gpus %.0f is not a multiple of tp %.0f x pp %.0f",
				 w->v[WL_GPUS], workload_value(w, WL_TP), workload_value(w, WL_PP));
		if (from > 0)
			snprintf(err, len, "%s:%d: %s", profile_name, from, why);
		else
			snprintf(err, len, "ccreport: --workload: %s", why);
		return -1;
	}
	return 0;
}

/* defaults for what was not given (dp_size and gpus come from the measurement: model.c) */
double workload_value(const struct workload *w, int k)
{
	return w->from[k] ? w->v[k] : defs[k].dflt;
}

const char *workload_source(const struct workload *w, int k, char *buf, size_t len)
{
	if (w->from[k] > 0)
		snprintf(buf, len, "profile line %d", w->from[k]);
	else
		snprintf(buf, len, "%s", w->from[k] < 0 ? "--workload" : "default");
	return buf;
}

void workload_free(struct workload *w)
{
	for (int k = 0; k < WL_N; k++)
		free(w->s[k]);
	memset(w, 0, sizeof(*w));
}
