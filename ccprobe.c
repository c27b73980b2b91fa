/*
 * ccprobe: runs collective benchmarks and probes across an MPI job and
 * streams every measurement to a JSON Lines results file (docs/results.md).
 */
#include "bench/backend.h"
#include "bench/coll.h"
#include "bench/scale.h"
#include "bench/soak.h"
#include "bench/sweep.h"
#include "core/log.h"
#include "core/mpictx.h"
#include "core/options.h"
#include "core/results.h"
#include "core/run.h"
#include "core/timer.h"
#include "core/topology.h"
#include "core/version.h"
#include "core/watchdog.h"
#include "gpu/gpu.h"
#include "probes/probe.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_OUTPUT "ccprobe-results.jsonl"

#ifdef HAVE_CUDA
#define FEATURE_CUDA 1
#else
#define FEATURE_CUDA 0
#endif
#ifdef HAVE_NCCL
#define FEATURE_NCCL 1
#else
#define FEATURE_NCCL 0
#endif
#ifdef HAVE_CUBLASLT
#define FEATURE_CUBLASLT 1
#else
#define FEATURE_CUBLASLT 0
#endif
#ifdef HAVE_VERBS
#define FEATURE_VERBS 1
#else
#define FEATURE_VERBS 0
#endif

/* Every probe's options, for the parser and --help. */
static void collect_params(const struct cc_param **params, size_t max)
{
	size_t n = 0;

	for (int i = 0; probes[i] && n + 1 < max; i++)
		if (probes[i]->params)
			params[n++] = probes[i]->params;
	params[n] = NULL;
}

static void print_list(void)
{
	printf("collectives:\n");
	for (int i = 0; colls[i]; i++)
		printf("  %-16s busbw factor %s\n", colls[i]->name,
		       colls[i]->id == COLL_ALL_REDUCE ? "2(n-1)/n" :
		       colls[i]->id == COLL_BROADCAST ? "1" : "(n-1)/n");
	printf("backends (-B):\n");
	for (int i = 0; backends[i]; i++)
		printf("  %-16s %s memory%s%s\n", backends[i]->name, backends[i]->memory,
		       backends[i]->missing ? "; not built: " : "",
		       backends[i]->missing ? backends[i]->missing : "");
	printf("probes:\n");
	for (int i = 0; probes[i]; i++)
		printf("  %-16s %s%s%s\n", probes[i]->name, probes[i]->summary,
		       probes[i]->missing ? "; not built: " : "",
		       probes[i]->missing ? probes[i]->missing : "");
}

/*
 * --plan: one line per name, "NAME<TAB>PHASE<TAB>SECONDS<TAB>what", the
 * estimate of each on o->plan_nodes nodes under these options (the model of
 * each table entry: bench/sweep.c, the probe's estimate), for ccdiag.
 */
static void print_plan(const struct cc_options *o)
{
	char rate[48] = "the nominal rate";

	if (o->plan_gbps > 0)
		snprintf(rate, sizeof(rate), "%g Gb/s", o->plan_gbps);
	/* a header with the units; readers (ccdiag) skip lines that start with '#' */
	printf("# name\tphase\tseconds (s, estimated)\twhat: on %d node(s) x %d rank(s) per node, %s per node\n",
	       o->plan_nodes, o->plan_rpn, rate);
	for (int i = 0; i < o->nnames; i++) {
		const struct coll *c = coll_find(o->names[i]);
		const struct probe *p = probe_find(o->names[i]);

		if (c && o->soak_s > 0) {
			printf("%s\t%s\t%.1f\tsoak of %g s in %g s intervals\n", c->name,
			       probe_phase_name(PHASE_COLLECTIVES), soak_estimate(o, c, o->plan_nodes),
			       o->soak_s, o->soak_interval);
		} else if (p && o->soak_s > 0) {
			printf("%s\t%s\t%.1f\tsoak of %g s in %g s steps\n", p->name,
			       probe_phase_name(p->phase), p->soak_estimate ? p->soak_estimate(o) : o->soak_s,
			       o->soak_s, o->soak_interval);
		} else if (c) {
			int steps[64], n = o->scale ? scale_counts(o->plan_nodes, steps, 64) : 1;
			double t = 0;
			size_t nsizes = 0;

			if (!o->scale)
				steps[0] = o->plan_nodes;
			for (int k = 0; k < n; k++)
				t += sweep_estimate(o, c, steps[k], &nsizes);
			printf("%s\t%s\t%.1f\t%zu sizes x %d node count(s), %s\n", c->name,
			       probe_phase_name(PHASE_COLLECTIVES), t, nsizes, n,
			       o->time_per_size > 0 ? "time-budgeted" : "no time budget");
		} else {
			char note[256] = "model";

			if (p->plan_note && !p->missing)
				p->plan_note(o, note, sizeof(note));
			printf("%s\t%s\t%.1f\t%s\n", p->name, probe_phase_name(p->phase),
			       p->estimate ? p->estimate(o) : 0.0, p->missing ? "not built" : note);
		}
	}
}

