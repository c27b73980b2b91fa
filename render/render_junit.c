/*
 * render/render_junit.c: junit.xml for CI systems. One testcase per
 * criterion (classname: the profile's name, or the probe when the profile
 * has none; name: the criterion id): fail is a <failure>, incomplete is
 * <skipped>, warn passes with the warning in <system-out>. Each baseline
 * regression is one more failing testcase. Every string goes through
 * esc_xml, so the file is well-formed whatever the results held.
 */
#include "render_junit.h"
#include "escape.h"
#include "../fmt/fmt.h"

#include <string.h>

/* failures written into one <failure> body; summary.json lists them all */
#define JUNIT_MAX_FAILURES 200

#define X(f, ...) put_esc(f, esc_xml, __VA_ARGS__)

struct counts {
	int tests, failures, skipped;
};

static void count_criteria(const json_t *s, struct counts *c)
{
	const json_t *crit;
	size_t i;

	json_array_foreach(j_arr(s, "criteria"), i, crit) {
		const char *v = j_str(crit, "verdict");

		c->tests++;
		if (!strcmp(v, "incomplete"))
			c->skipped++;
		else if (strcmp(v, "pass") && strcmp(v, "warn"))
			c->failures++;
	}
}

static void failure_lines(FILE *f, const json_t *crit)
{
	const json_t *fl;
	char buf[1024];
	size_t i, n = json_array_size(j_arr(crit, "failures"));

	json_array_foreach(j_arr(crit, "failures"), i, fl) {
		if (i == JUNIT_MAX_FAILURES) {
			fprintf(f, "and %zu more (summary.json lists every one)&#10;", n - i);
			break;
		}
		fmt_failure(buf, sizeof(buf), fl);
		X(f, "%s\n", buf);
	}
}

static void criterion_case(FILE *f, const json_t *s, const json_t *crit)
{
	const char *prof = j_str(json_object_get(s, "profile"), "name");
	const char *v = j_str(crit, "verdict");
	char bound[160];

	fmt_bound(bound, sizeof(bound), crit);
	fputs("    <testcase classname=\"", f);
	X(f, "%s", *prof ? prof : j_str(crit, "probe"));
	fputs("\" name=\"", f);
	X(f, "%s", j_str(crit, "id"));
	fputs("\">\n", f);
	if (!strcmp(v, "pass")) {
		fputs("      <system-out>", f);
		X(f, "pass: %s", j_str(crit, "reason"));
		fputs("</system-out>\n", f);
	} else if (!strcmp(v, "warn")) {
		fputs("      <system-out>", f);
		X(f, "warn: %s (bound %s)\n", j_str(crit, "reason"), bound);
		failure_lines(f, crit);
		fputs("</system-out>\n", f);
	} else if (!strcmp(v, "incomplete")) {
		fputs("      <skipped message=\"", f);
		X(f, "incomplete: %s", j_str(crit, "reason"));
		fputs("\"/>\n", f);
	} else {
		fputs("      <failure type=\"", f);
		X(f, "%s", *v ? v : "no verdict");
		fputs("\" message=\"", f);
		X(f, "%s", j_str(crit, "reason"));
		fputs("\">", f);
		X(f, "%s: %s\nbound %s\n", j_str(crit, "id"), j_str(crit, "title"), bound);
		failure_lines(f, crit);
		fputs("</failure>\n", f);
	}
	fputs("    </testcase>\n", f);
}

static void regression_case(FILE *f, const json_t *r)
{
	char buf[64], old[64], now[64], ch[48];
	const char *unit = j_str(r, "unit");

	fmt_value_unit(old, sizeof(old), r, "old", unit);
	fmt_value_unit(now, sizeof(now), r, "new", unit);
	fmt_value_unit(ch, sizeof(ch), r, "change_pct", "%");
	fputs("    <testcase classname=\"baseline\" name=\"", f);
	X(f, "%s %s", j_str(r, "metric"), j_text(json_object_get(r, "element"), buf, sizeof(buf)));
	fputs("\">\n      <failure type=\"regression\" message=\"", f);
	X(f, "regressed %s: %s, baseline %s", ch, now, old);
	fputs("\"/>\n    </testcase>\n", f);
}

static void baseline_suite(FILE *f, const json_t *b)
{
	const json_t *regs = j_arr(b, "regressions"), *r;
	size_t i, n = json_array_size(regs);

	fprintf(f, "  <testsuite name=\"baseline\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
		"skipped=\"0\">\n", n ? n : 1, n);
	if (!n) {
		fputs("    <testcase classname=\"baseline\" name=\"no regressions\">\n      <system-out>", f);
		X(f, "compared with %s: no regression", j_str(b, "path"));
		fputs("</system-out>\n    </testcase>\n", f);
	}
	json_array_foreach(regs, i, r)
		regression_case(f, r);
	fputs("  </testsuite>\n", f);
}

int render_junit(FILE *f, const json_t *s)
{
	const json_t *b = json_object_get(s, "baseline"), *crit;
	size_t nreg = json_array_size(j_arr(b, "regressions"));
	struct counts c = { 0 };
	int has_b = json_is_object(b);
	size_t i;

	count_criteria(s, &c);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<testsuites name=\"ccdiag acceptance\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
		"skipped=\"%d\">\n",
		c.tests + (has_b ? (nreg ? nreg : 1) : 0), c.failures + nreg, c.skipped);
	fputs("  <testsuite name=\"", f);
	X(f, "ccreport %s", j_str(json_object_get(s, "profile"), "name"));
	fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\">\n",
		c.tests, c.failures, c.skipped);
	fputs("    <properties>\n      <property name=\"verdict\" value=\"", f);
	X(f, "%s", j_str(s, "verdict"));
	fputs("\"/>\n      <property name=\"generated_utc\" value=\"", f);
	X(f, "%s", j_str(s, "generated_utc"));
	fputs("\"/>\n      <property name=\"profile_path\" value=\"", f);
	X(f, "%s", j_str(json_object_get(s, "profile"), "path"));
	fputs("\"/>\n    </properties>\n", f);
	json_array_foreach(j_arr(s, "criteria"), i, crit)
		criterion_case(f, s, crit);
	fputs("  </testsuite>\n", f);
	if (has_b)
		baseline_suite(f, b);
	fputs("</testsuites>\n", f);
	return ferror(f) ? -1 : 0;
}
