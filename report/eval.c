/*
 * report/eval.c: feeds records to the criteria and judges them. Memory is
 * bounded by what is judged, not by the number of records: per criterion and
 * element only the worst value at each of the PLATEAU_SIZES largest sizes is
 * kept (docs/profiles.md, "how values are aggregated").
 */
#include "eval.h"
#include "consistency.h"
#include "eval_state.h"
#include "htab.h"
#include "load.h"
#include "model.h"
#include "model_ckpt.h"
#include "model_compute.h"
#include "model_step.h"
#include "profile.h"
#include "record.h"
#include "report.h"
#include "series.h"
#include "soak.h"
#include "../core/stats.h"
#include "../core/size.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *const verdicts[] = { "pass", "warn", "incomplete", "fail" };

const char *rpt_verdict_name(int v)
{
	return v >= V_PASS && v <= V_FAIL ? verdicts[v] : "?";
}

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static int streq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

int eval_init(struct eval *e, const struct profile *p)
{
	memset(e, 0, sizeof(*e));
	e->p = p;
	e->cs = calloc(p->ncrit ? p->ncrit : 1, sizeof(*e->cs));
	e->series = json_object();
	e->diagnoses = json_array();
	e->timeouts = json_array();
	e->unjudged = json_array();
	e->inventoried = json_pack("{s:{}, s:{}}", "gpu", "rdma");
	e->versions = json_object();
	e->outliers = json_array();
	e->fits = json_object();
	e->ranks_of = json_object();
	e->scaling = json_array();
	e->estimate = json_null();
	e->compute = json_object();
	if (!e->compute || !e->cs || !e->series || !e->diagnoses || !e->timeouts || !e->unjudged || !e->inventoried || !e->versions || !e->outliers ||
	    !e->fits || !e->ranks_of || !e->scaling)
		return -1;
	e->ncs = p->ncrit;
	for (int i = 0; i < p->ncrit; i++) {
		e->cs[i].c = &p->crit[i];
		e->cs[i].e = e;
	}
	return 0;
}

/* ---- what a criterion selects ---- */

/* what selects a record, read once per record */
struct sel {
	const char *kind, *name, *test, *backend, *dtype, *op;
	double nodes;
};

static void sel_read(const struct rv *r, struct sel *k)
{
	k->kind = rv_str(r, "kind");
	k->name = rv_str(r, "name");
	k->test = rv_str(r, "test");
	k->backend = rv_str(r, "backend");
	k->dtype = rv_str(r, "dtype");
	k->op = rv_str(r, "op");
	k->nodes = 0;
	rv_num(r, NULL, "nodes", &k->nodes);
}

/* a field the record and the criterion both name must agree */
static int field_ok(const char *have, const char *want)
{
	return !want || !have || !strcmp(want, have);
}

static int selects(const struct criterion *c, const struct sel *k, int strict)
{
	/* a soak's records (and its skips and errors) are of their own kind (soak.c) */
	if (c->derived == DERIVED_SOAK) {
		if (!streq(k->kind, "soak") || !streq(k->name, c->collective ? c->collective : c->probe))
			return 0;
	} else if (c->collective) {
		if (!streq(k->kind, "collective") || !streq(k->name, c->collective))
			return 0;
	} else if (!streq(k->kind, "probe") || !streq(k->name, c->probe)) {
		return 0;
	}
	if (c->min_nodes && strict && (k->nodes < c->min_nodes || (c->max_nodes && k->nodes > c->max_nodes)))
		return 0;
	/* measurements must carry what the criterion names; skips and errors may not */
	if (strict && ((c->test && !k->test) || (c->backend && !k->backend) ||
		       (c->dtype && !k->dtype) || (c->op && !k->op)))
		return 0;
	return field_ok(k->test, c->test) && field_ok(k->backend, c->backend) &&
	       field_ok(k->dtype, c->dtype) && field_ok(k->op, c->op);
}

/* 0: *v is the record's value; -1: no usable value (missing, null, a string); -2: no measurement */
static int metric_value(const struct criterion *c, const struct rv *r, double *v)
{
	double f;

	/* one rank moves nothing: its busbw is 0 by definition, no measurement (--scale, 1 node) */
	if (!strcmp(c->path[0], "busbw_GBps") && !rv_num(r, NULL, "busbw_factor", &f) && f == 0)
		return -2;
	if (c->npath == 1 ? rv_num(r, NULL, c->path[0], v) : rv_num(r, c->path[0], c->path[1], v))
		return -1;
	return isfinite(*v) ? 0 : -1;
}

static double spread_pct(const struct criterion *c, const struct rv *r)
{
	double cv;

	if (!c->spread_of || rv_num(r, c->spread_of, "cv", &cv) || !isfinite(cv))
		return 0;
	return 100 * fabs(cv);
}

/* a bandwidth judged by "more is better": the metrics whose plateau and rate mean something */
static int is_bandwidth(const struct criterion *c)
{
	return c->ge && !c->derived && (!strcmp(c->unit, "GB/s") || !strcmp(c->unit, "Gb/s"));
}

/* the element's name for the criterion's scope; NULL when the record does not fit */
static const char *element_of(const struct criterion *c, const struct rv *r, const char **host,
			      char *buf, size_t len)
{
	const char *scope = rv_str(r, "scope"), *el = rv_str(r, "element");

	*host = rv_str(r, "host");
	/* netpair records written before probes carried scope and element */
	if (!el && streq(c->probe, "netpair") && rv_str(r, "src") && rv_str(r, "dst")) {
		const char *a = rv_str(r, "src"), *b = rv_str(r, "dst");

		if (strcmp(a, b) > 0) {
			const char *t = a;

			a = b;
			b = t;
		}
		snprintf(buf, len, "%s-%s", a, b);
		el = buf;
		scope = "link";
		*host = rv_str(r, "src");
	}
	/* a record of a whole node or the whole job (storage) is an element of that scope only */
	if (scope && (!strcmp(scope, "node") || !strcmp(scope, "cluster")) &&
	    strcmp(scope, rpt_scope_name(c->scope)))
		return NULL;
	switch (c->scope) {
	case SC_CLUSTER:
		*host = NULL;
		return "cluster";
	case SC_NODE:
		return *host;
	default:
		if (scope && strcmp(scope, rpt_scope_name(c->scope)))
			return NULL;
		return el;
	}
}

/* which way a pair was measured: src -> dst (or host -> peer) in name order or not */
static int direction(const struct rv *r)
{
	const char *a = rv_str(r, "src"), *b = rv_str(r, "dst");

	if (!a || !b) {
		a = rv_str(r, "host");
		b = rv_str(r, "peer");
	}
	return a && b && strcmp(a, b) > 0;
}

