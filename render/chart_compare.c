/*
 * render/chart_compare.c: the charts of ccreport compare, drawn with the
 * report's gnuplot machinery (chart.c): each criterion's worst value per
 * cluster as a bar against its own bound (1 = the bound), the clusters'
 * all_reduce busbw curves and scaling curves overlaid, and per rental plan
 * days and cost against the node count. Every name from the document goes
 * through gp_quote or gp_label; data files hold numbers only.
 */
#include "chart_compare.h"
#include "chart.h"
#include "../fmt/fmt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void criteria_bars(struct chart_ctx *ctx, const json_t *doc)
{
	const json_t *crits = j_arr(doc, "criteria"), *row;
	const char *file = "chart-compare-criteria.svg";
	size_t n = json_array_size(j_arr(doc, "clusters")), i, k, nrow = 0;
	double w = 0.8 / (n ? n : 1);
	FILE *d, *f;

	d = chart_data(ctx, "chart-compare-criteria.dat");
	if (!d)
		return;
	for (k = 0; k < n; k++) {
		json_array_foreach(crits, i, row) {
			double v;

			if (j_num(json_array_get(j_arr(row, "clusters"), k), "normalized", &v))
				fprintf(d, "%.17g %.17g\n", i + (k - (n - 1) / 2.0) * w, v);
		}
		fputs("\n\n", d);
	}
	nrow = json_array_size(crits);
	fclose(d);
	if (!nrow || !n)
		return;
	f = chart_begin(ctx, file, 960, 480);
	if (!f)
		return;
	fprintf(f, "set title 'worst value per criterion against its bound (1 = the bound; above is inside it)'\n"
		"set style fill solid 0.7\nset boxwidth %.6g\nset grid y\nset key outside right top\n"
		"set ylabel 'worst value / bound (<=: bound / value)'\nset yrange [0:*]\n"
		"set xrange [-0.6:%.6g]\nset xtics rotate by -30 (", w, nrow - 0.4);
	json_array_foreach(crits, i, row) {
		fputs(i ? ", " : "", f);
		gp_label(f, j_str(row, "id"));
		fprintf(f, " %zu", i);
	}
	fputs(")\nplot ", f);
	for (k = 0; k < n; k++) {
		fprintf(f, "'chart-compare-criteria.dat' index %zu using 1:2 with boxes lc %zu title ", k, k + 1);
		gp_quote(f, j_str(json_array_get(j_arr(doc, "clusters"), k), "name"));
		fputs(", \\\n  ", f);
	}
	fputs("1 with lines dt 2 lw 2 lc rgb '#000000' title 'bound'\n", f);
	chart_finish(ctx, f, file, "criteria against their bounds", NULL, -1);
}

/* one line per cluster from doc.charts[key]: [{"cluster", "points": [[x, y], ...]}] */
static void overlay(struct chart_ctx *ctx, const json_t *doc, const char *key, const char *file,
		    const char *dat, const char *title, const char *xlabel)
{
	const json_t *ser = j_arr(json_object_get(doc, "charts"), key), *s, *pt;
	size_t i, j;
	int drawn = 0;
	FILE *d, *f;

	if (!json_array_size(ser))
		return;
	d = chart_data(ctx, dat);
	if (!d)
		return;
	json_array_foreach(ser, i, s) {
		json_array_foreach(j_arr(s, "points"), j, pt)
			if (json_is_number(json_array_get(pt, 0)) && json_is_number(json_array_get(pt, 1)) &&
			    json_number_value(json_array_get(pt, 0)) > 0)
				fprintf(d, "%.17g %.17g\n", json_number_value(json_array_get(pt, 0)),
					json_number_value(json_array_get(pt, 1)));
		fputs("\n\n", d);
	}
	fclose(d);
	f = chart_begin(ctx, file, 860, 440);
	if (!f)
		return;
	fputs("set title ", f);
	gp_quote(f, title);
	fputs("\nset logscale x 2\nset grid\nset key outside right top\nset xlabel ", f);
	gp_quote(f, xlabel);
	fputs("\nset ylabel 'bus bandwidth (GB/s = 1e9 bytes/s)'\nset yrange [0:*]\n", f);
	json_array_foreach(ser, i, s) {
		if (!json_array_size(j_arr(s, "points")))
			continue;
		fprintf(f, "%s'%s' index %zu using 1:2 with linespoints lw 2 title ", drawn ? ", \\\n  " : "plot ",
			dat, i);
		gp_quote(f, j_str(s, "cluster"));
		drawn++;
	}
	fputc('\n', f);
	if (drawn)
		chart_finish(ctx, f, file, title, NULL, -1);
	else
		fclose(f);
}

