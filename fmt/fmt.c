/*
 * fmt/fmt.c: the lenient readers of ccreport's documents and the wording of
 * their values (fmt.h). The documents are ccreport's own output, but every
 * field is still treated as optional: a missing or mistyped field reads as
 * empty.
 */
#include "fmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *j_str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

const char *j_text(const json_t *v, char *buf, size_t len)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v))
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, len, "%g", json_real_value(v));
	else if (json_is_boolean(v))
		snprintf(buf, len, "%s", json_is_true(v) ? "true" : "false");
	else
		snprintf(buf, len, "%s", "");
	return buf;
}

int j_num(const json_t *o, const char *key, double *out)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_number(v))
		return 0;
	*out = json_number_value(v);
	return 1;
}

const json_t *j_arr(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_array(v) ? v : NULL;
}

void fmt_value(char *buf, size_t len, const json_t *v)
{
	double x, a;

	if (!json_is_number(v)) {
		snprintf(buf, len, "n/a");
		return;
	}
	x = json_number_value(v);
	a = fabs(x);
	if (json_is_integer(v) || (a < 1e15 && x == floor(x) && a >= 1000))
		snprintf(buf, len, "%.0f", x);
	else if (a >= 100)
		snprintf(buf, len, "%.1f", x);
	else if (a >= 1)
		snprintf(buf, len, "%.2f", x);
	else
		snprintf(buf, len, "%.3g", x);
}

void fmt_value_unit(char *buf, size_t len, const json_t *o, const char *key, const char *unit)
{
	char v[48];

	fmt_value(v, sizeof(v), json_object_get(o, key));
	if (!strcmp(v, "n/a") || !unit)
		unit = "";
	snprintf(buf, len, "%s%s%s", v, *unit && strcmp(unit, "%") ? " " : "", unit);
}

void fmt_failure(char *buf, size_t len, const json_t *fl)
{
	const char *unit = j_str(fl, "unit"), *host = j_str(fl, "host");
	char el[64], v[64], b[64], sh[64];

	fmt_value_unit(v, sizeof(v), fl, "value", unit);
	fmt_value_unit(b, sizeof(b), fl, "bound", unit);
	/* no shortfall in % against a bound of 0 (error counters): the summary has null */
	sh[0] = '\0';
	if (json_is_number(json_object_get(fl, "shortfall_pct"))) {
		strcpy(sh, ", shortfall ");
		fmt_value_unit(sh + 12, sizeof(sh) - 12, fl, "shortfall_pct", "%");
	}
	snprintf(buf, len, "%s%s%s%s: %s, bound %s%s",
		 j_text(json_object_get(fl, "element"), el, sizeof(el)),
		 *host ? " (host " : "", host, *host ? ")" : "", v, b, sh);
}

/* ">= 335 GB/s (NVLink4)"; a relative bound without a value: ">= 90% of <basis>" */
void fmt_bound(char *buf, size_t len, const json_t *crit)
{
	const json_t *b = json_object_get(crit, "bound");
	const char *op = *j_str(b, "op") ? j_str(b, "op") : "?";
	const char *basis = j_str(b, "basis");
	char val[48];
	double rel;
	int n;

	if (!json_is_object(b)) {
		snprintf(buf, len, "n/a");
		return;
	}
	if (!json_is_number(json_object_get(b, "value")) && j_num(b, "relative", &rel)) {
		snprintf(buf, len, "%s %g%% of %s", op, rel * 100, *basis ? basis : "the reference");
		return;
	}
	fmt_value(val, sizeof(val), json_object_get(b, "value"));
	n = snprintf(buf, len, "%s %s %s", op, val, j_str(b, "unit"));
	if (*basis && strcmp(basis, "absolute") && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - n, " (%s)", basis);
}

/* plain text of any JSON value: arrays joined by ", ", objects as "k=v" */
static void plain(FILE *f, const json_t *v)
{
	const char *k;
	const json_t *x;
	char buf[64];
	size_t i;

	if (json_is_array(v)) {
		json_array_foreach(v, i, x) {
			fputs(i ? ", " : "", f);
			plain(f, x);
		}
	} else if (json_is_object(v)) {
		i = 0;
		json_object_foreach((json_t *)v, k, x) {
			fprintf(f, "%s%s=", i++ ? ", " : "", k);
			plain(f, x);
		}
	} else if (json_is_real(v)) {
		fmt_value(buf, sizeof(buf), v);
		fputs(buf, f);
	} else {
		fputs(j_text(v, buf, sizeof(buf)), f);
	}
}

char *j_plain(const json_t *v)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	plain(f, v);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

