/*
 * report/render.c: render_all (render.h) and the lenient readers of the
 * summary document the renderers share. The summary is ccreport's own
 * output, but the renderers still treat every field as optional: a missing
 * or mistyped field reads as empty and never crashes a renderer.
 */
#include "render_priv.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

void put_esc(FILE *f, void (*esc)(FILE *, const char *), const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n >= 0)
		esc(f, s);
	if (n >= 0)
		free(s);
}

void put_plain(FILE *f, void (*esc)(FILE *, const char *), const json_t *v)
{
	char *s;

	if (json_is_number(v)) {   /* our own digits: nothing to escape */
		char buf[64];

		fmt_value(buf, sizeof(buf), v);
		fputs(buf, f);
		return;
	}
	s = j_plain(v);

	esc(f, s ? s : "");
	free(s);
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

/* writes one output file through fn; 0, or -1 with err set */
int render_write_file(const char *dir, const char *name, const char *what,
		      int (*fn)(FILE *, const json_t *, const struct charts *),
		      const json_t *s, const struct charts *c, char *err, size_t len)
{
	char path[4096];
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f) {
		snprintf(err, len, "cannot write '%s': %s", path, strerror(errno));
		return -1;
	}
	errno = 0;
	rc = what ? fputs(what, f) < 0 : fn(f, s, c);
	if (ferror(f))
		rc = -1;
	if (fclose(f))
		rc = -1;
	if (rc)
		snprintf(err, len, "cannot write '%s': %s", path,
			 errno ? strerror(errno) : "write error");
	return rc ? -1 : 0;
}

/*
 * Charts of an earlier report in the same folder would sit beside report.md
 * as if they were this one's: every chart-*.svg there goes first (the names
 * are ccreport's own, never a result string).
 */
void render_remove_old_charts(const char *dir)
{
	char path[4096];
	struct dirent *e;
	DIR *d = opendir(dir);
	size_t n;

	if (!d)
		return;
	while ((e = readdir(d))) {
		n = strlen(e->d_name);
		if (!strncmp(e->d_name, "chart-", 6) && n > 10 && !strcmp(e->d_name + n - 4, ".svg")) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
	}
	closedir(d);
}

static int junit_fn(FILE *f, const json_t *s, const struct charts *c)
{
	(void)c;
	return render_junit(f, s);
}

int render_all(const json_t *summary, const struct render_opts *o, char *err, size_t len)
{
	struct charts c;
	int i, rc = -1;

	if (!json_is_object(summary) || !o || !o->outdir) {
		snprintf(err, len, "nothing to render: no summary or no output folder");
		return -1;
	}
	render_remove_old_charts(o->outdir);
	charts_draw(summary, o, &c);
	for (i = 0; i < c.n; i++)
		if (render_write_file(o->outdir, c.v[i].file, c.v[i].svg, NULL, NULL, NULL, err, len))
			goto out;
	if (render_write_file(o->outdir, "report.md", NULL, render_md, summary, &c, err, len) ||
	    render_write_file(o->outdir, "index.html", NULL, render_html, summary, &c, err, len) ||
	    render_write_file(o->outdir, "junit.xml", NULL, junit_fn, summary, &c, err, len))
		goto out;
	rc = 0;
out:
	charts_free(&c);
	return rc;
}

int render_mkdirs(const char *path)
{
	char buf[4096];

	if (strlen(path) >= sizeof(buf))
		return -1;
	strcpy(buf, path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, 0755) && errno != EEXIST ? -1 : 0;
}

time_t render_report_time(void)
{
	const char *s = getenv("SOURCE_DATE_EPOCH");
	char *end;
	long long t;

	if (s && *s) {
		t = strtoll(s, &end, 10);
		if (!*end && t >= 0)
			return (time_t)t;
	}
	return time(NULL);
}