/* Checks names, backend and lists before MPI starts. Returns 0 or -1 with err. */
static int validate(const struct cc_options *o, char *err, size_t len)
{
	enum cc_dtype types[CC_NDTYPES];
	enum cc_redop ops[CC_NOPS];
	int nt, no;

	for (int i = 0; i < o->nnames; i++) {
		const struct probe *p = probe_find(o->names[i]);

		if (!coll_find(o->names[i]) && !p) {
			snprintf(err, len, "unknown collective or probe '%s' (see --list)",
				 o->names[i]);
			return -1;
		}
		if (p && p->check && !o->plan_nodes && p->check(err, len))
			return -1;
		if (p && o->soak_s > 0 && !p->soak) {
			char can[256] = "";

			/* what can soak: every collective, and the probes whose entry says how */
			for (int k = 0; probes[k]; k++)
				if (probes[k]->soak)
					snprintf(can + strlen(can), sizeof(can) - strlen(can), ", %s",
						 probes[k]->name);
			snprintf(err, len, "probe '%s' cannot soak (--soak: the collectives%s)", p->name, can);
			return -1;
		}
	}
	if (!backend_find(o->backend)) {
		snprintf(err, len, "unknown backend '%s' for -B (see --list)", o->backend);
		return -1;
	}
	if (o->min_bytes == 0) {
		snprintf(err, len, "minimum size (-b) must be at least 1 byte");
		return -1;
	}
	/* a topology file that does not read is a usage error: "FILE:LINE: problem" */
	if (o->topology && strcmp(o->topology, "nvlink")) {
		struct topo t;

		if (topo_read(o->topology, &t, err, len))
			return -1;
		topo_free(&t);
	}
	return sweep_parse_lists(o, types, &nt, ops, &no, err, len);
}

static void make_run_id(char *buf, size_t len)
{
	unsigned char r[8] = { 0 };
	int fd = open("/dev/urandom", O_RDONLY);

	if (fd < 0 || read(fd, r, sizeof(r)) != (ssize_t)sizeof(r)) {
		unsigned long long t = (unsigned long long)time(NULL) ^ (unsigned long long)getpid();

		memcpy(r, &t, sizeof(r));
	}
	if (fd >= 0)
		close(fd);
	snprintf(buf, len, "%02x%02x%02x%02x%02x%02x%02x%02x", r[0], r[1], r[2], r[3], r[4],
		 r[5], r[6], r[7]);
}

