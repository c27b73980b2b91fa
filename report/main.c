/*
 * report/main.c: ccreport, the acceptance report. Reads results files and a
 * profile, writes summary.json (what it decided) and renders it as report.md,
 * index.html and junit.xml; prints a short summary. Links no MPI, CUDA,
 * NCCL or verbs. Exit codes: enum rpt_exit (README.md, --help).
 */
#include "compare_main.h"
#include "eval.h"
#include "eval_state.h"
#include "history.h"
#include "history_main.h"
#include "import.h"
#include "load.h"
#include "needs.h"
#include "profile.h"
#include "report.h"
#include "summary.h"
#include "workload.h"
#include "../render/render.h"
#include "../render/render_all.h"
#include "../render/prom.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

struct args {
	const char *profile, *outdir, *baseline, *gnuplot;
	const char *prom, *history, *cluster;   /* --prom FILE, --history DB, --cluster NAME */
	double tolerance;        /* baseline; < 0 = the profile's */
	double outlier_tol;      /* < 0 = the profile's */
	int charts, render, quiet, max_problems;
	int needs;               /* --needs: print what the profile judges, read no results */
	char **inputs;
	int ninputs;
	char **workload;         /* --workload KEY=VALUE, in order */
	int nworkload;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: ccreport -p PROFILE [options] RESULTS...\n"
"       ccreport compare [options] NAME=RUN ...   (ccreport compare --help, docs/compare.md)\n"
"       ccreport history DB [options]             (ccreport history --help, docs/history.md)\n"
"       ccreport import [--from TOOL] FILE... -o OUT (ccreport import --help, docs/import.md)\n"
"\n"
"Judges ccprobe results (files, or folders of *.jsonl) against an acceptance\n"
"profile and writes summary.json, report.md, index.html and junit.xml. Outputs of\n"
"nccl-tests, perftest, nvbandwidth, dcgmi diag -j, fio (JSON) and IOR are read as\n"
"inputs too (docs/import.md).\n"
"\n"
"  -p, --profile NAME|FILE   profile: a path, or NAME looked up as NAME.ini in\n"
"                            $CCREPORT_PROFILES, ./profiles, the profiles beside the\n"
"                            binary and the installed share/ccdiag/profiles\n"
"  -o, --out DIR             output folder (created; default ccreport-out)\n"
"  -b, --baseline OLD        compare with an earlier run: its results (file or\n"
"                            folder) or its summary.json\n"
"  -t, --tolerance PCT       baseline: a drop beyond PCT %% (and beyond the\n"
"                            measurement's spread) is a regression (default: the\n"
"                            profile's, else 5)\n"
"      --outlier-tolerance PCT  flag elements more than PCT %% below their peers'\n"
"                            upper quartile (default: the profile's, else 10)\n"
"  -w, --workload KEY=VALUE  the training workload of the estimate (repeatable;\n"
"                            overrides the profile's [workload]): params,\n"
"                            bytes_per_grad, bytes_per_param, tp, pp, dp_size,\n"
"                            gpus (tp x pp x dp_size), gpus_per_node, stage (ddp|\n"
"                            zero1|zero2|zero3), ga_steps, layers, act_bytes,\n"
"                            tokens_per_step, total_tokens, peak_tflops, mfu,\n"
"                            price_per_gpu_hour, bucket_bytes, overlap, backend,\n"
"                            dtype, compute_dtype, matmul_efficiency, weight_bytes,\n"
"                            optimizer_bytes, checkpoint_bytes, checkpoint_every\n"
"                            (docs/estimate.md). The estimate is a model,\n"
"                            labelled so, never a measurement\n"
"      --prom FILE           also write the run as a Prometheus textfile-collector\n"
"                            exposition (ccdiag_* metrics; written then renamed)\n"
"      --history DB          append the run to the SQLite history DB (ccreport\n"
"                            history DB shows it over time; docs/history.md)\n"
"      --cluster NAME        the cluster's name in the history (default: its first host)\n"
"      --no-charts           tables only, no gnuplot\n"
"      --gnuplot CMD         gnuplot to run (default: gnuplot from PATH)\n"
"      --no-render           write summary.json only\n"
"  -n, --problems N          problems listed in the terminal summary (default 10)\n"
"  -q, --quiet               no terminal summary\n"
"      --needs               print, as JSON, what the profile's criteria need\n"
"                            measured (probes, tests, collectives, backends, sizes,\n"
"                            --scale) and exit; no results are read (ccdiag plans\n"
"                            from it, docs/ccdiag.md)\n"
"  -h, --help                this text\n"
"  -V, --version             version\n"
"\n"
"SOURCE_DATE_EPOCH, when set, is the generated_utc time (reproducible output).\n"
"CCREPORT_BUSY_TIMEOUT_MS: how long --history waits for another writer (default 10000).\n"
"CCREPORT_HISTORY_DEADLINE_S: when a --history query stops (default 60; a hostile database).\n"
"\n"
"Exit codes:\n"
"  0  pass (warnings allowed)\n"
"  1  a criterion failed, versions differ across hosts, the hardware falls short of the\n"
"     profile (GPU model or count, NICs at the rate), or a regression against the baseline\n"
"  2  usage error, or an input or profile that cannot be read (one line: file:line: what),\n"
"     or a --history database that is corrupt or of another schema\n"
"  3  the outputs could not be written (--prom, or a --history database locked)\n"
"  4  incomplete: a required probe is missing, skipped or not built, or a run did not finish\n");
}

