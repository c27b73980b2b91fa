/*
 * render/chart_kinds.c: chart_summary, the charts ccreport draws from the
 * summary document with the machinery of chart.c: bus bandwidth against
 * message size per collective, the node-pair bandwidth heatmap, per-element
 * bars for each criterion against its bound, and bus bandwidth against node
 * count. Data files hold numbers only; every string (host, element, series
 * names) reaches gnuplot as an escaped single-quoted string in the script
 * (gp_quote).
 */
#include "chart_kinds.h"
#include "chart.h"
#include "../core/size.h"
#include "../fmt/fmt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* "1 KiB" style tic label for a power of two */
static void size_label(char *buf, size_t len, int exp2)
{
	size_human(ldexp(1.0, exp2), buf, len);
}

/* tics at powers of two between lo and hi, at most about a dozen of them */
static void pow2_tics(FILE *f, const char *axis, double lo, double hi, int bytes)
{
	int e0 = (int)floor(log2(lo)), e1 = (int)ceil(log2(hi));
	int step = (e1 - e0) / 12 + 1, e;
	char lab[32];

	fprintf(f, "set %s (", axis);
	for (e = e0; e <= e1; e += step) {
		if (bytes)
			size_label(lab, sizeof(lab), e);
		else
			snprintf(lab, sizeof(lab), "%g", ldexp(1.0, e));
		fprintf(f, "%s'%s' %.17g", e > e0 ? ", " : "", lab, ldexp(1.0, e));
	}
	fputs(")\n", f);
	/* a margin, so that gnuplot keeps the tics at both ends of a log axis */
	fprintf(f, "set %srange [%.17g:%.17g]\n", axis[0] == 'y' ? "y" : "x", lo / 1.15, hi * 1.15);
}

/* "nccl float sum, 4 nodes": the parts a collectives series has */
static void series_title(FILE *f, const json_t *s, int spread)
{
	static const char *const keys[] = { "backend", "dtype", "op" };
	char buf[64], title[512];
	size_t i, n = 0;
	double nodes;

	title[0] = '\0';
	for (i = 0; i < 3; i++) {
		const char *v = j_text(json_object_get(s, keys[i]), buf, sizeof(buf));

		if (*v)
			n += snprintf(title + n, sizeof(title) - n, "%s%s", n ? " " : "", v);
		if (n >= sizeof(title))
			n = sizeof(title) - 1;
	}
	if (j_num(s, "nodes", &nodes))
		n += snprintf(title + n, sizeof(title) - n, "%s%.0f node%s", n ? ", " : "",
			      nodes, nodes == 1 ? "" : "s");
	if (spread && n < sizeof(title))
		snprintf(title + n, sizeof(title) - n, " (bars: time spread)");
	gp_quote(f, title);
}

/*
 * Writes the points [[x, y], ...] with x > 0 as one data block, with a third
 * column: y times spread[i] % (spread_pct, the run-to-run spread of each
 * point's time), 0 where there is none. Returns how many points; *spread_any
 * (if given) is set when a spread was written.
 */
static int write_points(FILE *d, const json_t *points, const json_t *spread,
			double *lo, double *hi, int *spread_any)
{
	/* spread_pct is one per point; any other length cannot be matched to them */
	int aligned = json_array_size(spread) == json_array_size(points);
	const json_t *p;
	size_t i;
	int n = 0;

	json_array_foreach(points, i, p) {
		const json_t *x = json_array_get(p, 0), *y = json_array_get(p, 1);
		const json_t *sp = aligned ? json_array_get(spread, i) : NULL;
		double dy = 0;

		if (!json_is_number(x) || !json_is_number(y) || json_number_value(x) <= 0)
			continue;
		if (json_is_number(sp) && json_number_value(sp) > 0) {
			dy = json_number_value(y) * json_number_value(sp) / 100;
			if (spread_any)
				*spread_any = 1;
		}
		fprintf(d, "%.17g %.17g %.17g\n", json_number_value(x), json_number_value(y), dy);
		if (json_number_value(x) < *lo)
			*lo = json_number_value(x);
		if (json_number_value(x) > *hi)
			*hi = json_number_value(x);
		n++;
	}
	fputs("\n\n", d);
	return n;
}

