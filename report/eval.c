/*
 * report/eval.c: feeds records to the criteria and judges them. Memory is
 * bounded by what is judged, not by the number of records: per criterion and
 * element only the worst value at each of the PLATEAU_SIZES largest sizes is
 * kept (docs/profiles.md, "how values are aggregated").
 */
#include "report.h"
#include "../core/stats.h"

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
	e->versions = json_object();
	e->outliers = json_array();
	e->fits = json_object();
	e->ranks_of = json_object();
	e->scaling = json_array();
	e->estimate = json_null();
	if (!e->cs || !e->series || !e->diagnoses || !e->timeouts || !e->versions || !e->outliers ||
	    !e->fits || !e->ranks_of || !e->scaling)
		return -1;
	e->ncs = p->ncrit;
	for (int i = 0; i < p->ncrit; i++) {
		e->cs[i].c = &p->crit[i];
		e->cs[i].e = e;
	}
	return 0;
}

static int host_index(struct eval *e, const char *name)
{
	int i = htab_get(&e->hosts, name);

	if (i >= 0)
		return i;
	if (e->nhosts == e->caphosts) {
		int cap = e->caphosts ? e->caphosts * 2 : 16;
		char **v = realloc(e->host_names, cap * sizeof(*v));

		if (!v)
			return -1;
		e->host_names = v;
		e->caphosts = cap;
	}
	e->host_names[e->nhosts] = strdup(name);
	if (!e->host_names[e->nhosts] || htab_put(&e->hosts, name, e->nhosts))
		return -1;
	return e->nhosts++;
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
	if (c->collective) {
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

static int metric_value(const struct criterion *c, const struct rv *r, double *v)
{
	double f;

	if (c->npath == 1 ? rv_num(r, NULL, c->path[0], v) : rv_num(r, c->path[0], c->path[1], v))
		return -1;
	/* one rank moves nothing: its busbw is 0 by definition, no measurement (--scale, 1 node) */
	if (!strcmp(c->path[0], "busbw_GBps") && !rv_num(r, NULL, "busbw_factor", &f) && f == 0)
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

static int worse(const struct criterion *c, double a, double b)
{
	return c->ge ? a < b : a > b;
}

static struct elem *elem_get(struct crit_state *s, const char *name, const char *host)
{
	int i = htab_get(&s->idx, name), h;

	if (i >= 0)
		return &s->el[i];
	if (s->nel == s->capel) {
		int cap = s->capel ? s->capel * 2 : 16;
		struct elem *v = realloc(s->el, cap * sizeof(*v));

		if (!v)
			return NULL;
		s->el = v;
		s->capel = cap;
	}
	struct elem *el = &s->el[s->nel];

	/* names live once: in the element table, hosts in the eval's host table */
	memset(el, 0, sizeof(*el));
	h = host ? host_index(s->e, host) : -1;
	if ((host && h < 0) || htab_put(&s->idx, name, s->nel))
		return NULL;
	el->name = htab_key(&s->idx, name);
	el->host = h >= 0 ? s->e->host_names[h] : "";
	s->nel++;
	return el;
}

/*
 * Keeps the point of a record: one per size (any size counts as one at
 * SIZE_ANY) and direction. Repeats of the same size and direction keep the
 * worst, or with "repeat = best" the best (a retest that clears a moment of
 * noise); directions are combined later, always by the worst.
 */
static int add_point(const struct criterion *c, struct elem *el, const struct pt *p)
{
	int i, small = -1;

	if (!el->cap) {
		el->cap = (c->size == SIZE_PLATEAU ? PLATEAU_SIZES : 1) * (c->repeat_best ? 2 : 1);
		el->pt = malloc(el->cap * sizeof(*el->pt));
		if (!el->pt) {
			el->cap = 0;
			return -1;
		}
	}
	for (i = 0; i < el->n; i++)
		if (el->pt[i].bytes == p->bytes && el->pt[i].dir == p->dir) {
			if (c->repeat_best ? worse(c, el->pt[i].judged, p->judged) : worse(c, p->judged, el->pt[i].judged))
				el->pt[i] = *p;
			return 0;
		}
	if (el->n == el->cap) {
		/* the plateau needs only the largest sizes: the smallest one goes, all its directions */
		for (i = 0; i < el->n; i++)
			if (small < 0 || el->pt[i].bytes < el->pt[small].bytes)
				small = i;
		if (p->bytes < el->pt[small].bytes)
			return 0;
		long long drop = el->pt[small].bytes;

		for (i = 0; i < el->n;)
			if (el->pt[i].bytes == drop)
				el->pt[i] = el->pt[--el->n];
			else
				i++;
	}
	el->pt[el->n++] = *p;
	return 0;
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
	double bytes = 0, rate = 0;

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
	if (metric_value(c, r, &p.value)) {
		s->nometric++;
		return 0;
	}
	/* the test transport's figures are memory copies, never evidence (docs/profiles.md) */
	if (streq(rv_str(r, "transport"), "fake")) {
		s->fake++;
		return 0;
	}
	s->records++;
	el = elem_get(s, name, host);
	if (!el)
		return -1;
	el->records++;
	if (!rv_num(r, NULL, "rate_GBps", &rate) && rate > 0 && isfinite(rate))
		p.rate = rate * (streq(c->unit, "Gb/s") ? 8 : 1);
	if (c->relative > 0 && !p.rate) {
		el->norate++;
		return 0;
	}
	p.judged = c->relative > 0 ? p.value / p.rate : p.value;
	p.spread = spread_pct(c, r);
	return add_point(c, el, &p);
}

/* a value the model derived (model.c): one element, judged like a record's */
int eval_add_value(struct crit_state *s, const char *element, double value)
{
	struct pt p = { .judged = value, .value = value };
	struct elem *el = elem_get(s, element, NULL);

	if (!el)
		return -1;
	s->records++;
	el->records++;
	return add_point(s->c, el, &p);
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

static int note_netpair(struct eval *e, const struct rv *r)
{
	const char *src = rv_str(r, "src"), *dst = rv_str(r, "dst");
	double gb, pass = 1;
	int a, b;

	rv_num(r, NULL, "pass", &pass);
	if (!streq(rv_str(r, "test"), "bw_uni") || !src || !dst || rv_num(r, NULL, "bw_Gbps", &gb) || pass != 1)
		return 0;
	a = host_index(e, src);
	b = host_index(e, dst);
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

	e->ranks += json_integer_value(json_object_get(rec, "world_size"));
	json_array_foreach(hosts, i, h) {
		const char *name = str(h, "name");

		if (!name)
			continue;
		if (host_index(e, name) < 0)
			return -1;
		/* the header is rank 0's: its versions stand for every host of the run */
		if (mpi)
			consistency_note(e->versions, &e->vseen, "mpi_library", mpi, name);
		if (ver)
			consistency_note(e->versions, &e->vseen, "ccprobe", ver, name);
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

	if (!host)
		return;
	/* what the GPU inventory found is checked against the profile (summary.c) */
	if (streq(str(rec, "kind"), "gpu") && json_is_array(json_object_get(rec, "gpus"))) {
		const json_t *gpus = json_object_get(rec, "gpus"), *g;
		char n[32];
		size_t i;

		json_array_foreach(gpus, i, g)
			if (str(g, "name"))
				consistency_note(e->versions, &e->vseen, "gpu_model", str(g, "name"), host);
		snprintf(n, sizeof(n), "%zu", json_array_size(gpus));
		consistency_note(e->versions, &e->vseen, "gpu_count", n, host);
	}
	if (streq(str(rec, "kind"), "rdma")) {
		/* a fixture tree's devices and firmware are no host's */
		if (streq(str(rec, "transport"), "fake"))
			return;
		/* no device at all (no driver, no kernel support): the ib skip says so */
		if (json_array_size(json_object_get(rec, "devices")))
			note_nics(e, rec, host);
	}
	json_object_foreach(json_object_get(rec, "versions"), k, v)
		if (json_is_string(v))
			consistency_note(e->versions, &e->vseen, k, json_string_value(v), host);
}

static int note_diagnosis(struct eval *e, const json_t *rec)
{
	const char *subj = str(rec, "subject"), *v = str(rec, "verdict");
	const char *why = str(json_object_get(rec, "evidence"), "summary");
	char name[512], by[256] = "";

	if (!subj || !v)
		return 0;
	/* what names a culprit; explained links and transients add nothing to it */
	if (!strcmp(subj, "node") && (!strcmp(v, "bad") || !strcmp(v, "suspect") || !strcmp(v, "ambiguous"))) {
		snprintf(name, sizeof(name), "%s", str(rec, "host") ?: "?");
	} else if (!strcmp(subj, "link") && (!strcmp(v, "bad") || !strcmp(v, "ambiguous"))) {
		const json_t *r = json_object_get(rec, "ratio");

		snprintf(name, sizeof(name), "%s-%s", str(rec, "a") ?: "?", str(rec, "b") ?: "?");
		if (json_is_number(json_object_get(r, "bw")))
			snprintf(by, sizeof(by), "one-way bandwidth %.2f of the reference",
				 json_number_value(json_object_get(r, "bw")));
		why = by[0] ? by : NULL;
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

int eval_measurement(struct eval *e, const struct rv *r, char *err, size_t len)
{
	struct sel k;
	int rc = 0;

	sel_read(r, &k);
	if (streq(k.kind, "collective"))
		rc = note_series(e, r);
	else if (streq(k.kind, "fit"))
		rc = model_note_fit(e, r);
	else if (streq(k.kind, "probe") && streq(k.name, "netpair"))
		rc = note_netpair(e, r);
	else if (streq(k.kind, "probe") && streq(k.name, "storage"))
		rc = ckpt_note(e, r);
	for (int i = 0; !rc && i < e->ncs; i++)
		if (!e->cs[i].c->derived && selects(e->cs[i].c, &k, 1))
			rc = measure(&e->cs[i], r);
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

		struct sel k;

		r = malloc(sizeof(*r));
		if (!r) {
			snprintf(err, len, "out of memory");
			return -1;
		}
		rv_from_json(rec, r);
		sel_read(r, &k);
		for (int i = 0; i < e->ncs; i++) {
			struct crit_state *s = &e->cs[i];

			if (!selects(s->c, &k, 0))
				continue;
			if (skip ? s->skips++ : s->errors++)
				continue;
			if (skip)
				s->skip_reason = strdup(why ?: "skipped");
			else
				s->error_msg = strdup(why ?: "error");
		}
		free(r);
	} else if (!streq(type, "end")) {
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
		if (read_input(e, paths[i], NULL, 0, err, len))
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
 * The value judged: at a fixed size (or any), the worst record; at the
 * plateau, the median of the worst values at the largest sizes (with two
 * sizes, the worse one).
 */
void elem_value(const struct criterion *c, const struct elem *el, struct pt *out)
{
	struct pt v[2 * PLATEAU_SIZES];
	int n = 0;

	/* the worst direction at each size */
	for (int i = 0; i < el->n; i++) {
		int k;

		for (k = 0; k < n && v[k].bytes != el->pt[i].bytes; k++)
			;
		if (k == n)
			v[n++] = el->pt[i];
		else if (worse(c, el->pt[i].judged, v[k].judged))
			v[k] = el->pt[i];
	}
	if (n <= 1) {
		*out = v[0];
		return;
	}
	/* the plateau: the largest PLATEAU_SIZES sizes, their median (worse of the middle two) */
	qsort(v, n, sizeof(*v), cmp_bytes_desc);
	if (n > PLATEAU_SIZES)
		n = PLATEAU_SIZES;
	qsort(v, n, sizeof(*v), c->ge ? cmp_judged_ge : cmp_judged_le);
	*out = v[(n - 1) / 2];
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

static int find_outliers(struct eval *e, struct crit_state *s, const struct pt *vals, const int *judged)
{
	const struct criterion *c = s->c;
	double *v, med, tol = c->outlier_tol;
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
	med = stats_median(v, n);
	free(v);
	for (int i = 0; i < s->nel; i++) {
		const struct pt *p = &vals[i];
		double off = c->ge ? (med - p->judged) / med : (p->judged - med) / med;
		double peer = c->relative > 0 ? med * p->rate : med;

		/* elements that fail their bound are named there already */
		if (!judged[i] || med <= 0 || off <= tol || worse(c, p->judged, c->relative > 0 ? c->relative : c->bound))
			continue;
		/* named up to VALUES_MAX per criterion, all counted */
		if (found++ >= VALUES_MAX)
			continue;
		json_array_append_new(e->outliers, json_pack("{s:s, s:s, s:s, s:f, s:f, s:f, s:s}",
			"criterion", c->id, "element", s->el[i].name, "host", s->el[i].host,
			"value", p->value, "peer_median", peer, "below_pct", 100 * off, "unit", c->unit));
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

	return worse(w->c, x, y) ? -1 : worse(w->c, y, x) ? 1 : 0;
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

static void judge(struct eval *e, struct crit_state *s)
{
	const struct criterion *c = s->c;
	struct pt *vals = calloc(s->nel ? s->nel : 1, sizeof(*vals));
	int *judged = calloc(s->nel ? s->nel : 1, sizeof(*judged));
	int nfail = 0, norate = 0, njudged = 0, outl, worst = -1;
	char *missing = NULL;
	/* what an element is, in the reason */
	const char *what = c->derived == DERIVED_SCALING ? "node count" :
			   c->derived ? "estimate" : rpt_scope_name(c->scope);

	s->failures = json_array();
	s->values = json_array();
	if (!vals || !judged || !s->failures || !s->values)
		goto out;
	for (int i = 0; i < s->nel; i++) {
		struct elem *el = &s->el[i];
		struct pt *p = &vals[i];
		double b;

		if (!el->n) {
			norate++;
			continue;
		}
		elem_value(c, el, p);
		judged[i] = 1;
		njudged++;
		b = elem_bound(c, p);
		if (worst < 0 || worse(c, p->judged, vals[worst].judged))
			worst = i;
		if (!worse(c, p->judged, c->relative > 0 ? c->relative : c->bound))
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

	if (nfail) {
		s->verdict = c->fail ? V_FAIL : V_WARN;
		set_reason(s, "%d of %d %s%s below the bound%s%s", nfail, njudged,
			   what, njudged > 1 ? "s" : "",
			   s->skips || missing ? "; also incomplete: " : "",
			   s->skip_reason ? s->skip_reason : missing ? missing : "");
		if (!c->ge)
			memcpy(strstr(s->reason, "below"), "above", 5);
	} else if (s->errors) {
		s->verdict = c->fail ? V_FAIL : V_WARN;
		set_reason(s, "%ld measurement(s) failed: %s", s->errors, s->error_msg);
	} else if (s->skips) {
		s->verdict = V_INCOMPLETE;
		set_reason(s, "%s", s->skip_reason);
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
			   s->nometric && !strcmp(c->metric, "rate_GBps") ?
			   "no rate reported (the probe did not know the link's rate)" :
			   s->nometric ? "the records have no such metric" :
			   s->scope_mismatch ? "the records are of another scope" :
			   s->other_size ? "no record at this size" : "not in the results");
	} else if (norate) {
		s->verdict = V_INCOMPLETE;
		set_reason(s, "incomplete: no rate reported for %d of %d %ss (the bound is a fraction of it)",
			   norate, s->nel, what);
	} else if (missing) {
		s->verdict = V_INCOMPLETE;
		set_reason(s, "incomplete: %s", missing);
	} else if (outl) {
		s->verdict = V_WARN;
		set_reason(s, "%d of %d %ss within the bound, %d outlier(s) below their peers", njudged,
			   njudged, what, outl);
	} else {
		s->verdict = V_PASS;
		set_reason(s, "%d of %d %s%s within the bound", njudged, njudged,
			   what, njudged > 1 ? "s" : "");
	}
out:
	free(missing);
	free(vals);
	free(judged);
}

void eval_finish(struct eval *e)
{
	model_build(e);
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
		free(s->reason);
		json_decref(s->failures);
		json_decref(s->values);
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
	json_decref(e->versions);
	json_decref(e->outliers);
	json_decref(e->fits);
	json_decref(e->ranks_of);
	json_decref(e->scaling);
	json_decref(e->estimate);
	json_decref(e->storage_write);
	json_decref(e->checkpoint);
	free(e->np);
	memset(e, 0, sizeof(*e));
}