static int measure(struct crit_state *s, const struct rv *r)
{
	const struct criterion *c = s->c;
	const char *name, *host;
	char buf[512];
	struct pt p = { 0 };
	struct elem *el;
	double bytes = 0, rate = 0, limit;
	int mv;

	rv_num(r, NULL, "bytes", &bytes);
	p.bytes = bytes >= 0 && bytes < 9e18 ? (long long)bytes : 0;
	if (c->size >= 0 && p.bytes != c->size) {
		s->other_size++;
		return 0;
	}
	if (c->size == SIZE_ANY)
		p.bytes = 0;
	p.dir = c->repeat_best ? direction(r) : 0;
	name = element_of(c, r, &host, buf, sizeof(buf));
	if (!name) {
		s->scope_mismatch++;
		return 0;
	}
	mv = metric_value(c, r, &p.value);
	if (mv == -2) {
		s->nometric++;
		return 0;
	}
	/* the test transport's figures are memory copies, never evidence (docs/profiles.md) */
	if (streq(rv_str(r, "transport"), "fake")) {
		s->fake++;
		return 0;
	}
	el = eval_elem(s, name, host);
	if (!el)
		return -1;
	/* an element measured without the metric is missing evidence, never left out */
	if (mv) {
		/* the probe may say why it could not know the value: "unknown": {METRIC: why} */
		const char *why = rv_str_in(r, "unknown", c->metric);

		if (why && !s->unknown_why)
			s->unknown_why = strdup(why);
		s->nometric++;
		el->nometric++;
		return 0;
	}
	s->records++;
	el->records++;
	if (!rv_num(r, NULL, "rate_GBps", &rate) && rate > 0 && isfinite(rate))
		p.rate = rate * (streq(c->unit, "Gb/s") ? 8 : 1);
	/* node_best: the rate is the host's best element, known only in judge() */
	if (c->relative > 0 && !c->node_best && !p.rate) {
		el->norate++;
		return 0;
	}
	/*
	 * more than the link can carry is a fault of the measurement, not a fast
	 * link: the record's rate, else the profile's NIC rate for a link (all
	 * its NICs) or a NIC
	 */
	limit = p.rate;
	if (!limit && is_bandwidth(c) && s->e->p->nic_rate_gbps > 0 &&
	    (c->scope == SC_LINK || c->scope == SC_NIC || c->scope == SC_RAIL_PAIR))
		limit = s->e->p->nic_rate_gbps / (streq(c->unit, "GB/s") ? 8 : 1) *
			(c->scope == SC_LINK && s->e->p->nics_per_node > 1 ? s->e->p->nics_per_node : 1);
	if (limit && is_bandwidth(c) && p.value > (1 + RATE_MARGIN) * limit &&
	    p.value - (1 + RATE_MARGIN) * limit > el->imp_value - el->imp_limit) {
		el->imp_value = p.value;
		el->imp_limit = (1 + RATE_MARGIN) * limit;
	}
	p.judged = c->relative > 0 && !c->node_best ? p.value / p.rate : p.value;
	p.spread = spread_pct(c, r);
	return eval_add_point(c, el, &p);
}

/* ---- what is kept beside the criteria: charts, versions, diagnoses ---- */

static int note_series(struct eval *e, const struct rv *r)
{
	const char *name = rv_str(r, "name"), *be = rv_str(r, "backend");
	const char *dt = rv_str(r, "dtype"), *op = rv_str(r, "op");
	double bw, bytes, nodes = 0, cv = 0, ranks = 0;
	int scale = rv_true(r, "scale");
	char key[256];
	json_t *s;

	if (!name || rv_num(r, NULL, "busbw_GBps", &bw) || rv_num(r, NULL, "bytes", &bytes) ||
	    !(bytes >= 0 && bytes < 9e18))
		return 0;
	rv_num(r, NULL, "nodes", &nodes);
	/* --scale records stay apart from a plain run's at the same node count */
	series_key_of(key, sizeof(key), name, be, dt, op, nodes, scale);
	s = json_object_get(e->series, key);
	if (!s) {
		s = json_pack("{s:s, s:s?, s:s?, s:s?, s:I, s:[]}", "name", name, "backend", be,
			      "dtype", dt, "op", op, "nodes", (json_int_t)nodes, "points");
		if (!s || json_object_set_new(e->series, key, s))
			return -1;
		if (scale)
			json_object_set_new(s, "scale", json_true());
		if (!rv_num(r, NULL, "ranks", &ranks) && ranks >= 1 && ranks < 1e9)
			json_object_set_new(e->ranks_of, key, json_integer((json_int_t)ranks));
	}
	/* the third number, the spread in %, goes to the baseline comparison */
	if (rv_num(r, "time_us", "cv", &cv) || !isfinite(cv))
		cv = 0;
	return json_array_append_new(json_object_get(s, "points"),
				     json_pack("[I, f, f]", (json_int_t)bytes, bw, 100 * fabs(cv)));
}

/* the worst pair bandwidth at the largest size, for the estimate's pipeline sends (model.c) */
static void note_pair(struct eval *e, const struct rv *r, const struct sel *k)
{
	int i = streq(k->name, "ib") && streq(k->test, "write_bw") ? 0 :
		streq(k->name, "netpair") && streq(k->test, "bw_uni") ? 1 : -1;
	double bytes = 0, gb, pass = 1;

	rv_num(r, NULL, "bytes", &bytes);
	rv_num(r, NULL, "pass", &pass);
	if (i < 0 || rv_num(r, NULL, "bw_Gbps", &gb) || !(gb > 0) || !isfinite(gb) || pass != 1 ||
	    streq(rv_str(r, "transport"), "fake") || bytes < e->pair[i].bytes)
		return;
	if (bytes > e->pair[i].bytes)
		e->pair[i] = (struct pair_bw){ bytes, gb, 0 };
	e->pair[i].Gbps = fmin(e->pair[i].Gbps, gb);
	e->pair[i].n++;
}

static int note_netpair(struct eval *e, const struct rv *r)
{
	const char *src = rv_str(r, "src"), *dst = rv_str(r, "dst");
	double gb, pass = 1;
	int a, b;

	if (e->nin)
		e->in[e->nin - 1].netpair = 1;
	rv_num(r, NULL, "pass", &pass);
	if (!streq(rv_str(r, "test"), "bw_uni") || !src || !dst || rv_num(r, NULL, "bw_Gbps", &gb) || pass != 1)
		return 0;
	a = eval_host(e, src);
	b = eval_host(e, dst);
	if (a < 0 || b < 0)
		return -1;
	if (e->nhosts > e->npn) {
		int n = e->npn ? e->npn : 8;
		float *m;

		while (n < e->nhosts)
			n *= 2;
		m = malloc((size_t)n * n * sizeof(*m));
		if (!m)
			return -1;
		for (size_t i = 0; i < (size_t)n * n; i++)
			m[i] = NAN;
		for (int i = 0; i < e->npn; i++)
			memcpy(m + (size_t)i * n, e->np + (size_t)i * e->npn, e->npn * sizeof(*m));
		free(e->np);
		e->np = m;
		e->npn = n;
	}
	e->np[(size_t)a * e->npn + b] = (float)gb;
	return 0;
}

static int note_header(struct eval *e, const json_t *rec)
{
	const json_t *hosts = json_object_get(rec, "hosts"), *h;
	const char *mpi = str(rec, "mpi_library"), *ver = str(rec, "version"), *k;
	json_t *v;
	size_t i;

	/* the most ranks of one launch: three phases of 4 ranks are 4 ranks, not 12 */
	if (json_integer_value(json_object_get(rec, "world_size")) > e->ranks)
		e->ranks = json_integer_value(json_object_get(rec, "world_size"));
	json_array_foreach(hosts, i, h) {
		const char *name = str(h, "name");

		if (!name)
			continue;
		if (eval_host(e, name) < 0)
			return -1;
		/* the header is rank 0's: its versions stand for every host of the run */
		if (mpi)
			consistency_note(e->versions, &e->vseen, "mpi_library", mpi, name);
		/* an imported run's tool (docs/import.md) is compared under its own name */
		if (ver)
			consistency_note(e->versions, &e->vseen,
					 json_object_get(rec, "imported") ? str(rec, "tool") ?: "tool" : "ccprobe",
					 ver, name);
		/*
		 * The GPU libraries rank 0 loaded (a collectives-only run has no
		 * inventory): its host's only, as other hosts may load others.
		 */
		json_object_foreach(i ? NULL : json_object_get(rec, "versions"), k, v)
			if (json_is_string(v))
				consistency_note(e->versions, &e->vseen, k, json_string_value(v), name);
	}
	return 0;
}

