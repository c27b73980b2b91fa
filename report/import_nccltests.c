/*
 * report/import_nccltests.c: the text output of NVIDIA's nccl-tests
 * (all_reduce_perf, all_gather_perf, ...): one collective record per results
 * row, the "Using devices" block as hosts, ranks and a GPU inventory per host.
 * Formats understood (docs/import.md): the device lines of every release
 * ("Rank N Group G Pid P on HOST device D [DDDD:BB:DD] MODEL", the older
 * "Rank N Pid P on HOST device D [0xBB] MODEL" and "Rank N on HOST ..."), the
 * column header that names the columns (out-of-place and in-place groups,
 * "#wrong" or "error", per-iteration i_* columns, timestamps), lines prefixed
 * by mpirun or srun ("[1,0]<stdout>:", "[0] ", "0: ").
 */
#include "import.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXTOK 64

/* the collectives and their busbw factors (docs/formulas.md) */
static const struct coll {
	const char *name;        /* ccprobe's name; the program is NAME_perf */
	int factor;              /* 0: 2(n-1)/n, 1: (n-1)/n, 2: 1 */
} colls[] = {
	{ "all_gather", 1 }, { "all_reduce", 0 }, { "alltoall", 1 }, { "broadcast", 2 },
	{ "gather", 1 }, { "hypercube", 1 }, { "reduce", 2 }, { "reduce_scatter", 1 },
	{ "scatter", 1 }, { "sendrecv", 2 },
};
#define NCOLLS (sizeof(colls) / sizeof(colls[0]))

static double factor_of(const struct coll *c, int n)
{
	if (n < 1)
		return NAN;
	return c->factor == 0 ? 2.0 * (n - 1) / n : c->factor == 1 ? (double)(n - 1) / n : 1.0;
}

/* a collective named in s ("all_reduce_perf", a file name "logs/all_gather_perf.out") */
static const struct coll *coll_in(const char *s)
{
	const struct coll *best = NULL;

	/* the longest name that occurs: reduce_scatter before reduce, all_gather before gather */
	for (size_t i = 0; i < NCOLLS; i++)
		if (strstr(s, colls[i].name) && (!best || strlen(colls[i].name) > strlen(best->name)))
			best = &colls[i];
	return best;
}

/* the part of a line after an mpirun/srun prefix */
static void strip_prefix(const char **s, size_t *n)
{
	const char *p = *s, *e = *s + *n;

	if (p < e && *p == '[') {
		const char *q = memchr(p, ']', e - p);

		if (q && q - p < 24 && strspn(p + 1, "0123456789,") == (size_t)(q - p - 1) && q > p + 1) {
			q++;
			if (e - q >= 9 && !memcmp(q, "<stdout>:", 9))
				q += 9;
			else if (e - q >= 9 && !memcmp(q, "<stderr>:", 9))
				q += 9;
			if (q < e && *q == ' ' && !(q + 1 < e && q[1] == ' '))
				q++;
			*n = e - q;
			*s = q;
			return;
		}
	}
	/* srun --label: "  3: " */
	{
		const char *q = p;

		while (q < e && *q == ' ')
			q++;
		if (q < e && *q >= '0' && *q <= '9') {
			const char *d = q;

			while (d < e && *d >= '0' && *d <= '9')
				d++;
			if (d < e && *d == ':' && d - q < 7 && (d + 1 == e || d[1] == ' ')) {
				d += d + 1 < e ? 2 : 1;
				*n = e - d;
				*s = d;
			}
		}
	}
}

struct cols {
	int n;                   /* columns named by the header; 0 before it */
	int size, count, type, redop, root;
	int time[2], alg[2], bus[2], wrong[2];
	int imin, imax, ip99, icv;
};

