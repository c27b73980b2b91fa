/*
 * tests/unit/test_report_render.c: render_all on the hand-written summary
 * documents in tests/fixtures/report (run from the repository root, as
 * tests/run.sh does) and check report.md, index.html, junit.xml and the
 * chart files: what they say, that hostile strings stay inert, that JUnit
 * is well-formed XML with the right counts, and that a missing, failing or
 * hanging gnuplot costs the charts and nothing else.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../render/render.h"
#include "../../render/render_all.h"
#include "../../report/decision.h"

#define FIXTURES "tests/fixtures/report"

struct out {
	char dir[256];
	char *md, *html, *junit;
};

static json_t *fixture(const char *name)
{
	char path[256];
	json_error_t je;
	json_t *s;

	snprintf(path, sizeof(path), FIXTURES "/summary-%s.json", name);
	s = json_load_file(path, 0, &je);
	if (!s)
		fail_msg("%s:%d: %s (run from the repository root)", path, je.line, je.text);
	return s;
}

static char *slurp(const char *dir, const char *name)
{
	char path[512], *buf;
	long n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static int have_gnuplot(void)
{
	return system("command -v gnuplot >/dev/null 2>&1") == 0;
}

/* renders s into a fresh temp dir and reads the three documents back */
static void render(const json_t *s, struct render_opts o, struct out *out)
{
	char err[512] = "";

	snprintf(out->dir, sizeof(out->dir), "%s/ccreport-test.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(out->dir));
	o.outdir = out->dir;
	if (render_all(s, &o, err, sizeof(err)))
		fail_msg("render_all: %s", err);
	out->md = slurp(out->dir, "report.md");
	out->html = slurp(out->dir, "index.html");
	out->junit = slurp(out->dir, "junit.xml");
	assert_non_null(out->md);
	assert_non_null(out->html);
	assert_non_null(out->junit);
}

static void out_free(struct out *out)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", out->dir);
	assert_int_equal(system(cmd), 0);
	free(out->md);
	free(out->html);
	free(out->junit);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (; (hay = strstr(hay, needle)); hay += strlen(needle))
		n++;
	return n;
}

#define assert_has(hay, needle) do { \
	if (!strstr((hay), (needle))) \
		fail_msg("missing: %s", (needle)); \
} while (0)
#define assert_starts(hay, prefix) do { \
	if (strncmp((hay), (prefix), strlen(prefix))) \
		fail_msg("does not start with: %s", (prefix)); \
} while (0)
#define assert_lacks(hay, needle) do { \
	if (strstr((hay), (needle))) \
		fail_msg("present but must not be: %s", (needle)); \
} while (0)

/* well-formed XML by xmllint, or python3's parser when xmllint is absent */
static void assert_xml(const char *dir, const char *name)
{
	char cmd[700];

	snprintf(cmd, sizeof(cmd),
		 "if command -v xmllint >/dev/null; then xmllint --noout '%s/%s'; else "
		 "python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' '%s/%s'; fi",
		 dir, name, dir, name);
	if (system(cmd))
		fail_msg("%s/%s is not well-formed XML", dir, name);
}

static int svg_files(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strstr(e->d_name, ".svg"))
			n++;
	closedir(d);
	return n;
}

/* the verdict comes first in every document */
static void test_pass(void **state)
{
	json_t *s = fixture("pass");
	struct render_opts o = { .charts = 1 };
	struct out out;
	char *svg;

	(void)state;
	render(s, o, &out);
	assert_starts(out.md, "# Cluster acceptance: PASS\n\n**Verdict: PASS** (exit code 0)");
	assert_has(out.md, "| pcie.h2d: PCIe host-to-device bandwidth | **PASS** | required | 51.20 GB/s at node02:gpu5 |");
	assert_has(out.html, "<div class=\"banner v-pass\">Verdict: PASS (exit code 0)</div>");
	assert_true(strstr(out.html, "banner") < strstr(out.html, "id=\"criteria\""));
	assert_has(out.md, "No baseline was given.");
	assert_has(out.md, "Every host has the hardware the profile expects.");
	assert_has(out.junit, "tests=\"3\" failures=\"0\" errors=\"0\" skipped=\"0\"");
	assert_int_equal(count(out.junit, "<testcase "), 3);
	assert_int_equal(count(out.junit, "<failure"), 0);
	assert_xml(out.dir, "junit.xml");
	/* a clean page references nothing outside itself, not even a namespace URI */
	assert_lacks(out.html, "http://");
	assert_lacks(out.html, "https://");
	assert_lacks(out.html, "<script");
	assert_lacks(out.html, "<link");
	assert_lacks(out.html, "@import");
	if (have_gnuplot()) {
		/* 2 collectives, the heatmap, 2 criteria with per-element values */
		assert_int_equal(count(out.html, "<svg"), 5);
		assert_int_equal(svg_files(out.dir), 5);
		assert_has(out.md, "![node-pair bandwidth (Gb/s)](chart-netpair.svg)");
		assert_has(out.html, "node-pair bandwidth (Gb/s)</text>");
		assert_xml(out.dir, "chart-netpair.svg");
		assert_xml(out.dir, "chart-busbw-1.svg");
		/* error bars where spread_pct has one value per point, none where it cannot be matched */
		svg = slurp(out.dir, "chart-busbw-1.svg");
		assert_has(svg, ">nccl float sum, 4 nodes (bars: time spread)</text>");
		assert_has(svg, ">nccl float sum, 1 node</text>");
		free(svg);
	}
	out_free(&out);
	json_decref(s);
}