/* one chart for the collective named name: every series of that name */
static void busbw_chart(struct chart_ctx *ctx, const json_t *colls, const char *name, int k)
{
	char file[40], dat[40], title[300], *plot = NULL;
	double lo = INFINITY, hi = 0;
	size_t i, plen = 0;
	int block = 0, drawn = 0, spread;
	const json_t *s;
	FILE *d, *p, *f;

	snprintf(file, sizeof(file), "chart-busbw-%d.svg", k);
	snprintf(dat, sizeof(dat), "chart-busbw-%d.dat", k);
	d = chart_data(ctx, dat);
	p = open_memstream(&plot, &plen);
	if (!d || !p)
		goto out;
	json_array_foreach(colls, i, s) {
		if (strcmp(j_str(s, "name"), name))
			continue;
		spread = 0;
		if (write_points(d, j_arr(s, "points"), j_arr(s, "spread_pct"), &lo, &hi, &spread) > 0) {
			fprintf(p, "%s'%s' index %d using 1:2%s lw 2 title ",
				drawn ? ", \\\n  " : "plot ", dat, block,
				spread ? ":3 with yerrorlines" : " with linespoints");
			series_title(p, s, spread);
			drawn++;
		}
		block++;
	}
	fclose(p);
	p = NULL;
	fclose(d);   /* gnuplot reads it next */
	d = NULL;
	if (!drawn)
		goto out;
	snprintf(title, sizeof(title), "%s: bus bandwidth vs message size", name);
	f = chart_begin(ctx, file, 860, 440);
	if (!f)
		goto out;
	fputs("set title ", f);
	gp_quote(f, title);
	fputc('\n', f);
	fputs("set logscale x 2\nset grid\nset key outside right top\n"
	      "set xlabel 'message size (bytes)'\nset ylabel 'bus bandwidth (GB/s = 1e9 bytes/s)'\n"
	      "set yrange [0:*]\nset xtics rotate by -30\n", f);
	pow2_tics(f, "xtics", lo, hi, 1);
	fprintf(f, "%s\n", plot);
	chart_finish(ctx, f, file, title, NULL, -1);
out:
	if (p)
		fclose(p);
	if (d)
		fclose(d);
	free(plot);
}

static void chart_collectives(struct chart_ctx *ctx, const json_t *summary)
{
	const json_t *colls = j_arr(json_object_get(summary, "charts"), "collectives");
	const json_t *s, *t;
	size_t i, j;
	int k = 0;

	json_array_foreach(colls, i, s) {
		const char *name = j_str(s, "name");

		/* the first series of each name draws the chart of that name */
		json_array_foreach(colls, j, t)
			if (j >= i || !strcmp(j_str(t, "name"), name))
				break;
		if (j == i)
			busbw_chart(ctx, colls, name, ++k);
	}
}

/* tic labels from a list of names, at 0, 1, ...; every step-th one */
static void name_tics(FILE *f, const char *axis, const json_t *names, size_t n, size_t step)
{
	char buf[64];
	size_t i;

	fprintf(f, "set %s (", axis);
	for (i = 0; i < n; i += step) {
		fputs(i ? ", " : "", f);
		gp_label(f, j_text(json_array_get(names, i), buf, sizeof(buf)));
		fprintf(f, " %zu", i);
	}
	fputs(")\n", f);
}

/*
 * The node-pair heatmap: matrix[i][j] is the bandwidth from hosts[i] to
 * hosts[j] (docs/report.md); null (not measured, the diagonal) is left blank.
 */