static int parse_pct(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || *end || !(v >= 0 && v <= 100))
		return -1;
	*out = v / 100;
	return 0;
}

static int parse_args(struct args *a, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "profile", required_argument, NULL, 'p' },
		{ "out", required_argument, NULL, 'o' },
		{ "baseline", required_argument, NULL, 'b' },
		{ "tolerance", required_argument, NULL, 't' },
		{ "outlier-tolerance", required_argument, NULL, 'O' },
		{ "workload", required_argument, NULL, 'w' },
		{ "no-charts", no_argument, NULL, 'C' },
		{ "prom", required_argument, NULL, 'M' },
		{ "history", required_argument, NULL, 'H' },
		{ "cluster", required_argument, NULL, 'L' },
		{ "gnuplot", required_argument, NULL, 'G' },
		{ "no-render", no_argument, NULL, 'R' },
		{ "problems", required_argument, NULL, 'n' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "needs", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*a = (struct args){ .outdir = "ccreport-out", .tolerance = -1, .outlier_tol = -1,
			    .charts = 1, .render = 1, .max_problems = 10 };
	/* at most one --workload per argument */
	a->workload = calloc(argc, sizeof(*a->workload));
	if (!a->workload) {
		fprintf(stderr, "ccreport: out of memory\n");
		return -1;
	}
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:o:b:t:n:w:qhV", opts, NULL)) != -1) {
		switch (c) {
		case 'p': a->profile = optarg; break;
		case 'o': a->outdir = optarg; break;
		case 'b': a->baseline = optarg; break;
		case 'C': a->charts = 0; break;
		case 'M': a->prom = optarg; break;
		case 'H': a->history = optarg; break;
		case 'L': a->cluster = optarg; break;
		case 'G': a->gnuplot = optarg; break;
		case 'R': a->render = 0; break;
		case 'q': a->quiet = 1; break;
		case 'N': a->needs = 1; break;
		case 'w': a->workload[a->nworkload++] = optarg; break;
		case 'h': usage(stdout); exit(0);
		case 'V': printf("ccreport %s (git %s)\n", RPT_VERSION, ccdiag_commit); exit(0);
		case 't':
		case 'O':
			if (parse_pct(optarg, c == 't' ? &a->tolerance : &a->outlier_tol)) {
				fprintf(stderr, "ccreport: %s '%s': expected a percentage 0..100\n",
					c == 't' ? "--tolerance" : "--outlier-tolerance", optarg);
				return -1;
			}
			break;
		case 'n':
			a->max_problems = atoi(optarg);
			if (a->max_problems < 0 || strspn(optarg, "0123456789") != strlen(optarg)) {
				fprintf(stderr, "ccreport: --problems '%s': expected a count\n", optarg);
				return -1;
			}
			break;
		case ':':
			fprintf(stderr, "ccreport: option '%s' needs a value\n", argv[optind - 1]);
			return -1;
		default:
			fprintf(stderr, "ccreport: unknown option '%s'\n", argv[optind - 1]);
			return -1;
		}
	}
	if (!a->profile) {
		fprintf(stderr, "ccreport: no profile (-p NAME or -p FILE)\n");
		return -1;
	}
	if (optind == argc && !a->needs) {
		fprintf(stderr, "ccreport: no results files given\n");
		return -1;
	}
	a->inputs = argv + optind;
	a->ninputs = argc - optind;
	return 0;
}

/* jansson hands over a token at a time: gathered here, written 64 KiB at once (no stdio call per token) */
struct dump_buf {
	FILE *f;
	size_t n;
	int err;
	char b[65536];
};

static int dump_cb(const char *p, size_t n, void *data)
{
	struct dump_buf *d = data;

	if (d->n + n > sizeof(d->b)) {
		if (d->n && fwrite(d->b, 1, d->n, d->f) != d->n)
			d->err = 1;
		d->n = 0;
		if (n > sizeof(d->b)) {
			if (fwrite(p, 1, n, d->f) != n)
				d->err = 1;
			return d->err ? -1 : 0;
		}
	}
	memcpy(d->b + d->n, p, n);
	d->n += n;
	return 0;
}

/* summary.json as json_dump_file writes it; 0 or -1 with errno */
static int dump_summary(const json_t *s, const char *path)
{
	struct dump_buf *d = malloc(sizeof(*d));
	int rc = -1;

	if (!d || !(d->f = fopen(path, "w"))) {
		free(d);
		return -1;
	}
	d->n = 0;
	d->err = 0;
	if (!json_dump_callback(s, dump_cb, d, JSON_INDENT(1) | JSON_REAL_PRECISION(6)) &&
	    !(d->n && fwrite(d->b, 1, d->n, d->f) != d->n) && !d->err)
		rc = 0;
	if (fclose(d->f))
		rc = -1;
	free(d);
	return rc;
}