static void test_fail_names_elements(void **state)
{
	json_t *s = fixture("fail");
	struct render_opts o = { .charts = 0 };
	const char *f6 = "node03:gpu6 (host node03): 288.0 GB/s, bound 335 GB/s, shortfall 14.03%";
	struct out out;

	(void)state;
	render(s, o, &out);
	assert_starts(out.md, "# Cluster acceptance: FAIL");
	assert_has(out.md, "5 criteria, 3 failed, 1 warned, 0 incomplete, 1 passed");
	assert_has(out.md, "| nvlink.p2p: NVLink P2P bandwidth, one direction | **FAIL** | required | 288.0 GB/s at node03:gpu6 | \\>= 335 GB/s (NVLink4) | 32 |");
	assert_has(out.md, f6);
	assert_has(out.md, "- node03:gpu2 (host node03): 301.5 GB/s, bound 335 GB/s, shortfall 10.00%\n");
	assert_has(out.md, "| nvlink.p2p: bw\\_GBps | node03:gpu6 | 371.0 GB/s | 288.0 GB/s | -22.37% | 0.8% |");
	assert_has(out.md, "| driver\\_version | 535\\.104.05 | node03 |");
	assert_has(out.md, "| \\>= 0.9 of rate (fraction of each element's rate\\_GBps as the run reported it) | 12 |");
	/* a bound of 0 has no shortfall in % */
	assert_has(out.md, "- node02/mlx5\\_0:1 (host node02): 12 count, bound 0 count\n");
	assert_has(out.md, "Compared with baselines/2026-10.json: 14 values compared, tolerance 5%.");
	assert_has(out.html, "<p>Compared with baselines/2026-10.json: 14 values compared, tolerance 5%.</p>");
	assert_has(out.md, "## Hardware against the profile\n\n| what | found | the profile expects | hosts |\n"
		   "|---|---|---|---|\n| gpu\\_model | NVIDIA H100 PCIe | NVIDIA H100 80GB HBM3 | node04 |\n");
	assert_has(out.md, "| netpair | link | node02->node04 | bad link | node02 and node04 reach");
	assert_has(out.html, "<tr><td>gpu_model</td><td>NVIDIA H100 PCIe</td><td>NVIDIA H100 80GB HBM3</td><td>node04</td></tr>");
	assert_has(out.html, "<div class=\"banner v-fail\">");
	assert_has(out.html, f6);
	assert_has(out.html, "<td class=\"t-warn\">WARN</td>");
	/* JUnit: 5 criteria (3 fail, 1 warn passing) and 1 baseline regression */
	assert_xml(out.dir, "junit.xml");
	assert_has(out.junit, "<testsuites name=\"ccdiag acceptance\" tests=\"6\" failures=\"4\" errors=\"0\" skipped=\"0\">");
	assert_int_equal(count(out.junit, "<testcase "), 6);
	assert_int_equal(count(out.junit, "<failure "), 4);
	assert_has(out.junit, "<testcase classname=\"hgx-h100\" name=\"nvlink.p2p\">\n"
		   "      <failure type=\"fail\" message=\"2 of 32 GPUs below 335 GB/s, both on node03\">");
	assert_has(out.junit, "<system-out>warn: busbw 351.9 GB/s below 360 GB/s (warn only)");
	assert_has(out.junit, "<testcase classname=\"baseline\" name=\"nvlink.p2p: bw_GBps node03:gpu6\">");
	out_free(&out);
	json_decref(s);
}

static void test_incomplete(void **state)
{
	json_t *s = fixture("incomplete");
	struct render_opts o = { .charts = 0 };
	struct out out;

	(void)state;
	render(s, o, &out);
	assert_starts(out.md, "# Cluster acceptance: INCOMPLETE");
	assert_has(out.md, "| **INCOMPLETE** | required | n/a |");
	assert_has(out.md, "- results/run1.jsonl ended by timeout: nvlink.p2p has no records\n");
	assert_has(out.md, "| timeout |");
	assert_has(out.html, "<div class=\"banner v-incomplete\">Verdict: INCOMPLETE (exit code 4)</div>");
	assert_xml(out.dir, "junit.xml");
	assert_int_equal(count(out.junit, "<testcase "), 3);
	assert_int_equal(count(out.junit, "<skipped "), 1);
	assert_has(out.junit, "skipped=\"1\"");
	assert_has(out.junit, "<skipped message=\"incomplete: no nvlink records: the run ended by timeout");
	out_free(&out);
	json_decref(s);
}