static void nodes_chart(struct chart_ctx *ctx, const json_t *plan, int k)
{
	char file[40], dat[40], title[300];
	const json_t *pt;
	size_t i;
	int priced = 0;
	FILE *d, *f;

	snprintf(file, sizeof(file), "chart-nodes-%d.svg", k);
	snprintf(dat, sizeof(dat), "chart-nodes-%d.dat", k);
	d = chart_data(ctx, dat);
	if (!d)
		return;
	/* block 0 measured, block 1 extrapolated (joined to the last measured point) */
	for (int ex = 0; ex < 2; ex++) {
		const json_t *last = NULL;

		json_array_foreach(j_arr(plan, "points"), i, pt) {
			int e = json_is_true(json_object_get(pt, "extrapolated"));
			double c = NAN;

			if (!e)
				last = pt;
			if (e != ex)
				continue;
			if (ex && last) {
				j_num(last, "cost", &c);
				fprintf(d, "%.17g %.17g %.17g\n", json_number_value(json_object_get(last, "nodes")),
					json_number_value(json_object_get(last, "days")), c);
				last = NULL;
			}
			c = NAN;
			priced |= j_num(pt, "cost", &c);
			fprintf(d, "%.17g %.17g %.17g\n", json_number_value(json_object_get(pt, "nodes")),
				json_number_value(json_object_get(pt, "days")), c);
		}
		fputs(ex ? "" : "\n\n", d);
	}
	fclose(d);
	snprintf(title, sizeof(title), "%s: days and cost vs nodes (dashed: extrapolated)",
		 j_str(plan, "cluster"));
	f = chart_begin(ctx, file, 860, 440);
	if (!f)
		return;
	fputs("set title ", f);
	gp_quote(f, title);
	fputs("\nset logscale x 2\nset grid\nset key outside right top\nset xlabel 'nodes'\n"
	      "set ylabel 'days (model)'\nset yrange [0:*]\n", f);
	if (priced)
		fputs("set y2label 'cost, USD (model)'\nset y2range [0:*]\nset y2tics\n", f);
	fprintf(f, "plot '%s' index 0 using 1:2 with linespoints lw 2 lc 1 title 'days', \\\n"
		"  '%s' index 1 using 1:2 with linespoints lw 2 dt 2 lc 1 title 'days (extrapolated)'",
		dat, dat);
	if (priced)
		fprintf(f, ", \\\n  '%s' index 0 using 1:3 axes x1y2 with linespoints lw 2 lc 2 title 'cost', \\\n"
			"  '%s' index 1 using 1:3 axes x1y2 with linespoints lw 2 dt 2 lc 2 "
			"title 'cost (extrapolated)'", dat, dat);
	fputc('\n', f);
	chart_finish(ctx, f, file, title, "a model from the measured curve, not a measurement", -1);
}

void chart_compare(struct chart_ctx *ctx, const json_t *doc)
{
	const json_t *plan;
	size_t i;

	criteria_bars(ctx, doc);
	overlay(ctx, doc, "collectives", "chart-compare-busbw.svg", "chart-compare-busbw.dat",
		"all_reduce bus bandwidth vs message size, per cluster", "message size (bytes)");
	overlay(ctx, doc, "scaling", "chart-compare-scaling.svg", "chart-compare-scaling.dat",
		"all_reduce bus bandwidth vs node count, per cluster", "nodes");
	json_array_foreach(j_arr(doc, "nodes"), i, plan)
		nodes_chart(ctx, plan, (int)i + 1);
}
