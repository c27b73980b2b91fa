/*
 * isolate: finds the bad nodes of a large job by group testing
 * (docs/isolation.md): the planner (probes/isolate_plan.h) says which sets
 * of hosts run an all_reduce together, round by round; this file runs each
 * round's tests at once over MPI sub-communicators, judges them against a
 * reference and hands pass/fail back. Every rank runs the same planner on the
 * same results, so no plan is ever sent.
 */
#include "groups.h"
#include "isolate_plan.h"
#include "probe.h"

#include "../core/log.h"
#include "../core/size.h"
#include "../core/timer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ parameters */

static size_t p_size = (size_t)4 << 20;
static double p_time = 0.3;
static double p_tol = 0.5;
static double p_expect_gbps;
static int p_confirm = 3;

static const struct cc_param isolate_params[] = {
	{ "iso-size", CC_PARAM_SIZE, &p_size, "isolate: all_reduce bytes of one test [4M]" },
	{ "iso-time", CC_PARAM_DOUBLE, &p_time, "isolate: seconds one test measures for [0.3]" },
	{ "iso-tol", CC_PARAM_DOUBLE, &p_tol,
	  "isolate: a test fails below this fraction of the reference busbw [0.5]" },
	{ "iso-expect-gbps", CC_PARAM_DOUBLE, &p_expect_gbps,
	  "isolate: reference busbw in Gb/s (the profile's bound); 0 = median of round 1's groups [0]" },
	{ "iso-confirm", CC_PARAM_INT, &p_confirm,
	  "isolate: tries of a test that fails, the best judged (1-8) [3]" },
	{ NULL, 0, NULL, NULL },
};

static int check_params(char *err, size_t len)
{
	if (p_size < 8 || p_size > ((size_t)1 << 30))
		snprintf(err, len, "--iso-size must be 8 B to 1 GiB");
	else if (!(p_time > 0) || p_time > 60)
		snprintf(err, len, "--iso-time must be above 0 and at most 60 seconds");
	else if (!(p_tol > 0 && p_tol <= 1))
		snprintf(err, len, "--iso-tol must be above 0 and at most 1");
	else if (p_expect_gbps < 0)
		snprintf(err, len, "--iso-expect-gbps must be 0 (measured) or above");
	else if (p_confirm < 1 || p_confirm > 8)
		snprintf(err, len, "--iso-confirm must be 1 to 8");
	else
		return 0;
	return -1;
}

/* the results header's "topology": where the groups came from and which hosts are in each */
static void isolate_header(const struct cc_options *o, const struct mpictx *mpi, json_t *rec)
{
	job_groups_header(o, mpi, rec, 0);
}

/* ------------------------------------------------------------------ one round */

struct iso_ctx {
	struct cc_run *run;
	int *group_of;          /* nnodes */
	const char **gnames;
	double ref_GBps;        /* the reference busbw; 0 until round 1 sets it */
	int ref_expected;       /* it came from --iso-expect-gbps */
	double *bus;            /* per test of the round: busbw GB/s (0: none), the best try's */
	double *wrong;          /* per test: mismatching elements, over every try */
	int *tries;             /* per test: how many times it ran (a failing one, up to --iso-confirm) */
	int failed;             /* a test could not run */
	char why[256];
};

/*
 * Runs test t of my host's group, if any, on a sub-communicator; the others
 * take MPI_UNDEFINED. Fills c->bus and c->wrong for the tests whose first
 * rank this is (summed over the world afterwards).
 */