/* every table row has as many cell borders as its header: no '|' leaks */
static void assert_md_tables(const char *md)
{
	const char *line = md, *nl, *p;
	int want = -1, n;

	for (; *line; line = nl + 1) {
		nl = strchrnul(line, '\n');
		if (*line != '|') {
			want = -1;
		} else {
			for (n = 0, p = line; p < nl; p++)
				n += *p == '|' && (p == line || p[-1] != '\\');
			if (want < 0)
				want = n;
			else if (n != want)
				fail_msg("table row with %d borders, header has %d: %.*s",
					 n, want, (int)(nl - line), line);
		}
		if (!*nl)
			break;
	}
}

/*
 * Nothing in the page points outside it: no element that fetches, and in
 * every tag no src, no href but to a chart's own "#c<n>-..." ids, no URI;
 * the style sheet imports nothing. Text may still mention a URI (escaped):
 * that is a string from the results, shown, never fetched.
 */
static void assert_no_fetch(const char *html)
{
	static const char *const bad_tag[] = { "<img", "<iframe", "<object", "<embed", "<link",
					       "<script", "<base", "<form", "<audio", "<video" };
	const char *p, *end, *h;
	char tag[4096];
	size_t i;

	for (i = 0; i < sizeof(bad_tag) / sizeof(bad_tag[0]); i++)
		assert_lacks(html, bad_tag[i]);
	for (p = strchr(html, '<'); p; p = strchr(end, '<')) {
		end = strchr(p, '>');
		assert_non_null(end);
		snprintf(tag, sizeof(tag), "%.*s", (int)(end - p), p);
		if (strlen(tag) > 4000)   /* an embedded PNG: its base64 text is no URI */
			tag[60] = '\0';
		if (strstr(tag, "src=") || strstr(tag, "http:") || strstr(tag, "https:") ||
		    strstr(tag, "'//") || strstr(tag, "\"//"))
			fail_msg("tag points outside the page: %.80s", tag);
		for (h = tag; (h = strstr(h, "href=")); h += 5)
			if (strncmp(h, "href='#c", 8) && strncmp(h, "href=\"#c", 8) &&
			    (strncmp(tag, "<image ", 7) || strncmp(h, "href='data:image/png;base64,", 28)))
				fail_msg("href outside the page: %.60s", h);
	}
	p = strstr(html, "<style>");
	end = strstr(html, "</style>");
	assert_non_null(p);
	assert_non_null(end);
	snprintf(tag, sizeof(tag), "%.*s", (int)(end - p), p);
	assert_lacks(tag, "url(");
	assert_lacks(tag, "@import");
	assert_lacks(tag, "@font-face");
}

/* ids of the inline charts are unique across the page */
static void assert_unique_ids(const char *html)
{
	const char *p, *q, *e;
	char a[128], b[128];

	for (p = html; (p = strstr(p, " id=")); p += 4) {
		e = strchr(p + 5, p[4]);
		snprintf(a, sizeof(a), "%.*s", (int)(e - p - 5), p + 5);
		for (q = e; (q = strstr(q, " id=")); q += 4) {
			e = strchr(q + 5, q[4]);
			snprintf(b, sizeof(b), "%.*s", (int)(e - q - 5), q + 5);
			if (!strcmp(a, b))
				fail_msg("id '%s' twice in index.html", a);
		}
	}
}

/*
 * report.md through a real GitHub-flavoured Markdown parser, when cmark-gfm
 * is installed (it is not a dependency): no raw HTML, no link at all, and
 * the only images are the chart files.
 */
static void assert_md_parsed(const char *dir)
{
	char cmd[600], *html, *p;

	if (system("command -v cmark-gfm >/dev/null 2>&1"))
		return;
	snprintf(cmd, sizeof(cmd), "cmark-gfm -e table -e autolink -e strikethrough -e tagfilter "
		 "'%s/report.md' >'%s/md.html'", dir, dir);
	assert_int_equal(system(cmd), 0);
	html = slurp(dir, "md.html");
	assert_non_null(html);
	assert_lacks(html, "<script");
	assert_lacks(html, "<a ");
	assert_lacks(html, "<b>");
	for (p = html; (p = strstr(p, "<img ")); p++)
		if (strncmp(p, "<img src=\"chart-", 16))
			fail_msg("image in report.md that is not a chart: %.60s", p);
	assert_int_equal(count(html, "<img "), svg_files(dir));
	free(html);
	snprintf(cmd, sizeof(cmd), "%s/md.html", dir);
	unlink(cmd);
}