/* the host's rails at the profile's NIC rate, for the hardware check (summary.c) */
static void note_nics(struct eval *e, const json_t *rec, const char *host)
{
	const json_t *d, *p;
	size_t i, k;
	int n = 0;
	char v[16];

	json_array_foreach(json_object_get(rec, "devices"), i, d)
		json_array_foreach(json_object_get(d, "ports"), k, p)
			if (json_is_integer(json_object_get(p, "rail")) &&
			    json_number_value(json_object_get(p, "rate_Gbps")) >= e->p->nic_rate_gbps)
				n++;
	snprintf(v, sizeof(v), "%d", n);
	consistency_note(e->versions, &e->vseen, "nics_at_rate", v, host);
}

static void note_inventory(struct eval *e, const json_t *rec)
{
	const char *host = str(rec, "host"), *k;
	json_t *v;

	/* a test double's devices (fixture tree, CUDA test double) are no host's */
	if (!host || streq(str(rec, "transport"), "fake"))
		return;
	if (streq(str(rec, "kind"), "gpu") || streq(str(rec, "kind"), "rdma"))
		json_object_set_new(json_object_get(e->inventoried, str(rec, "kind")), host, json_true());
	/* what the GPU inventory found is checked against the profile (summary.c) */
	if (streq(str(rec, "kind"), "gpu") && json_is_array(json_object_get(rec, "gpus"))) {
		const json_t *gpus = json_object_get(rec, "gpus"), *g;
		char n[32];
		size_t i;

		json_array_foreach(gpus, i, g) {
			if (str(g, "name"))
				consistency_note(e->versions, &e->vseen, "gpu_model", str(g, "name"), host);
			if (str(g, "element") && json_is_number(json_object_get(g, "memory_bytes")))
				compute_note_memory(e, str(g, "element"), host,
						    json_number_value(json_object_get(g, "memory_bytes")), NAN);
		}
		snprintf(n, sizeof(n), "%zu", json_array_size(gpus));
		/* an imported log lists the GPUs its run used, not all the host has (docs/import.md) */
		if (!json_is_true(json_object_get(rec, "gpus_used_only")))
			consistency_note(e->versions, &e->vseen, "gpu_count", n, host);
	}
	if (streq(str(rec, "kind"), "rdma")) {
		/* no device at all (no driver, no kernel support): the ib skip says so */
		if (json_array_size(json_object_get(rec, "devices")))
			note_nics(e, rec, host);
	}
	json_object_foreach(json_object_get(rec, "versions"), k, v)
		if (json_is_string(v))
			consistency_note(e->versions, &e->vseen, k, json_string_value(v), host);
}

/*
 * A diagnosis that names every node of its run bad (3 or more) is a measurement
 * that failed, not a diagnosis (docs/netpair.md, "Noise"): files of ccprobe
 * before 2026-12-04 could say so on a busy machine. Its node entries, noted
 * before its summary, become inconclusive, so none of them is drained.
 */
static int all_nodes_bad(struct eval *e, const json_t *rec)
{
	const json_t *bad = json_object_get(rec, "bad_nodes"), *nodes = json_object_get(rec, "nodes"), *d;
	size_t i;

	if (!json_is_array(bad) || !json_is_number(nodes) || json_number_value(nodes) < 3 ||
	    (double)json_array_size(bad) != json_number_value(nodes))
		return 0;
	json_array_foreach(e->diagnoses, i, d)
		if (streq(str(d, "subject"), "node") && streq(str(d, "verdict"), "bad") &&
		    streq(str(d, "probe"), str(rec, "name"))) {
			json_object_set_new((json_t *)d, "verdict", json_string("inconclusive"));
			json_object_set_new((json_t *)d, "evidence", json_string(
				"every node of the run was diagnosed bad: a measurement that failed, not a diagnosis"));
		}
	return 0;
}

static int note_diagnosis(struct eval *e, const json_t *rec)
{
	const char *subj = str(rec, "subject"), *v = str(rec, "verdict");
	const char *why = str(json_object_get(rec, "evidence"), "summary");
	char name[512], by[256] = "";

	if (!subj || !v)
		return 0;
	if (!strcmp(subj, "summary"))
		return all_nodes_bad(e, rec);
	/* what names a culprit (or says it cannot); explained links and transients add nothing */
	if (!strcmp(subj, "node") && (!strcmp(v, "bad") || !strcmp(v, "suspect") || !strcmp(v, "ambiguous") ||
				      !strcmp(v, "inconclusive"))) {
		snprintf(name, sizeof(name), "%s", str(rec, "host") ?: "?");
	} else if (!strcmp(subj, "link") && (!strcmp(v, "bad") || !strcmp(v, "ambiguous") ||
					     !strcmp(v, "inconclusive"))) {
		const json_t *r = json_object_get(rec, "ratio"), *rt = json_object_get(rec, "retest");

		snprintf(name, sizeof(name), "%s-%s", str(rec, "a") ?: "?", str(rec, "b") ?: "?");
		/* the figures it was judged by, and why it is not blamed (netpair's inconclusive) */
		if (json_is_number(json_object_get(r, "bw")))
			snprintf(by, sizeof(by), "one-way bandwidth %.2f of the reference",
				 json_number_value(json_object_get(r, "bw")));
		if (json_is_number(json_object_get(rt, "bw")) && strlen(by) < sizeof(by) - 64)
			snprintf(by + strlen(by), sizeof(by) - strlen(by), ", best retest %.2f",
				 json_number_value(json_object_get(rt, "bw")));
		if (str(rec, "reason") && strlen(by) < sizeof(by) - 2)
			snprintf(by + strlen(by), sizeof(by) - strlen(by), ": %s", str(rec, "reason"));
		why = by[0] ? by : NULL;
	} else if (!strcmp(subj, "uplink") && (!strcmp(v, "bad") || !strcmp(v, "ambiguous"))) {
		/* isolate: "switch uplink leaf2 (node8, node9, ...)": its nodes are not drained */
		const json_t *hs = json_object_get(rec, "hosts"), *h;
		size_t i, at;

		at = (size_t)snprintf(name, sizeof(name), "switch uplink %s (", str(rec, "group") ?: "?");
		json_array_foreach(hs, i, h)
			if (at < sizeof(name) - 2)
				at += (size_t)snprintf(name + at, sizeof(name) - at, "%s%s", i ? ", " : "",
						       json_string_value(h) ?: "?");
		if (at < sizeof(name) - 1)
			snprintf(name + at, sizeof(name) - at, ")");
	} else if (!strcmp(subj, "between_groups") && !strcmp(v, "bad")) {
		/* isolate: each group passed alone, their representatives together failed */
		snprintf(name, sizeof(name), "between groups (a spine or a leaf uplink)");
	} else {
		return 0;
	}
	return json_array_append_new(e->diagnoses, json_pack("{s:s?, s:s, s:s, s:s, s:s?}",
		"probe", str(rec, "name"), "subject", subj, "element", name, "verdict", v,
		"evidence", why));
}