static int run_round(struct iso_ctx *c, const struct iso_round *r, const unsigned char *active)
{
	const struct mpictx *mpi = c->run->mpi;
	double *bus = c->bus, *wrong = c->wrong;
	int mine = MPI_UNDEFINED, rc = 0, err_local = 0;
	MPI_Comm comm = MPI_COMM_NULL;

	for (int i = 0; i < r->ntests; i++) {
		bus[i] = wrong[i] = 0;
		for (int j = 0; (!active || active[i]) && j < r->tests[i].count; j++)
			if (r->nodes[r->tests[i].first + j] == mpi->node)
				mine = i;
	}
	MPI_Comm_split(mpi->world, mine, mpi->rank, &comm);
	if (comm != MPI_COMM_NULL) {
		int n, me;
		size_t count = p_size / sizeof(float);
		float *in = malloc(count * sizeof(float)), *out = malloc(count * sizeof(float));
		double t0, t1, per_op, go;
		long iters = 1, bad = 0;

		MPI_Comm_size(comm, &n);
		MPI_Comm_rank(comm, &me);
		if (!in || !out)
			err_local = 1;
		MPI_Allreduce(MPI_IN_PLACE, &err_local, 1, MPI_INT, MPI_MAX, comm);
		if (!err_local) {
			for (size_t k = 0; k < count; k++)
				in[k] = 1.0f;
			/* warm-up: one op; its time sizes the timed loop */
			MPI_Barrier(comm);
			t0 = timer_now();
			MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, comm);
			t1 = timer_now() - t0;
			for (size_t k = 0; k < count; k += 1 + count / 64)
				bad += out[k] != (float)n;
			go = t1 > 0 ? p_time / t1 : 100;
			MPI_Bcast(&go, 1, MPI_DOUBLE, 0, comm);
			iters = go < 1 ? 1 : go > 1000 ? 1000 : (long)go;
			MPI_Barrier(comm);
			t0 = timer_now();
			for (long it = 0; it < iters; it++)
				MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, comm);
			per_op = (timer_now() - t0) / iters;
			MPI_Allreduce(MPI_IN_PLACE, &per_op, 1, MPI_DOUBLE, MPI_MAX, comm);
			MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG, MPI_SUM, comm);
			if (me == 0) {
				/* busbw = S / t x 2(n-1)/n; a test of one rank has no bus */
				bus[mine] = n > 1 && per_op > 0 ?
					(double)(count * sizeof(float)) / per_op / 1e9 * 2.0 * (n - 1) / n :
					-1;
				wrong[mine] = (double)bad;
			}
		}
		free(in);
		free(out);
		MPI_Comm_free(&comm);
	}
	MPI_Allreduce(MPI_IN_PLACE, &err_local, 1, MPI_INT, MPI_MAX, mpi->world);
	if (err_local) {
		snprintf(c->why, sizeof(c->why), "cannot allocate 2 x %zu bytes for a test", p_size);
		return -1;
	}
	MPI_Allreduce(MPI_IN_PLACE, bus, r->ntests, MPI_DOUBLE, MPI_SUM, mpi->world);
	MPI_Allreduce(MPI_IN_PLACE, wrong, r->ntests, MPI_DOUBLE, MPI_SUM, mpi->world);
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* what the planner does with a test's result, for its record */
static const char *decision(const struct iso_test *t, int second)
{
	switch (t->kind) {
	case ISO_GROUP:
	case ISO_REST:
		return t->fail ? "holds a bad node: split" : "its nodes are good";
	case ISO_SPLIT:
		return t->fail ? "half failed: split on it, the other half tested whole" :
				 "half passed: its nodes good, the other half holds the bad node";
	case ISO_CROSS:
		return t->fail ? "a fault between groups: no more padding across groups" :
				 "no fault between groups";
	case ISO_CONFIRM:
		if (!t->fail)
			return second ? "passed with a second partner: the link to the first is named" :
					"passed with a known-good partner: cleared";
		return second || t->count < 2 ? "bad node" : "failed: once more with another partner";
	case ISO_UPAIR:
		return t->fail ? "one of the two groups' uplinks: each tested with an ok group's next" :
				 "both groups' uplinks ok";
	case ISO_UCONFIRM:
		return t->fail ? "the group's uplink is bad" : "the group's uplink is ok";
	}
	return "?";
}

/* the round's pass/fail, and one record per test */
/*
 * round 1 without --iso-expect-gbps: the reference is the median busbw of its
 * groups, the upper of the middle two for an even count: of two groups (two
 * leaves, or 6 hosts in groups of 3) the mean of a healthy and a bad one would
 * halve the reference, and a node at a third of the healthy busbw would pass
 */
static int sets_reference(const struct iso_ctx *c, const struct iso_round *r)
{
	return r->index == 1 && !c->ref_expected;
}

static void set_reference(struct iso_ctx *c, const struct iso_round *r)
{
	double *v;
	int k = 0;

	if (!sets_reference(c, r))
		return;
	/* the best groups when most are healthy */
	v = malloc((size_t)r->ntests * sizeof(double));
	for (int i = 0; v && i < r->ntests; i++)
		if (c->bus[i] > 0)
			v[k++] = c->bus[i];
	if (k) {
		qsort(v, (size_t)k, sizeof(double), cmp_double);
		c->ref_GBps = v[k / 2];
	}
	free(v);
}

/* test i fails: wrong data, or busbw below --iso-tol of the reference (a test of one rank never passes) */
static int test_fails(const struct iso_ctx *c, int i)
{
	double ratio = c->bus[i] > 0 && c->ref_GBps > 0 ? c->bus[i] / c->ref_GBps : NAN;

	return c->wrong[i] > 0 || !(ratio >= p_tol);
}

