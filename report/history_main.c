/*
 * report/history_main.c: the command line of ccreport history
 * (docs/history.md). Exit codes: 0 no drift, 1 drift flagged, 2 usage, a
 * missing, corrupt or other-schema database, 3 locked or outputs not written.
 */
#include "history_main.h"
#include "history.h"
#include "report.h"
#include "../render/render.h"
#include "../render/render_history.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void history_usage(FILE *f)
{
	fprintf(f,
"usage: ccreport history DB [--cluster NAME] [-o DIR] [-k N] [-t PCT] [--add SUMMARY ...]\n"
"\n"
"Shows each criterion of a cluster over time from the history database DB (appended\n"
"by ccreport --history DB) and flags drift: a value worse than the rolling median of\n"
"the last k runs by more than the tolerance and more than its spread, naming the\n"
"element (GPU, NIC, link) that moved. With -o, writes history.json, history.md,\n"
"history.html and charts into DIR.\n"
"\n"
"  --cluster NAME     this cluster only (default: every cluster in DB)\n"
"  -o, --out DIR      output folder (created)\n"
"  -k, --runs N       runs in the rolling median (default %d; %d earlier runs at least)\n"
"  -t, --tolerance PCT  drift beyond PCT %% (default %g)\n"
"  --add SUMMARY      append an earlier summary.json first (repeatable; with --cluster\n"
"                     as its cluster name)\n"
"  --add-only         append the --add summaries and stop (no table, no drift)\n"
"  --no-charts, --gnuplot CMD, -q/--quiet, -h/--help\n"
"\n"
"Exit codes: 0 no drift, 1 drift flagged, 2 usage error or a database that is missing,\n"
"corrupt or of another schema, 3 the database is locked or the outputs not written.\n",
		HISTORY_K, 3, HISTORY_TOL * 100);
}

int history_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cluster", required_argument, NULL, 'c' },
		{ "out", required_argument, NULL, 'o' },
		{ "runs", required_argument, NULL, 'k' },
		{ "tolerance", required_argument, NULL, 't' },
		{ "add", required_argument, NULL, 'a' },
		{ "add-only", no_argument, NULL, 'A' },
		{ "no-charts", no_argument, NULL, 'C' },
		{ "gnuplot", required_argument, NULL, 'G' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct render_opts ro = { .charts = 1 };
	const char *cluster = NULL, *db;
	char **adds, err[1024], path[4200], *end;
	int c, k = HISTORY_K, quiet = 0, nadd = 0, add_only = 0, rc = RPT_EXIT_USAGE;
	double tol = HISTORY_TOL;
	json_t *doc = NULL;

	adds = calloc(argc, sizeof(*adds));
	if (!adds)
		return RPT_EXIT_USAGE;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:o:k:t:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'c': cluster = optarg; break;
		case 'o': ro.outdir = optarg; break;
		case 'a': adds[nadd++] = optarg; break;
		case 'A': add_only = 1; break;
		case 'C': ro.charts = 0; break;
		case 'G': ro.gnuplot = optarg; break;
		case 'q': quiet = 1; break;
		case 'h': history_usage(stdout); rc = 0; goto out;
		case 'k':
			k = (int)strtol(optarg, &end, 10);
			if (*end || end == optarg || k < 3 || k > 1000) {
				fprintf(stderr, "ccreport history: --runs '%s': expected a count 3..1000\n", optarg);
				goto out;
			}
			break;
		case 't':
			errno = 0;
			tol = strtod(optarg, &end) / 100;
			if (*end || end == optarg || errno || !(tol >= 0 && tol <= 1)) {
				fprintf(stderr, "ccreport history: --tolerance '%s': expected a percentage 0..100\n",
					optarg);
				goto out;
			}
			break;
		case ':':
			fprintf(stderr, "ccreport history: option '%s' needs a value\n", argv[optind - 1]);
			goto out;
		default:
			fprintf(stderr, "ccreport history: unknown option '%s'\n", argv[optind - 1]);
			goto out;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "ccreport history: expected one database (ccreport history DB; --help)\n");
		goto out;
	}
	db = argv[optind];
	for (int i = 0; i < nadd; i++) {
		json_error_t je;
		json_t *s = json_load_file(adds[i], 0, &je);

		if (!s || !json_is_array(json_object_get(s, "criteria"))) {
			fprintf(stderr, "ccreport history: %s:%d: not a ccreport summary.json: %s\n", adds[i],
				s ? 1 : je.line, s ? "no criteria" : je.text);
			json_decref(s);
			goto out;
		}
		rc = history_append(s, db, cluster, err, sizeof(err));
		json_decref(s);
		if (rc) {
			fprintf(stderr, "ccreport history: %s\n", err);
			goto out;
		}
		rc = RPT_EXIT_USAGE;
	}
	if (add_only) {
		rc = 0;
		goto out;
	}
	rc = history_build(db, cluster, k, tol, &doc, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "ccreport history: %s\n", err);
		goto out;
	}
	if (!quiet)
		history_print(doc, stdout);
	if (ro.outdir) {
		rc = RPT_EXIT_OUTPUT;
		if (render_mkdirs(ro.outdir)) {
			fprintf(stderr, "ccreport history: cannot create '%s': %s\n", ro.outdir, strerror(errno));
			goto out;
		}
		snprintf(path, sizeof(path), "%s/history.json", ro.outdir);
		if (json_dump_file(doc, path, JSON_INDENT(1) | JSON_REAL_PRECISION(6) | JSON_SORT_KEYS)) {
			fprintf(stderr, "ccreport history: cannot write '%s': %s\n", path, strerror(errno));
			goto out;
		}
		if (render_history(doc, &ro, err, sizeof(err))) {
			fprintf(stderr, "ccreport history: cannot render into '%s': %s\n", ro.outdir, err);
			goto out;
		}
	}
	rc = 0;
	{
		const json_t *cl;
		size_t i;

		json_array_foreach(json_object_get(doc, "clusters"), i, cl)
			if (json_array_size(json_object_get(cl, "drift")))
				rc = RPT_EXIT_FAIL;
	}
out:
	json_decref(doc);
	free(adds);
	return rc;
}