static int col_header(struct cols *c, char **tok, int k)
{
	int g = -1;

	memset(c, -1, sizeof(*c));
	for (int i = 1; i < k; i++) {
		const char *t = tok[i];

		if (!strcmp(t, "size")) c->size = i - 1;
		else if (!strcmp(t, "count")) c->count = i - 1;
		else if (!strcmp(t, "type")) c->type = i - 1;
		else if (!strcmp(t, "redop")) c->redop = i - 1;
		else if (!strcmp(t, "root")) c->root = i - 1;
		else if ((!strcmp(t, "time") || !strcmp(t, "cputime")) && g < 1) c->time[++g] = i - 1;
		else if (!strcmp(t, "algbw") && g >= 0) c->alg[g] = i - 1;
		else if (!strcmp(t, "busbw") && g >= 0) c->bus[g] = i - 1;
		else if ((!strcmp(t, "#wrong") || !strcmp(t, "error") || !strcmp(t, "wrong")) && g >= 0)
			c->wrong[g] = i - 1;
		else if (!strcmp(t, "i_min") && g == 0) c->imin = i - 1;
		else if (!strcmp(t, "i_max") && g == 0) c->imax = i - 1;
		else if (!strcmp(t, "i_p99") && g == 0) c->ip99 = i - 1;
		else if (!strcmp(t, "i_cv%") && g == 0) c->icv = i - 1;
	}
	c->n = 0;
	if (c->size != 0 || c->type < 0 || c->time[0] < 0 || c->alg[0] < 0 || c->bus[0] < 0)
		return -1;
	for (int i = 0; i < (int)(sizeof(*c) / sizeof(int)); i++)
		if (((int *)c)[i] + 1 > c->n)
			c->n = ((int *)c)[i] + 1;
	return 0;
}

struct dev {
	int rank, device;
	char host[256], bus[32], model[128];
	long line;
};

struct st {
	struct imp *im;
	const char *program;     /* from "Collective test starting" */
	char prog[64], version[64], nccl[32];
	long long nthread, ngpus, minb, maxb, step, warmup, iters, validation, graph;
	int step_factor, have_config;
	struct dev *devs;
	int ndevs;
	struct cols cols;
	int rows, footer;
	double avg_bw;
	long long oob;
	const struct coll *coll;
};

static int parse_config(struct st *st, char **tok, int k)
{
	/* nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 ... */
	for (int i = 0; i + 1 < k; i++) {
		long long v;

		if (!strcmp(tok[i], "nThread") && !imp_int(tok[i + 1], &v)) st->nthread = v;
		else if (!strcmp(tok[i], "nGpus") && !imp_int(tok[i + 1], &v)) st->ngpus = v;
		else if (!strcmp(tok[i], "minBytes") && !imp_int(tok[i + 1], &v)) st->minb = v;
		else if (!strcmp(tok[i], "maxBytes") && !imp_int(tok[i + 1], &v)) st->maxb = v;
		else if (!strcmp(tok[i], "step:")) {
			st->step = atoll(tok[i + 1]);
			st->step_factor = strstr(tok[i + 1], "factor") != NULL;
		} else if (!strcmp(tok[i], "iters:") && !imp_int(tok[i + 1], &v)) {
			if (i > 0 && !strcmp(tok[i - 1], "warmup")) st->warmup = v;
			else if (!(i > 0 && !strcmp(tok[i - 1], "agg"))) st->iters = v;
		} else if (!strcmp(tok[i], "validation:") && !imp_int(tok[i + 1], &v)) st->validation = v;
		else if (!strcmp(tok[i], "graph:") && !imp_int(tok[i + 1], &v)) st->graph = v;
	}
	return 0;
}

