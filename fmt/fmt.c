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