/* an overall warn: amber banner, and JUnit still has no failure */
static void test_warn(void **state)
{
	json_t *s = fixture("pass"), *crit;
	struct render_opts o = { .charts = 0 };
	struct out out;

	(void)state;
	json_object_set_new(s, "verdict", json_string("warn"));
	crit = json_array_get(json_object_get(s, "criteria"), 2);
	json_object_set_new(crit, "verdict", json_string("warn"));
	json_object_set_new(crit, "reason", json_string("busbw 351.9 GB/s below 360 GB/s"));
	render(s, o, &out);
	assert_starts(out.md, "# Cluster acceptance: WARN\n\n**Verdict: WARN** (exit code 0): "
		      "3 criteria, 0 failed, 1 warned, 0 incomplete, 2 passed.");
	assert_has(out.html, "<div class=\"banner v-warn\">Verdict: WARN (exit code 0)</div>");
	assert_has(out.junit, "failures=\"0\"");
	assert_has(out.junit, "<system-out>warn: busbw 351.9 GB/s below 360 GB/s (bound &gt;= 360 GB/s (NDR 8x400 Gb/s))");
	assert_xml(out.dir, "junit.xml");
	out_free(&out);
	json_decref(s);
}

static void test_hostile(void **state)
{
	json_t *s = fixture("hostile");
	struct render_opts o = { .charts = 1 };
	const char *p;
	struct out out;

	(void)state;
	render(s, o, &out);
	/* HTML: inert text, no markup from the summary, nothing fetched */
	assert_lacks(out.html, "<script");
	assert_lacks(out.html, "<b>bold");
	assert_lacks(out.html, "</td><script");
	assert_has(out.html, "nv&quot;link&lt;script&gt;alert(1)&lt;/script&gt;");
	assert_has(out.html, "evil&quot;host&#39;|`x`[a](b)]]&gt;&#10;&lt;script&gt;alert(1)&lt;/script&gt;:gpu6");
	assert_has(out.html, "&lt;img src=&quot;https://evil.example/x.png&quot;&gt;");
	assert_has(out.html, "<td>H100 &lt;script&gt;alert(1)&lt;/script&gt; | x</td>");
	assert_has(out.html, "<td>]]&gt; &amp; &quot;quoted&quot; | &lt;b&gt;x&lt;/b&gt;</td>");
	assert_has(out.html, "<title>Cluster acceptance: FAIL (prof&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;q&quot;)</title>");
	assert_no_fetch(out.html);
	assert_unique_ids(out.html);
	assert_has(out.html, "Content-Security-Policy\" content=\"default-src 'none'");
	for (p = out.html; *p; p++)
		if ((unsigned char)*p < 0x20 && *p != '\n' && *p != '\t')
			fail_msg("control character 0x%02x in index.html", *p);
	/* Markdown: every '<' escaped, no link or image, tables keep their shape */
	for (p = strchr(out.md, '<'); p; p = strchr(p + 1, '<'))
		if (p[-1] != '\\')
			fail_msg("unescaped '<' in report.md: %.30s", p);
	assert_has(out.md, "\\[link\\](http\\://evil.example/)");
	assert_has(out.md, "!\\[i\\](http\\://evil.example/i.png)");
	assert_has(out.md, "- \\# heading? - \\[x\\](javascript:alert(1))");
	assert_has(out.md, "description: desc \\| pipe \\`code\\`");
	assert_lacks(out.md, "\x1b");
	assert_md_tables(out.md);
	assert_md_parsed(out.dir);
	/* JUnit: well-formed, escaped, no control characters */
	assert_xml(out.dir, "junit.xml");
	assert_has(out.junit, "name=\"nv&quot;link&lt;script&gt;alert(1)&lt;/script&gt;\"");
	assert_has(out.junit, "]]&gt;");
	assert_lacks(out.junit, "]]>");
	assert_has(out.junit, "&apos;apos&apos;, |pipes|, ]]&gt; and control[31m chars");
	for (p = out.junit; *p; p++)
		if ((unsigned char)*p < 0x20 && *p != '\n')
			fail_msg("control character 0x%02x in junit.xml", *p);
	if (have_gnuplot()) {
		char *svg = slurp(out.dir, "chart-netpair.svg");

		assert_non_null(svg);
		/* the names gnuplot drew, as text: quotes, backslash, enhanced-text markup literal */
		/* ... and '%': tic labels are printf formats to gnuplot */
		assert_has(svg, ">node\\03'{}^_@&amp;~%n%s</text>");
		/* cut to 28 bytes on the axis */
		assert_has(svg, ">evil\"host'|`x`[a](b)]]&gt; &lt;scr...</text>");
		assert_lacks(svg, "<script");
		free(svg);
		assert_xml(out.dir, "chart-netpair.svg");
		assert_xml(out.dir, "chart-crit-2.svg");
		assert_xml(out.dir, "chart-busbw-1.svg");
		/* a relative bound: each element's own bound marked on its bar */
		assert_has(out.md, "](chart-crit-4.svg)\n\n*bound relative to each element, marked on each bar*");
		svg = slurp(out.dir, "chart-crit-4.svg");
		assert_has(svg, ">bound of each element</text>");
		free(svg);
		/* a URI in a host name is text: the chart is still drawn and embedded */
		svg = slurp(out.dir, "chart-netpair.svg");
		assert_has(svg, ">http://evil.example/h</text>");
		free(svg);
		assert_int_equal(svg_files(out.dir), 7);
		assert_int_equal(count(out.html, "<svg"), 7);
	}
	out_free(&out);
	json_decref(s);
}

