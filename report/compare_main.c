/*
 * report/compare_main.c: the command line of ccreport compare
 * (docs/compare.md). Exit codes: 0 compared, 2 usage or an input that
 * cannot be read or is inconsistent (one line naming it), 3 the outputs
 * could not be written.
 */
#include "compare_main.h"
#include "compare.h"
#include "report.h"
#include "workload.h"
#include "../render/render.h"
#include "../render/render_compare.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void compare_usage(FILE *f)
{
	fprintf(f,
"usage: ccreport compare [-p PROFILE] [-w KEY=VALUE ...] [--price NAME=USD_PER_GPU_HOUR ...] [-o DIR]\n"
"                        NAME=RUN ...\n"
"\n"
"Sets clusters side by side for one workload: the criteria normalised to their bounds,\n"
"the workload's time and cost on each (a model), a ranking by cost and by time among\n"
"the clusters that pass every required criterion, the differences in words, and from\n"
"a --scale run how many nodes to rent. RUN: a summary.json or the folder holding it,\n"
"or results (a .jsonl file, a folder of them) judged with -p.\n"
"Writes compare.json, compare.md, compare.html and chart-*.svg into DIR.\n"
"\n"
"  -p, --profile NAME|FILE   judges the RUNs that are results (as ccreport -p)\n"
"  -w, --workload KEY=VALUE  replaces an input of every run's estimate (keys of\n"
"                            ccreport -w, docs/estimate.md), and also:\n"
"                            deadline_days=D  rent the cheapest node count done within D days\n"
"                            budget_usd=U     rent the fastest node count within U USD\n"
"      --price NAME=USD      the price per GPU-hour of cluster NAME (else the run's\n"
"                            workload's; none: \"no price\", ranked by time only)\n"
"  -o, --out DIR             output folder (created; default ccreport-compare)\n"
"      --no-charts           tables only\n"
"      --gnuplot CMD         gnuplot to run\n"
"  -q, --quiet               no terminal summary\n"
"  -h, --help                this text\n"
"\n"
"Exit codes: 0 compared, 2 usage error, or a RUN that cannot be read, of a newer ccreport, or\n"
"whose verdicts do not follow from its own values and bounds (edited), 3 outputs not written.\n");
}

static int parse_usd(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return end == s || *end || errno || !isfinite(*out) || *out < 0 ? -1 : 0;
}