/* "#  Rank  3 Group  0 Pid 4242 on node07 device  3 [0000:9d:00] NVIDIA H100 80GB HBM3" */
static int parse_device(struct st *st, const char *s, size_t n, long line)
{
	char buf[1024], *tok[MAXTOK];
	int k = imp_tokens(s, n, buf, sizeof(buf), tok, MAXTOK), i = 1;
	struct dev d = { .line = line };
	long long v;
	size_t at = 0;
	struct dev *nd;

	if (k < 2 || imp_int(tok[i++], &v) || v < 0 || v > 1000000)
		return imp_fail(st->im, line, "a 'Rank' line without its rank number");
	d.rank = (int)v;
	while (i < k && strcmp(tok[i], "on"))
		i++;
	if (i + 4 > k || strcmp(tok[i + 2], "device") || imp_int(tok[i + 3], &v))
		return imp_fail(st->im, line, "a 'Rank' line that does not read 'on HOST device N'");
	snprintf(d.host, sizeof(d.host), "%s", tok[i + 1]);
	d.device = (int)v;
	i += 4;
	if (i < k && tok[i][0] == '[') {
		unsigned dom, bus, dv;

		if (sscanf(tok[i], "[%x:%x:%x]", &dom, &bus, &dv) == 3)
			snprintf(d.bus, sizeof(d.bus), "%04x:%02x:%02x.0", dom, bus, dv);
		i++;
	}
	for (; i < k && at < sizeof(d.model) - 1; i++)
		at += snprintf(d.model + at, sizeof(d.model) - at, "%s%s", at ? " " : "", tok[i]);
	for (int j = 0; j < st->ndevs; j++)
		if (st->devs[j].rank == d.rank)
			return imp_fail(st->im, line, "rank %d listed twice (two runs' device lists mixed?)",
					d.rank);
	nd = realloc(st->devs, (st->ndevs + 1) * sizeof(*nd));
	if (!nd)
		return imp_fail(st->im, line, "out of memory");
	st->devs = nd;
	st->devs[st->ndevs++] = d;
	return 0;
}

static const struct coll *infer_coll(struct st *st, const char *redop, const char *root, double alg,
				     double bus, long line)
{
	const struct coll *c = st->program ? coll_in(st->program) : NULL;
	int n = st->ndevs;

	if (c)
		return c;
	c = coll_in(st->im->file);
	if (c)
		return c;
	/* older releases print no program name: what the row's factor and operator tell */
	if (alg > 0 && n > 1) {
		double f = bus / alg;
		int reduces = strcmp(redop, "none") != 0;

		if (fabs(f - 2.0 * (n - 1) / n) < 0.02)
			return coll_in("all_reduce");
		if (fabs(f - (double)(n - 1) / n) < 0.02 && reduces)
			return coll_in("reduce_scatter");
		if (fabs(f - 1) < 0.02 && strcmp(root, "-1"))
			return coll_in(reduces ? "reduce" : "broadcast");
		if (fabs(f - 1) < 0.02)
			return coll_in("sendrecv");
	}
	imp_fail(st->im, line, "cannot tell which collective this nccl-tests output measured (no "
		 "'# Collective test starting' line, older than 2.17?): name the file after the "
		 "program, e.g. all_gather_perf.log");
	return NULL;
}

/* a figure, or null where the column says N/A (or holds what no figure is) */
static json_t *num_or_null(const char *t)
{
	double v;

	return imp_count(t, &v) ? json_null() : json_real(v);
}