/* "NAME (never started: rank R on HOST, ...)": the likely culprits of a hang */
static int note_timeout(struct eval *e, const json_t *rec)
{
	const json_t *ns = json_object_get(rec, "not_started"), *r;
	char line[512];
	size_t i, at;

	at = snprintf(line, sizeof(line), "%s", str(rec, "name") ?: "a measurement");
	json_array_foreach(ns, i, r) {
		if (at >= sizeof(line) - 1)
			break;
		at += snprintf(line + at, sizeof(line) - at, "%s rank %lld on %s", i ? "," : " (never started:",
			       (long long)json_integer_value(json_object_get(r, "rank")),
			       str(r, "host") ?: "?");
	}
	if (json_array_size(ns) && at < sizeof(line) - 1)
		snprintf(line + at, sizeof(line) - at, ")");
	return json_array_append_new(e->timeouts, json_string(line));
}

/* a failure no criterion judged, listed (at most LISTED_UNJUDGED, all counted); 0 or -1 */
#define LISTED_UNJUDGED 100
static int unjudged(struct eval *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int unjudged(struct eval *e, const char *fmt, ...)
{
	va_list ap;
	char *line;
	int n;

	e->nunjudged++;
	if (json_array_size(e->unjudged) >= LISTED_UNJUDGED)
		return 0;
	va_start(ap, fmt);
	n = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	n = json_array_append_new(e->unjudged, json_string(line));
	free(line);
	return n;
}

int eval_measurement(struct eval *e, const struct rv *r, char *err, size_t len)
{
	struct sel k;
	int rc = 0, judged_wrong = 0;
	double wrong, bytes = 0;

	sel_read(r, &k);
	rv_num(r, NULL, "bytes", &bytes);
	if (streq(k.kind, "collective"))
		rc = note_series(e, r);
	else if (streq(k.kind, "fit"))
		rc = model_note_fit(e, r);
	else if (streq(k.kind, "probe") && streq(k.name, "netpair"))
		rc = note_netpair(e, r);
	else if (streq(k.kind, "probe") && (streq(k.name, "gemm") || streq(k.name, "gpuhealth")))
		rc = compute_note(e, r);
	else if (streq(k.kind, "probe") && streq(k.name, "storage"))
		rc = ckpt_note(e, r);
	else if (streq(k.kind, "soak"))
		rc = soak_note(e, r);
	else if (streq(k.kind, "probe") && (streq(k.name, "trainstep") || streq(k.name, "torch_step")))
		rc = step_note(e, r);
	if (streq(k.kind, "probe"))
		note_pair(e, r, &k);
	for (int i = 0; !rc && i < e->ncs; i++)
		if (!e->cs[i].c->derived && selects(e->cs[i].c, &k, 1)) {
			rc = measure(&e->cs[i], r);
			judged_wrong |= !strcmp(e->cs[i].c->path[0], "wrong");
		}
	/* wrong results that no criterion judged are never a silent pass */
	if (!rc && !rv_num(r, NULL, "wrong", &wrong) && wrong > 0 && !judged_wrong &&
	    !streq(rv_str(r, "transport"), "fake")) {
		char sz[32];

		rc = unjudged(e, "%s %s%s%s at %s: %.0f wrong element(s)", k.kind ?: "?", k.name ?: "?",
			      k.test || k.backend ? " " : "", k.test ?: k.backend ?: "", size_human(bytes, sz, sizeof(sz)),
			      wrong);
	}
	if (rc)
		snprintf(err, len, "out of memory");
	return rc ? -1 : 0;
}

int eval_record(struct eval *e, json_t *rec, long line, char *err, size_t len)
{
	const char *type = str(rec, "type");
	struct rv *r;
	int rc = 0;

	(void)line;
	if (streq(type, "run")) {
		rc = note_header(e, rec);
	} else if (streq(type, "inventory")) {
		note_inventory(e, rec);
	} else if (streq(type, "diagnosis")) {
		rc = note_diagnosis(e, rec);
	} else if (streq(type, "timeout")) {
		rc = note_timeout(e, rec);
	} else if (streq(type, "skip") || streq(type, "error")) {
		int skip = streq(type, "skip");
		const char *why = str(rec, skip ? "reason" : "message");
		int judged = 0;
		struct sel k;

		r = malloc(sizeof(*r));
		if (!r) {
			snprintf(err, len, "out of memory");
			return -1;
		}
		rv_from_json(rec, r);
		sel_read(r, &k);
		/* a training step that did not run: its reason goes beside the estimate */
		if (streq(k.kind, "probe") && (streq(k.name, "trainstep") || streq(k.name, "torch_step")) &&
		    step_note_missing(e, k.name, skip, why ?: type)) {
			free(r);
			snprintf(err, len, "out of memory");
			return -1;
		}
		for (int i = 0; i < e->ncs; i++) {
			struct crit_state *s = &e->cs[i];

			if (!selects(s->c, &k, 0))
				continue;
			judged = 1;
			/* a test double's failure is no more evidence than its measurements */
			if (streq(str(rec, "transport"), "fake")) {
				s->fake++;
				continue;
			}
			if (skip ? s->skips++ : s->errors++)
				continue;
			if (skip)
				s->skip_reason = strdup(why ?: "skipped");
			else
				s->error_msg = strdup(why ?: "error");
		}
		free(r);
		if (!skip && !judged && !streq(str(rec, "transport"), "fake"))
			rc = unjudged(e, "error in %s %s%s%s: %s", k.kind ?: "?", k.name ?: "?", k.test ? " " : "",
				      k.test ?: "", why ?: "error");
	} else if (streq(type, "end")) {
		json_int_t nf = json_integer_value(json_object_get(rec, "failures"));
		json_int_t ec = json_integer_value(json_object_get(rec, "exit_code"));

		/* the run's own count of what went wrong: judged by no criterion, never hidden */
		if (nf > 0)
			rc = unjudged(e, "%s: the run counted %lld failure(s), exit code %lld",
				      e->nin ? e->in[e->nin - 1].path : "?", (long long)nf, (long long)ec);
	} else {
		/* a measurement (or another type a later schema adds) */
		r = malloc(sizeof(*r));
		if (!r)
			rc = -1;
		else if (!rv_from_json(rec, r))
			rc = eval_measurement(e, r, err, len);
		free(r);
	}
	if (rc)
		snprintf(err, len, "out of memory");
	return rc ? -1 : 0;
}

/* ---- reading all inputs ---- */

struct feed {
	struct eval *e;
	const char *path;
	char *err;
	size_t len;
};

static int feed(json_t *rec, long line, void *ctx)
{
	struct feed *f = ctx;
	char e[200];

	if (!eval_record(f->e, rec, line, e, sizeof(e)))
		return 0;
	snprintf(f->err, f->len, "%s:%ld: %s", f->path, line, e);
	return -1;
}

static int feed_measurement(const struct rv *r, long line, void *ctx)
{
	struct feed *f = ctx;
	char e[200];

	if (!eval_measurement(f->e, r, e, sizeof(e)))
		return 0;
	snprintf(f->err, f->len, "%s:%ld: %s", f->path, line, e);
	return -1;
}

/* a run id of ccdiag's phases that were not run: no run, shared by all of them (docs/ccdiag.md) */
static int no_run_id(const char *id)
{
	if (!id || !*id)
		return 1;
	for (; *id; id++)
		if (*id != '0')
			return 0;
	return 1;
}

/*
 * The input just read is not one read before: the same bytes, or the same
 * run under two names, would count its ranks and records twice. 0, or -1
 * with a message naming both.
 */
static int twice(struct eval *e, char *err, size_t len)
{
	const struct input_info *in = &e->in[e->nin - 1];

	for (int i = 0; i < e->nin - 1; i++) {
		const struct input_info *o = &e->in[i];

		if (*in->sha256 && !strcmp(in->sha256, o->sha256)) {
			snprintf(err, len, "%s: the same file as %s (SHA-256 %.16s...): give each input once",
				 in->path, o->path, in->sha256);
			return -1;
		}
		if (!no_run_id(in->run_id) && streq(in->run_id, o->run_id)) {
			snprintf(err, len, "%s: run id %s is also %s's: the same run given twice", in->path,
				 in->run_id, o->path);
			return -1;
		}
	}
	return 0;
}

/* reads path, or buf when it is non-NULL (named path), into e->in[e->nin], allocated */
static int read_input(struct eval *e, const char *path, const char *buf, size_t size,
		      char *err, size_t len)
{
	struct feed f = { e, path, err, len };
	struct results_sink sink = { feed, feed_measurement, &f };
	struct input_info *in = &e->in[e->nin++];

	return buf ? results_read_mem(buf, size, path, in, &sink, err, len) :
		     results_read(path, in, &sink, err, len);
}

int eval_read_inputs(struct eval *e, char **paths, int npaths, char *err, size_t len)
{
	e->in = calloc(npaths ? npaths : 1, sizeof(*e->in));
	if (!e->in) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	for (int i = 0; i < npaths; i++)
		if (read_input(e, paths[i], NULL, 0, err, len) || twice(e, err, len))
			return -1;
	return 0;
}

int eval_read_mem(struct eval *e, const char *buf, size_t size, const char *name, char *err,
		  size_t len)
{
	struct input_info *in = realloc(e->in, (e->nin + 1) * sizeof(*in));

	if (!in) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	e->in = in;
	memset(&in[e->nin], 0, sizeof(*in));
	return read_input(e, name, buf, size, err, len);
}

/* ---- judging ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int cmp_judged_ge(const void *a, const void *b)
{
	double x = ((const struct pt *)a)->judged, y = ((const struct pt *)b)->judged;

	return (x > y) - (x < y);
}

static int cmp_judged_le(const void *a, const void *b)
{
	return cmp_judged_ge(b, a);
}

static int cmp_bytes_desc(const void *a, const void *b)
{
	long long x = ((const struct pt *)a)->bytes, y = ((const struct pt *)b)->bytes;

	return (x < y) - (x > y);
}

/*
 * The worst direction at each size the element kept, in size order (the
 * largest PLATEAU_SIZES at the plateau); the count. v holds 2 * PLATEAU_SIZES.
 */
static int elem_sizes(const struct criterion *c, const struct elem *el, struct pt *v)
{
	int n = 0;

	for (int i = 0; i < el->n; i++) {
		int k;

		for (k = 0; k < n && v[k].bytes != el->pt[i].bytes; k++)
			;
		if (k == n)
			v[n++] = el->pt[i];
		else if (eval_worse(c, el->pt[i].judged, v[k].judged))
			v[k] = el->pt[i];
	}
	qsort(v, n, sizeof(*v), cmp_bytes_desc);
	if (n > PLATEAU_SIZES)
		n = PLATEAU_SIZES;
	/* smallest first */
	for (int i = 0; i < n / 2; i++) {
		struct pt t = v[i];

		v[i] = v[n - 1 - i];
		v[n - 1 - i] = t;
	}
	return n;
}

/*
 * The value judged: at a fixed size (or any), the worst record; at the
 * plateau, the median of the worst values at the largest sizes (with two
 * sizes, the worse one).
 */
void elem_value(const struct criterion *c, const struct elem *el, struct pt *out)
{
	struct pt v[2 * PLATEAU_SIZES];
	int n = elem_sizes(c, el, v);

	if (n <= 1) {
		*out = v[0];
		return;
	}
	/* the plateau: the largest PLATEAU_SIZES sizes, their median (worse of the middle two) */
	qsort(v, n, sizeof(*v), c->ge ? cmp_judged_ge : cmp_judged_le);
	*out = v[(n - 1) / 2];
}

/*
 * The shape of a plateau (docs/profiles.md): "rising" when the values climb
 * at every size and the largest is more than PLATEAU_RISE above the value
 * judged (the curve never flattened: the bound judged a slope), "collapse"
 * when the largest size reads less than PLATEAU_DROP of it (the median hid a
 * fault at the size that matters most). NULL when it looks like a plateau.
 */
#define PLATEAU_RISE 0.10
#define PLATEAU_DROP 0.5
static const char *plateau_shape(const struct criterion *c, const struct elem *el, const struct pt *judged)
{
	struct pt v[2 * PLATEAU_SIZES];
	int n, up = 1;

	if (c->size != SIZE_PLATEAU || !is_bandwidth(c))
		return NULL;
	n = elem_sizes(c, el, v);
	if (n < 2 || !(judged->judged > 0))
		return NULL;
	for (int i = 1; i < n; i++)
		up &= v[i].judged >= v[i - 1].judged;
	if (up && v[n - 1].judged > (1 + PLATEAU_RISE) * judged->judged)
		return "rising";
	if (v[n - 1].judged < PLATEAU_DROP * judged->judged)
		return "collapse";
	return NULL;
}

json_t *elem_plateau_json(const struct criterion *c, const struct elem *el)
{
	struct pt v[2 * PLATEAU_SIZES];
	int n = elem_sizes(c, el, v);
	json_t *a = json_array();

	for (int i = 0; i < n; i++)
		json_array_append_new(a, json_pack("[I, f]", (json_int_t)v[i].bytes, v[i].value));
	return a;
}

static double elem_bound(const struct criterion *c, const struct pt *p)
{
	return c->relative > 0 ? c->relative * p->rate : c->bound;
}

static int cmp_shortfall(const void *a, const void *b)
{
	const json_t *x = json_object_get(*(json_t *const *)a, "shortfall_pct");
	const json_t *y = json_object_get(*(json_t *const *)b, "shortfall_pct");
	double dx = json_is_number(x) ? json_number_value(x) : INFINITY;
	double dy = json_is_number(y) ? json_number_value(y) : INFINITY;

	return (dx < dy) - (dx > dy);
}

static void sort_array(json_t *a, int (*cmp)(const void *, const void *))
{
	size_t n = json_array_size(a);
	json_t **v = malloc((n ? n : 1) * sizeof(*v));

	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(a, i));
	qsort(v, n, sizeof(*v), cmp);
	json_array_clear(a);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, v[i]);
	free(v);
}

