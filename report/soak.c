/*
 * report/soak.c: the stability of a soak (ccprobe --soak). Every "soak"
 * record's value (busbw_GBps of a collective, bw_GBps of a probe) joins the
 * series of its element in one input: a netpair link (both directions), or
 * a collective on the cluster. After the inputs, each soak criterion gets,
 * per element, one of the statistics of its metric (docs/profiles.md):
 *
 *   soak_cv     100 x sample stddev / mean                      %, lower is better
 *   soak_worst  100 x the lowest interval / the median          %, higher is better
 *   soak_drops  intervals below drop_below x the median         count, lower is better
 *
 * The median is the reference, not the mean or the best: one fast or slow
 * interval moves it least. A series of fewer than SOAK_MIN_INTERVALS is no
 * evidence: its element is incomplete, never judged.
 */
#include "soak.h"
#include "eval_state.h"
#include "profile.h"
#include "record.h"
#include "report.h"
#include "../core/stats.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The soak metrics: the only list (docs/profiles.md). */
enum soak_stat { ST_CV, ST_WORST, ST_DROPS };
static const struct soak_metric {
	const char *name;
	enum soak_stat stat;
	const char *unit;
	int higher;              /* 1: higher is better */
	double max;              /* the largest bound, in the bound's own terms */
} metrics[] = {
	{ "soak_cv", ST_CV, "%", 0, 10 },          /* up to 1000 % */
	{ "soak_drops", ST_DROPS, "count", 0, 1e9 },
	{ "soak_worst", ST_WORST, "%", 1, 1 },     /* a fraction of the median, at most all of it */
};
#define NMETRICS (sizeof(metrics) / sizeof(metrics[0]))

static const struct soak_metric *metric_of(const char *name)
{
	for (size_t i = 0; name && i < NMETRICS; i++)
		if (!strcmp(metrics[i].name, name))
			return &metrics[i];
	return NULL;
}

int soak_metric(const char *name, const char **unit, int *higher)
{
	const struct soak_metric *m = metric_of(name);

	if (!m)
		return 0;
	*unit = m->unit;
	*higher = m->higher;
	return 1;
}

int soak_stats(const double *v, int n, double drop_below, struct soak_stats *out)
{
	struct stats st;

	memset(out, 0, sizeof(*out));
	if (n <= 0 || stats_compute(v, (size_t)n, &st))
		return -1;
	out->n = n;
	out->median = st.median;
	out->mean = st.mean;
	out->cv = st.cv;
	out->worst = v[0];
	for (int i = 1; i < n; i++)
		if (v[i] < out->worst) {
			out->worst = v[i];
			out->worst_at = i;
		}
	out->worst_ratio = st.median > 0 ? out->worst / st.median : 1;
	for (int i = 0; i < n; i++)
		out->drops += v[i] < drop_below * st.median;
	return 0;
}

int soak_bound(struct criterion *c, const char *s, int has_op, char *err, size_t len)
{
	const struct soak_metric *m = metric_of(c->metric);
	char *end;
	double x;

	errno = 0;
	x = strtod(s, &end);
	while (*end == ' ')
		end++;
	if (m->stat != ST_DROPS && *end == '%') {
		x /= 100;
		end++;
	}
	if (end == s || errno || *end || !isfinite(x) || x < 0 || x > m->max ||
	    (m->stat == ST_DROPS && x != floor(x))) {
		if (m->stat == ST_DROPS)
			snprintf(err, len, "bound '%s': expected [>=|<=] COUNT (a whole number of intervals)",
				 c->bound_text);
		else
			snprintf(err, len, "bound '%s': expected [>=|<=] FRACTION (0.2) or PERCENT (20%%), "
				 "at most %g", c->bound_text, m->max);
		return -1;
	}
	if (!has_op)
		c->ge = m->higher;
	c->bound = m->stat == ST_DROPS ? x : 100 * x;
	return 0;
}

const char *soak_needs(const struct criterion *c)
{
	if (!c->probe == !c->collective)
		return "exactly one of 'probe' or 'collective' (the one soaked)";
	if (c->size != SIZE_PLATEAU || c->min_nodes || c->repeat_best)
		return "no 'size', 'nodes' or 'repeat' (a soak is one size, judged as a series)";
	if (c->drop_below > 0 && metric_of(c->metric)->stat != ST_DROPS)
		return "metric soak_drops for 'drop_below'";
	if (!c->bound_text)
		return "'bound'";
	if (c->collective && c->scope >= 0 && c->scope != SC_CLUSTER)
		return "scope cluster (a collective's soak is judged for the whole job)";
	if (c->probe && c->scope < 0)
		return "'scope' (link for netpair)";
	return NULL;
}

/* ---- the series ---- */

/* One element's interval values in one input, in record order. */
struct series {
	char *name, *test, *backend, *dtype, *op;  /* NULL when the records lack them */
	char *scope, *element, *host;
	int input;               /* the input it came from (e->nin when read) */
	double *v;
	int *slow;               /* collectives: the slowest rank's host of each interval (hosts), or -1 */
	int n, cap;
	long nobus;              /* records of one rank: busbw 0 by definition, no measurement */
	long fake;               /* records of the test transport: never judged */
};