/*
 * Runs the round's tests, then the failing ones again, --iso-confirm tries in
 * all, keeping each test's best busbw: noise (a busy CPU, other traffic) only
 * slows a test down, so a set is condemned by a fault that holds in every try
 * (as netpair's retests). Wrong data in any try fails the test. The round
 * that sets the reference runs every test that often: a reference read in one
 * noisy try is low, and a slow set would pass against it (beside two busy
 * loops a healthy group once read a twentieth of its speed, and the group
 * holding a node 500 times slower passed). 0, or -1.
 */
static int run_tries(struct iso_ctx *c, const struct iso_round *r, unsigned char *active,
		     double *best, double *wrongs)
{
	int sets_ref = sets_reference(c, r);

	if (run_round(c, r, NULL))
		return -1;
	for (int i = 0; i < r->ntests; i++)
		c->tries[i] = 1;
	for (int k = 1; k < p_confirm; k++) {
		int any = 0;

		set_reference(c, r);
		for (int i = 0; i < r->ntests; i++) {
			active[i] = r->tests[i].count > 1 && c->wrong[i] == 0 &&
				    (sets_ref || test_fails(c, i));
			any |= active[i];
			best[i] = c->bus[i];
			wrongs[i] = c->wrong[i];
		}
		if (!any)
			break;
		if (run_round(c, r, active))
			return -1;
		for (int i = 0; i < r->ntests; i++) {
			c->tries[i] += active[i];
			c->bus[i] = active[i] && c->bus[i] > best[i] ? c->bus[i] : best[i];
			c->wrong[i] += wrongs[i];
		}
	}
	set_reference(c, r);
	return 0;
}

static void judge_round(struct iso_ctx *c, struct iso_round *r, const struct iso_plan *p,
			const int *second)
{
	const struct mpictx *mpi = c->run->mpi;
	char *const *hosts = mpi->hosts;

	for (int i = 0; i < r->ntests; i++) {
		struct iso_test *t = &r->tests[i];
		json_t *nodes = json_array(), *pad = json_array(), *rec;
		double ratio = c->bus[i] > 0 && c->ref_GBps > 0 ? c->bus[i] / c->ref_GBps : NAN;

		/* a test of one rank (a suspect with no known-good node) cannot pass */
		t->fail = test_fails(c, i);
		for (int j = 0; j < t->count; j++)
			json_array_append_new(j < t->real ? nodes : pad,
					      json_string(hosts[r->nodes[t->first + j]]));
		rec = json_pack("{s:s, s:s, s:s, s:i, s:i, s:s, s:s?, s:o, s:o, s:i, s:I}",
				"kind", "probe", "name", "isolate", "test", "all_reduce",
				"round", r->index, "index", i, "role", iso_kind_name(t->kind),
				"group", t->kind == ISO_CROSS ? NULL :
					 c->gnames[c->group_of[r->nodes[t->first]]],
				"nodes", nodes, "padding", pad, "size", t->count,
				"bytes", (json_int_t)(p_size / sizeof(float) * sizeof(float)));
		json_object_set_new(rec, "busbw_GBps", c->bus[i] > 0 ? json_real(c->bus[i]) : json_null());
		json_object_set_new(rec, "ref_GBps", c->ref_GBps > 0 ? json_real(c->ref_GBps) : json_null());
		json_object_set_new(rec, "ratio", isfinite(ratio) ? json_real(ratio) : json_null());
		json_object_set_new(rec, "wrong", json_integer((json_int_t)c->wrong[i]));
		json_object_set_new(rec, "tries", json_integer(c->tries[i]));
		json_object_set_new(rec, "pass", json_boolean(!t->fail));
		json_object_set_new(rec, "decision", json_string(decision(t, second[i])));
		run_record(c->run, "measurement", rec);
	}
	(void)p;
}

/* ------------------------------------------------------------------ the probe */

static json_t *diag(const char *subject, const char *verdict)
{
	return json_pack("{s:s, s:s, s:s, s:s}", "kind", "probe", "name", "isolate",
			 "subject", subject, "verdict", verdict);
}