static void chart_netpair(struct chart_ctx *ctx, const json_t *summary)
{
	const json_t *np = json_object_get(json_object_get(summary, "charts"), "netpair");
	const json_t *hosts = j_arr(np, "hosts"), *matrix = j_arr(np, "matrix"), *row;
	const char *file = "chart-netpair.svg";
	size_t n = json_array_size(hosts), i, j, step;
	char title[200];
	int any = 0;
	FILE *d, *f;

	if (!n || json_array_size(matrix) != n)
		return;
	if (n > CHART_HEATMAP_MAX) {
		chart_fail(ctx, "chart '%s' not drawn: %zu hosts, more than the %d a heatmap shows",
			   file, n, CHART_HEATMAP_MAX);
		return;
	}
	d = chart_data(ctx, "chart-netpair.dat");
	if (!d)
		return;
	json_array_foreach(matrix, i, row) {
		for (j = 0; j < n; j++) {
			const json_t *v = json_array_get(row, j);

			if (json_is_number(v)) {
				fprintf(d, "%s%.17g", j ? " " : "", json_number_value(v));
				any = 1;
			} else {
				fprintf(d, "%sNaN", j ? " " : "");
			}
		}
		fputc('\n', d);
	}
	fclose(d);
	if (!any)
		return;
	snprintf(title, sizeof(title), "node-pair bandwidth (%s)",
		 *j_str(np, "unit") ? j_str(np, "unit") : "unit not given");
	f = chart_begin(ctx, file, 760, 680);
	if (!f)
		return;
	fputs("set title ", f);
	gp_quote(f, title);
	fputs("\nset xlabel 'to host'\nset ylabel 'from host'\nset cblabel ", f);
	gp_quote(f, j_str(np, "unit"));
	/* row 0 on top; colours from 0, so that 1 % of noise does not look like a fault */
	fprintf(f, "\nset yrange [%f:%f]\nset xrange [-0.5:%f]\nset cbrange [0:*]\n"
		"set palette defined (0 '#c0392b', 0.5 '#f1c40f', 1 '#27ae60')\n"
		"set xtics rotate by -60 font ',9'\nset ytics font ',9'\nset tics scale 0\n",
		n - 0.5, -0.5, n - 0.5);
	step = n / 48 + 1;   /* beyond about 48 hosts, label every step-th */
	name_tics(f, "xtics", hosts, n, step);
	name_tics(f, "ytics", hosts, n, step);
	/*
	 * One SVG rectangle per cell up to CHART_PIXELS_MAX hosts; beyond, gnuplot
	 * embeds the matrix as one PNG (a data: URI inside the SVG): 1024 hosts
	 * would otherwise be a million rectangles.
	 */
	fprintf(f, "plot 'chart-netpair.dat' matrix with image%s notitle\n",
		n <= CHART_PIXELS_MAX ? " pixels" : "");
	chart_finish(ctx, f, file, title, step > 1 ? "not every host is labelled on the axes" : NULL, -1);
}

struct bar {
	const json_t *elem;   /* element name (string or number) */
	double value;
	double bound;         /* this element's own bound (values[].bound), or NAN */
};

static int bar_low_first(const void *a, const void *b)
{
	double x = ((const struct bar *)a)->value, y = ((const struct bar *)b)->value;

	return (x > y) - (x < y);
}

static int bar_high_first(const void *a, const void *b)
{
	return bar_low_first(b, a);
}

static int is_failure(const json_t *crit, const json_t *elem)
{
	char a[64], b[64];
	const json_t *fl;
	size_t i;

	json_array_foreach(j_arr(crit, "failures"), i, fl)
		if (!strcmp(j_text(json_object_get(fl, "element"), a, sizeof(a)),
			    j_text(elem, b, sizeof(b))))
			return 1;
	return 0;
}

/*
 * Collects the numeric values of a criterion; with more than CHART_MAX_BARS,
 * keeps the worst ones (lowest for ">=", highest for "<="), worst first.
 * Returns how many are kept and sets *total to how many there were.
 */
static size_t pick_bars(const json_t *crit, struct bar **out, size_t *total)
{
	const json_t *bound = json_object_get(crit, "bound"), *v;
	int upper = !strcmp(j_str(bound, "op"), "<=");
	struct bar *bars;
	size_t i, n = 0;

	*out = NULL;
	*total = 0;
	bars = calloc(json_array_size(j_arr(crit, "values")) + 1, sizeof(*bars));
	if (!bars)
		return 0;
	json_array_foreach(j_arr(crit, "values"), i, v) {
		double x;

		if (!j_num(v, "value", &x))
			continue;
		bars[n].elem = json_object_get(v, "element");
		bars[n].bound = j_num(v, "bound", &bars[n].bound) ? bars[n].bound : NAN;
		bars[n++].value = x;
	}
	*total = n;
	if (n > CHART_MAX_BARS) {
		qsort(bars, n, sizeof(*bars), upper ? bar_high_first : bar_low_first);
		n = CHART_MAX_BARS;
	}
	*out = bars;
	return n;
}