int compare_main(int argc, char **argv, const char *argv0)
{
	static const struct option opts[] = {
		{ "profile", required_argument, NULL, 'p' },
		{ "workload", required_argument, NULL, 'w' },
		{ "price", required_argument, NULL, 'P' },
		{ "out", required_argument, NULL, 'o' },
		{ "no-charts", no_argument, NULL, 'C' },
		{ "gnuplot", required_argument, NULL, 'G' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct render_opts ro = { .outdir = "ccreport-compare", .charts = 1 };
	struct workload wl = { 0 };
	struct cmp_opts co = { .wl = &wl };
	struct cmp_judge judge = { .argv0 = argv0 };
	struct cmp_run *runs = NULL;
	char **prices, err[1024], when[32], path[4200];
	int c, quiet = 0, nprice = 0, nruns = 0, rc = RPT_EXIT_USAGE;
	json_t *doc = NULL;
	time_t now;

	prices = calloc(argc, sizeof(*prices));
	judge.wl = calloc(argc, sizeof(*judge.wl));
	if (!prices || !judge.wl) {
		free(prices);
		free(judge.wl);
		return RPT_EXIT_USAGE;
	}
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:w:o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'p': judge.profile = optarg; break;
		case 'w': {
			const char *a = optarg;
			double *target = !strncmp(a, "deadline_days=", 14) ? &co.deadline_days :
					 !strncmp(a, "budget_usd=", 11) ? &co.budget_usd : NULL;

			if (target) {
				if (parse_usd(strchr(a, '=') + 1, target) || *target <= 0) {
					fprintf(stderr, "ccreport compare: -w '%s': expected a positive number\n", a);
					goto out;
				}
			} else if (!strncmp(a, "backend=", 8) || !strncmp(a, "dtype=", 6)) {
				fprintf(stderr, "ccreport compare: -w '%s': backend and dtype select the "
					"measurement; judge the run again with ccreport -w\n", a);
				goto out;
			} else if (workload_flag(&wl, a, err, sizeof(err))) {
				fprintf(stderr, "ccreport compare: %s\n", err);
				goto out;
			} else {
				judge.wl[judge.nwl++] = optarg;
			}
			break;
		}
		case 'P': prices[nprice++] = optarg; break;
		case 'o': ro.outdir = optarg; break;
		case 'C': ro.charts = 0; break;
		case 'G': ro.gnuplot = optarg; break;
		case 'q': quiet = 1; break;
		case 'h': compare_usage(stdout); rc = 0; goto out;
		case ':':
			fprintf(stderr, "ccreport compare: option '%s' needs a value\n", argv[optind - 1]);
			goto out;
		default:
			fprintf(stderr, "ccreport compare: unknown option '%s'\n", argv[optind - 1]);
			goto out;
		}
	}
	if (optind == argc) {
		fprintf(stderr, "ccreport compare: no runs given (NAME=RUN ...; ccreport compare --help)\n");
		goto out;
	}
	runs = calloc(argc - optind, sizeof(*runs));
	if (!runs)
		goto out;
	judge.now = render_report_time();
	for (int i = optind; i < argc; i++) {
		if (cmp_run_load(&runs[nruns], argv[i], &judge, err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			goto out;
		}
		for (int k = 0; k < nruns; k++)
			if (!strcmp(runs[k].name, runs[nruns].name)) {
				fprintf(stderr, "ccreport compare: %s: the name is given twice\n", runs[k].name);
				nruns++;
				goto out;
			}
		nruns++;
	}
	for (int i = 0; i < nprice; i++) {
		const char *eq = strchr(prices[i], '=');
		double usd;
		int k;

		for (k = 0; eq && k < nruns; k++)
			if (strlen(runs[k].name) == (size_t)(eq - prices[i]) &&
			    !strncmp(runs[k].name, prices[i], eq - prices[i]))
				break;
		if (!eq || parse_usd(eq + 1, &usd)) {
			fprintf(stderr, "ccreport compare: --price '%s': expected NAME=USD_PER_GPU_HOUR\n",
				prices[i]);
			goto out;
		}
		if (k == nruns) {
			fprintf(stderr, "ccreport compare: --price '%s': no cluster of that name\n", prices[i]);
			goto out;
		}
		runs[k].price = usd;
	}
	now = render_report_time();
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	co.generated_utc = when;
	doc = compare_build(runs, nruns, &co, err, sizeof(err));
	if (!doc) {
		fprintf(stderr, "%s\n", err);
		goto out;
	}
	rc = RPT_EXIT_OUTPUT;
	if (render_mkdirs(ro.outdir)) {
		fprintf(stderr, "ccreport compare: cannot create '%s': %s\n", ro.outdir, strerror(errno));
		goto out;
	}
	snprintf(path, sizeof(path), "%s/compare.json", ro.outdir);
	if (json_dump_file(doc, path, JSON_INDENT(1) | JSON_REAL_PRECISION(6) | JSON_SORT_KEYS)) {
		fprintf(stderr, "ccreport compare: cannot write '%s': %s\n", path, strerror(errno));
		goto out;
	}
	if (!quiet)
		compare_print(doc, stdout);
	if (render_compare(doc, &ro, err, sizeof(err))) {
		fprintf(stderr, "ccreport compare: cannot render into '%s': %s\n", ro.outdir, err);
		goto out;
	}
	if (!quiet)
		printf("ccreport compare: %s/compare.html (also compare.md, compare.json)\n", ro.outdir);
	rc = 0;
out:
	json_decref(doc);
	for (int k = 0; k < nruns; k++)
		cmp_run_free(&runs[k]);
	free(runs);
	free(prices);
	free(judge.wl);
	workload_free(&wl);
	return rc;
}