static int parse_row(struct st *st, char **tok, int k, long line, int unterminated)
{
	const struct cols *c = &st->cols;
	double bytes, count = -1, t, alg, bus, w0 = NAN, w1 = NAN, nodes, f;
	const char *type, *redop, *root;
	json_t *rec, *tus, *ip;

	if (!c->n)
		return imp_fail(st->im, line, "a results row before the column header ('#  size  count ...')");
	if (k < c->n)
		return imp_fail(st->im, line, unterminated ?
				"truncated results row (the file ends inside it)" :
				"results row with %d columns, the header names %d", k, c->n);
	if (st->footer)
		return imp_fail(st->im, line, "a results row after the 'Avg bus bandwidth' footer (two runs "
				"in one file? give them separately)");
	if (imp_count(tok[c->size], &bytes) || imp_count(tok[c->time[0]], &t) ||
	    imp_count(tok[c->alg[0]], &alg) || imp_count(tok[c->bus[0]], &bus) ||
	    (c->count >= 0 && imp_count(tok[c->count], &count)))
		return imp_fail(st->im, line, "malformed results row: a size, count, time or bandwidth is not a "
				"number of at least 0");
	type = tok[c->type];
	redop = c->redop >= 0 ? tok[c->redop] : "none";
	root = c->root >= 0 ? tok[c->root] : "-1";
	if (c->wrong[0] >= 0 && strcmp(tok[c->wrong[0]], "N/A") && imp_count(tok[c->wrong[0]], &w0))
		return imp_fail(st->im, line, "malformed results row: #wrong '%s'", tok[c->wrong[0]]);
	if (c->wrong[1] >= 0 && strcmp(tok[c->wrong[1]], "N/A") && imp_count(tok[c->wrong[1]], &w1))
		return imp_fail(st->im, line, "malformed results row: #wrong '%s'", tok[c->wrong[1]]);
	if ((isfinite(w0) ? w0 : 0) + (isfinite(w1) ? w1 : 0) > IMP_MAX)
		return imp_fail(st->im, line, "malformed results row: more wrong elements than any run has");
	if (!st->coll && !(st->coll = infer_coll(st, redop, root, alg, bus, line)))
		return -1;
	nodes = (double)json_array_size(st->im->hosts);
	f = factor_of(st->coll, st->ndevs);
	tus = json_pack("{s:f}", "mean", t);
	if (st->iters > 0)
		json_object_set_new(tus, "n", json_integer(st->iters));
	if (c->imin >= 0) {
		json_object_set_new(tus, "min", num_or_null(tok[c->imin]));
		json_object_set_new(tus, "max", num_or_null(tok[c->imax >= 0 ? c->imax : c->imin]));
		if (c->ip99 >= 0)
			json_object_set_new(tus, "p99", num_or_null(tok[c->ip99]));
		if (c->icv >= 0 && !imp_count(tok[c->icv], &t) && t / 100 <= 1e6)
			json_object_set_new(tus, "cv", json_real(t / 100));
	}
	rec = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:I, s:o, s:i, s:I, s:o, s:f, s:f, s:f}",
			"type", "measurement", "kind", "collective", "name", st->coll->name, "backend", "nccl",
			"memory", "device", "dtype", type, "op", redop,
			"root", strcmp(root, "-1") && atoll(root) >= 0 ? json_integer(atoll(root)) : json_null(),
			"bytes", (json_int_t)bytes,
			"count", count >= 0 ? json_integer((json_int_t)count) : json_null(),
			"ranks", st->ndevs, "nodes", (json_int_t)nodes, "time_us", tus,
			"algbw_GBps", alg, "busbw_GBps", bus, "busbw_factor", isfinite(f) ? f : 0.0);
	if (!rec)
		return imp_fail(st->im, line, "out of memory");
	if (st->iters > 0)
		json_object_set_new(rec, "iters", json_integer(st->iters));
	if (st->warmup >= 0)
		json_object_set_new(rec, "warmup", json_integer(st->warmup));
	/* wrong: both placements' mismatches; absent when the run did not check (-c 0: N/A) */
	if (isfinite(w0) || isfinite(w1))
		json_object_set_new(rec, "wrong", json_integer((json_int_t)((isfinite(w0) ? w0 : 0) +
									   (isfinite(w1) ? w1 : 0))));
	if (c->time[1] >= 0 && c->alg[1] >= 0 && c->bus[1] >= 0) {
		ip = json_pack("{s:{s:o}, s:o, s:o}", "time_us", "mean", num_or_null(tok[c->time[1]]),
			       "algbw_GBps", num_or_null(tok[c->alg[1]]), "busbw_GBps",
			       num_or_null(tok[c->bus[1]]));
		if (ip && isfinite(w1))
			json_object_set_new(ip, "wrong", json_integer((json_int_t)w1));
		json_object_set_new(rec, "in_place", ip);
	}
	st->rows++;
	return imp_record(st->im, rec, line) ? imp_fail(st->im, line, "out of memory") : 0;
}

static int begin_run(struct st *st, long line, const char *what)
{
	if (st->have_config || st->rows)
		return imp_fail(st->im, line, "a second nccl-tests run starts here (%s; concatenated logs? "
				"give each run as its own file)", what);
	return 0;
}

static int hosts_and_gpus(struct st *st)
{
	struct imp *im = st->im;

	for (int i = 0; i < st->ndevs; i++) {
		int h = imp_host(im, st->devs[i].host);

		if (h < 0 || imp_host_rank(im, h, st->devs[i].rank))
			return imp_fail(im, 0, "out of memory");
	}
	im->world_size = st->ndevs;
	return 0;
}