static json_t *header_record(const struct cc_options *o, const struct mpictx *mpi,
			     const char *run_id)
{
	json_t *argv = json_array(), *hosts = json_array(), *rec;
	char start[32];
	time_t now = time(NULL);
	struct tm tm;
	int uniform = 1;

	gmtime_r(&now, &tm);
	strftime(start, sizeof(start), "%Y-%m-%dT%H:%M:%SZ", &tm);
	for (int i = 0; i < o->argc; i++)
		json_array_append_new(argv, json_string(o->argv[i]));
	for (int n = 0; n < mpi->nnodes; n++) {
		json_t *ranks = json_array();

		for (int r = 0; r < mpi->size; r++)
			if (mpi->rank_node[r] == n)
				json_array_append_new(ranks, json_integer(r));
		json_array_append_new(hosts, json_pack("{s:s, s:o}", "name", mpi->hosts[n],
						       "ranks", ranks));
		uniform &= mpi->node_ranks[n] == mpi->node_ranks[0];
	}
	rec = json_pack("{s:i, s:s, s:s, s:s, s:s, s:s, s:o, s:i, s:i, s:o, s:o, s:s, s:s}",
			"schema", CCDIAG_SCHEMA_VERSION, "run_id", run_id, "start_utc", start,
			"tool", "ccprobe", "version", CCDIAG_VERSION, "commit", ccdiag_commit, "argv", argv,
			"world_size", mpi->size, "nodes", mpi->nnodes, "hosts", hosts,
			"ranks_per_node", uniform ? json_integer(mpi->node_ranks[0]) : json_null(),
			"mpi_library", mpi->mpi_version,
			"mpi_thread_level", mpi->thread_level >= MPI_THREAD_MULTIPLE ? "multiple" :
					    mpi->thread_level >= MPI_THREAD_SERIALIZED ? "serialized" :
					    "funneled-or-single");
	json_object_set_new(rec, "features", json_pack("{s:b, s:b, s:b, s:b, s:b}", "mpi", 1,
						       "cuda", FEATURE_CUDA, "nccl", FEATURE_NCCL,
						       "cublaslt", FEATURE_CUBLASLT, "verbs", FEATURE_VERBS));
	/* versions of the GPU libraries linked in (cuda_runtime, nccl), for comparing hosts */
	json_object_set_new(rec, "versions", gpu_build_versions());
	json_object_set_new(rec, "options", json_pack(
		"{s:I, s:I, s:I, s:I, s:i, s:i, s:i, s:i, s:f, s:f, s:s, s:s, s:s, s:i, s:b}",
		"min_bytes", (json_int_t)o->min_bytes, "max_bytes", (json_int_t)o->max_bytes,
		"step_factor", (json_int_t)o->factor, "step_bytes", (json_int_t)o->step,
		"iters", o->iters, "warmup", o->warmup, "reps", o->reps,
		"check_iters", o->check_iters, "timeout_s", o->timeout_s,
		"time_per_size_s", o->time_per_size,
		"backend", o->backend, "dtypes", o->dtypes, "ops", o->ops, "root", o->root,
		"scale", o->scale));
	/* what the probes named add to the header (isolate, netpair, ib: "topology") */
	for (int i = 0; i < o->nnames; i++) {
		const struct probe *p = probe_find(o->names[i]);

		if (p && p->header)
			p->header(o, mpi, rec);
	}
	if (o->nonce)
		json_object_set_new(rec, "nonce", json_string(o->nonce));
	if (o->soak_s > 0) {
		json_t *opt = json_object_get(rec, "options");

		json_object_set_new(opt, "soak_s", json_real(o->soak_s));
		json_object_set_new(opt, "soak_interval_s", json_real(o->soak_interval));
		json_object_set_new(opt, "soak_bytes",
				    json_integer((json_int_t)(o->soak_size ? o->soak_size : o->max_bytes)));
	}
	return rec;
}

/*
 * The closing line of the skips ("ccprobe: 2 of 3 probes skipped"), each said
 * on stderr as it happened; returns rc, or CC_EXIT_NOTHING when every name was
 * skipped and nothing else went wrong: no measurement is never a success.
 */
static int say_skipped(struct cc_run *run, const struct cc_options *o, int rc)
{
	int n = 0, np = 0;

	for (int i = 0; i < o->nnames; i++) {
		n += run_skipped(run, o->names[i]);
		np += probe_find(o->names[i]) != NULL;
	}
	for (int i = 0; i < run->nskipped; i++)
		free(run->skipped[i]);
	free(run->skipped);
	run->skipped = NULL;
	run->nskipped = 0;
	if (!n)
		return rc;
	fprintf(stderr, "ccprobe: %d of %d %s skipped%s (the skip records in %s say why)\n", n, o->nnames,
		np == o->nnames ? "probes" : !np ? "collectives" : "probes and collectives",
		n == o->nnames ? ": nothing was measured" : "", o->out_path);
	return n == o->nnames && rc == CC_EXIT_OK ? CC_EXIT_NOTHING : rc;
}