static void test_no_gnuplot(void **state)
{
	json_t *s = fixture("fail");
	struct render_opts o = { .charts = 1, .gnuplot = "/nonexistent/gnuplot" };
	char err[256];
	struct out out;

	(void)state;
	render(s, o, &out);
	assert_has(out.md, "## Charts\n\ncharts not drawn: gnuplot not found.\n");
	assert_has(out.html, "<p class=\"note\">charts not drawn: gnuplot not found.</p>");
	/* every table is still there */
	assert_has(out.md, "| nvlink.p2p: NVLink P2P bandwidth, one direction | **FAIL** |");
	assert_has(out.md, "### Regressions");
	assert_has(out.html, "<h2 id=\"outliers\">Outliers</h2>\n<table>");
	assert_lacks(out.html, "<svg");
	assert_int_equal(svg_files(out.dir), 0);
	out_free(&out);

	/* charts of an earlier report in the same folder do not stay beside this one */
	o.charts = 1;
	o.gnuplot = NULL;
	render(s, o, &out);
	if (have_gnuplot())
		assert_int_equal(svg_files(out.dir), 7);
	o.charts = 0;
	o.outdir = out.dir;
	assert_int_equal(render_all(s, &o, err, sizeof(err)), 0);
	free(out.md);
	out.md = slurp(out.dir, "report.md");
	assert_has(out.md, "charts not drawn: turned off.");
	assert_int_equal(svg_files(out.dir), 0);
	out_free(&out);
	json_decref(s);
}

/* a fake gnuplot in a temp dir: a shell script with the given body */
static void fake_gnuplot(char *path, size_t len, const char *body)
{
	char dir[] = "/tmp/ccreport-fake.XXXXXX";
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(path, len, "%s/gnuplot", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\n%s\n", body);
	fclose(f);
	assert_int_equal(chmod(path, 0755), 0);
}

static void fake_free(const char *path)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf \"$(dirname '%s')\"", path);
	assert_int_equal(system(cmd), 0);
}

static void test_gnuplot_fails(void **state)
{
	json_t *s = fixture("incomplete");
	struct render_opts o = { .charts = 1 };
	char gp[256];
	struct out out;

	(void)state;
	/* what gnuplot prints on an error: the command, a caret, warnings, the message */
	fake_gnuplot(gp, sizeof(gp), "printf '\"x.gp\" line 2: warning: w\\n\\nplot foo(x)\\n     ^\\n"
		     "\"x.gp\" line 3: undefined function: foo\\n\\n' >&2; exit 1");
	o.gnuplot = gp;
	render(s, o, &out);
	assert_has(out.md, "chart 'chart-crit-1.svg' not drawn: gnuplot exited 1: \"x.gp\" line 3: undefined function: foo\n");
	assert_has(out.html, "<li>chart &#39;chart-crit-1.svg&#39; not drawn: gnuplot exited 1:");
	assert_has(out.md, "## Criteria (failed, warned, required not judged, passed, optional not judged)\n\n| criterion |");
	assert_int_equal(svg_files(out.dir), 0);
	out_free(&out);
	fake_free(gp);
	json_decref(s);
}

static void test_gnuplot_hangs(void **state)
{
	json_t *s = fixture("fail");
	struct render_opts o = { .charts = 1, .chart_timeout_s = 1 };
	struct timespec t0, t1;
	char gp[256];
	struct out out;

	(void)state;
	fake_gnuplot(gp, sizeof(gp), "sleep 61.25 & sleep 61.25");
	o.gnuplot = gp;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	render(s, o, &out);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* the first chart stopped after 1 s, the other 6 not started; generous ceiling for a loaded machine */
	assert_true(t1.tv_sec - t0.tv_sec < 10);
	assert_has(out.md, "- chart 'chart-busbw-1.svg' not drawn: gnuplot ran past 1 s and was stopped\n");
	assert_has(out.md, "- chart 'chart-crit-4.svg' not drawn: gnuplot was stopped on an earlier chart\n");
	assert_int_equal(count(out.md, "not drawn: gnuplot was stopped on an earlier chart"), 6);
	assert_has(out.md, "| nvlink.p2p: NVLink P2P bandwidth, one direction | **FAIL** |");
	assert_has(out.junit, "<testcase ");
	out_free(&out);
	/* the whole process group went: no sleep of the fake is left */
	assert_int_not_equal(system("pgrep -f 'sleep 6[1].25' >/dev/null"), 0);
	fake_free(gp);
	json_decref(s);
}

