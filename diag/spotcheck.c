/*
 * diag/spotcheck.c: ccdiag spot-check (spotcheck.h, docs/provenance.md).
 *
 * The received run is judged by this ccreport from its phase files; a
 * random sample of its nodes and links is measured again through main.c's
 * launcher; each received figure of the sample is compared with the best of
 * up to three reruns. Noise only slows a rerun down, so the direction that
 * matters is a received figure far better than what the cluster does now.
 */
#include "spotcheck.h"
#include "../core/spawn.h"
#include "../report/profile.h"
#include "../report/report.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SPOT_TRIES 3             /* reruns of a figure that is not reproduced, the best kept */

enum { SC_OK = 0, SC_NOT = 1, SC_USAGE = 2, SC_INCOMPLETE = 4 };
enum { F_UNSEEN, F_REPRODUCED, F_SLOWER, F_NOT };

/* one received figure of the sample: a criterion's value of one element */
struct fig {
	char *crit, *element, *unit;
	char *a, *b;             /* the hosts it belongs to: a node's (b NULL), or a link's two ends */
	double bytes;
	int higher;              /* 1: more is better (the metric table's direction) */
	double received, spread; /* the received value and the spread its records report (fraction) */
	double now;              /* the best rerun value; NAN until one is measured */
	int tries;
	double ratio, tol;       /* now against received (> 1 better), the tolerance applied */
	int verdict;
};

struct spot {
	const struct spot_args *a;
	const struct spot_ops *ops;
	struct profile prof;
	struct strv hosts;       /* the received run's hosts */
	struct fig *f;
	int nf;
	struct strv nodes, links;    /* the sample: node names; links as "A\tB" */
	int judged;              /* ccreport runs of reruns, for their folder names */
};

/* "ccdiag: spot-check: ..." */
#define say(...) sayf(stdout, "spot-check: " __VA_ARGS__)