/*
 * Peers are judged against a reference a slow minority, or half, cannot
 * drag: the upper quartile of the values judged (the lower one where less is
 * better), as gpu-fryer and ClusterKit judge against the best (the best alone
 * is one noisy, or implausible, record). An element worse than the reference
 * by more than the tolerance is an outlier.
 */
#define OUTLIER_QUANTILE 0.75
static int find_outliers(struct eval *e, struct crit_state *s, const struct pt *vals, const int *judged)
{
	const struct criterion *c = s->c;
	double *v, ref, tol = c->outlier_tol;
	int n = 0, found = 0;

	if (!(tol > 0) || s->nel < 3)
		return 0;
	v = malloc(s->nel * sizeof(*v));
	if (!v)
		return 0;
	for (int i = 0; i < s->nel; i++)
		if (judged[i])
			v[n++] = vals[i].judged;
	if (n < 3) {
		free(v);
		return 0;
	}
	qsort(v, n, sizeof(*v), cmp_double);
	ref = stats_quantile_sorted(v, n, c->ge ? OUTLIER_QUANTILE : 1 - OUTLIER_QUANTILE);
	free(v);
	for (int i = 0; i < s->nel; i++) {
		const struct pt *p = &vals[i];
		double off = c->ge ? (ref - p->judged) / ref : (p->judged - ref) / ref;
		double peer = c->relative > 0 ? ref * p->rate : ref;

		/* elements that fail their bound are named there already */
		if (!judged[i] || ref <= 0 || off <= tol ||
		    eval_worse(c, p->judged, c->relative > 0 ? c->relative : c->bound))
			continue;
		/* named up to VALUES_MAX per criterion, all counted */
		if (found++ >= VALUES_MAX)
			continue;
		json_array_append_new(e->outliers, json_pack("{s:s, s:s, s:s, s:f, s:f, s:s, s:f, s:f, s:s}",
			"criterion", c->id, "element", s->el[i].name, "host", s->el[i].host,
			"value", p->value, "peer_reference", peer, "reference",
			c->ge ? "upper quartile of the peers" : "lower quartile of the peers",
			"below_pct", 100 * off, "tolerance_pct", 100 * tol, "unit", c->unit));
	}
	return found;
}