/* Runs one probe, or records that it was not built. */
static int run_probe(struct cc_run *run, const struct probe *p)
{
	char err[300];

	if (!p->missing)
		return run->opt->soak_s > 0 ? p->soak(run) : p->run(run);
	snprintf(err, sizeof(err), "not built: %s", p->missing);
	run_skip(run, run->opt->soak_s > 0 ? "soak" : "probe", p->name, err);
	return CC_EXIT_OK;
}

/* Runs one collective sweep, bringing up the backend on first use. */
static int run_collective(struct cc_run *run, const struct coll *coll,
			  const struct backend *be, int *be_state)
{
	/* under --soak every record of the collective is a soak's, skips too */
	const char *kind = run->opt->soak_s > 0 ? "soak" : "collective";
	char why[256] = "";

	if (be->missing) {
		snprintf(why, sizeof(why), "not built: %s", be->missing);
		run_skip(run, kind, coll->name, why);
		return CC_EXIT_OK;
	}
	if (*be_state == 0) {
		char what[64];
		int worst;

		/* a wedged GPU or network in the backend's setup ends as a named timeout */
		snprintf(what, sizeof(what), "%s init", be->name);
		watchdog_arm(what, json_pack("{s:s, s:s}", "kind", "setup", "backend", be->name));
		worst = sweep_backend_start(be, run->mpi, why, sizeof(why));
		watchdog_disarm();

		*be_state = worst == 0 ? 1 : worst == 1 ? 2 : 3;
		if (*be_state == 2 || *be_state == 3) {
			char msg[300];

			snprintf(msg, sizeof(msg), "%s%s", *be_state == 2 ? "skipped: " : "", why);
			if (*be_state == 2)
				run_skip(run, kind, coll->name, msg);
			else
				run_error(run, kind, coll->name, msg);
			return *be_state == 2 ? CC_EXIT_OK : CC_EXIT_RUNTIME;
		}
	} else if (*be_state != 1) {
		run_skip(run, kind, coll->name, "backend unavailable (see above)");
		return CC_EXIT_OK;
	}
	return run->opt->soak_s > 0 ? soak_run(run, coll, be) : sweep_run(run, coll, be);
}