/* 8192 GPUs: the bar chart shows the worst 64 and says so */
static void test_many_elements(void **state)
{
	json_t *s = fixture("pass"), *crit, *vals;
	struct render_opts o = { .charts = 1 };
	char name[64];
	struct out out;
	char *svg;
	int i;

	(void)state;
	if (!have_gnuplot())
		skip();
	crit = json_array_get(json_object_get(s, "criteria"), 1);
	vals = json_array();
	for (i = 0; i < 8192; i++) {
		snprintf(name, sizeof(name), "n%04d:gpu%d", i / 8, i % 8);
		json_array_append_new(vals, json_pack("{s:s, s:f}", "element", name,
						      "value", i == 4242 ? 200.0 : 370.0 + (i % 97)));
	}
	json_object_set_new(crit, "values", vals);
	render(s, o, &out);
	assert_has(out.md, "](chart-crit-2.svg)\n\n*worst 64 of 8192 elements shown*");
	assert_has(out.html, "<p class=\"note\">worst 64 of 8192 elements shown</p>");
	svg = slurp(out.dir, "chart-crit-2.svg");
	assert_non_null(svg);
	assert_has(svg, ">n0530:gpu2</text>");   /* element 4242, the worst */
	assert_lacks(svg, ">n0000:gpu7</text>"); /* 370 + 7 % 97 = 377: not among the worst */
	assert_int_equal(count(svg, ":gpu"), 64);
	free(svg);
	out_free(&out);
	json_decref(s);
}

/* 100 hosts: the heatmap is one embedded PNG, not 10000 rectangles, and still inert */
static void test_big_heatmap(void **state)
{
	json_t *s = fixture("pass"), *hosts = json_array(), *matrix = json_array(), *row;
	struct render_opts o = { .charts = 1 };
	char name[64];
	struct out out;
	char *svg;
	int i, j;

	(void)state;
	if (!have_gnuplot())
		skip();
	for (i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), i == 7 ? "n'%d<script>\"" : "n%03d", i);
		json_array_append_new(hosts, json_string(name));
		row = json_array();
		for (j = 0; j < 100; j++)
			json_array_append_new(row, i == j ? json_null() : json_real(i == 7 ? 120.0 : 390.0));
		json_array_append_new(matrix, row);
	}
	json_object_set_new(json_object_get(s, "charts"), "netpair",
			    json_pack("{s:o, s:s, s:o}", "hosts", hosts, "unit", "Gb/s", "matrix", matrix));
	render(s, o, &out);
	svg = slurp(out.dir, "chart-netpair.svg");
	assert_non_null(svg);
	assert_has(svg, "<image ");
	assert_has(svg, "xlink:href='data:image/png;base64,");
	assert_true(count(svg, "<polygon") < 1000);   /* the colour box only, not 9900 cells */
	assert_true(strlen(svg) < 400000);
	assert_has(svg, ">n000</text>");
	free(svg);
	assert_xml(out.dir, "chart-netpair.svg");
	assert_has(out.html, "node-pair bandwidth (Gb/s)</figcaption>");
	assert_has(out.html, "xlink:href='data:image/png;base64,");
	assert_no_fetch(out.html);
	assert_lacks(out.html, "<script");
	out_free(&out);
	json_decref(s);
}

/* past 2048 hosts no heatmap is drawn, and the report says why */
static void test_huge_heatmap(void **state)
{
	json_t *s = fixture("pass"), *hosts = json_array(), *matrix = json_array(), *row = json_array();
	struct render_opts o = { .charts = 1 };
	char name[32];
	struct out out;
	int i;

	(void)state;
	if (!have_gnuplot())
		skip();
	for (i = 0; i < 2049; i++) {
		snprintf(name, sizeof(name), "n%04d", i);
		json_array_append_new(hosts, json_string(name));
		json_array_append_new(row, json_real(390.0));
	}
	for (i = 0; i < 2049; i++)
		json_array_append(matrix, row);   /* one row, shared: only the sizes matter */
	json_decref(row);
	json_object_set_new(json_object_get(s, "charts"), "netpair",
			    json_pack("{s:o, s:s, s:o}", "hosts", hosts, "unit", "Gb/s", "matrix", matrix));
	render(s, o, &out);
	assert_has(out.md, "- chart 'chart-netpair.svg' not drawn: 2049 hosts, more than the 2048 a heatmap shows\n");
	assert_null(slurp(out.dir, "chart-netpair.svg"));
	assert_has(out.md, "](chart-busbw-1.svg)");
	out_free(&out);
	json_decref(s);
}

/*
 * The documents open with the decision (report/decision.c on the fail fixture):
 * the nodes to drain with their reasons, the link to check, the wrong hardware;
 * then the criteria, failed first, with a required column.
 */