struct soak_state {
	struct htab idx;         /* key -> series */
	struct series *s;
	int ns, caps;
	struct htab hosts;       /* the slowest hosts' names -> index into host */
	char **host;
	int nhosts, caphosts;
};

/* a string field of the record's object parent (the reader's flat view) */
static const char *str_in(const struct rv *r, const char *parent, const char *key)
{
	for (int i = 0; i < r->n; i++)
		if (r->f[i].parent && !strcmp(r->f[i].parent, parent) && !strcmp(r->f[i].key, key))
			return r->f[i].type == 's' ? r->f[i].str : NULL;
	return NULL;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int host_id(struct soak_state *st, const char *name)
{
	int i;

	if (!name)
		return -1;
	i = htab_get(&st->hosts, name);
	if (i >= 0)
		return i;
	if (st->nhosts == st->caphosts) {
		int cap = st->caphosts ? 2 * st->caphosts : 16;
		char **h = realloc(st->host, (size_t)cap * sizeof(*h));

		if (!h)
			return -2;
		st->host = h;
		st->caphosts = cap;
	}
	st->host[st->nhosts] = strdup(name);
	if (!st->host[st->nhosts] || htab_put(&st->hosts, name, st->nhosts))
		return -2;
	return st->nhosts++;
}

static struct series *series_get(struct eval *e, const struct rv *r)
{
	struct soak_state *st = e->soak;
	const char *name = rv_str(r, "name"), *el = rv_str(r, "element"), *scope = rv_str(r, "scope");
	const char *test = rv_str(r, "test"), *be = rv_str(r, "backend"), *dt = rv_str(r, "dtype");
	const char *op = rv_str(r, "op");
	struct series *s;
	char *key;
	int i;

	if (asprintf(&key, "%d|%s|%s|%s|%s|%s|%s|%s", e->nin, name, test ?: "", be ?: "", dt ?: "",
		     op ?: "", scope ?: "", el ?: "") < 0)
		return NULL;
	i = htab_get(&st->idx, key);
	if (i >= 0) {
		free(key);
		return &st->s[i];
	}
	if (st->ns == st->caps) {
		int cap = st->caps ? 2 * st->caps : 16;
		struct series *v = realloc(st->s, (size_t)cap * sizeof(*v));

		if (!v) {
			free(key);
			return NULL;
		}
		st->s = v;
		st->caps = cap;
	}
	s = &st->s[st->ns];
	memset(s, 0, sizeof(*s));
	s->input = e->nin;
	s->name = strdup(name);
	s->test = dup_or_null(test);
	s->backend = dup_or_null(be);
	s->dtype = dup_or_null(dt);
	s->op = dup_or_null(op);
	s->scope = strdup(scope ?: "cluster");
	s->element = strdup(el ?: "cluster");
	s->host = dup_or_null(rv_str(r, "host"));
	if (!s->name || !s->scope || !s->element || htab_put(&st->idx, key, st->ns)) {
		free(key);
		return NULL;
	}
	free(key);
	st->ns++;
	return s;
}

int soak_note(struct eval *e, const struct rv *r)
{
	struct series *s;
	double v, factor;
	int slow = -1, nobus;

	/* a record without a name or a value joins no series: nothing to judge it by */
	if (!rv_str(r, "name") || (rv_num(r, NULL, "busbw_GBps", &v) && rv_num(r, NULL, "bw_GBps", &v)) ||
	    !isfinite(v))
		return 0;
	/* one rank moves nothing: its busbw is 0 by definition, no measurement (as eval.c) */
	nobus = !rv_num(r, NULL, "busbw_GBps", &v) && !rv_num(r, NULL, "busbw_factor", &factor) &&
		factor == 0;
	if (!e->soak && !(e->soak = calloc(1, sizeof(*e->soak))))
		return -1;
	s = series_get(e, r);
	if (!s)
		return -1;
	if (nobus) {
		s->nobus++;
		return 0;
	}
	/* the test transport's figures are no evidence (docs/profiles.md): counted, not kept */
	if (rv_str(r, "transport") && !strcmp(rv_str(r, "transport"), "fake")) {
		s->fake++;
		return 0;
	}
	if (s->n == s->cap) {
		int cap = s->cap ? 2 * s->cap : 16;
		double *nv = realloc(s->v, (size_t)cap * sizeof(*nv));
		int *ns;

		if (!nv)
			return -1;
		s->v = nv;
		ns = realloc(s->slow, (size_t)cap * sizeof(*ns));
		if (!ns)
			return -1;
		s->slow = ns;
		s->cap = cap;
	}
	slow = host_id(e->soak, str_in(r, "slowest", "host"));
	if (slow == -2)
		return -1;
	s->slow[s->n] = slow;
	s->v[s->n++] = v;
	return 0;
}

/* the criterion names what the series is (a field both name must agree) */
static int field_ok(const char *want, const char *have)
{
	return !want || (have && !strcmp(want, have));
}

static int matches(const struct criterion *c, const struct series *s)
{
	return !strcmp(s->name, c->collective ? c->collective : c->probe) &&
	       field_ok(c->test, s->test) && field_ok(c->backend, s->backend) &&
	       field_ok(c->dtype, s->dtype) && field_ok(c->op, s->op);
}

static void why_none(struct crit_state *cs, const char *why)
{
	if (!cs->why_none)
		cs->why_none = strdup(why);
}

/* one criterion: every matching series of its scope is an element */
static void judge_soak(struct eval *e, struct crit_state *cs)
{
	const struct criterion *c = cs->c;
	const struct soak_metric *m = metric_of(c->metric);
	struct soak_state *st = e->soak;
	double drop = c->drop_below > 0 ? c->drop_below : SOAK_DROP_BELOW;
	int matched = 0, other_scope = 0, kinds = 0, judged = 0, nobus = 0;
	const struct series *first = NULL;
	char msg[512];

	/* several collective series (dtypes, backends) on one cluster: each named apart */
	for (int i = 0; st && i < st->ns; i++)
		if (matches(c, &st->s[i]) && !strcmp(st->s[i].scope, "cluster")) {
			const struct series *s = &st->s[i];

			if (!first)
				first = s;
			if (!field_ok(first->backend, s->backend) || !field_ok(first->dtype, s->dtype) ||
			    !field_ok(first->op, s->op))
				kinds = 1;
		}
	for (int i = 0; st && i < st->ns; i++) {
		const struct series *s = &st->s[i];
		struct soak_stats ss;
		const char *host = s->host;
		char el[512];
		double value;

		if (!matches(c, s))
			continue;
		if (strcmp(s->scope, rpt_scope_name(c->scope))) {
			other_scope++;
			continue;
		}
		matched++;
		if (!s->n && s->fake) {
			/* judge() says "not judged: N record(s) from the test transport" */
			cs->fake += s->fake;
			judged++;
			continue;
		}
		snprintf(el, sizeof(el), "%s", s->element);
		if (kinds)
			snprintf(el, sizeof(el), "%s (%s %s %s)", s->element, s->backend ?: "-",
				 s->dtype ?: "-", s->op ?: "-");
		if (s->n < SOAK_MIN_INTERVALS || soak_stats(s->v, s->n, drop, &ss)) {
			nobus += !s->n && s->nobus;
			eval_add_element(cs, el, host, NAN);
			continue;
		}
		/* a collective's element is the cluster: its host is the node of the slowest
		 * rank in the worst interval, the one to look at first */
		if (s->slow[ss.worst_at] >= 0)
			host = st->host[s->slow[ss.worst_at]];
		value = m->stat == ST_CV ? 100 * ss.cv : m->stat == ST_WORST ? 100 * ss.worst_ratio :
			(double)ss.drops;
		eval_add_element(cs, el, host, value);
		judged++;
	}
	if (!matched && other_scope)
		snprintf(msg, sizeof(msg), "the soak records of %s are of another scope than %s",
			 c->collective ? c->collective : c->probe, rpt_scope_name(c->scope));
	else if (!matched)
		snprintf(msg, sizeof(msg), "no soak records of %s%s%s (ccprobe --soak DURATION %s)",
			 c->collective ? c->collective : c->probe, c->backend ? " " : "",
			 c->backend ?: "", c->collective ? c->collective : c->probe);
	if (!matched) {
		why_none(cs, msg);
	} else if (!judged && nobus == matched) {
		snprintf(msg, sizeof(msg), "the soak records of %s carry no busbw (one rank moves "
			 "nothing: busbw is 0 by definition)", c->collective ? c->collective : c->probe);
		why_none(cs, msg);
	} else if (!judged) {
		snprintf(msg, sizeof(msg), "fewer than %d intervals in every soak series of %s "
			 "(a longer --soak, or a shorter --soak-interval)", SOAK_MIN_INTERVALS,
			 c->collective ? c->collective : c->probe);
		why_none(cs, msg);
	}
}

void soak_build(struct eval *e)
{
	for (int i = 0; i < e->ncs; i++)
		if (e->cs[i].c->derived == DERIVED_SOAK)
			judge_soak(e, &e->cs[i]);
}

void soak_free(struct eval *e)
{
	struct soak_state *st = e->soak;

	if (!st)
		return;
	for (int i = 0; i < st->ns; i++) {
		struct series *s = &st->s[i];

		free(s->name);
		free(s->test);
		free(s->backend);
		free(s->dtype);
		free(s->op);
		free(s->scope);
		free(s->element);
		free(s->host);
		free(s->v);
		free(s->slow);
	}
	free(st->s);
	htab_free(&st->idx);
	for (int i = 0; i < st->nhosts; i++)
		free(st->host[i]);
	free(st->host);
	htab_free(&st->hosts);
	free(st);
	e->soak = NULL;
}