/* hosts with fewer GPUs or NICs than the profile expects */
static char *count_missing(struct eval *e, const struct crit_state *s)
{
	int want = s->c->scope == SC_GPU ? e->p->gpus_per_node :
		   s->c->scope == SC_NIC ? e->p->nics_per_node : 0;
	int *have, short_hosts = 0;
	char *msg = NULL;

	if (!want || !s->nel || !e->nhosts)
		return NULL;
	have = calloc(e->nhosts, sizeof(*have));
	if (!have)
		return NULL;
	for (int i = 0; i < s->nel; i++) {
		int h = htab_get(&e->hosts, s->el[i].host);

		if (h >= 0)
			have[h]++;
	}
	for (int h = 0; h < e->nhosts; h++) {
		/* HOST#RANK: a rank playing a node in a one-host ib run (docs/rdma.md), no host */
		if (have[h] >= want || strchr(e->host_names[h], '#'))
			continue;
		if (!short_hosts++ && asprintf(&msg, "%s: %d of %d %s measured", e->host_names[h], have[h],
					       want, s->c->scope == SC_GPU ? "GPUs" : "NICs") < 0)
			msg = NULL;
	}
	if (short_hosts > 1 && msg) {
		char *m2;

		if (asprintf(&m2, "%s (and %d more hosts short)", msg, short_hosts - 1) >= 0) {
			free(msg);
			msg = m2;
		}
	}
	free(have);
	return msg;
}

#define NAMES_LISTED 3           /* elements named in a reason; the rest counted */

/*
 * Every link of the hosts of each netpair run's header (N(N-1)/2) is due:
 * "3 of 6 links not measured: node0-node3, ..." (malloc'd), NULL when all
 * were. A link missing is never a pass on the rest (docs/profiles.md).
 */
static char *links_missing(const struct eval *e, const struct crit_state *s)
{
	struct htab due = { 0 };
	char *names = NULL, *t, name[520], rev[520];
	long ndue = 0, nmiss = 0;

	if (s->c->scope != SC_LINK || !streq(s->c->probe, "netpair") || s->c->derived)
		return NULL;
	for (int k = 0; k < e->nin; k++) {
		const json_t *hosts = json_object_get(e->in[k].header, "hosts");
		size_t n = json_array_size(hosts);

		if (!e->in[k].netpair)
			continue;
		for (size_t i = 0; i < n; i++)
			for (size_t j = i + 1; j < n; j++) {
				const char *a = str(json_array_get(hosts, i), "name");
				const char *b = str(json_array_get(hosts, j), "name");

				if (!a || !b)
					continue;
				snprintf(name, sizeof(name), "%s-%s", a, b);
				snprintf(rev, sizeof(rev), "%s-%s", b, a);
				if (htab_get(&due, name) >= 0 || htab_get(&due, rev) >= 0)
					continue;
				if (htab_put(&due, name, 1))
					goto out;
				ndue++;
				if (htab_get(&s->idx, name) >= 0 || htab_get(&s->idx, rev) >= 0)
					continue;
				if (++nmiss > NAMES_LISTED)
					continue;
				if (asprintf(&t, "%s%s%s", names ?: "", names ? ", " : "", name) < 0)
					goto out;
				free(names);
				names = t;
			}
	}
out:
	htab_free(&due);
	if (!nmiss) {
		free(names);
		return NULL;
	}
	if (asprintf(&t, "%ld of %ld links not measured: %s%s%.0ld%s", nmiss, ndue, names ?: "",
		     nmiss > NAMES_LISTED ? " (and " : "", nmiss > NAMES_LISTED ? nmiss - NAMES_LISTED : 0,
		     nmiss > NAMES_LISTED ? " more)" : "") < 0)
		t = NULL;
	free(names);
	return t;
}