static int inventories(struct st *st)
{
	struct imp *im = st->im;
	json_t *h;
	size_t i;

	/* one inventory per host: the GPUs the run used (not every GPU the host has) */
	json_array_foreach(im->hosts, i, h) {
		const char *name = json_string_value(json_object_get(h, "name"));
		json_t *gpus = json_array(), *rec;
		long line = 0;

		for (int k = 0; k < st->ndevs; k++) {
			const struct dev *d = &st->devs[k];
			char el[300];

			if (strcmp(d->host, name))
				continue;
			line = line ? line : d->line;
			snprintf(el, sizeof(el), "%s/gpu%d", d->host, d->device);
			json_array_append_new(gpus, json_pack("{s:i, s:s, s:s?, s:s, s:i}", "index", d->device,
							      "element", el, "bus_id", d->bus[0] ? d->bus : NULL,
							      "name", d->model, "rank", d->rank));
		}
		rec = json_pack("{s:s, s:s, s:s, s:o, s:b}", "type", "inventory", "kind", "gpu", "host", name,
				"gpus", gpus, "gpus_used_only", 1);
		if (imp_record(im, rec, line))
			return imp_fail(im, 0, "out of memory");
	}
	return 0;
}

static int nccl_parse(struct imp *im, const json_t *doc)
{
	struct st st = { .im = im, .warmup = -1, .validation = -1 };
	struct imp_lines l;
	const char *s;
	size_t n;
	long last = 0;
	int rc = -1;
	json_t *rows;

	(void)doc;
	/* rows are kept aside: the hosts (from the device block) come before them in the file */
	rows = im->recs;
	im->recs = json_array();
	imp_lines_init(&l, im->buf, im->size);
	while (imp_next_line(&l, &s, &n)) {
		char buf[2048], *tok[MAXTOK];
		int k;

		strip_prefix(&s, &n);
		k = imp_tokens(s, n, buf, sizeof(buf), tok, MAXTOK);
		if (!k)
			continue;
		last = l.no;
		if (tok[0][0] == '#') {
			/* "#" alone, or glued to the first word ("#wrong" is a column only) */
			int o = !strcmp(tok[0], "#") ? 1 : 0;
			const char *w = o < k ? tok[o] : "";

			if (!strcmp(w, "Rank")) {
				/* the tokens again from the line itself, "Rank" first */
				const char *p = memchr(s, 'R', n);

				if (!p || parse_device(&st, p, n - (p - s), l.no))
					goto out;
				continue;
			}
			if (!strcmp(w, "nccl-tests") && o + 2 < k && !strcmp(tok[o + 1], "version")) {
				if (begin_run(&st, l.no, "a second version line") || st.version[0])
					goto mixed;
				snprintf(st.version, sizeof(st.version), "%s", tok[o + 2]);
				for (int i = o + 3; i < k; i++)
					if (!strncmp(tok[i], "nccl-library=", 13)) {
						long long c = atoll(tok[i] + 13);

						if (c >= 20900)
							snprintf(st.nccl, sizeof(st.nccl), "%lld.%lld.%lld", c / 10000,
								 c % 10000 / 100, c % 100);
						else if (c > 0)
							snprintf(st.nccl, sizeof(st.nccl), "%lld.%lld.%lld", c / 1000,
								 c % 1000 / 100, c % 100);
					}
			} else if (!strcmp(w, "Collective") && o + 3 < k && !strcmp(tok[o + 2], "starting:")) {
				if (st.prog[0] || begin_run(&st, l.no, "a second 'Collective test starting'"))
					goto mixed;
				snprintf(st.prog, sizeof(st.prog), "%s", tok[o + 3]);
				st.program = st.prog;
			} else if (!strcmp(w, "nThread")) {
				if (begin_run(&st, l.no, "a second 'nThread' line"))
					goto out;
				parse_config(&st, tok, k);
				st.have_config = 1;
			} else if (!strcmp(w, "size") && k > 3) {
				/* a header that names no size/time/bandwidth columns leaves rows unreadable */
				if (o == 1 && col_header(&st.cols, tok, k))
					st.cols.n = 0;
			} else if (!strcmp(w, "Avg") && o + 3 < k && !strcmp(tok[o + 1], "bus")) {
				if (st.footer)
					goto mixed;
				st.footer = 1;
				if (imp_num(tok[k - 1], &st.avg_bw))
					imp_num(tok[k - 2], &st.avg_bw);
			} else if (!strcmp(w, "Out") && k > 4) {
				if (imp_int(tok[k - 2], &st.oob))
					imp_int(tok[k - 1], &st.oob);
			}
			continue;
		}
		/* releases of 2017 printed the settings without the "#" */
		if (!strcmp(tok[0], "nThread")) {
			if (begin_run(&st, l.no, "a second 'nThread' line"))
				goto out;
			parse_config(&st, tok, k);
			st.have_config = 1;
			continue;
		}
		if (tok[0][0] >= '0' && tok[0][0] <= '9' && strspn(tok[0], "0123456789") == strlen(tok[0])) {
			if (!st.ndevs) {
				imp_fail(im, l.no, "a results row before the '# Using devices' block: the ranks "
					 "and hosts cannot be known");
				goto out;
			}
			if (!json_array_size(im->hosts) && hosts_and_gpus(&st))
				goto out;
			if (parse_row(&st, tok, k, l.no, l.unterminated))
				goto out;
			/* the row went to im->recs: move it behind the header's inventories */
			json_array_append(rows, json_array_get(im->recs, json_array_size(im->recs) - 1));
			json_array_remove(im->recs, json_array_size(im->recs) - 1);
			continue;
		}
		/* nccl-tests' own failure lines: the run did not finish */
		/* s is not NUL-terminated: the line is n bytes of the input */
		if (memmem(s, n, "Test NCCL failure", 17) || memmem(s, n, "Test CUDA failure", 17) ||
		    memmem(s, n, "Test failure", 12) || memmem(s, n, "Test timeout", 12)) {
			imp_fail(im, l.no, "nccl-tests reports a failure: %.*s", (int)(n > 160 ? 160 : n), s);
			goto out;
		}
		/* anything else (NCCL INFO lines, launcher warnings) is not nccl-tests' report */
	}
	if (!st.rows) {
		imp_fail(im, last, "an nccl-tests output without a results row (cut short before the first size?)");
		goto out;
	}
	if (!st.footer) {
		imp_fail(im, last, "truncated nccl-tests output: no 'Avg bus bandwidth' line after the last "
			 "size (the run did not finish, or the log was cut)");
		goto out;
	}
	if (inventories(&st))
		goto out;
	json_array_extend(im->recs, rows);
	json_object_set_new(im->extra, "version", json_string(st.version[0] ? st.version : "unknown"));
	if (st.nccl[0])
		json_object_set_new(im->extra, "versions", json_pack("{s:s}", "nccl", st.nccl));
	json_object_set_new(im->extra, "program", st.program ? json_string(st.program) : json_null());
	json_object_set_new(im->extra, "options", json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
		"backend", "nccl", "min_bytes", (json_int_t)st.minb, "max_bytes", (json_int_t)st.maxb,
		st.step_factor ? "step_factor" : "step_bytes", (json_int_t)st.step,
		"iters", (json_int_t)st.iters, "warmup", (json_int_t)st.warmup,
		"check_iters", (json_int_t)st.validation, "nthreads", (json_int_t)st.nthread,
		"ngpus", (json_int_t)st.ngpus));
	json_object_set_new(im->extra, "avg_busbw_GBps", json_real(st.avg_bw));
	json_object_set_new(im->extra, "out_of_bounds", json_integer(st.oob));
	rc = 0;
	goto out;
mixed:
	if (!im->err[0])
		imp_fail(im, l.no, "a second nccl-tests run starts here (concatenated logs? give each run "
			 "as its own file)");
out:
	json_decref(rows);
	free(st.devs);
	return rc;
}

static int nccl_detect(const char *buf, size_t n, const json_t *doc)
{
	size_t m = n < 65536 ? n : 65536;

	(void)doc;
	return (memmem(buf, m, "nThread ", 8) && memmem(buf, m, "nGpus ", 6)) ||
	       memmem(buf, m, "# nccl-tests version", 20) || memmem(buf, m, "# Collective test starting", 26);
}

const struct importer import_nccltests = {
	.name = "nccl-tests",
	.what = "all_reduce_perf, all_gather_perf, ... text output (any release)",
	.detect = nccl_detect,
	.parse = nccl_parse,
};