int main(int argc, char **argv)
{
	const struct cc_param *params[32];
	struct cc_options o;
	struct mpictx mpi;
	struct cc_run run = { 0 };
	const struct backend *be;
	char err[512], run_id[32], *all_colls[16];
	int rc = CC_EXIT_OK, ok, be_state = 0, nothers, r;
	int env_rank = mpictx_env_rank();

	collect_params(params, 32);
	options_defaults(&o);
	/* usage errors, --help and --list need no MPI: answer at once, from rank 0 only */
	if (options_parse(&o, argc, argv, params, err, sizeof(err)) ||
	    (!o.help && !o.version && !o.list && validate(&o, err, sizeof(err)))) {
		options_one_line(err);
		/*
		 * Rank 0 alone reports it and alone exits 2: mpirun aborts the job at
		 * the first non-zero exit, and another rank's could kill rank 0
		 * before its line is out (no MPI yet to wait for it).
		 */
		if (env_rank != 0)
			return CC_EXIT_OK;
		fprintf(stderr, "ccprobe: error: %s\nTry 'ccprobe --help' for usage.\n", err);
		return CC_EXIT_USAGE;
	}
	if (o.plan_nodes && !o.help && !o.version && !o.list) {
		if (!o.nnames) {
			for (int i = 0; colls[i] && i < 16; i++)
				all_colls[o.nnames++] = (char *)colls[i]->name;
			o.names = all_colls;
		}
		print_plan(&o);
		return CC_EXIT_OK;
	}
	if (o.help || o.version || o.list) {
		if (env_rank == 0) {
			if (o.help)
				options_usage(stdout, params);
			else if (o.version)
				printf("ccprobe %s (git %s, results schema %d)\n", CCDIAG_VERSION,
				       ccdiag_commit, CCDIAG_SCHEMA_VERSION);
			else
				print_list();
		}
		return CC_EXIT_OK;
	}
	if (!o.out_path)
		o.out_path = DEFAULT_OUTPUT;
	log_set_level(o.verbose >= 2 ? LOG_DEBUG : o.verbose ? LOG_INFO : LOG_WARN);
	watchdog_block_signals();
	if (mpictx_init(&mpi, &argc, &argv))
		return CC_EXIT_RUNTIME;
	run.opt = &o;
	run.mpi = &mpi;
	run.t_start = timer_now();
	/* the results file must be writable before anything is measured */
	if (mpi.rank == 0) {
		run.res = results_open(o.out_path);
		if (!run.res)
			log_error("cannot open results file '%s': %s", o.out_path, strerror(errno));
	}
	ok = mpi.rank != 0 || run.res;
	MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (!ok) {
		mpictx_fini(&mpi);
		return CC_EXIT_RUNTIME;
	}
	make_run_id(run_id, sizeof(run_id));
	MPI_Bcast(run_id, sizeof(run_id), MPI_CHAR, 0, MPI_COMM_WORLD);
	run.run_id = run_id;
	run_record(&run, "run", header_record(&o, &mpi, run_id));
	if (watchdog_start(&mpi, run.res, o.timeout_s, run.t_start)) {
		log_error("cannot start the watchdog thread");
		MPI_Abort(MPI_COMM_WORLD, CC_EXIT_RUNTIME);
	}
	be = backend_find(o.backend);
	if (!o.nnames) {
		/* no names: every collective, in table order */
		for (int i = 0; colls[i] && i < 16; i++)
			all_colls[o.nnames++] = (char *)colls[i]->name;
		o.names = all_colls;
	}
	/* probes that bracket the run (gpuhealth): before everything else, and after */
	nothers = o.nnames;
	for (int i = 0; i < o.nnames; i++) {
		const struct probe *p = probe_find(o.names[i]);

		if (p && p->around) {
			nothers--;
			r = run_probe(&run, p);
			rc = r > rc ? r : rc;
		}
	}
	if (o.scale) {
		/* --scale: every collective named, per node count, before the probes */
		const struct coll *list[16];
		int n = 0;

		for (int i = 0; i < o.nnames && n < 16; i++)
			if (coll_find(o.names[i]))
				list[n++] = coll_find(o.names[i]);
		if (n)
			rc = scale_run(&run, list, n, be);
	}
	for (int i = 0; i < o.nnames; i++) {
		const char *name = o.names[i];
		const struct coll *coll = coll_find(name);
		const struct probe *probe = probe_find(name);

		if ((coll && o.scale) || (probe && probe->around)) {
			continue;
		} else if (coll) {
			r = run_collective(&run, coll, be, &be_state);
		} else {
			r = run_probe(&run, probe);
		}
		if (r > rc)
			rc = r;
	}
	for (int i = 0; nothers && i < o.nnames; i++) {
		const struct probe *p = probe_find(o.names[i]);

		if (p && p->around) {
			r = run_probe(&run, p);
			rc = r > rc ? r : rc;
		}
	}
	if (be_state == 1)
		be->fini();
	watchdog_stop();
	if (mpi.rank == 0) {
		if (run.failures && rc == CC_EXIT_OK)
			rc = CC_EXIT_FAIL;
		rc = say_skipped(&run, &o, rc);
		/* an end record that did not reach the disk leaves the run incomplete */
		if (results_end(run.res, "complete", run_elapsed(&run),
				json_pack("{s:i, s:i}", "failures", run.failures, "exit_code", rc)) |
		    results_close(run.res))
			rc = CC_EXIT_RUNTIME;
		if (!o.quiet)
			printf("# results: %s\n", o.out_path);
	}
	MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
	mpictx_fini(&mpi);
	return rc;
}