static void criterion_chart(struct chart_ctx *ctx, const json_t *crit, int idx)
{
	const json_t *bound = json_object_get(crit, "bound");
	const json_t *worst = json_object_get(crit, "worst");
	/* the metric's unit: a relative bound's unit is "of rate" */
	const char *unit = *j_str(crit, "unit") ? j_str(crit, "unit") :
			   *j_str(worst, "unit") ? j_str(worst, "unit") : j_str(bound, "unit");
	int warn = !strcmp(j_str(crit, "severity"), "warn");
	char file[40], dat[40], title[400], note[128], label[200], bstr[128];
	size_t n, total, i, own_bounds = 0;
	struct bar *bars;
	int relative;
	double bv = 0;
	FILE *d, *f;

	n = pick_bars(crit, &bars, &total);
	if (n < 2) {
		free(bars);
		return;
	}
	snprintf(file, sizeof(file), "chart-crit-%d.svg", idx + 1);
	snprintf(dat, sizeof(dat), "chart-crit-%d.dat", idx + 1);
	d = chart_data(ctx, dat);
	if (!d) {
		free(bars);
		return;
	}
	for (i = 0; i < n; i++) {
		fprintf(d, "%zu %.17g %d ", i, bars[i].value,
			is_failure(crit, bars[i].elem) ? (warn ? 0xe67e22 : 0xc0392b) : 0x27ae60);
		if (isnan(bars[i].bound))
			fputs("NaN\n", d);
		else
			fprintf(d, "%.17g\n", bars[i].bound);
		own_bounds += !isnan(bars[i].bound);
	}
	fclose(d);
	snprintf(title, sizeof(title), "%s: %s", j_str(crit, "id"), j_str(crit, "title"));
	/*
	 * A relative bound differs per element: drawn as a mark on each bar when
	 * the summary gives each element's bound, else only the bar colours say
	 * where it was missed.
	 */
	relative = json_is_number(json_object_get(bound, "relative")) || !j_num(bound, "value", &bv);
	snprintf(note, sizeof(note), "%s", !relative ? "" : own_bounds ?
		 "bound relative to each element, marked on each bar" :
		 "bound relative to each element, not drawn");
	if (total > n)
		snprintf(note, sizeof(note), "worst %zu of %zu elements shown%s%s", n, total,
			 *note ? "; " : "", relative ? (own_bounds ?
			 "bound relative to each element, marked on each bar" :
			 "bound relative to each element, not drawn") : "");
	f = chart_begin(ctx, file, 900, 460);
	if (f) {
		fputs("set title ", f);
		gp_quote(f, title);
		snprintf(label, sizeof(label), "%s (%s)", j_str(crit, "metric"), unit);
		fputs("\nset ylabel ", f);
		gp_quote(f, label);
		fprintf(f, "\nset grid ytics\nset key outside right top\nset style fill solid 0.85\n"
			"set boxwidth 0.7\nset xrange [-0.6:%f]\nset yrange [0:*]\n"
			"set xtics rotate by -60 font ',9'\nset xtics (", n - 0.4);
		for (i = 0; i < n; i++) {
			fputs(i ? ", " : "", f);
			gp_label(f, j_text(bars[i].elem, label, sizeof(label)));
			fprintf(f, " %zu", i);
		}
		fprintf(f, ")\nplot '%s' using 1:2:3 with boxes lc rgb variable title 'value'", dat);
		if (!relative) {
			fmt_bound(bstr, sizeof(bstr), crit);
			fprintf(f, ", %.17g with lines dt 2 lw 2 lc rgb '#000000' title ", bv);
			snprintf(label, sizeof(label), "bound %s", bstr);
			gp_quote(f, label);
		} else if (own_bounds) {
			fprintf(f, ", '%s' using 1:4 with points pt 3 ps 1.5 lc rgb '#000000' "
				"title 'bound of each element'", dat);
		}
		fputc('\n', f);
	}
	chart_finish(ctx, f, file, title, *note ? note : NULL, idx);
	free(bars);
}

static void chart_criteria(struct chart_ctx *ctx, const json_t *summary)
{
	const json_t *crit;
	size_t i;

	json_array_foreach(j_arr(summary, "criteria"), i, crit)
		criterion_chart(ctx, crit, (int)i);
}