static int write_outputs(const struct args *a, json_t *s)
{
	struct render_opts ro = { .outdir = a->outdir, .charts = a->charts, .gnuplot = a->gnuplot };
	char path[4200], err[512];

	if (render_mkdirs(a->outdir)) {
		fprintf(stderr, "ccreport: cannot create '%s': %s\n", a->outdir, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/summary.json", a->outdir);
	if (dump_summary(s, path)) {
		fprintf(stderr, "ccreport: cannot write '%s': %s\n", path, strerror(errno));
		return -1;
	}
	if (!a->quiet)
		summary_print(s, stdout, a->max_problems);
	if (!a->render)
		return 0;
	if (render_all(s, &ro, err, sizeof(err))) {
		fprintf(stderr, "ccreport: cannot render the report into '%s': %s\n", a->outdir, err);
		return -1;
	}
	if (!a->quiet)
		printf("ccreport: report in %s/index.html (also report.md, junit.xml, summary.json)\n",
		       a->outdir);
	return 0;
}

static int report(const struct args *args, const char *argv0);

int main(int argc, char **argv)
{
	struct args a;
	int rc;

	/* subcommands: the first word */
	if (argc > 1 && !strcmp(argv[1], "compare"))
		return compare_main(argc - 1, argv + 1, argv[0]);
	if (argc > 1 && !strcmp(argv[1], "history"))
		return history_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "import"))
		return import_main(argc - 1, argv + 1);
	if (parse_args(&a, argc, argv)) {
		free(a.workload);
		fprintf(stderr, "usage: ccreport -p PROFILE [options] RESULTS... (ccreport --help)\n");
		return RPT_EXIT_USAGE;
	}
	rc = report(&a, argv[0]);
	free(a.workload);
	return rc;
}

static int report(const struct args *args, const char *argv0)
{
	struct args a = *args;
	struct profile p;
	struct eval e;
	struct summary_opts so = { 0 };
	char err[1024], **paths = NULL, *ppath;
	int n = 0, rc = RPT_EXIT_USAGE;
	json_t *s = NULL;

	ppath = profile_find(a.profile, argv0);
	if (!ppath) {
		profile_not_found(err, sizeof(err), a.profile, argv0);
		fprintf(stderr, "ccreport: %s\n", err);
		return RPT_EXIT_USAGE;
	}
	if (profile_load(&p, ppath, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		free(ppath);
		return RPT_EXIT_USAGE;
	}
	for (int i = 0; i < p.nwarnings; i++)
		fprintf(stderr, "ccreport: warning: %s\n", p.warnings[i]);
	for (int i = 0; i < a.nworkload; i++)
		if (workload_flag(&p.wl, a.workload[i], err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			goto free_profile;
		}
	if (workload_check(&p.wl, ppath, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		goto free_profile;
	}
	if (a.needs) {
		json_t *doc = profile_needs(&p);

		rc = doc && !json_dumpf(doc, stdout, JSON_COMPACT) ? RPT_EXIT_PASS : RPT_EXIT_OUTPUT;
		printf("\n");
		json_decref(doc);
		goto free_profile;
	}
	if (a.outlier_tol >= 0)
		for (int i = 0; i < p.ncrit; i++)
			if (p.crit[i].outlier_tol >= 0)
				p.crit[i].outlier_tol = a.outlier_tol;
	if (eval_init(&e, &p)) {
		fprintf(stderr, "ccreport: out of memory\n");
		goto free_profile;
	}
	n = results_expand(a.inputs, a.ninputs, &paths, err, sizeof(err));
	if (n < 0 || eval_read_inputs(&e, paths, n, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		goto free_eval;
	}
	eval_finish(&e);
	so.profile_path = ppath;
	so.baseline = a.baseline;
	so.baseline_tol = a.tolerance >= 0 ? a.tolerance : p.baseline_tol;
	so.now = render_report_time();
	s = summary_build(&e, &so, err, sizeof(err));
	if (!s) {
		fprintf(stderr, "%s\n", err);
		goto free_eval;
	}
	rc = write_outputs(&a, s) ? RPT_EXIT_OUTPUT : (int)json_integer_value(json_object_get(s, "exit_code"));
	/* after the report: a locked history or a full disk never costs the report itself */
	if (a.prom && prom_write(s, a.prom, err, sizeof(err))) {
		fprintf(stderr, "ccreport: %s\n", err);
		rc = RPT_EXIT_OUTPUT;
	}
	if (a.history) {
		int hrc = history_append(s, a.history, a.cluster, err, sizeof(err));

		if (hrc) {
			fprintf(stderr, "ccreport: %s\n", err);
			rc = hrc;
		}
	}
	json_decref(s);
free_eval:
	eval_free(&e);
	for (int i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
free_profile:
	profile_free(&p);
	free(ppath);
	return rc;
}