const char *verdict_word(const char *v)
{
	static const char *const words[][2] = {
		{ "pass", "PASS" }, { "warn", "WARN" }, { "fail", "FAIL" },
		{ "incomplete", "INCOMPLETE" },
	};
	size_t i;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(v, words[i][0]))
			return words[i][1];
	return "UNKNOWN";
}

/* "4 nodes (node0, node1, ...), 3 phases of 4 ranks each" from a decision's "judged" */
void fmt_judged(char *buf, size_t len, const json_t *judged)
{
	const json_t *hosts = j_arr(judged, "hosts"), *r = j_arr(judged, "ranks_per_phase"), *v;
	size_t i, at, nr = json_array_size(r);
	int same = 1;
	double n = 0;

	j_num(judged, "nodes", &n);
	at = (size_t)snprintf(buf, len, "%.0f node%s", n, n == 1 ? "" : "s");
	json_array_foreach(hosts, i, v) {
		if (at >= len)
			return;
		if (i == 8) {
			at += (size_t)snprintf(buf + at, len - at, ", ... %zu more", json_array_size(hosts) - i);
			break;
		}
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : " (", json_string_value(v) ?: "");
	}
	if (json_array_size(hosts) && at < len)
		at += (size_t)snprintf(buf + at, len - at, ")");
	json_array_foreach(r, i, v)
		same &= json_integer_value(v) == json_integer_value(json_array_get(r, 0));
	if (at >= len)
		return;
	at += (size_t)snprintf(buf + at, len - at, ", %zu phase%s (results file%s)", nr, nr == 1 ? "" : "s",
			       nr == 1 ? "" : "s");
	if (!nr || at >= len)
		return;
	if (same) {
		snprintf(buf + at, len - at, " of %lld rank%s%s", (long long)json_integer_value(json_array_get(r, 0)),
			 json_integer_value(json_array_get(r, 0)) == 1 ? "" : "s", nr > 1 ? " each" : "");
		return;
	}
	at += (size_t)snprintf(buf + at, len - at, " of");
	json_array_foreach(r, i, v)
		if (at < len)
			at += (size_t)snprintf(buf + at, len - at, "%s %lld", !i ? "" : i + 1 == nr ? " and" : ",",
					       (long long)json_integer_value(v));
	if (at < len)
		snprintf(buf + at, len - at, " ranks");
}

/*
 * "0.355 days, 34.11 GPU-hours, no price (...); exposed communication 80.46% of a 1.26 s
 * step; not extrapolated (within what was measured)[; measured step (trainstep): 1.02 s,
 * 0.29 days, ...]"
 */
void fmt_headline(char *buf, size_t len, const json_t *h)
{
	char d[48], g[48], c[64] = "no price (-w price_per_gpu_hour=USD)", p[48], st[48], ms[256] = "";
	const json_t *m = json_object_get(h, "measured_step");
	double cost = 0;

	if (!json_is_object(h)) {
		snprintf(buf, len, "no workload given (profile [workload] or -w KEY=VALUE, docs/estimate.md)");
		return;
	}
	if (!json_is_true(json_object_get(h, "made"))) {
		snprintf(buf, len, "not made: %s", j_str(h, "reason"));
		return;
	}
	fmt_value_unit(d, sizeof(d), h, "days", "days");
	fmt_value_unit(g, sizeof(g), h, "gpu_hours", "GPU-hours");
	if (j_num(h, "cost", &cost) && cost > 0)
		fmt_value_unit(c, sizeof(c), h, "cost", "USD");
	fmt_value_unit(p, sizeof(p), h, "comm_pct", "%");
	fmt_value_unit(st, sizeof(st), h, "step_s", "s");
	if (json_is_object(m)) {
		char ms_st[48], ms_d[48], ms_c[64] = "";

		fmt_value_unit(ms_st, sizeof(ms_st), m, "step_s", "s");
		fmt_value_unit(ms_d, sizeof(ms_d), m, "days", "days");
		if (j_num(m, "cost", &cost) && cost > 0) {
			strcpy(ms_c, ", ");
			fmt_value_unit(ms_c + 2, sizeof(ms_c) - 2, m, "cost", "USD");
		}
		snprintf(ms, sizeof(ms), "; measured step (%s): %s, %s%s from it", j_str(m, "source"), ms_st,
			 ms_d, ms_c);
	}
	snprintf(buf, len, "%s, %s, %s; exposed communication %s of a %s step; %s%s%s", d, g, c, p, st,
		 *j_str(h, "extrapolated") ? "EXTRAPOLATED: " : "not extrapolated (within what was measured)",
		 j_str(h, "extrapolated"), ms);
}