static void test_decision_first(void **state)
{
	json_t *s = fixture("fail");
	struct render_opts o = { 0 };
	struct out out;
	const char *dec, *crit;

	(void)state;
	json_object_set_new(s, "decision", decision_build(s));
	render(s, o, &out);
	dec = strstr(out.md, "## Decision\n\nFAIL: do not accept the cluster as it is: 3 criteria failed; "
		     "the hardware is not what the profile expects; versions differ across hosts; "
		     "1 regression(s) against the baseline; drain 2 node(s) and test again.");
	crit = strstr(out.md, "## Criteria");
	assert_non_null(dec);
	assert_true(dec < crit);
	assert_has(out.md, "- **Drain node03:** nvlink.p2p node03:gpu6 (host node03): 288.0 GB/s, bound 335 GB/s, "
		   "shortfall 14.03%; nvlink.p2p node03:gpu2");
	assert_has(out.md, "- **Drain node02:** ib.symbol\\_errors node02/mlx5\\_0:1");
	/* the link's diagnosis first, then the criterion's failure on it, in one entry */
	assert_has(out.md, "- **Check:** the link node02->node04: netpair diagnosis: link bad link: node02 and node04 "
		   "reach every other host at full rate; netpair.bw node02->node04");
	assert_has(out.md, "- **Wrong hardware:** gpu\\_model 'NVIDIA H100 PCIe' on node04; the profile expects "
		   "NVIDIA H100 80GB HBM3");
	assert_has(out.md, "- **Judged:** 4 nodes (node01, node02, node03, node04), 1 phase (results file) of 32 ranks");
	assert_has(out.html, "<h2 id=\"decision\">Decision</h2>\n<p class=\"decision\">FAIL: do not accept");
	assert_true(strstr(out.html, "id=\"decision\"") < strstr(out.html, "id=\"criteria\""));
	/* fail, fail, fail (profile order), warn, pass */
	assert_true(strstr(crit, "| nvlink.p2p:") < strstr(crit, "| netpair.bw:"));
	assert_true(strstr(crit, "| netpair.bw:") < strstr(crit, "| ib.symbol\\_errors:"));
	assert_true(strstr(crit, "| ib.symbol\\_errors:") < strstr(crit, "| allreduce.busbw:"));
	assert_true(strstr(crit, "| allreduce.busbw:") < strstr(crit, "| pcie.h2d:"));
	out_free(&out);
	json_decref(s);
}

static void test_scaling_and_estimate(void **state)
{
	json_t *s = fixture("scaling");
	struct render_opts o = { .charts = 1 };
	struct out out;
	char *svg;

	(void)state;
	json_object_set_new(json_object_get(s, "estimate"), "extrapolated",
			    json_string("a ring over 16x the nodes measured"));
	render(s, o, &out);
	assert_has(out.md, "## Estimate (a model, not a measurement)\n\n**model, not a measurement**");
	/* every input with where it came from, the outputs, the notes */
	assert_has(out.md, "| model\\_params\\_b | 70 | profile line 40 |");
	assert_has(out.md, "| allreduce\\_busbw\\_GBps | 371.2 | measured: all\\_reduce nccl bfloat16 sum on 4 node(s), 32 rank(s) |");
	assert_has(out.md, "| overlap | 0.7 |  |");
	/* the outputs first, with units (a fraction in %), then the inputs */
	assert_has(out.md, "| step\\_time\\_s | 2.91 s |");
	assert_has(out.md, "| comm\\_fraction | 18% |");
	assert_true(strstr(out.md, "Outputs of the model") < strstr(out.md, "Every input of the model"));
	assert_has(out.md, "**Extrapolated:** a ring over 16x the nodes measured");
	assert_has(out.html, "<p class=\"warnbox\"><b>Extrapolated:</b> a ring over 16x the nodes measured</p>");
	assert_has(out.md, "- busbw measured on 32 ranks stands for 64\n");
	assert_has(out.html, "<div class=\"model\">");
	assert_has(out.html, "<tr><td>global_batch_tokens</td><td>4194304</td><td></td></tr>");
	assert_has(out.html, "<li>busbw measured on 32 ranks stands for 64</li>");
	assert_lacks(out.md, "Not made");
	if (have_gnuplot()) {
		assert_has(out.md, "![bus bandwidth vs node count](chart-scaling.svg)");
		svg = slurp(out.dir, "chart-scaling.svg");
		assert_non_null(svg);
		assert_has(svg, ">ideal all_reduce nccl</text>");
		assert_has(svg, ">all_gather nccl</text>");
		free(svg);
		assert_xml(out.dir, "chart-scaling.svg");
	}
	out_free(&out);
	json_decref(s);
}

/* an estimate the measurements could not fill says why, and has no outputs table */
static void test_estimate_not_made(void **state)
{
	json_t *s = fixture("scaling"), *e;
	struct render_opts o = { .charts = 0 };
	struct out out;

	(void)state;
	e = json_object_get(s, "estimate");
	json_object_set_new(e, "made", json_false());
	json_object_set_new(e, "reason", json_string("no all_reduce records <of> backend nccl"));
	json_object_set_new(e, "outputs", json_null());
	render(s, o, &out);
	assert_has(out.md, "**model, not a measurement**. Not made: no all\\_reduce records \\<of> backend nccl.");
	assert_has(out.html, "</b>. Not made: no all_reduce records &lt;of&gt; backend nccl.");
	assert_lacks(out.md, "Outputs of the model");
	assert_lacks(out.html, "Outputs of the model");
	out_free(&out);
	json_decref(s);
}