static int isolate_run(struct cc_run *run)
{
	const struct mpictx *mpi = run->mpi;
	struct iso_ctx c = { .run = run };
	const struct job_groups *g;
	struct iso_plan p;
	struct iso_round r;
	int ngroups = 0, k, rc = CC_EXIT_OK, *second = NULL, uplinks = 0;
	unsigned char *active;
	double *best, *wrongs;
	char err[300];
	json_t *bad, *rec;

	if (mpi->nnodes < 2) {
		run_skip(run, "probe", "isolate", "skipped: needs 2 nodes or more");
		return CC_EXIT_OK;
	}
	c.group_of = malloc((size_t)mpi->nnodes * sizeof(int));
	c.gnames = malloc((size_t)mpi->nnodes * sizeof(char *));
	c.bus = malloc((size_t)mpi->nnodes * sizeof(double));
	c.wrong = malloc((size_t)mpi->nnodes * sizeof(double));
	c.tries = malloc((size_t)mpi->nnodes * sizeof(int));
	second = calloc((size_t)mpi->nnodes, sizeof(int));
	active = malloc((size_t)mpi->nnodes);
	best = malloc((size_t)mpi->nnodes * sizeof(double));
	wrongs = malloc((size_t)mpi->nnodes * sizeof(double));
	if (!c.group_of || !c.gnames || !c.bus || !c.wrong || !c.tries || !second || !active || !best ||
	    !wrongs) {
		run_error(run, "probe", "isolate", "out of memory");
		rc = CC_EXIT_RUNTIME;
		goto out_free;
	}
	if (!(g = job_groups(run->opt, mpi, err, sizeof(err)))) {
		run_error(run, "probe", "isolate", err);
		rc = CC_EXIT_RUNTIME;
		goto out_free;
	}
	ngroups = g->ngroups;
	for (int x = 0; x < mpi->nnodes; x++)
		c.group_of[x] = g->group_of[x];
	for (int k2 = 0; k2 < ngroups; k2++)
		c.gnames[k2] = g->names[k2];
	if (p_expect_gbps > 0) {
		c.ref_GBps = p_expect_gbps / 8.0;
		c.ref_expected = 1;
	}
	if (iso_init(&p, mpi->nnodes, c.group_of, ngroups)) {
		run_error(run, "probe", "isolate", "cannot start the plan (out of memory)");
		rc = CC_EXIT_RUNTIME;
		goto out_free;
	}
	if (mpi->rank == 0 && !run->opt->quiet) {
		char sz[32];

		printf("# isolate: %d hosts in %d groups (%s), tests of %d hosts, %s all_reduce\n",
		       mpi->nnodes, ngroups, g->source, p.size, size_human((double)p_size, sz, sizeof(sz)));
	}
	while ((k = iso_next(&p, &r)) > 0) {
		/* which confirmations are a suspect's second: its set has a first partner */
		for (int i = 0; i < r.ntests; i++)
			second[i] = r.tests[i].kind == ISO_CONFIRM &&
				    r.tests[i].set >= 0 && iso_set_partner(&p, r.tests[i].set) >= 0;
		if (run_tries(&c, &r, active, best, wrongs)) {
			run_error(run, "probe", "isolate", c.why);
			rc = CC_EXIT_RUNTIME;
			break;
		}
		judge_round(&c, &r, &p, second);
		if (mpi->rank == 0 && !run->opt->quiet) {
			int fails = 0;

			for (int i = 0; i < r.ntests; i++)
				fails += r.tests[i].fail;
			printf("# isolate: round %d: %d test%s, %d failed\n", r.index, r.ntests,
			       r.ntests == 1 ? "" : "s", fails);
		}
		if (iso_result(&p, &r)) {
			run_error(run, "probe", "isolate", "the plan lost track (out of memory)");
			rc = CC_EXIT_RUNTIME;
			break;
		}
	}
	if (rc == CC_EXIT_OK && k < 0) {
		run_error(run, "probe", "isolate", "cannot plan the next round (out of memory)");
		rc = CC_EXIT_RUNTIME;
	}
	if (rc != CC_EXIT_OK)
		goto out_plan;
	bad = json_array();
	for (int x = 0; x < mpi->nnodes; x++) {
		if (p.state[x] != ISO_BAD && p.state[x] != ISO_CLEARED)
			continue;
		rec = diag("node", p.state[x] == ISO_BAD ? "bad" : "cleared");
		json_object_set_new(rec, "host", json_string(mpi->hosts[x]));
		json_object_set_new(rec, "group", json_string(c.gnames[c.group_of[x]]));
		json_object_set_new(rec, "evidence", json_pack("{s:s}", "summary",
			p.state[x] == ISO_BAD ?
			"every test it was in failed, down to pair tests with known-good nodes" :
			"narrowed down to it, then passed a pair test with a known-good node"));
		run_record(run, "diagnosis", rec);
		if (p.state[x] == ISO_BAD)
			json_array_append_new(bad, json_string(mpi->hosts[x]));
	}
	for (int i = 0; i < p.nlinks; i++) {
		rec = diag("link", "bad");
		json_object_set_new(rec, "a", json_string(mpi->hosts[p.links[2 * i]]));
		json_object_set_new(rec, "b", json_string(mpi->hosts[p.links[2 * i + 1]]));
		json_object_set_new(rec, "evidence", json_pack("{s:s}", "summary",
			"the pair test failed with this partner and passed with another"));
		run_record(run, "diagnosis", rec);
	}
	for (int g = 0; g < ngroups; g++) {
		json_t *hosts;
		char text[256];

		if (p.ustate[g] != ISO_UP_BAD && p.ustate[g] != ISO_UP_AMBIGUOUS)
			continue;
		uplinks++;
		hosts = json_array();
		for (int x = 0; x < mpi->nnodes; x++)
			if (c.group_of[x] == g)
				json_array_append_new(hosts, json_string(mpi->hosts[x]));
		rec = diag("uplink", p.ustate[g] == ISO_UP_BAD ? "bad" : "ambiguous");
		json_object_set_new(rec, "group", json_string(c.gnames[g]));
		json_object_set_new(rec, "hosts", hosts);
		snprintf(text, sizeof(text), p.ustate[g] == ISO_UP_BAD ?
			 "switch uplink of %s: its hosts pass together, fail with an ok group's host" :
			 "switch uplink of %s or of the group it was tested with (no third group to tell)",
			 c.gnames[g]);
		json_object_set_new(rec, "evidence", json_pack("{s:s}", "summary", text));
		run_record(run, "diagnosis", rec);
	}
	/* the fault between groups, when the uplink search could not put it on a leaf */
	if (p.cross == 1 && !uplinks) {
		rec = diag("between_groups", "bad");
		json_object_set_new(rec, "evidence", json_pack("{s:s}", "summary",
			"each group passed alone; one host of each together failed: a spine or a leaf uplink"));
		run_record(run, "diagnosis", rec);
	}
	rec = diag("summary", json_array_size(bad) || p.nlinks || p.cross == 1 ? "fail" :
			      p.unlocated ? "inconclusive" : "pass");
	json_object_set_new(rec, "nodes", json_integer(mpi->nnodes));
	json_object_set_new(rec, "groups", json_integer(ngroups));
	json_object_set_new(rec, "topology", json_string(g->source));
	json_object_set_new(rec, "test_size", json_integer(p.size));
	json_object_set_new(rec, "rounds", json_integer(p.rounds));
	json_object_set_new(rec, "tests", json_integer(p.tests));
	json_object_set_new(rec, "bad_nodes", bad);
	json_object_set_new(rec, "cleared", json_integer(p.unlocated));
	json_object_set_new(rec, "short_padding", json_integer(p.short_pad));
	json_object_set_new(rec, "ref_GBps", c.ref_GBps > 0 ? json_real(c.ref_GBps) : json_null());
	json_object_set_new(rec, "ref_method", json_string(c.ref_expected ? "expected" :
							  "median of round 1's groups"));
	json_object_set_new(rec, "tol", json_real(p_tol));
	if (mpi->rank == 0 && !run->opt->quiet)
		printf("# isolate: %s after %d rounds, %d tests: %d bad node(s)%s\n",
		       json_string_value(json_object_get(rec, "verdict")), p.rounds, p.tests,
		       iso_bad_count(&p), p.cross == 1 ? ", a fault between groups" : "");
	if (iso_bad_count(&p) || p.nlinks || p.cross == 1)
		rc = CC_EXIT_FAIL;
	run_record(run, "diagnosis", rec);
out_plan:
	iso_free(&p);
out_free:
	free(c.group_of);
	free(c.gnames);
	free(c.bus);
	free(c.wrong);
	free(c.tries);
	free(second);
	free(active);
	free(best);
	free(wrongs);
	return rc;
}

/* healthy: round 1 and the cross-group round, each one warm-up op and --iso-time */
static double isolate_estimate(const struct cc_options *o)
{
	int n = o->plan_nodes;
	double gbps = o->plan_gbps > 0 ? o->plan_gbps : 100;
	double op = 2.0 * p_size * 8.0 / (gbps * 1e9);

	if (n < 2)
		return 0;
	return 2 * (p_time + op + 0.05);
}

const struct probe probe_isolate = {
	.name = "isolate",
	.summary = "finds bad nodes by group testing: all_reduce over groups, split down to pairs",
	.params = isolate_params,
	.phase = PHASE_COLLECTIVES,
	.estimate = isolate_estimate,
	.check = check_params,
	.run = isolate_run,
	.header = isolate_header,
};