/* xorshift64*: the sample's order, repeatable with --seed */
static unsigned long long next_rand(unsigned long long *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

/* k of the n items of from, at random, into to (in the order drawn) */
static void sample(const struct strv *from, int k, unsigned long long *seed, struct strv *to)
{
	int n = from->n, *idx = xmalloc((size_t)(n ? n : 1) * sizeof(int));

	for (int i = 0; i < n; i++)
		idx[i] = i;
	for (int i = 0; i < n && i < k; i++) {
		int j = i + (int)(next_rand(seed) % (unsigned long long)(n - i)), t = idx[i];

		idx[i] = idx[j];
		idx[j] = t;
		strv_add(to, from->v[idx[i]]);
	}
	free(idx);
}

static const struct criterion *crit_of(const struct spot *s, const char *id)
{
	for (int i = 0; i < s->prof.ncrit; i++)
		if (!strcmp(s->prof.crit[i].id, id))
			return &s->prof.crit[i];
	return NULL;
}

/* a criterion whose values are figures of one node or link: measured, not derived, not a count */
static int comparable(const struct criterion *c)
{
	return c && c->probe && !c->derived && c->scope != SC_CLUSTER && strcmp(c->unit, "count");
}

/* the two hosts of a link element "A-B" (host names may hold '-': matched on the run's hosts) */
static int link_ends(const struct strv *hosts, const char *el, char **a, char **b)
{
	for (int i = 0; i < hosts->n; i++) {
		size_t n = strlen(hosts->v[i]);

		if (!strncmp(el, hosts->v[i], n) && el[n] == '-' && strv_find(hosts, el + n + 1) >= 0) {
			*a = xstrdup(hosts->v[i]);
			*b = xstrdup(el + n + 1);
			return 0;
		}
	}
	return -1;
}

/* ccreport -p PROFILE --no-render -q -o dir files: its summary.json, or NULL (said) */
static json_t *judge(const struct spot *s, const char *dir, const struct strv *files, const char *what)
{
	struct strv cmd = { 0 };
	char *out = NULL, *err = NULL, *path = xasprintf("%s/summary.json", dir);
	json_t *sum = NULL;
	int rc;

	strv_add(&cmd, s->a->ccreport);
	strv_add(&cmd, "-p");
	strv_add(&cmd, s->a->profile);
	strv_add(&cmd, "--no-render");
	strv_add(&cmd, "-q");
	strv_add(&cmd, "-o");
	strv_add(&cmd, dir);
	strv_addv(&cmd, files);
	rc = spawn_capture(cmd.v, &out, &err, 600);
	if (rc == 0 || rc == 1 || rc == 4)
		sum = json_load_file(path, 0, NULL);
	if (!sum) {
		char *e = err && *err ? err : out ? out : "";

		e[strcspn(e, "\n")] = '\0';
		say("ccreport cannot judge %s (exit %d): %s", what, rc, *e ? e : "no summary.json");
	}
	strv_free(&cmd);
	free(out);
	free(err);
	free(path);
	return sum;
}

/* the received figures: every value of a comparable criterion in the received summary */
static void received_figures(struct spot *s, const json_t *sum)
{
	const json_t *c, *v;
	size_t i, j;

	json_array_foreach(json_object_get(sum, "criteria"), i, c) {
		const char *id = json_string_value(json_object_get(c, "id"));
		const struct criterion *cr = crit_of(s, id ? id : "");

		if (!comparable(cr))
			continue;
		json_array_foreach(json_object_get(c, "values"), j, v) {
			const char *el = json_string_value(json_object_get(v, "element"));
			const char *host = json_string_value(json_object_get(v, "host"));
			const json_t *val = json_object_get(v, "value");
			struct fig f = { 0 };

			if (!el || !json_is_number(val))
				continue;
			if (cr->scope == SC_LINK ? link_ends(&s->hosts, el, &f.a, &f.b) : !host)
				continue;
			if (cr->scope != SC_LINK)
				f.a = xstrdup(host);
			f.crit = xstrdup(id);
			f.element = xstrdup(el);
			f.unit = xstrdup(cr->unit);
			f.higher = cr->higher;
			f.bytes = json_number_value(json_object_get(v, "bytes"));
			f.received = json_number_value(val);
			f.spread = json_number_value(json_object_get(v, "spread_pct")) / 100.0;
			f.now = NAN;
			s->f = realloc(s->f, (size_t)(s->nf + 1) * sizeof(*s->f));
			if (!s->f)
				abort();
			s->f[s->nf++] = f;
		}
	}
}

/* the better of two values of a figure */
static double better(const struct fig *f, double x, double y)
{
	if (isnan(x))
		return y;
	if (isnan(y))
		return x;
	return f->higher ? fmax(x, y) : fmin(x, y);
}

/* a rerun's results file, judged; its values kept where better */
static void merge_rerun(struct spot *s, const char *results, const char *what)
{
	struct strv files = { 0 };
	char *dir = xasprintf("%s/judged-%d", s->a->out, ++s->judged);
	json_t *sum;
	const json_t *c, *v;
	size_t i, j;

	strv_add(&files, results);
	sum = judge(s, dir, &files, what);
	json_array_foreach(json_object_get(sum, "criteria"), i, c) {
		const char *id = json_string_value(json_object_get(c, "id"));

		json_array_foreach(json_object_get(c, "values"), j, v) {
			const char *el = json_string_value(json_object_get(v, "element"));
			const json_t *val = json_object_get(v, "value");

			if (!id || !el || !json_is_number(val))
				continue;
			for (int k = 0; k < s->nf; k++) {
				struct fig *f = &s->f[k];

				if (!strcmp(f->crit, id) && !strcmp(f->element, el) &&
				    f->bytes == json_number_value(json_object_get(v, "bytes"))) {
					f->now = better(f, f->now, json_number_value(val));
					f->tries++;
				}
			}
		}
	}
	json_decref(sum);
	strv_free(&files);
	free(dir);
}

/* now against received: above 1 the cluster does better now, whatever the metric's direction */
static double ratio_of(const struct fig *f)
{
	if (f->received == f->now)
		return 1;
	if (f->higher)
		return f->received > 0 ? f->now / f->received : INFINITY;
	return f->now > 0 ? f->received / f->now : 0;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

/*
 * Each figure's verdict. Reproduced: the cluster does at least received x
 * (1 - tol) now. Otherwise it is weighed against what the cluster does now as
 * a whole, g: the upper quartile of all ratios (at most 1; a received figure
 * that was itself slow does not make the others look inflated). With g within
 * the tolerance the cluster is as fast as received, and the figure stands
 * out: not reproduced. With g below it the cluster is slower now: a figure in
 * line with g cannot be confirmed or refuted ("slower now"); one below g by
 * more than the tolerance is not reproduced even so. Returns g.
 */
static double weigh(struct spot *s)
{
	double *r = xmalloc((size_t)(s->nf ? s->nf : 1) * sizeof(double)), g = 1;
	int n = 0;

	for (int i = 0; i < s->nf; i++) {
		struct fig *f = &s->f[i];

		f->verdict = F_UNSEEN;
		if (isnan(f->now))
			continue;
		f->ratio = ratio_of(f);
		f->tol = fmax(s->a->tol, f->spread);
		r[n++] = f->ratio;
	}
	if (n) {
		qsort(r, (size_t)n, sizeof(double), cmp_double);
		g = fmin(1.0, r[(int)ceil(0.75 * n) - 1]);
	}
	for (int i = 0; i < s->nf; i++) {
		struct fig *f = &s->f[i];

		if (isnan(f->now))
			continue;
		if (f->ratio >= 1 - f->tol)
			f->verdict = F_REPRODUCED;
		else if (g >= 1 - f->tol || f->ratio < g * (1 - f->tol))
			f->verdict = F_NOT;
		else
			f->verdict = F_SLOWER;
	}
	free(r);
	return g;
}

/* the hosts of the figures not reproduced yet, among those of what: "node" or "pairs" */
static void unreproduced_hosts(const struct spot *s, int links, struct strv *hosts)
{
	for (int i = 0; i < s->nf; i++) {
		const struct fig *f = &s->f[i];

		if ((f->verdict != F_NOT && f->verdict != F_SLOWER) || (f->b != NULL) != links)
			continue;
		if (strv_find(hosts, f->a) < 0)
			strv_add(hosts, f->a);
		if (f->b && strv_find(hosts, f->b) < 0)
			strv_add(hosts, f->b);
	}
}

/* hosts in the received run's order */
static void in_run_order(const struct spot *s, struct strv *hosts)
{
	struct strv o = { 0 };

	for (int i = 0; i < s->hosts.n; i++)
		if (strv_find(hosts, s->hosts.v[i]) >= 0)
			strv_add(&o, s->hosts.v[i]);
	strv_free(hosts);
	*hosts = o;
}

static void rerun_pairs(struct spot *s, struct strv *hosts, int attempt)
{
	char *dir, *f;

	if (hosts->n < 2)
		return;
	in_run_order(s, hosts);
	dir = xasprintf("%s/pairs-%d", s->a->out, attempt);
	f = s->ops->run(s->ops->ctx, "pairs", hosts, dir);
	if (f)
		merge_rerun(s, f, dir);
	free(f);
	free(dir);
}

static void rerun_node(struct spot *s, const char *host, int attempt)
{
	struct strv one = { 0 };
	char *dir = xasprintf("%s/node-%s-%d", s->a->out, host, attempt), *f;

	strv_add(&one, host);
	f = s->ops->run(s->ops->ctx, "node", &one, dir);
	if (f)
		merge_rerun(s, f, dir);
	free(f);
	free(dir);
	strv_free(&one);
}

static char *num(double v, char *buf, size_t len)
{
	snprintf(buf, len, "%.4g", v);
	return buf;
}

/* spotcheck.json: the sample, every figure compared, the verdict */
static void write_json(const struct spot *s, double g, const char *verdict, const struct strv *named)
{
	json_t *figs = json_array(), *doc, *nodes = json_array(), *links = json_array(), *nm = json_array();
	char *path = xasprintf("%s/spotcheck.json", s->a->out);
	static const char *const words[] = { "not_measured", "reproduced", "slower_now", "not_reproduced" };

	for (int i = 0; i < s->nodes.n; i++)
		json_array_append_new(nodes, json_string(s->nodes.v[i]));
	for (int i = 0; i < s->links.n; i++) {
		char *t = xstrdup(s->links.v[i]), *tab = strchr(t, '\t');

		*tab = '\0';
		json_array_append_new(links, json_pack("[s, s]", t, tab + 1));
		free(t);
	}
	for (int i = 0; i < named->n; i++)
		json_array_append_new(nm, json_string(named->v[i]));
	for (int i = 0; i < s->nf; i++) {
		const struct fig *f = &s->f[i];

		if (f->verdict == F_UNSEEN)
			continue;
		json_array_append_new(figs, json_pack("{s:s, s:s, s:s, s:f, s:f, s:f, s:f, s:i, s:s}",
			"criterion", f->crit, "element", f->element, "unit", f->unit, "received", f->received,
			"now", f->now, "ratio", isfinite(f->ratio) ? f->ratio : 1e9, "tolerance", f->tol,
			"tries", f->tries, "verdict", words[f->verdict]));
	}
	doc = json_pack("{s:s, s:s, s:I, s:i, s:f, s:{s:o, s:o}, s:f, s:o, s:o, s:s}", "against", s->a->against,
			"profile", s->prof.name, "seed", (json_int_t)s->a->seed, "k", s->a->k, "tolerance", s->a->tol,
			"sample", "nodes", nodes, "links", links, "cluster_now", g, "figures", figs,
			"not_reproduced_hosts", nm, "verdict", verdict);
	if (json_dump_file(doc, path, JSON_INDENT(1) | JSON_PRESERVE_ORDER))
		say("cannot write '%s'", path);
	json_decref(doc);
	free(path);
}

/* the received run's phase files, sorted */
static int phase_files(const char *dir, struct strv *files)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct strv names = { 0 };

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (!fnmatch("phase-*.jsonl", e->d_name, 0))
			strv_add(&names, e->d_name);
	closedir(d);
	for (int i = 1; i < names.n; i++)
		for (int j = i; j > 0 && strcmp(names.v[j], names.v[j - 1]) < 0; j--) {
			char *t = names.v[j];

			names.v[j] = names.v[j - 1];
			names.v[j - 1] = t;
		}
	for (int i = 0; i < names.n; i++)
		strv_addf(files, "%s/%s", dir, names.v[i]);
	strv_free(&names);
	return 0;
}

int spotcheck(const struct spot_args *a, const struct spot_ops *ops)
{
	struct spot s = { .a = a, .ops = ops };
	struct strv files = { 0 }, cand_nodes = { 0 }, cand_links = { 0 }, named = { 0 }, hosts = { 0 };
	char err[1024], *dir, b1[32], b2[32];
	unsigned long long seed = a->seed ? a->seed : 0x9e3779b97f4a7c15ull;
	const json_t *h;
	json_t *sum;
	size_t i;
	int rc = SC_USAGE, nrep = 0, nslow = 0, nnot = 0, nseen = 0;
	double g;

	if (profile_load(&s.prof, a->profile, err, sizeof(err))) {
		say("%s", err);
		return SC_USAGE;
	}
	if (phase_files(a->against, &files) || !files.n) {
		say("no phase-*.jsonl in '%s' (the received run's folder, as ccdiag run writes it)", a->against);
		goto out;
	}
	dir = xasprintf("%s/received", a->out);
	sum = judge(&s, dir, &files, a->against);
	free(dir);
	if (!sum)
		goto out;
	json_array_foreach(json_object_get(json_object_get(sum, "cluster"), "hosts"), i, h)
		if (json_string_value(h))
			strv_add(&s.hosts, json_string_value(h));
	received_figures(&s, sum);
	json_decref(sum);
	for (int k = 0; k < s.hosts.n; k++)
		if (a->reach && strv_find(a->reach, s.hosts.v[k]) < 0) {
			say("host '%s' of the received run is not one this launcher reaches (run the spot-check "
			    "on the same hosts: --hosts, -H, the Slurm allocation or --emulated N)", s.hosts.v[k]);
			goto out;
		}
	/* the sample: k of the nodes with figures of their own, k of the links */
	for (int k = 0; k < s.nf; k++) {
		if (!s.f[k].b && strv_find(&cand_nodes, s.f[k].a) < 0)
			strv_add(&cand_nodes, s.f[k].a);
		if (s.f[k].b) {
			char *l = xasprintf("%s\t%s", s.f[k].a, s.f[k].b);

			if (strv_find(&cand_links, l) < 0)
				strv_add(&cand_links, l);
			free(l);
		}
	}
	sample(&cand_nodes, a->k, &seed, &s.nodes);
	sample(&cand_links, a->k, &seed, &s.links);
	{
		char *n = strv_join(&s.nodes, " "), *l = strv_join(&s.links, " ");

		for (char *p = l; *p; p++)
			if (*p == '\t')
				*p = '-';
		say("%s: %d figure(s) of %d host(s); sample (seed %llu, --seed repeats it): node(s) %s; link(s) %s",
		    a->against, s.nf, s.hosts.n, a->seed, *n ? n : "none (the profile judges no node-local figure)",
		    *l ? l : "none (the profile judges no link)");
		free(n);
		free(l);
	}
	/* the reruns: the node phase per sampled node, the pairs phase on the sampled links' hosts */
	for (int k = 0; k < s.nodes.n; k++)
		rerun_node(&s, s.nodes.v[k], 1);
	for (int k = 0; k < s.links.n; k++) {
		char *t = xstrdup(s.links.v[k]), *tab = strchr(t, '\t');

		*tab = '\0';
		if (strv_find(&hosts, t) < 0)
			strv_add(&hosts, t);
		if (strv_find(&hosts, tab + 1) < 0)
			strv_add(&hosts, tab + 1);
		free(t);
	}
	rerun_pairs(&s, &hosts, 1);
	strv_free(&hosts);
	g = weigh(&s);
	/* what is not reproduced is measured again (noise only slows a rerun down), best kept */
	for (int attempt = 2; attempt <= SPOT_TRIES; attempt++) {
		struct strv nh = { 0 };

		unreproduced_hosts(&s, 0, &nh);
		for (int k = 0; k < nh.n; k++)
			rerun_node(&s, nh.v[k], attempt);
		strv_free(&nh);
		unreproduced_hosts(&s, 1, &nh);
		if (nh.n)
			say("%d host(s) of figures not reproduced, measured again (try %d of %d)", nh.n, attempt,
			    SPOT_TRIES);
		rerun_pairs(&s, &nh, attempt);
		strv_free(&nh);
		g = weigh(&s);
	}
	for (int k = 0; k < s.nf; k++) {
		const struct fig *f = &s.f[k];
		static const char *const words[] = { "", "reproduced", "COULD NOT REPRODUCE (the cluster is slower now)",
						     "NOT REPRODUCED" };

		if (f->verdict == F_UNSEEN)
			continue;
		nseen++;
		nrep += f->verdict == F_REPRODUCED;
		nslow += f->verdict == F_SLOWER;
		nnot += f->verdict == F_NOT;
		say("%s %s: received %s %s, now %s %s (best of %d; %.2f of the received, tolerance %.0f%%): %s",
		    f->crit, f->element, num(f->received, b1, sizeof(b1)), f->unit, num(f->now, b2, sizeof(b2)),
		    f->unit, f->tries, f->ratio, 100 * f->tol, words[f->verdict]);
	}
	/* a node whose every link figure, or a figure of its own, is not reproduced is named */
	for (int k = 0; k < s.hosts.n; k++) {
		const char *hn = s.hosts.v[k];
		int nl = 0, nlnot = 0, own = 0;

		for (int j = 0; j < s.nf; j++) {
			const struct fig *f = &s.f[j];

			if (f->verdict == F_UNSEEN || (strcmp(f->a, hn) && (!f->b || strcmp(f->b, hn))))
				continue;
			if (f->b) {
				nl++;
				nlnot += f->verdict == F_NOT;
			} else {
				own |= f->verdict == F_NOT;
			}
		}
		if (own || (nl >= 2 && nlnot == nl))
			strv_add(&named, hn);
	}
	if (!nseen) {
		say("COULD NOT CHECK: no figure of the sample was measured again (see the phase lines above)");
		write_json(&s, g, "not_measured", &named);
		rc = SC_INCOMPLETE;
	} else if (nnot) {
		char *n = strv_join(&named, ", ");

		say("NOT REPRODUCED: %d of %d received figure(s) are beyond what the cluster does now%s%s%s; "
		    "the cluster's other figures are at %.2f of the received ones", nnot, nseen,
		    *n ? " (on " : "", n, *n ? ")" : "", g);
		free(n);
		write_json(&s, g, "not_reproduced", &named);
		rc = SC_NOT;
	} else if (nslow) {
		say("COULD NOT REPRODUCE: the cluster is slower now (its figures at %.2f of the received ones, "
		    "%d of %d below the tolerance, none standing out): this neither confirms nor refutes the "
		    "received run; measure again on an idle cluster", g, nslow, nseen);
		write_json(&s, g, "slower_now", &named);
		rc = SC_INCOMPLETE;
	} else {
		say("REPRODUCED: all %d figure(s) of the sample within the tolerance (this checks the sample, "
		    "not every figure of the run: docs/provenance.md)", nseen);
		write_json(&s, g, "reproduced", &named);
		rc = SC_OK;
	}
out:
	for (int k = 0; k < s.nf; k++) {
		free(s.f[k].crit);
		free(s.f[k].element);
		free(s.f[k].unit);
		free(s.f[k].a);
		free(s.f[k].b);
	}
	free(s.f);
	strv_free(&files);
	strv_free(&cand_nodes);
	strv_free(&cand_links);
	strv_free(&named);
	strv_free(&s.hosts);
	strv_free(&s.nodes);
	strv_free(&s.links);
	profile_free(&s.prof);
	return rc;
}