static void set_reason(struct crit_state *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_reason(struct crit_state *s, const char *fmt, ...)
{
	va_list ap;
	char *r;

	va_start(ap, fmt);
	if (vasprintf(&r, fmt, ap) < 0)
		r = NULL;
	va_end(ap);
	free(s->reason);
	s->reason = r;
}

struct worst_first {
	const struct criterion *c;
	const struct pt *vals;
};

static int cmp_worst_first(const void *a, const void *b, void *arg)
{
	const struct worst_first *w = arg;
	double x = w->vals[*(const int *)a].judged, y = w->vals[*(const int *)b].judged;

	return eval_worse(w->c, x, y) ? -1 : eval_worse(w->c, y, x) ? 1 : 0;
}

static void add_values(struct crit_state *s, const struct pt *vals, const int *judged, int njudged)
{
	int *idx = malloc((s->nel ? s->nel : 1) * sizeof(*idx)), n = 0;

	if (!idx)
		return;
	for (int i = 0; i < s->nel; i++)
		if (judged[i])
			idx[n++] = i;
	if (n > VALUES_MAX) {
		struct worst_first w = { s->c, vals };

		qsort_r(idx, n, sizeof(*idx), cmp_worst_first, &w);
		n = VALUES_MAX;
	}
	s->values_total = njudged;
	for (int k = 0; k < n; k++) {
		const struct elem *el = &s->el[idx[k]];
		const struct pt *p = &vals[idx[k]];

		json_array_append_new(s->values, json_pack("{s:s, s:s, s:f, s:f, s:f, s:I}",
			"element", el->name, "host", el->host, "value", p->value, "bound",
			elem_bound(s->c, p), "spread_pct", p->spread, "bytes", (json_int_t)p->bytes));
	}
	free(idx);
}

/*
 * "FRACTION of node_best": each element against the highest value of its
 * host (profile.c allows it where higher is better only), which becomes
 * its rate, so the bound and the report read as for "of rate".
 */
static void node_best(struct crit_state *s, struct pt *vals)
{
	const struct criterion *c = s->c;

	for (int i = 0; i < s->nel; i++) {
		double best = NAN;

		if (!s->el[i].n)
			continue;
		for (int k = 0; k < s->nel; k++)
			if (s->el[k].n && !strcmp(s->el[k].host, s->el[i].host) &&
			    (isnan(best) || eval_worse(c, best, vals[k].value)))
				best = vals[k].value;
		vals[i].rate = best;
		vals[i].judged = best > 0 ? vals[i].value / best : 1;
	}
}

/* "NAME, NAME, NAME (and N more)" of the elements whose count(el) is not 0, their number in *n; malloc'd */
static char *elem_names(const struct crit_state *s, long (*count)(const struct elem *), int *n)
{
	char *out = NULL, *t;

	*n = 0;
	for (int i = 0; i < s->nel; i++) {
		if (!count(&s->el[i]))
			continue;
		if (++*n > NAMES_LISTED)
			continue;
		if (asprintf(&t, "%s%s%s", out ?: "", out ? ", " : "", s->el[i].name) < 0)
			break;
		free(out);
		out = t;
	}
	if (*n > NAMES_LISTED && out && asprintf(&t, "%s (and %d more)", out, *n - NAMES_LISTED) >= 0) {
		free(out);
		out = t;
	}
	return out;
}

static long el_nometric(const struct elem *el)
{
	return el->nometric;
}

static long el_norate(const struct elem *el)
{
	return !el->nometric && el->norate;
}

/* "A; B": each part may be NULL or empty; malloc'd, NULL when both are */
static char *join(char *a, const char *b)
{
	char *t;

	if (!b || !*b)
		return a;
	if (!a)
		return strdup(b);
	if (asprintf(&t, "%s; %s", a, b) < 0)
		return a;
	free(a);
	return t;
}

/*
 * Why some elements were not judged: measured without the metric, or, under
 * a fraction-of-rate bound, without a rate. Never a pass on the rest
 * (docs/profiles.md). NULL when every element was judged.
 */
static char *partial_reason(const struct crit_state *s, const char *what)
{
	char *names, *out = NULL, *t;
	int n;

	names = elem_names(s, el_nometric, &n);
	if (n && asprintf(&out, "no value of %s in the records of %d of %d %ss: %s%s%s%s",
			  s->c->metric, n, s->nel, what, names ?: "", s->unknown_why ? " (" : "",
			  s->unknown_why ?: "", s->unknown_why ? ")" : "") < 0)
		out = NULL;
	free(names);
	names = elem_names(s, el_norate, &n);
	if (n && asprintf(&t, "no rate reported for %d of %d %ss (the bound is a fraction of it): %s", n,
			  s->nel, what, names ?: "") >= 0) {
		out = join(out, t);
		free(t);
	}
	free(names);
	return out;
}

/* the questioned elements, for the reason: "2 implausible (a, b)" */
static char *list_reason(const json_t *a, const char *what)
{
	size_t i, n = json_array_size(a);
	const json_t *v;
	char *out = NULL, *t;

	if (!n)
		return NULL;
	if (asprintf(&out, "%zu %s (", n, what) < 0)
		return NULL;
	json_array_foreach(a, i, v) {
		if (i == NAMES_LISTED) {
			if (asprintf(&t, "%s and %zu more", out, n - i) >= 0) {
				free(out);
				out = t;
			}
			break;
		}
		if (asprintf(&t, "%s%s%s%s%s", out, i ? ", " : "",
			     json_string_value(json_object_get(v, "element")),
			     json_object_get(v, "shape") ? ": " : "",
			     json_string_value(json_object_get(v, "shape")) ?: "") < 0)
			break;
		free(out);
		out = t;
	}
	if (asprintf(&t, "%s)", out) >= 0) {
		free(out);
		out = t;
	}
	return out;
}

/*
 * What makes an incomplete criterion judgeable, for the end of its reason:
 * the command that measures it (from the criterion's own probe, collective,
 * backend and node count), or what the records lacked (a rate, a build, real
 * hardware). Written into buf; "" when the model's own reason says it.
 */
static const char *fix_text(const struct crit_state *s, char *buf, size_t len)
{
	const struct criterion *c = s->c;
	const char *name = c->probe ? c->probe : c->collective ? c->collective : "";
	char nodes[48] = "";
	int norate = 0;

	if (c->min_nodes)
		snprintf(nodes, sizeof(nodes), " on %d%s node%s", c->min_nodes, c->max_nodes ? "" : " or more",
			 c->max_nodes && c->min_nodes == 1 ? "" : "s");
	for (int i = 0; i < s->nel; i++)
		norate += el_norate(&s->el[i]) > 0;
	if (s->fake)
		snprintf(buf, len, "run `ccprobe %s` on the real RDMA devices", name);
	else if (s->skip_reason && !strncmp(s->skip_reason, "not built", 9))
		snprintf(buf, len, "rebuild ccprobe with the dependency (`make` prints `features: ...`), "
			 "then run `ccprobe %s`", name);
	else if (c->fix)
		snprintf(buf, len, "%s", c->fix);
	else if (norate && c->probe && !strcmp(c->probe, "netpair"))
		snprintf(buf, len, "set the link rate for ccprobe (`CCDIAG_LINK_RATE_MBIT`, Mb/s, "
			 "docs/netpair.md) and run `ccprobe netpair` again");
	else if (norate || (s->nometric && !strcmp(c->metric, "rate_GBps")))
		snprintf(buf, len, "run `ccprobe %s` on the host itself, where sysfs shows the link's rate "
			 "(not in a VM)", name);
	else if (c->derived == DERIVED_SCALING)
		snprintf(buf, len, "run `ccprobe --scale %s` on 2 or more nodes", name);
	else if (c->derived == DERIVED_SOAK)
		snprintf(buf, len, "run `ccprobe --soak 10m %s` (or `ccdiag run --soak 10m`)", name);
	else if (c->derived == DERIVED_CKPT)
		snprintf(buf, len, "run `ccprobe --storage-dir DIR storage` and give `-w checkpoint_every=...` "
			 "(docs/estimate.md)");
	else if (c->derived)
		snprintf(buf, len, "give the workload (`-w KEY=VALUE` or the profile's [workload], "
			 "docs/estimate.md) and the measurement it names");
	else if (!strcmp(name, "storage"))
		snprintf(buf, len, "run `ccprobe --storage-dir DIR storage` on a shared filesystem "
			 "(`--storage 1` on the emulated cluster)");
	else if (c->collective)
		snprintf(buf, len, "run `ccprobe%s%s %s`%s", c->backend ? " -B " : "", c->backend ?: "",
			 name, nodes);
	else
		snprintf(buf, len, "run `ccprobe %s`%s", name, s->skips ? " where its hardware is visible" :
			 s->records ? " again with every element visible to it" : "");
	return buf;
}

static void judge(struct eval *e, struct crit_state *s)
{
	const struct criterion *c = s->c;
	struct pt *vals = calloc(s->nel ? s->nel : 1, sizeof(*vals));
	int *judged = calloc(s->nel ? s->nel : 1, sizeof(*judged));
	int nfail = 0, njudged = 0, outl, worst = -1;
	char *missing = NULL, *partial = NULL, *also = NULL, *odd = NULL, *t;
	/* what an element is, in the reason */
	const char *what = c->derived == DERIVED_SCALING ? "node count" :
			   c->derived == DERIVED_STEP && !strcmp(c->metric, "framework_ready") ? "framework step" :
			   c->derived && c->derived != DERIVED_SOAK ? "estimate" : rpt_scope_name(c->scope);

	s->failures = json_array();
	s->values = json_array();
	s->incomplete = json_array();
	s->implausible = json_array();
	s->plateau = json_array();
	if (!vals || !judged || !s->failures || !s->values || !s->incomplete || !s->implausible ||
	    !s->plateau)
		goto out;
	for (int i = 0; i < s->nel; i++) {
		if (s->el[i].n)
			elem_value(c, &s->el[i], &vals[i]);
	}
	if (c->node_best)
		node_best(s, vals);
	for (int i = 0; i < s->nel; i++) {
		struct elem *el = &s->el[i];
		struct pt *p = &vals[i];
		const char *shape;
		double b;

		/* partial evidence: the element is named, never judged on what is left */
		if (el->nometric || el->norate || !el->n) {
			json_array_append_new(s->incomplete, json_string(el->name));
			continue;
		}
		judged[i] = 1;
		njudged++;
		b = elem_bound(c, p);
		if (worst < 0 || eval_worse(c, p->judged, vals[worst].judged))
			worst = i;
		if (el->imp_limit > 0)
			json_array_append_new(s->implausible, json_pack("{s:s, s:s, s:f, s:f, s:s, s:s}",
				"element", el->name, "host", el->host, "value", el->imp_value, "limit",
				el->imp_limit, "unit", c->unit, "why", c->derived == DERIVED_SCALING ?
				"busbw above the base's by more than the scaling limit: a measurement fault" :
				"above the element's rate by more than the margin: a measurement fault"));
		shape = plateau_shape(c, el, p);
		if (shape)
			json_array_append_new(s->plateau, json_pack("{s:s, s:s, s:s, s:o}", "element",
				el->name, "host", el->host, "shape", shape, "points", elem_plateau_json(c, el)));
		if (!eval_worse(c, p->judged, c->relative > 0 ? c->relative : c->bound))
			continue;
		nfail++;
		json_array_append_new(s->failures, json_pack("{s:s, s:s, s:f, s:f, s:s, s:o}",
			"element", el->name, "host", el->host, "value", p->value, "bound", b,
			"unit", c->unit, "shortfall_pct",
			b > 0 ? json_real(100 * fabs(b - p->value) / b) : json_null()));
	}
	sort_array(s->failures, cmp_shortfall);
	/* summary.json keeps every element up to VALUES_MAX, else the worst ones */
	while (json_array_size(s->failures) > VALUES_MAX)
		json_array_remove(s->failures, json_array_size(s->failures) - 1);
	add_values(s, vals, judged, njudged);
	s->worst = worst;
	if (worst >= 0)
		s->worst_pt = vals[worst];
	outl = find_outliers(e, s, vals, judged);
	missing = count_missing(e, s);
	t = links_missing(e, s);
	missing = join(missing, t);
	free(t);
	partial = partial_reason(s, what);
	also = join(join(partial ? strdup(partial) : NULL, s->skip_reason), s->skip_reason ? NULL : missing);
	/* what a pass must not hide: faults in the figures, curves that never flattened */
	odd = list_reason(s->implausible, "implausible");
	t = list_reason(s->plateau, "plateau(s) questioned");
	odd = join(odd, t);
	free(t);

	if (nfail) {
		s->verdict = c->fail ? V_FAIL : V_WARN;
		set_reason(s, "%d of %d %s%s %s the bound%s%s%s%s", nfail, njudged,
			   what, njudged > 1 ? "s" : "", c->ge ? "below" : "above",
			   also ? "; also incomplete: " : "", also ?: "", odd ? "; " : "", odd ?: "");
	} else if (s->errors) {
		s->verdict = c->fail ? V_FAIL : V_WARN;
		set_reason(s, "%ld measurement(s) failed: %s", s->errors, s->error_msg);
	} else if (s->skips) {
		s->verdict = V_INCOMPLETE;
		set_reason(s, "%s%s%s", s->skip_reason, partial ? "; also incomplete: " : "", partial ?: "");
	} else if (s->fake) {
		s->verdict = V_INCOMPLETE;
		set_reason(s, "not judged: %ld record(s) from the test transport (transport \"fake\": "
			   "fixture devices and memory copies, not a network)", s->fake);
	} else if (!s->records && s->why_none) {
		s->verdict = V_INCOMPLETE;
		set_reason(s, "%s", s->why_none);
	} else if (!s->records) {
		char nodes[32] = "";

		if (c->min_nodes)
			snprintf(nodes, sizeof(nodes), " on %d%s node(s)", c->min_nodes, c->max_nodes ? "" : "+");
		s->verdict = V_INCOMPLETE;
		set_reason(s, "no measurement of %s%s%s%s: %s", c->probe ? c->probe : c->collective,
			   c->test || c->backend ? " " : "", c->test ? c->test : c->backend ? c->backend : "",
			   nodes,
			   /* the record's own why first (an imported tool's output that cannot say) */
			   s->nometric && s->unknown_why ? s->unknown_why :
			   s->nometric && !strcmp(c->metric, "rate_GBps") ?
			   "no rate reported (the probe did not know the link's rate)" :
			   s->nometric ? "the records have no such metric" :
			   s->scope_mismatch ? "the records are of another scope" :
			   s->other_size ? "no record at this size" : "not in the results");
	} else if (partial || missing) {
		s->verdict = V_INCOMPLETE;
		set_reason(s, "%s", also);
	} else if (outl || odd) {
		char ol[80] = "";

		if (outl)
			snprintf(ol, sizeof(ol), ", %d outlier(s) %s their peers", outl, c->ge ? "below" : "above");
		s->verdict = V_WARN;
		set_reason(s, "%d of %d %s%s within the bound%s%s%s", njudged, njudged, what,
			   njudged > 1 ? "s" : "", ol, odd ? "; " : "", odd ?: "");
	} else {
		s->verdict = V_PASS;
		set_reason(s, "%d of %d %s%s within the bound", njudged, njudged,
			   what, njudged > 1 ? "s" : "");
	}
	/* a value the model extrapolated far is a hint, not evidence (model.c) */
	if (s->caveat && njudged && (s->verdict == V_PASS || s->verdict == V_FAIL)) {
		t = s->reason;
		s->reason = NULL;
		set_reason(s, "%s; a warn, not a pass or fail: %s", t ?: "", s->caveat);
		free(t);
		s->verdict = V_WARN;
	}
	/* the models' own reasons (why_none) already say what they lack */
	if (s->verdict == V_INCOMPLETE && !(!s->records && s->why_none)) {
		char fix[256];

		t = s->reason;
		s->reason = NULL;
		set_reason(s, "%s; fix: %s", t ?: "", fix_text(s, fix, sizeof(fix)));
		free(t);
	}
out:
	free(missing);
	free(partial);
	free(also);
	free(odd);
	free(vals);
	free(judged);
}

void eval_finish(struct eval *e)
{
	model_build(e);
	step_build(e);
	ckpt_build(e);
	soak_build(e);
	for (int i = 0; i < e->ncs; i++)
		judge(e, &e->cs[i]);
}

void eval_free(struct eval *e)
{
	for (int i = 0; i < e->ncs; i++) {
		struct crit_state *s = &e->cs[i];

		for (int k = 0; k < s->nel; k++)
			free(s->el[k].pt);
		free(s->el);
		htab_free(&s->idx);
		free(s->skip_reason);
		free(s->error_msg);
		free(s->why_none);
		free(s->unknown_why);
		free(s->caveat);
		free(s->reason);
		json_decref(s->failures);
		json_decref(s->values);
		json_decref(s->incomplete);
		json_decref(s->implausible);
		json_decref(s->plateau);
	}
	free(e->cs);
	for (int i = 0; i < e->nhosts; i++)
		free(e->host_names[i]);
	free(e->host_names);
	htab_free(&e->hosts);
	htab_free(&e->vseen);
	for (int i = 0; i < e->nin; i++)
		input_info_free(&e->in[i]);
	free(e->in);
	json_decref(e->series);
	json_decref(e->diagnoses);
	json_decref(e->timeouts);
	json_decref(e->unjudged);
	json_decref(e->inventoried);
	json_decref(e->versions);
	json_decref(e->outliers);
	json_decref(e->fits);
	json_decref(e->ranks_of);
	json_decref(e->scaling);
	json_decref(e->estimate);
	json_decref(e->compute);
	json_decref(e->storage_write);
	json_decref(e->steps);
	json_decref(e->checkpoint);
	free(e->np);
	soak_free(e);
	memset(e, 0, sizeof(*e));
}