/* "all_reduce mpi: efficiency vs 2 nodes: 4 nodes 82.3 % (step 82.3 %)" per series */
static void efficiency_note(FILE *n, const json_t *s)
{
	const json_t *e = j_arr(s, "efficiency"), *pt;
	size_t i;
	int any = 0;

	if (!json_is_number(json_object_get(s, "base_nodes")))
		return;
	json_array_foreach(e, i, pt) {
		const json_t *b = json_object_get(pt, "eff_base"), *st = json_object_get(pt, "eff_step");

		if (!json_is_number(b) || !json_is_number(st))
			continue;
		if (!any++)
			fprintf(n, "%s%s %s: efficiency against %lld nodes (100 %% = ideal):", ftell(n) ? "; " : "",
				j_str(s, "name"), j_str(s, "backend"),
				(long long)json_integer_value(json_object_get(s, "base_nodes")));
		fprintf(n, "%s %lld nodes %.1f %% (step %.1f %%)", any > 1 ? "," : "",
			(long long)json_integer_value(json_object_get(pt, "nodes")),
			100 * json_number_value(b), 100 * json_number_value(st));
	}
}

/*
 * Bus bandwidth against node count, one line per series, each with its
 * ideal: busbw already divides out the number of ranks, so perfect scaling
 * keeps it at its value on the fewest nodes (a flat line).
 */
static void chart_scaling(struct chart_ctx *ctx, const json_t *summary)
{
	const json_t *sc = j_arr(json_object_get(summary, "charts"), "scaling"), *s;
	const char *file = "chart-scaling.svg";
	double lo = INFINITY, hi = 0;
	char title[300], *plot = NULL, *note = NULL;
	size_t i, plen = 0, nlen = 0;
	int block = 0;
	FILE *d, *p, *f, *n;

	if (!json_array_size(sc))
		return;
	n = open_memstream(&note, &nlen);
	if (!n)
		return;
	d = chart_data(ctx, "chart-scaling.dat");
	if (!d)
		return;
	p = open_memstream(&plot, &plen);
	if (!p) {
		fclose(d);
		fclose(n);
		free(note);
		return;
	}
	json_array_foreach(sc, i, s) {
		double lo1 = INFINITY, hi1 = 0, ideal = 0, x;
		const json_t *pt;
		size_t j;

		if (write_points(d, j_arr(s, "points"), NULL, &lo1, &hi1, NULL) == 0)
			continue;
		json_array_foreach(j_arr(s, "points"), j, pt)
			if (json_is_number(json_array_get(pt, 1)) &&
			    (x = json_number_value(json_array_get(pt, 0))) == lo1)
				ideal = json_number_value(json_array_get(pt, 1));
		/* the engine's base (the fewest nodes of at least 2) where it names one */
		if (json_is_number(json_object_get(s, "ideal_GBps")))
			ideal = json_number_value(json_object_get(s, "ideal_GBps"));
		efficiency_note(n, s);
		lo = lo1 < lo ? lo1 : lo;
		hi = hi1 > hi ? hi1 : hi;
		snprintf(title, sizeof(title), "%s %s", j_str(s, "name"), j_str(s, "backend"));
		fprintf(p, "%s'chart-scaling.dat' index %d using 1:2 with linespoints lw 2 lc %d title ",
			block ? ", \\\n  " : "plot ", block, block + 1);
		gp_quote(p, title);
		fprintf(p, ", \\\n  %.17g with lines dt 2 lc %d title ", ideal, block + 1);
		snprintf(title, sizeof(title), "ideal %s %s", j_str(s, "name"), j_str(s, "backend"));
		gp_quote(p, title);
		block++;
	}
	fclose(p);
	fclose(d);
	fclose(n);
	f = block ? chart_begin(ctx, file, 860, 440) : NULL;
	if (f) {
		fputs("set title 'bus bandwidth vs node count (dashed: ideal, flat at the base)'\n"
		      "set logscale x 2\nset grid\nset key outside right top\nset xlabel 'nodes'\n"
		      "set ylabel 'bus bandwidth (GB/s = 1e9 bytes/s)'\nset yrange [0:*]\n", f);
		pow2_tics(f, "xtics", lo, hi, 0);
		fprintf(f, "%s\n", plot);
		chart_finish(ctx, f, file, "bus bandwidth vs node count", note && *note ? note : NULL, -1);
	}
	free(plot);
	free(note);
}

void chart_summary(struct chart_ctx *ctx, const json_t *summary)
{
	chart_collectives(ctx, summary);
	chart_netpair(ctx, summary);
	chart_criteria(ctx, summary);
	chart_scaling(ctx, summary);
}
