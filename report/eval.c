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
#include "identity.h"
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
	e->isolate_rounds = json_array();
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
	for (int j = 0; j < SEL_MEMO; j++)
		if (!(e->memo[j].idx = calloc(p->ncrit ? p->ncrit : 1, sizeof(*e->memo[j].idx))))
			return -1;
	e->device_ids = json_object();
	e->identity = json_array();
	e->manifest = json_null();
	if (!e->compute || !e->device_ids || !e->identity || !e->cs || !e->series || !e->diagnoses || !e->isolate_rounds || !e->timeouts || !e->unjudged || !e->inventoried || !e->versions || !e->outliers ||
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
	/* read once for every criterion that measures the record */
	double bytes;            /* 0 when absent */
	int fake;                /* transport "fake": the test transport's, never judged */
};

static void sel_read(const struct rv *r, struct sel *k)
{
	k->bytes = 0;
	rv_num(r, NULL, "bytes", &k->bytes);
	k->fake = streq(rv_str(r, "transport"), "fake");
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

/*
 * The hosts of a link element named "SRC-DST" or "DST-SRC" by its record's
 * src and dst, by index, for the missing-links check (links_missing): a
 * bit per pair there, not a lookup by name. -1 when the name is another.
 */
static void link_hosts(struct eval *e, struct elem *el, const struct rv *r)
{
	const char *a = rv_str(r, "src"), *b = rv_str(r, "dst");
	size_t la, lb, n = strlen(el->name);
	int ha, hb;

	el->link_a = -1;
	if (!a || !b || (la = strlen(a)) + (lb = strlen(b)) + 1 != n)
		return;
	if (!((!memcmp(el->name, a, la) && el->name[la] == '-' && !memcmp(el->name + la + 1, b, lb)) ||
	      (!memcmp(el->name, b, lb) && el->name[lb] == '-' && !memcmp(el->name + lb + 1, a, la))))
		return;
	ha = htab_get(&e->hosts, a);
	hb = htab_get(&e->hosts, b);
	if (ha >= 0 && hb >= 0) {
		el->link_a = ha + 1;
		el->link_b = hb + 1;
	}
}

/*
 * A rail pair's hosts (its records' host and peer) and rail, for the
 * missing rail pairs check (rail_pairs_missing); the input is one of ib
 * rail pairs. link_a -1 when a host is not one of the run's or a rank's
 * (HOST#RANK, one host playing nodes).
 */
static void rail_hosts(struct eval *e, struct elem *el, const struct rv *r)
{
	const char *a = rv_str(r, "host"), *b = rv_str(r, "peer");
	double rail;
	int ha, hb;

	el->link_a = -1;
	el->rail = -1;
	if (!rv_num(r, NULL, "rail", &rail) && rail >= 0 && rail < 65536 && rail == floor(rail))
		el->rail = (int)rail;
	if (!a || !b || strchr(a, '#') || strchr(b, '#'))
		return;
	ha = htab_get(&e->hosts, a);
	hb = htab_get(&e->hosts, b);
	if (ha >= 0 && hb >= 0 && ha != hb) {
		el->link_a = ha + 1;
		el->link_b = hb + 1;
	}
	if (e->nin)
		e->in[e->nin - 1].ib_pairs = 1;
}

static int measure(struct crit_state *s, const struct rv *r, const struct sel *k)
{
	const struct criterion *c = s->c;
	const char *name, *host;
	char buf[512];
	struct pt p = { 0 };
	struct elem *el;
	double bytes = k->bytes, rate = 0, limit;
	int mv;

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
	if (k->fake) {
		s->fake++;
		return 0;
	}
	el = eval_elem(s, name, host);
	if (!el)
		return -1;
	if (c->scope == SC_LINK && !el->link_a)
		link_hosts(s->e, el, r);
	if (c->scope == SC_RAIL_PAIR && !el->link_a)
		rail_hosts(s->e, el, r);
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
	double bytes = k->bytes, gb, pass = 1;

	if (i < 0 || k->fake || bytes < e->pair[i].bytes)
		return;
	rv_num(r, NULL, "pass", &pass);
	if (rv_num(r, NULL, "bw_Gbps", &gb) || !(gb > 0) || !isfinite(gb) || pass != 1)
		return;
	if (bytes > e->pair[i].bytes)
		e->pair[i] = (struct pair_bw){ bytes, gb, 0 };
	e->pair[i].Gbps = fmin(e->pair[i].Gbps, gb);
	e->pair[i].n++;
}

#define LINKS_RESERVED (1 << 19)   /* 1024 nodes' links: 8 MiB of table */
static int note_netpair(struct eval *e, const struct rv *r)
{
	const char *src = rv_str(r, "src"), *dst = rv_str(r, "dst");
	double gb, pass = 1;
	int a, b;

	if (e->nin && !e->in[e->nin - 1].netpair) {
		size_t n = json_array_size(json_object_get(e->in[e->nin - 1].header, "hosts"));

		e->in[e->nin - 1].netpair = 1;
		/* the links to come, N(N-1)/2 of the header's hosts: entered without regrowing the
		 * table; not past LINKS_RESERVED, so a header of many hosts costs no memory by itself */
		for (int i = 0; i < e->ncs; i++)
			if (e->cs[i].c->scope == SC_LINK && streq(e->cs[i].c->probe, "netpair") &&
			    htab_reserve(&e->cs[i].idx, n * (n - 1) / 2 < LINKS_RESERVED ? n * (n - 1) / 2 :
					 LINKS_RESERVED))
				return -1;
	}
	rv_num(r, NULL, "pass", &pass);
	if (!streq(rv_str(r, "test"), "bw_uni") || !src || !dst || rv_num(r, NULL, "bw_Gbps", &gb) || pass != 1)
		return 0;
	a = eval_host(e, src);
	b = eval_host(e, dst);
	if (a < 0 || b < 0)
		return -1;
	if (e->np_dropped || e->nhosts > NETPAIR_MAX_HOSTS) {
		free(e->np);
		e->np = NULL;
		e->np_dropped = 1;
		return 0;
	}
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
 * A group's hosts as "nodes node8–node11" when they share a prefix and
 * their numbers run on by one, else "node1, node4, node9" (4 named at most,
 * then the count).
 */
static void hosts_range(const json_t *hosts, char *out, size_t len)
{
	size_t n = json_array_size(hosts), i, at = 0, plen = 0;
	const char *first = NULL, *last = NULL;
	long prev = 0;
	int range = n > 1;
	const json_t *h;

	json_array_foreach(hosts, i, h) {
		const char *s = json_string_value(h) ?: "?", *d = s + strlen(s);

		while (d > s && d[-1] >= '0' && d[-1] <= '9')
			d--;
		if (!*d || (first && ((size_t)(d - s) != plen || strncmp(s, first, plen) ||
				      strtol(d, NULL, 10) != prev + 1)))
			range = 0;
		if (!first) {
			first = s;
			plen = (size_t)(d - s);
		}
		prev = *d ? strtol(d, NULL, 10) : 0;
		last = s;
	}
	if (range) {
		snprintf(out, len, "nodes %s\u2013%s", first, last);
		return;
	}
	out[0] = '\0';
	json_array_foreach(hosts, i, h) {
		if (at >= len)
			break;
		if (i == 4) {
			snprintf(out + at, len - at, ", ... (%zu hosts)", n);
			break;
		}
		at += (size_t)snprintf(out + at, len - at, "%s%s", i ? ", " : "",
				       json_string_value(h) ?: "?");
	}
}

/*
 * What a diagnosis blames, named at its granularity (docs/report.md): a node
 * (drained), a link between two nodes, a leaf switch's uplink (its nodes are
 * not drained), the paths between groups (a spine or every uplink).
 */
static const char *granularity(const char *subject)
{
	return !strcmp(subject, "node") ? "node" : !strcmp(subject, "link") ? "link" :
	       !strcmp(subject, "uplink") ? "leaf uplink" :
	       !strcmp(subject, "between_groups") ? "spine or leaf uplinks" : subject;
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
		/* "switch uplink leaf2 (nodes node8-node11)": its nodes are not drained */
		char hosts[400];

		hosts_range(json_object_get(rec, "hosts"), hosts, sizeof(hosts));
		snprintf(name, sizeof(name), "switch uplink %s (%s)", str(rec, "group") ?: "?", hosts);
		/* netpair's: the pairs crossing it against those inside it */
		if (json_is_number(json_object_get(rec, "across_Gbps")) &&
		    json_is_number(json_object_get(rec, "inside_Gbps"))) {
			snprintf(by, sizeof(by), "%.2g Gb/s across, %.2g inside%s",
				 json_number_value(json_object_get(rec, "across_Gbps")),
				 json_number_value(json_object_get(rec, "inside_Gbps")),
				 !strcmp(v, "ambiguous") ? " (or the uplink of the group it crosses to: "
				 "no third group to tell)" : "");
			why = by;
		}
	} else if (!strcmp(subj, "between_groups") && !strcmp(v, "bad")) {
		/* isolate: each group passed alone, their representatives together failed */
		snprintf(name, sizeof(name), "between groups (a spine or a leaf uplink)");
	} else {
		return 0;
	}
	return json_array_append_new(e->diagnoses, json_pack("{s:s?, s:s, s:s, s:s, s:s, s:s?}",
		"probe", str(rec, "name"), "subject", subj, "granularity", granularity(subj),
		"element", name, "verdict", v, "evidence", why));
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

/*
 * The criteria that select k (strict: measurements), in profile order, into
 * e->memo.idx; e->memo.n of them. Consecutive records are mostly of one
 * kind, name and test: the list of the last one is kept for the next.
 */
static const int *selected(struct eval *e, const struct sel *k, int *n)
{
	const char *v[6] = { k->kind, k->name, k->test, k->backend, k->dtype, k->op };
	struct sel_memo *m = NULL;
	unsigned has = 0;
	int fits = 1;

	for (int i = 0; i < 6; i++) {
		has |= (unsigned)(v[i] != NULL) << i;
		fits &= !v[i] || strlen(v[i]) < sizeof(m->v[i]);
	}
	for (int j = 0; fits && !m && j < SEL_MEMO; j++) {
		int same = e->memo[j].valid && e->memo[j].has == has && e->memo[j].nodes == k->nodes;

		for (int i = 0; same && i < 6; i++)
			same = !v[i] || !strcmp(v[i], e->memo[j].v[i]);
		if (same)
			m = &e->memo[j];
	}
	if (!m) {
		m = &e->memo[e->memo_next];
		e->memo_next = (e->memo_next + 1) % SEL_MEMO;
		m->n = 0;
		for (int i = 0; i < e->ncs; i++)
			if (!e->cs[i].c->derived && selects(e->cs[i].c, k, 1))
				m->idx[m->n++] = i;
		m->valid = fits;
		m->has = has;
		m->nodes = k->nodes;
		for (int i = 0; fits && i < 6; i++)
			snprintf(m->v[i], sizeof(m->v[i]), "%s", v[i] ?: "");
	}
	*n = m->n;
	return m->idx;
}

int eval_measurement(struct eval *e, const struct rv *r, char *err, size_t len)
{
	struct sel k;
	int rc = 0, judged_wrong = 0, nsel;
	double wrong;
	const int *sel;

	sel_read(r, &k);
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
	sel = selected(e, &k, &nsel);
	for (int i = 0; !rc && i < nsel; i++) {
		rc = measure(&e->cs[sel[i]], r, &k);
		judged_wrong |= !strcmp(e->cs[sel[i]].c->path[0], "wrong");
	}
	/* wrong results that no criterion judged are never a silent pass */
	if (!rc && !judged_wrong && !k.fake && !rv_num(r, NULL, "wrong", &wrong) && wrong > 0) {
		char sz[32];

		rc = unjudged(e, "%s %s%s%s at %s: %.0f wrong element(s)", k.kind ?: "?", k.name ?: "?",
			      k.test || k.backend ? " " : "", k.test ?: k.backend ?: "",
			      size_human(k.bytes, sz, sizeof(sz)), wrong);
	}
	if (rc)
		snprintf(err, len, "out of memory");
	return rc ? -1 : 0;
}

/* a list of host names as one text: "node0 node1" (empty when none) */
static json_t *host_words(const json_t *hosts)
{
	json_t *h, *out;
	size_t i, at = 0;
	char buf[512] = "";

	json_array_foreach(hosts, i, h)
		if (json_is_string(h) && at < sizeof(buf))
			at += (size_t)snprintf(buf + at, sizeof(buf) - at, "%s%s", at ? " " : "",
					       json_string_value(h));
	if (at >= sizeof(buf))
		snprintf(buf + sizeof(buf) - 5, 5, "...");
	out = json_string(buf);
	return out;
}

/*
 * One of isolate's tests (docs/isolation.md), kept so the report draws the
 * rounds: which hosts were tested together, padded with which known-good
 * ones, what they read and what the planner decided.
 */
static int note_isolate_round(struct eval *e, const json_t *rec)
{
	const json_t *ratio = json_object_get(rec, "ratio"), *pass = json_object_get(rec, "pass");

	return json_array_append_new(e->isolate_rounds, json_pack("{s:O?, s:s?, s:s?, s:o, s:o, s:O?, s:s, s:O?, s:s?}",
		"round", json_object_get(rec, "round"), "role", str(rec, "role"), "group", str(rec, "group"),
		"nodes", host_words(json_object_get(rec, "nodes")),
		"padding", host_words(json_object_get(rec, "padding")), "ratio", ratio,
		"result", json_is_true(pass) ? "pass" : json_is_false(pass) ? "fail" : "?",
		"tries", json_object_get(rec, "tries"), "decision", str(rec, "decision")));
}

int eval_record(struct eval *e, json_t *rec, long line, char *err, size_t len)
{
	const char *type = str(rec, "type");
	struct rv *r;
	int rc = 0;

	if (streq(type, "run")) {
		rc = note_header(e, rec);
	} else if (streq(type, "inventory")) {
		note_inventory(e, rec);
		/* a device of two hosts is no cluster's evidence: its own message, not "out of memory" */
		if (identity_inventory(e, rec, line, err, len))
			return -1;
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
		if (streq(type, "measurement") && streq(str(rec, "kind"), "probe") && streq(str(rec, "name"), "isolate") &&
		    note_isolate_round(e, rec))
			return snprintf(err, len, "out of memory"), -1;
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
	char e[1024];

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
	return identity_inputs(e, err, len);
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
#define LINKS_BITMAP_HOSTS 8192  /* netpair inputs of different host sets: a bit per pair, 8 MiB at most */

static int cmp_u64(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

static unsigned long long pair_key(int x, int y)
{
	return x < y ? (unsigned long long)x << 32 | (unsigned)y : (unsigned long long)y << 32 | (unsigned)x;
}

/*
 * The pairs of hosts the criterion's elements measured, as sorted keys
 * (pair_key of their host indices): a link named by its records' src and
 * dst (link_hosts), else by a name "A-B" of two known hosts (a record's own
 * element). *n of them; NULL with *n 0 when none or out of memory.
 */
static unsigned long long *links_measured(const struct eval *e, const struct crit_state *s, size_t *n)
{
	unsigned long long *p = malloc((s->nel ? s->nel : 1) * sizeof(*p));
	size_t k = 0;

	*n = 0;
	if (!p)
		return NULL;
	for (int i = 0; i < s->nel; i++) {
		const struct elem *el = &s->el[i];

		if (el->link_a > 0) {
			p[k++] = pair_key(el->link_a - 1, el->link_b - 1);
			continue;
		}
		/* a name "A-B" whose ends are hosts, at the first '-' where both are */
		for (const char *d = strchr(el->name, '-'); d; d = strchr(d + 1, '-')) {
			char *a = strndup(el->name, (size_t)(d - el->name));
			int x = a ? htab_get(&e->hosts, a) : -1, y = htab_get(&e->hosts, d + 1);

			free(a);
			if (x >= 0 && y >= 0 && x != y) {
				p[k++] = pair_key(x, y);
				break;
			}
		}
	}
	qsort(p, k, sizeof(*p), cmp_u64);
	for (size_t i = 0; i < k; i++)
		if (!*n || p[*n - 1] != p[i])
			p[(*n)++] = p[i];
	return p;
}

static int measured(const unsigned long long *p, size_t n, int x, int y)
{
	unsigned long long key = pair_key(x, y);

	return bsearch(&key, p, n, sizeof(*p), cmp_u64) != NULL;
}

/* the host indices of input k's header, in its order; NULL when out of memory */
static int *header_hosts(const struct eval *e, int k, size_t *n)
{
	const json_t *hosts = json_object_get(e->in[k].header, "hosts");
	int *v = malloc((json_array_size(hosts) ? json_array_size(hosts) : 1) * sizeof(*v));
	const char *name;

	*n = 0;
	for (size_t i = 0; v && i < json_array_size(hosts); i++)
		if ((name = str(json_array_get(hosts, i), "name")) && (v[*n] = htab_get(&e->hosts, name)) >= 0)
			(*n)++;
	return v;
}

/* "a-b, c-d, ..." of n pairs of host indices; NULL when out of memory */
static char *pair_names(const struct eval *e, int (*named)[2], int n)
{
	char *names = NULL, *u;

	for (int i = 0; i < n; i++) {
		if (asprintf(&u, "%s%s%s-%s", names ?: "", names ? ", " : "", e->host_names[named[i][0]],
			     e->host_names[named[i][1]]) < 0) {
			free(names);
			return NULL;
		}
		free(names);
		names = u;
	}
	return names;
}

/*
 * Every link of the hosts of each netpair run's header (N(N-1)/2) is due:
 * "3 of 6 links not measured: node0-node3, ..." (malloc'd), NULL when all
 * were. A link missing is never a pass on the rest (docs/profiles.md).
 * Time and memory follow the records, not the header: the links measured
 * are counted, the missing ones found by walking the pairs until
 * NAMES_LISTED of them are named (a header of 17,000 hosts is 144 million
 * pairs; its records a few thousand).
 */
static char *links_missing_all(const struct eval *e, const struct crit_state *s)
{
	unsigned long long *got, nmiss = 0, ndue = 0, ngot = 0;
	unsigned char *in0 = NULL, *seen = NULL;
	int *h0 = NULL, same = 1, first = -1, named[NAMES_LISTED][2], counted = 0;
	size_t n0 = 0, ng = 0, nh = (size_t)e->nhosts;
	char *t = NULL, *names = NULL;
	int nnamed = 0;

	if (s->c->scope != SC_LINK || !streq(s->c->probe, "netpair") || s->c->derived)
		return NULL;
	for (int k = 0; k < e->nin && first < 0; k++)
		if (e->in[k].netpair)
			first = k;
	if (first < 0)
		return NULL;
	got = links_measured(e, s, &ng);
	h0 = header_hosts(e, first, &n0);
	in0 = calloc(nh ? nh : 1, 1);
	if (!h0 || !in0 || (s->nel && !got))
		goto out;
	for (size_t i = 0; i < n0; i++)
		in0[h0[i]] = 1;
	/* the netpair inputs of one host set (the usual case) are counted without a table of pairs */
	for (int k = first + 1; k < e->nin && same; k++) {
		size_t n;
		int *h;

		if (!e->in[k].netpair)
			continue;
		h = header_hosts(e, k, &n);
		if (!h)
			goto out;
		same = n == n0;
		for (size_t i = 0; same && i < n; i++)
			same = in0[h[i]];
		free(h);
	}
	if (same) {
		ndue = (unsigned long long)n0 * (n0 - (n0 > 0)) / 2;
		for (size_t i = 0; i < ng; i++)
			ngot += in0[got[i] >> 32] && in0[got[i] & 0xffffffffu];
		nmiss = ndue - ngot;
		for (size_t i = 0; nmiss && i < n0 && nnamed < NAMES_LISTED && (unsigned long long)nnamed < nmiss; i++)
			for (size_t j = i + 1; j < n0 && nnamed < NAMES_LISTED; j++)
				if (!measured(got, ng, h0[i], h0[j])) {
					named[nnamed][0] = h0[i];
					named[nnamed++][1] = h0[j];
				}
	} else if (nh > LINKS_BITMAP_HOSTS) {
		if (asprintf(&t, "the links of netpair inputs of different host sets, %zu hosts in all, not counted "
			     "(at most %d hosts)", nh, LINKS_BITMAP_HOSTS) < 0)
			t = NULL;
		goto out;
	} else {
		/* a bit per pair of hosts: each input's pairs, counted once */
		if (!(seen = calloc((nh * nh + 7) / 8, 1)))
			goto out;
		for (int k = first; k < e->nin; k++) {
			size_t n;
			int *h;

			if (!e->in[k].netpair)
				continue;
			if (!(h = header_hosts(e, k, &n)))
				goto out;
			for (size_t i = 0; i < n; i++)
				for (size_t j = i + 1; j < n; j++) {
					size_t x = (size_t)(h[i] < h[j] ? h[i] : h[j]), y = (size_t)(h[i] < h[j] ? h[j] : h[i]);
					size_t bit = x * nh + y;

					if (seen[bit / 8] & (1u << bit % 8))
						continue;
					seen[bit / 8] |= (unsigned char)(1u << bit % 8);
					ndue++;
					if (measured(got, ng, h[i], h[j]))
						continue;
					if (nmiss++ < NAMES_LISTED) {
						named[nnamed][0] = h[i];
						named[nnamed++][1] = h[j];
					}
				}
			free(h);
		}
	}
	if (nnamed && !(names = pair_names(e, named, nnamed)))
		goto out;
	if (nmiss && asprintf(&t, "%llu of %llu links not measured: %s%s%.0llu%s", nmiss, ndue, names ?: "",
			      nmiss > NAMES_LISTED ? " (and " : "", nmiss > NAMES_LISTED ? nmiss - NAMES_LISTED : 0,
			      nmiss > NAMES_LISTED ? " more)" : "") < 0) {
		t = NULL;
		goto out;
	}
	counted = 1;
out:
	/* out of memory is said, never taken for every link measured */
	if (!counted && !t)
		t = strdup("the links due not counted: out of memory");
	free(names);
	free(seen);
	free(in0);
	free(h0);
	free(got);
	return t;
}

/*
 * netpair's bw_uni measures each link both ways (docs/netpair.md, steps 2
 * and 3) and a criterion that keeps the directions apart (repeat = best)
 * judges the worse of the two: a link with one way only is not judged on
 * the other ("1 of 6 links measured one way only: node0-node3 (node3 to
 * node0 not measured)"; malloc'd, NULL when none).
 */
static char *links_one_way(const struct crit_state *s)
{
	const struct criterion *c = s->c;
	char *names = NULL, *t;
	long n1 = 0, nboth = 0;

	if (c->scope != SC_LINK || !streq(c->probe, "netpair") || !streq(c->test, "bw_uni") || !c->repeat_best ||
	    c->derived)
		return NULL;
	for (int i = 0; i < s->nel; i++) {
		const struct elem *el = &s->el[i];
		int dirs = 0;

		for (int k = 0; k < el->n; k++)
			dirs |= 1 << (el->pt[k].dir != 0);
		if (!dirs)
			continue;
		nboth++;
		if (dirs == 3 || ++n1 > NAMES_LISTED)
			continue;
		/* dir 1 was measured from the later name to the earlier: the other way is missing */
		if (el->link_a > 0) {
			const char *x = s->e->host_names[el->link_a - 1], *y = s->e->host_names[el->link_b - 1];
			const char *lo = strcmp(x, y) < 0 ? x : y, *hi = lo == x ? y : x;

			if (asprintf(&t, "%s%s%s (%s to %s not measured)", names ?: "", names ? ", " : "", el->name,
				     dirs == 1 ? hi : lo, dirs == 1 ? lo : hi) < 0)
				break;
		} else if (asprintf(&t, "%s%s%s (%s not measured)", names ?: "", names ? ", " : "", el->name,
				    dirs == 1 ? "from the later host to the earlier" :
				    "from the earlier host to the later") < 0) {
			break;
		}
		free(names);
		names = t;
	}
	if (!n1) {
		free(names);
		return NULL;
	}
	if (asprintf(&t, "%ld of %ld links measured one way only: %s%s%.0ld%s", n1, nboth, names ?: "",
		     n1 > NAMES_LISTED ? " (and " : "", n1 > NAMES_LISTED ? n1 - NAMES_LISTED : 0,
		     n1 > NAMES_LISTED ? " more)" : "") < 0)
		t = NULL;
	free(names);
	return t;
}

/*
 * Every rail of every pair of an ib input's hosts is due (rail r of one
 * node pairs with rail r of the other, docs/rdma.md): "2 of 12 rail pairs
 * not measured: node0-node3 rail 1, ..." (malloc'd), NULL when all were.
 * The rails: the profile's nics_per_node, else the most any pair had. Inputs
 * of one host set only (a phase of other hosts is named by identity.c), and
 * records that carry their "rail" (ccprobe's do, docs/rdma.md): without it
 * no rail pair is counted.
 */
static char *rail_pairs_missing(const struct eval *e, const struct crit_state *s)
{
	unsigned long long *got = NULL, nmiss = 0, ndue, ngot = 0;
	unsigned char *in0 = NULL;
	int *h0 = NULL, first = -1, rails = e->p->nics_per_node, named[NAMES_LISTED][3], nnamed = 0;
	size_t n0 = 0, ng = 0, nh = (size_t)e->nhosts;
	char *t = NULL, *names = NULL;

	if (s->c->scope != SC_RAIL_PAIR || !streq(s->c->probe, "ib") || s->c->derived)
		return NULL;
	for (int k = 0; k < e->nin && first < 0; k++)
		if (e->in[k].ib_pairs)
			first = k;
	if (first < 0)
		return NULL;
	h0 = header_hosts(e, first, &n0);
	in0 = calloc(nh ? nh : 1, 1);
	got = malloc((s->nel ? s->nel : 1) * sizeof(*got));
	if (!h0 || !in0 || !got)
		goto out;
	for (size_t i = 0; i < n0; i++)
		in0[h0[i]] = 1;
	for (int k = first + 1; k < e->nin; k++) {
		size_t n;
		int *h, same;

		if (!e->in[k].ib_pairs)
			continue;
		if (!(h = header_hosts(e, k, &n)))
			goto out;
		same = n == n0;
		for (size_t i = 0; same && i < n; i++)
			same = in0[h[i]];
		free(h);
		if (!same)
			goto out;
	}
	for (int i = 0; i < s->nel; i++) {
		const struct elem *el = &s->el[i];

		if (el->link_a <= 0 || el->rail < 0 || !in0[el->link_a - 1] || !in0[el->link_b - 1])
			continue;
		got[ng++] = pair_key(el->link_a - 1, el->link_b - 1) << 16 | (unsigned)el->rail;
		if (!e->p->nics_per_node && el->rail >= rails)
			rails = el->rail + 1;
	}
	/* records without "rail" (a ccprobe before it, tests/report/gen_results' ring): not counted */
	if (!ng)
		goto out;
	qsort(got, ng, sizeof(*got), cmp_u64);
	for (size_t i = 0; i < ng; i++)
		if (!i || got[i] != got[i - 1])
			ngot += (int)(got[i] & 0xffff) < rails;
	ndue = (unsigned long long)n0 * (n0 - (n0 > 0)) / 2 * (unsigned long long)(rails > 0 ? rails : 0);
	if (!ndue || ngot >= ndue)
		goto out;
	nmiss = ndue - ngot;
	for (size_t i = 0; i < n0 && nnamed < NAMES_LISTED; i++)
		for (size_t j = i + 1; j < n0 && nnamed < NAMES_LISTED; j++)
			for (int r = 0; r < rails && nnamed < NAMES_LISTED; r++) {
				unsigned long long key = pair_key(h0[i], h0[j]) << 16 | (unsigned)r;

				if (!bsearch(&key, got, ng, sizeof(*got), cmp_u64)) {
					named[nnamed][0] = h0[i];
					named[nnamed][1] = h0[j];
					named[nnamed++][2] = r;
				}
			}
	for (int i = 0; i < nnamed; i++) {
		char *u;

		if (asprintf(&u, "%s%s%s-%s rail %d", names ?: "", names ? ", " : "", e->host_names[named[i][0]],
			     e->host_names[named[i][1]], named[i][2]) < 0)
			goto out;
		free(names);
		names = u;
	}
	if (asprintf(&t, "%llu of %llu rail pairs not measured: %s%s%.0llu%s", nmiss, ndue, names ?: "",
		     nmiss > NAMES_LISTED ? " (and " : "", nmiss > NAMES_LISTED ? nmiss - NAMES_LISTED : 0,
		     nmiss > NAMES_LISTED ? " more)" : "") < 0)
		t = NULL;
out:
	free(names);
	free(in0);
	free(h0);
	free(got);
	return t;
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

/* what links_missing_grouped counts over the inputs, by host index */
struct link_count {
	const struct eval *e;
	const unsigned long long *got;  /* the pairs measured (links_measured), sorted */
	size_t ng, nh;
	unsigned char *seen;     /* a bit per pair of hosts: already counted as due */
	long ndue, nmiss;        /* due (every pair, or every pair inside a group) and not measured */
	int named[NAMES_LISTED][2], nnamed;  /* the first missing, in the order met */
	long across, sampled;    /* grouped runs: links across groups, and of them measured */
	long gpairs, gpairs_bare;  /* pairs of groups, and those with no link measured across */
	long hosts_bare;         /* hosts of 2 groups or more with no link measured across */
	char *bare;              /* the first group pair or host not covered */
	int grouped;             /* an input ran the grouped schedule */
	int full;                /* an input ran every pair */
};

/* counts a due link x-y (host indices) once over the inputs */
static void due_link(struct link_count *lc, int x, int y)
{
	size_t lo = (size_t)(x < y ? x : y), hi = (size_t)(x < y ? y : x), bit = lo * lc->nh + hi;

	if (x < 0 || y < 0 || x == y || lc->seen[bit / 8] & (1u << bit % 8))
		return;
	lc->seen[bit / 8] |= (unsigned char)(1u << bit % 8);
	lc->ndue++;
	if (measured(lc->got, lc->ng, x, y) || ++lc->nmiss > NAMES_LISTED)
		return;
	lc->named[lc->nnamed][0] = x;
	lc->named[lc->nnamed++][1] = y;
}

/* the host indices of a group's "hosts" (names), in order; NULL when out of memory */
static int *group_hosts(const struct eval *e, const json_t *g, size_t *n)
{
	const json_t *hs = json_object_get(g, "hosts");
	int *v = malloc((json_array_size(hs) ? json_array_size(hs) : 1) * sizeof(*v));
	const char *name;

	*n = 0;
	for (size_t i = 0; v && i < json_array_size(hs); i++)
		if ((name = json_string_value(json_array_get(hs, i))) && (v[*n] = htab_get(&e->hosts, name)) >= 0)
			(*n)++;
	return v;
}

/*
 * A grouped run (header pair_schedule "grouped", docs/netpair.md): every link
 * inside a group of header.topology is due; across groups the links are
 * sampled by design, so what is due there is the sample's coverage: each pair
 * of groups met by one measured link at least, each host by one across.
 * Returns 0, or -1 when out of memory.
 */
static int grouped_links(struct link_count *lc, const json_t *groups)
{
	size_t ng = json_array_size(groups), gi, gj, na, nb;
	unsigned char *crossed = calloc(lc->nh ? lc->nh : 1, 1);
	int **h = calloc(ng ? ng : 1, sizeof(*h));
	size_t *hn = calloc(ng ? ng : 1, sizeof(*hn));
	int rc = -1;

	lc->grouped = 1;
	if (!crossed || !h || !hn)
		goto out;
	for (gi = 0; gi < ng; gi++) {
		if (!(h[gi] = group_hosts(lc->e, json_array_get(groups, gi), &hn[gi])))
			goto out;
		for (size_t i = 0; i < hn[gi]; i++)
			for (size_t j = i + 1; j < hn[gi]; j++)
				due_link(lc, h[gi][i], h[gi][j]);
	}
	for (gi = 0; gi < ng; gi++)
		for (gj = gi + 1; gj < ng; gj++) {
			long met = 0;

			na = hn[gi];
			nb = hn[gj];
			for (size_t i = 0; i < na; i++)
				for (size_t j = 0; j < nb; j++) {
					lc->across++;
					if (h[gi][i] == h[gj][j] || !measured(lc->got, lc->ng, h[gi][i], h[gj][j]))
						continue;
					met++;
					lc->sampled++;
					crossed[h[gi][i]] = crossed[h[gj][j]] = 1;
				}
			lc->gpairs++;
			if (!met && !lc->gpairs_bare++ && !lc->bare &&
			    asprintf(&lc->bare, "no link measured between groups %s and %s",
				     str(json_array_get(groups, gi), "name") ?: "?",
				     str(json_array_get(groups, gj), "name") ?: "?") < 0)
				lc->bare = NULL;
		}
	for (gi = 0; ng > 1 && gi < ng; gi++)
		for (size_t i = 0; i < hn[gi]; i++)
			if (!crossed[h[gi][i]] && !lc->hosts_bare++ && !lc->bare &&
			    asprintf(&lc->bare, "no link measured from %s to another group",
				     lc->e->host_names[h[gi][i]]) < 0)
				lc->bare = NULL;
	rc = 0;
out:
	for (gi = 0; h && gi < ng; gi++)
		free(h[gi]);
	free(h);
	free(hn);
	free(crossed);
	return rc;
}

/*
 * The links of each netpair run's header that are due, those not measured
 * named: "3 of 6 links not measured: node0-node3, ..." (malloc'd), NULL when
 * all were. Every pair of the header's hosts (N(N-1)/2) for the all-pairs
 * tournament; for the grouped schedule, every pair inside a group, and
 * across groups the sample's coverage (grouped_links). *sampled (malloc'd,
 * NULL for no grouped run) says what was sampled by design, for the reason of
 * a verdict that passes. A link missing is never a pass on the rest
 * (docs/profiles.md). Counted by host index, a bit per pair of hosts (8 MiB
 * at LINKS_BITMAP_HOSTS; above, not counted and said so, as links_missing_all
 * does for inputs of different host sets); out of memory is said, never a pass.
 */
static char *links_missing_grouped(const struct eval *e, const struct crit_state *s, char **sampled)
{
	struct link_count lc = { .e = e, .nh = (size_t)e->nhosts };
	unsigned long long *got = NULL;
	char *t = NULL, *cover = NULL, *names = NULL;
	int oom = 1;

	*sampled = NULL;
	if (s->c->scope != SC_LINK || !streq(s->c->probe, "netpair") || s->c->derived)
		return NULL;
	if (lc.nh > LINKS_BITMAP_HOSTS) {
		if (asprintf(&t, "the links of netpair inputs with a grouped run, %zu hosts in all, not counted "
			     "(at most %d hosts)", lc.nh, LINKS_BITMAP_HOSTS) < 0)
			t = NULL;
		oom = !t;
		goto out;
	}
	got = links_measured(e, s, &lc.ng);
	lc.got = got;
	if ((s->nel && !got) || !(lc.seen = calloc((lc.nh * lc.nh + 7) / 8 ? (lc.nh * lc.nh + 7) / 8 : 1, 1)))
		goto out;
	for (int k = 0; k < e->nin; k++) {
		const json_t *hdr = e->in[k].header;
		const json_t *groups = json_object_get(json_object_get(hdr, "topology"), "groups");
		size_t n;
		int *hh;

		if (!e->in[k].netpair)
			continue;
		if (streq(str(json_object_get(hdr, "pair_schedule"), "schedule"), "grouped") &&
		    json_array_size(groups)) {
			if (grouped_links(&lc, groups))
				goto out;
			continue;
		}
		lc.full = 1;
		if (!(hh = header_hosts(e, k, &n)))
			goto out;
		for (size_t i = 0; i < n; i++)
			for (size_t j = i + 1; j < n; j++)
				due_link(&lc, hh[i], hh[j]);
		free(hh);
	}
	if (lc.nnamed && !(names = pair_names(e, lc.named, lc.nnamed)))
		goto out;
	if (lc.grouped && asprintf(sampled, "links across groups sampled by design: %ld of %ld measured, "
				   "every pair of groups and every host covered", lc.sampled, lc.across) < 0)
		*sampled = NULL;
	if (lc.gpairs_bare || lc.hosts_bare) {
		if (asprintf(&cover, "the sample across groups misses %ld of %ld group pairs and %ld host(s): %s",
			     lc.gpairs_bare, lc.gpairs, lc.hosts_bare, lc.bare ?: "?") < 0)
			goto out;
	}
	if (lc.nmiss && asprintf(&t, "%ld of %ld links%s not measured: %s%s%.0ld%s", lc.nmiss, lc.ndue,
				 !lc.grouped ? "" : lc.full ? " (inside groups, or of an all-pairs run)" :
				 " inside groups",
				 names ?: "", lc.nmiss > NAMES_LISTED ? " (and " : "",
				 lc.nmiss > NAMES_LISTED ? lc.nmiss - NAMES_LISTED : 0,
				 lc.nmiss > NAMES_LISTED ? " more)" : "") < 0)
		goto out;
	t = join(t, cover);
	oom = 0;
out:
	if (oom) {
		free(t);
		t = strdup("the links due not counted: out of memory");
	}
	free(cover);
	free(names);
	free(lc.seen);
	free(lc.bare);
	free(got);
	return t;
}

/*
 * The links due and not measured (NULL when all were), *sampled what a
 * grouped run sampled by design: runs of the grouped schedule are counted by
 * name over their groups (links_missing_grouped); all-pairs runs alone, the
 * usual case and a hostile header's, by host index (links_missing_all).
 */
static char *links_missing(const struct eval *e, const struct crit_state *s, char **sampled)
{
	*sampled = NULL;
	for (int k = 0; k < e->nin; k++) {
		const json_t *hdr = e->in[k].header;

		if (e->in[k].netpair && streq(str(json_object_get(hdr, "pair_schedule"), "schedule"), "grouped") &&
		    json_array_size(json_object_get(json_object_get(hdr, "topology"), "groups")))
			return links_missing_grouped(e, s, sampled);
	}
	return links_missing_all(e, s);
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
	json_t *host = NULL, *bound = NULL, *bytes = NULL, *zero;

	if (!idx)
		return;
	zero = json_real(0);
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
		double b = elem_bound(s->c, p);
		/* built directly: tens of thousands of them, and the names are read as UTF-8 already */
		json_t *v = json_object();

		/* a value repeated from the last element (its host, bound, size, no spread) is shared */
		if (!host || strcmp(json_string_value(host), el->host)) {
			json_decref(host);
			host = json_stringn_nocheck(el->host, strlen(el->host));
		}
		if (!bound || json_real_value(bound) != b) {
			json_decref(bound);
			bound = json_real(b);
		}
		if (!bytes || json_integer_value(bytes) != (json_int_t)p->bytes) {
			json_decref(bytes);
			bytes = json_integer((json_int_t)p->bytes);
		}
		json_object_set_new_nocheck(v, "element", json_stringn_nocheck(el->name, strlen(el->name)));
		json_object_set_nocheck(v, "host", host);
		json_object_set_new_nocheck(v, "value", json_real(p->value));
		json_object_set_nocheck(v, "bound", bound);
		json_object_set_new_nocheck(v, "spread_pct", p->spread ? json_real(p->spread) : json_incref(zero));
		json_object_set_nocheck(v, "bytes", bytes);
		json_array_append_new(s->values, v);
	}
	json_decref(host);
	json_decref(bound);
	json_decref(bytes);
	json_decref(zero);
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
	char *missing = NULL, *partial = NULL, *also = NULL, *odd = NULL, *t, *sampled = NULL;
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
			/* named up to VALUES_MAX, as values are; the reason counts them all */
			if (json_array_size(s->incomplete) < VALUES_MAX)
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
	t = links_missing(e, s, &sampled);
	missing = join(missing, t);
	free(t);
	t = links_one_way(s);
	missing = join(missing, t);
	free(t);
	t = rail_pairs_missing(e, s);
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
		set_reason(s, "%d of %d %s%s within the bound%s%s%s%s%s", njudged, njudged, what,
			   njudged > 1 ? "s" : "", ol, odd ? "; " : "", odd ?: "",
			   sampled ? "; " : "", sampled ?: "");
	} else {
		s->verdict = V_PASS;
		set_reason(s, "%d of %d %s%s within the bound%s%s", njudged, njudged,
			   what, njudged > 1 ? "s" : "", sampled ? "; " : "", sampled ?: "");
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
	free(sampled);
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
	json_decref(e->isolate_rounds);
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
	for (int j = 0; j < SEL_MEMO; j++)
		free(e->memo[j].idx);
	json_decref(e->device_ids);
	json_decref(e->identity);
	json_decref(e->manifest);
	free(e->np);
	soak_free(e);
	memset(e, 0, sizeof(*e));
}