/* long multi-byte strings cut by bounded buffers still give valid UTF-8 everywhere */
static void test_long_utf8(void **state)
{
	json_t *s = fixture("fail"), *crit, *fl;
	struct render_opts o = { .charts = 1 };
	char title[1001] = "", host[1201] = "", cmd[900];
	struct out out;
	int i;

	(void)state;
	for (i = 0; i < 500; i++)
		strcat(title, "\xc3\xa9");            /* e-acute, 2 bytes */
	for (i = 0; i < 400; i++)
		strcat(host, "\xe2\x82\xac");        /* euro sign, 3 bytes */
	crit = json_array_get(json_object_get(s, "criteria"), 1);
	json_object_set_new(crit, "title", json_string(title));
	fl = json_array_get(json_object_get(crit, "failures"), 0);
	json_object_set_new(fl, "host", json_string(host));
	render(s, o, &out);
	assert_xml(out.dir, "junit.xml");
	if (have_gnuplot())
		assert_xml(out.dir, "chart-crit-2.svg");
	snprintf(cmd, sizeof(cmd), "python3 -c 'import sys\nfor p in sys.argv[1:]: open(p, encoding=\"utf-8\").read()' "
		 "'%s/report.md' '%s/index.html' '%s/junit.xml'", out.dir, out.dir, out.dir);
	if (system(cmd))
		fail_msg("an output of %s is not valid UTF-8", out.dir);
	out_free(&out);
	json_decref(s);
}

static void test_bad_outdir(void **state)
{
	json_t *s = fixture("pass");
	struct render_opts o = { .outdir = "/nonexistent/dir", .charts = 0 };
	char err[256] = "";

	(void)state;
	assert_int_equal(render_all(s, &o, err, sizeof(err)), -1);
	assert_has(err, "cannot write '/nonexistent/dir/report.md'");
	assert_int_equal(render_all(NULL, &o, err, sizeof(err)), -1);
	json_decref(s);
}

/* points at the edges of a double's range: tics stay sane, gnuplot draws */
static void test_extreme_points(void **state)
{
	json_t *s = fixture("pass");
	struct render_opts o = { .charts = 1 };
	struct out out;
	char *svg;

	(void)state;
	if (!have_gnuplot())
		skip();
	json_object_set_new(json_object_get(s, "charts"), "collectives",
			    json_pack("[{s:s, s:s, s:i, s:[[f, f], [f, f], [i, i]]}]", "name", "all_reduce",
				      "backend", "mpi", "nodes", 2, "points", 1e-300, 1.0, 1e300, 2.0, -4, 3));
	render(s, o, &out);
	svg = slurp(out.dir, "chart-busbw-1.svg");
	assert_non_null(svg);
	assert_has(svg, ">mpi, 2 nodes</text>");
	free(svg);
	assert_lacks(out.md, "not drawn");
	out_free(&out);
	json_decref(s);
}

/* a summary with every field missing or of the wrong type still renders */
static void test_sparse_summary(void **state)
{
	json_t *s = json_pack("{s:s, s:i, s:[{s:i, s:[i]}], s:{s:s, s:[[s]]}}",
			      "verdict", "bogus", "criteria", 3, "inputs", "path", 7, "values", 1,
			      "charts", "collectives", "x", "netpair", "hosts");
	struct render_opts o = { .charts = 1 };
	struct out out;

	(void)state;
	assert_non_null(s);
	render(s, o, &out);
	assert_starts(out.md, "# Cluster acceptance: UNKNOWN");
	assert_has(out.md, "No criteria were judged.");
	assert_has(out.html, "banner v-unknown");
	assert_xml(out.dir, "junit.xml");
	out_free(&out);
	json_decref(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pass),
		cmocka_unit_test(test_fail_names_elements),
		cmocka_unit_test(test_incomplete),
		cmocka_unit_test(test_warn),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_no_gnuplot),
		cmocka_unit_test(test_gnuplot_fails),
		cmocka_unit_test(test_gnuplot_hangs),
		cmocka_unit_test(test_many_elements),
		cmocka_unit_test(test_big_heatmap),
		cmocka_unit_test(test_huge_heatmap),
		cmocka_unit_test(test_decision_first),
		cmocka_unit_test(test_scaling_and_estimate),
		cmocka_unit_test(test_estimate_not_made),
		cmocka_unit_test(test_long_utf8),
		cmocka_unit_test(test_bad_outdir),
		cmocka_unit_test(test_extreme_points),
		cmocka_unit_test(test_sparse_summary),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
