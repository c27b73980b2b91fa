/*
 * report/import_ior.c: IOR's output (hpc/ior 3.2 to 4.0): the JSON summary
 * (-O summaryFormat=JSON: "tests" with each test's "Parameters", "Options"
 * and per-repetition "Results", then "summary") and the default text (the
 * options block, the per-repetition "access bw(MiB/s) ..." table and "Summary
 * of all tests"). Per test and operation one cluster record of the storage
 * probe (docs/storage.md): IOR's bandwidth is every task's bytes over the
 * repetition's time from the first open to the last close, the aggregate the
 * probe writes at scope cluster. IOR prints MiB/s (2^20 bytes); records say
 * GB/s (1e9 bytes/s). docs/import.md says what IOR cannot say.
 */
#include "import.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TESTS 64
#define MAX_REPS 1024
#define MAXTOK 48
#define MIB 1048576.0

enum { OP_WRITE, OP_READ, OP_N };
static const char *const ops[OP_N] = { "write", "read" };

struct op {
	double bw[MAX_REPS];     /* MiB/s per repetition */
	int nrep;
	int summ;                /* the summary's figures are known */
	double max, min, mean, sd, ops_mean; /* MiB/s; ops/s */
	long line;               /* its summary row or first result */
};

struct itest {
	long long id;
	char path[512];          /* the test file's name */
	long long nodes, tasks, tpn, reps, fpp, reorder, random, fsync;
	long long xfer, block, segments;
	struct op op[OP_N];
	long line;
};

struct st {
	struct imp *im;
	struct itest t[MAX_TESTS];
	int nt;
	char version[64], host[256];
	int finished;
};

static struct itest *test_of(struct st *st, long long id, long line)
{
	for (int i = 0; i < st->nt; i++)
		if (st->t[i].id == id)
			return &st->t[i];
	if (st->nt == MAX_TESTS) {
		imp_fail(st->im, line, "more than %d IOR tests in one output", MAX_TESTS);
		return NULL;
	}
	memset(&st->t[st->nt], 0, sizeof(st->t[0]));
	st->t[st->nt].id = id;
	st->t[st->nt].line = line;
	/* -1: the output did not say */
	st->t[st->nt].nodes = st->t[st->nt].tasks = st->t[st->nt].tpn = st->t[st->nt].reps = -1;
	st->t[st->nt].fpp = st->t[st->nt].reorder = st->t[st->nt].random = st->t[st->nt].fsync = -1;
	st->t[st->nt].xfer = st->t[st->nt].block = st->t[st->nt].segments = -1;
	return &st->t[st->nt++];
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* one test's operation as the storage probe's cluster record */
static int emit(struct st *st, const struct itest *t, int o)
{
	struct imp *im = st->im;
	const struct op *p = &t->op[o];
	double v[MAX_REPS], med, mean = 0, sd = 0, mn, mx, k = MIB / 1e9;
	char test[32], el[600], dir[512];
	const char *slash = strrchr(t->path, '/');
	json_t *r;
	int n = p->nrep;

	if (!n && !p->summ)
		return 0;
	if (n) {
		memcpy(v, p->bw, n * sizeof(double));
		qsort(v, n, sizeof(double), cmp_double);
		med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
		for (int i = 0; i < n; i++)
			mean += v[i] / n;
		for (int i = 0; i < n; i++)
			sd += (v[i] - mean) * (v[i] - mean) / n;
		sd = sqrt(sd);
		mn = v[0];
		mx = v[n - 1];
	} else {
		/* the summary alone: its mean stands for the median */
		med = mean = p->mean;
		sd = p->sd;
		mn = p->min;
		mx = p->max;
		n = t->reps > 0 ? (int)t->reps : 1;
	}
	snprintf(test, sizeof(test), "%s%s", t->random > 0 ? "rand_" : "", ops[o]);
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - t->path) : (int)strlen(t->path), t->path);
	snprintf(el, sizeof(el), "storage:%s", dir[0] ? dir : t->path[0] ? "." : "unknown");
	r = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:f, s:{s:i, s:f, s:f, s:f, s:f, s:f}, s:I}",
		      "type", "measurement", "kind", "probe", "name", "storage", "test", test, "scope",
		      "cluster", "element", el, "bw_GBps", med * k, "bw_stats_GBps", "n", n, "min", mn * k,
		      "median", med * k, "mean", mean * k, "max", mx * k, "cv", mean > 0 ? sd / mean : 0.0,
		      "ior_test", (json_int_t)t->id);
	if (!r)
		return imp_fail(im, 0, "out of memory");
	if (dir[0])
		json_object_set_new(r, "dir", json_string(dir));
	if (t->xfer > 0)
		json_object_set_new(r, "bytes", json_integer(t->xfer));
	if (t->block > 0)
		json_object_set_new(r, "shard_bytes", json_integer(t->block * (t->segments > 0 ? t->segments : 1)));
	if (t->block > 0 && t->tasks > 0)
		json_object_set_new(r, "total_bytes", json_integer(t->block * (t->segments > 0 ? t->segments : 1) *
								    t->tasks));
	if (t->tasks > 0)
		json_object_set_new(r, "ranks", json_integer(t->tasks));
	if (t->nodes > 0)
		json_object_set_new(r, "nodes", json_integer(t->nodes));
	if (p->summ && p->ops_mean >= 0)
		json_object_set_new(r, "iops", json_real(p->ops_mean));
	if (t->fpp >= 0)
		json_object_set_new(r, "file_per_proc", json_boolean(t->fpp > 0));
	/* -C: a task reads what a task on another node wrote, as the storage probe does */
	if (o == OP_READ && t->reorder >= 0)
		json_object_set_new(r, "reorder", json_string(t->reorder > 0 ? "IOR -C: another node's file" :
							      "none: a task may read from its own page cache"));
	if (t->fsync >= 0 && o == OP_WRITE)
		json_object_set_new(r, "fsync", json_boolean(t->fsync > 0));
	json_object_set_new(r, "unknown", json_pack("{s:s}", "wrong", "IOR's summary does not count data errors "
						     "(-R and -W print them to its log)"));
	if (t->random > 0)
		json_object_set_new(json_object_get(r, "unknown"), "lat_us.p99",
				    json_string("IOR prints no latency percentiles"));
	return imp_record(im, r, p->line ?: t->line) ? imp_fail(im, 0, "out of memory") : 0;
}

static int finish(struct st *st, long last)
{
	struct imp *im = st->im;
	int any = 0;

	for (int i = 0; i < st->nt; i++)
		for (int o = 0; o < OP_N; o++) {
			any |= st->t[i].op[o].nrep > 0 || st->t[i].op[o].summ;
			if (emit(st, &st->t[i], o))
				return -1;
		}
	if (!any)
		return imp_fail(im, last, "IOR output with no write or read result: nothing to judge");
	if (imp_host(im, st->host[0] ? st->host : "rank0") != 0 || imp_host_rank(im, 0, 0))
		return imp_fail(im, 0, "out of memory");
	im->world_size = st->nt && st->t[0].tasks > 0 ? (int)st->t[0].tasks : 1;
	json_object_set_new(im->extra, "version", json_string(st->version[0] ? st->version : "unknown"));
	json_object_set_new(im->extra, "options", json_pack("{s:I, s:I, s:s}", "ior_nodes",
		(json_int_t)(st->nt ? st->t[0].nodes : -1), "ior_tasks_per_node",
		(json_int_t)(st->nt ? st->t[0].tpn : -1), "host_from",
		"IOR's Machine line: rank 0's host only"));
	return 0;
}

/* ---- JSON (-O summaryFormat=JSON) ---- */

static long long jint(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (json_is_integer(v))
		return json_integer_value(v);
	if (json_is_real(v))
		return (long long)json_real_value(v);
	return -1;
}

static double jnum(const json_t *o, const char *key, int *bad)
{
	json_t *v = json_object_get(o, key);
	double d = json_is_number(v) ? json_number_value(v) : NAN;

	/* IOR writes an infinite figure as a string ("inf"): a failed measurement */
	if (!isfinite(d) || d < 0)
		*bad = 1;
	return d;
}

/* the size strings of the text Options block: "1 MiB", "16 MiB", "4 KiB", "100 bytes" */
static long long human(const char *s)
{
	static const struct { const char *u; double m; } units[] = {
		{ "bytes", 1 }, { "KiB", 1024 }, { "MiB", MIB }, { "GiB", MIB * 1024 },
		{ "TiB", MIB * MIB }, { "PiB", MIB * MIB * 1024 },
	};
	char u[16] = "";
	double v;

	if (!s || sscanf(s, "%lf %15s", &v, u) < 1 || !(v >= 0) || v > 1e18)
		return -1;
	if (!u[0])
		return (long long)v;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(u, units[i].u))
			return (long long)llround(v * units[i].m);
	return -1;
}

static int json_result(struct st *st, struct itest *t, const json_t *res, int nth)
{
	const char *acc = json_string_value(json_object_get(res, "access"));
	int o = acc && !strcmp(acc, "write") ? OP_WRITE : acc && !strcmp(acc, "read") ? OP_READ : -1, bad = 0;
	long line = imp_key_line(st->im, "access", nth);
	double bw;

	if (o < 0)
		return 0;       /* "remove" and the others: no figure to judge */
	bw = jnum(res, "bwMiB", &bad);
	if (bad)
		return imp_fail(st->im, line, "IOR test %lld: a %s result without a finite bwMiB", t->id, acc);
	if (t->op[o].nrep == MAX_REPS)
		return imp_fail(st->im, line, "more than %d IOR repetitions", MAX_REPS);
	t->op[o].bw[t->op[o].nrep++] = bw;
	if (!t->op[o].line)
		t->op[o].line = line;
	return 0;
}

static int ior_json(struct st *st, const json_t *doc)
{
	struct imp *im = st->im;
	const json_t *tests = json_object_get(doc, "tests"), *summ = json_object_get(doc, "summary"), *x;
	const char *machine = json_string_value(json_object_get(doc, "Machine"));
	const char *ver = json_string_value(json_object_get(doc, "Version"));
	int nth_access = 0;
	size_t i;

	if (!json_is_array(tests))
		return imp_fail(im, 1, "IOR JSON without \"tests\"");
	if (!json_is_array(summ))
		return imp_fail(im, 1, "IOR JSON without \"summary\": the run did not finish its tests");
	snprintf(st->version, sizeof(st->version), "%s", ver ? ver : "");
	/* IOR 3.2 and 3.3 print their text banner before the JSON: "IOR-3.3.0: MPI Coordinated ..." */
	if (!ver) {
		const char *b = memmem(im->buf, im->doc_at, "IOR-", 4);

		if (b && memmem(b, im->doc_at - (b - im->buf), ": MPI Coordinated Test", 22))
			snprintf(st->version, sizeof(st->version), "%.*s", (int)strcspn(b + 4, ":\n"), b + 4);
	}
	/* "Linux node01": the system's name, then rank 0's host */
	if (machine && strchr(machine, ' '))
		snprintf(st->host, sizeof(st->host), "%.*s", (int)strcspn(strchr(machine, ' ') + 1, " "),
			 strchr(machine, ' ') + 1);
	json_array_foreach(tests, i, x) {
		const json_t *par = json_object_get(x, "Parameters"), *opt = json_object_get(x, "Options");
		const json_t *res = json_object_get(x, "Results"), *r, *rr;
		long long id = jint(x, "TestID");
		const char *fn = json_string_value(json_object_get(par, "testFileName")) ?:
				 json_string_value(json_object_get(opt, "test filename"));
		struct itest *t = test_of(st, id, imp_key_line(im, "TestID", (int)i));
		size_t j, k;

		if (!t)
			return -1;
		snprintf(t->path, sizeof(t->path), "%s", fn ? fn : "");
		t->nodes = jint(par, "nodes") > 0 ? jint(par, "nodes") : jint(opt, "nodes");
		t->tasks = jint(opt, "tasks");
		t->tpn = jint(par, "tasksPerNode") > 0 ? jint(par, "tasksPerNode") : jint(opt, "clients per node");
		t->reps = jint(par, "repetitions");
		t->fpp = jint(par, "filePerProc");
		t->reorder = jint(par, "reorderTasks");
		t->random = jint(par, "randomOffset");
		t->fsync = jint(par, "fsync");
		t->xfer = jint(par, "transferSize");
		t->block = jint(par, "blockSize");
		t->segments = jint(par, "segmentCount");
		if (t->xfer < 0)
			t->xfer = human(json_string_value(json_object_get(opt, "xfersize")));
		if (t->block < 0)
			t->block = human(json_string_value(json_object_get(opt, "blocksize")));
		if (!json_is_array(res))
			continue;
		/* IOR 4: one flat list; 3.2 and 3.3: one list per repetition */
		json_array_foreach(res, j, r) {
			if (json_is_array(r)) {
				json_array_foreach(r, k, rr)
					if (json_result(st, t, rr, nth_access++))
						return -1;
			} else if (json_result(st, t, r, nth_access++)) {
				return -1;
			}
		}
	}
	json_array_foreach(summ, i, x) {
		const char *op = json_string_value(json_object_get(x, "operation"));
		int o = op && !strcmp(op, "write") ? OP_WRITE : op && !strcmp(op, "read") ? OP_READ : -1, bad = 0;
		long line = imp_key_line(im, "operation", (int)i);
		struct itest *t;
		struct op *p;

		if (o < 0)
			return imp_fail(im, line, "IOR summary entry %zu: operation '%s' is neither write nor read",
					i + 1, op ? op : "?");
		t = test_of(st, jint(x, "TestID"), line);
		if (!t)
			return -1;
		p = &t->op[o];
		p->max = jnum(x, "bwMaxMIB", &bad);
		p->min = jnum(x, "bwMinMIB", &bad);
		p->mean = jnum(x, "bwMeanMIB", &bad);
		p->sd = jnum(x, "bwStdMIB", &bad);
		if (bad)
			return imp_fail(im, line, "IOR summary of test %lld %s: bwMaxMIB, bwMinMIB, bwMeanMIB and "
					"bwStdMIB must be finite numbers", t->id, op);
		p->ops_mean = jnum(x, "OPsMean", &bad);
		if (bad)
			p->ops_mean = -1;
		p->summ = 1;
		p->line = line;
		if (t->tasks < 0)
			t->tasks = jint(x, "numTasks");
		if (t->tpn < 0)
			t->tpn = jint(x, "tasksPerNode");
		t->reps = t->reps > 0 ? t->reps : jint(x, "repetitions");
		if (t->xfer < 0)
			t->xfer = jint(x, "transferSize");
		if (t->block < 0)
			t->block = jint(x, "blockSize");
		/* a run cut and resumed into one file: more repetitions than the test has */
		if (t->reps > 0 && p->nrep > t->reps)
			return imp_fail(im, line, "IOR test %lld lists %d %s results for %lld repetitions (two "
					"runs in one file?)", t->id, p->nrep, op, t->reps);
	}
	return 0;
}

/* ---- the default text output ---- */

/* "name   : value" of IOR's key-value lines (PrintKeyVal: "%-20s: %s") */
static const char *kv(const char *line, const char *key)
{
	size_t n = strlen(key);

	if (strncmp(line, key, n))
		return NULL;
	line += n;
	while (*line == ' ')
		line++;
	if (*line != ':')
		return NULL;
	line++;
	while (*line == ' ')
		line++;
	return line;
}

static int ior_text(struct st *st)
{
	struct imp *im = st->im;
	struct imp_lines l;
	struct itest *t = NULL;
	const char *s;
	size_t n;
	long last = 0;
	int table = 0, summary = 0, c_bw = -1, c_iter = -1, s_cols = 0, next_id = 0;
	/* the summary table's columns (by name, PrintLongSummaryHeader) */
	int c_max = -1, c_min = -1, c_mean = -1, c_sd = -1, c_opsmean = -1, c_test = -1, c_tasks = -1,
	    c_tpn = -1, c_reps = -1, c_fpp = -1, c_reord = -1, c_blk = -1, c_xfer = -1, c_seg = -1;

	imp_lines_init(&l, im->buf, im->size);
	while (imp_next_line(&l, &s, &n)) {
		char line[1024], buf[2048], *tok[MAXTOK];
		const char *v;
		int k;

		snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) ? n : sizeof(line) - 1), s);
		k = imp_tokens(s, n, buf, sizeof(buf), tok, MAXTOK);
		if (!k)
			continue;
		last = l.no;
		if (!strncmp(line, "IOR-", 4) && strstr(line, "MPI Coordinated Test")) {
			if (st->version[0] || st->nt)
				return imp_fail(im, l.no, "a second IOR run starts here (two runs in one file? give "
						"each its own file)");
			snprintf(st->version, sizeof(st->version), "%.*s", (int)strcspn(line + 4, ":"), line + 4);
			continue;
		}
		if ((v = kv(line, "Machine"))) {
			const char *sp = strchr(v, ' ');

			if (sp)
				snprintf(st->host, sizeof(st->host), "%.*s", (int)strcspn(sp + 1, " "), sp + 1);
			continue;
		}
		if ((v = kv(line, "Finished"))) {
			st->finished = 1;
			continue;
		}
		if ((v = kv(line, "TestID"))) {
			long long id;

			if (imp_int(v, &id))
				return imp_fail(im, l.no, "IOR TestID '%s' is not a number", v);
			t = test_of(st, id, l.no);
			if (!t)
				return -1;
			table = summary = 0;
			continue;
		}
		if (!strcmp(tok[0], "Results:") || !strcmp(tok[0], "Options:")) {
			/* IOR 3.2 prints no TestID line without -v: tests go in order */
			if (!t || (t->op[0].nrep + t->op[1].nrep && !strcmp(tok[0], "Options:"))) {
				t = test_of(st, next_id, l.no);
				if (!t)
					return -1;
			}
			next_id = (int)t->id + 1;
			continue;
		}
		if (t && !summary) {
			long long x;

			if ((v = kv(line, "test filename")) || (v = kv(line, "Path")))
				snprintf(t->path, sizeof(t->path), "%s", v);
			else if ((v = kv(line, "nodes")) && !imp_int(v, &x))
				t->nodes = x;
			else if ((v = kv(line, "tasks")) && !imp_int(v, &x))
				t->tasks = x;
			else if ((v = kv(line, "clients per node")) && !imp_int(v, &x))
				t->tpn = x;
			else if ((v = kv(line, "repetitions")) && !imp_int(v, &x))
				t->reps = x;
			else if ((v = kv(line, "xfersize")))
				t->xfer = human(v);
			else if ((v = kv(line, "blocksize")))
				t->block = human(v);
			else if ((v = kv(line, "segments")) && !imp_int(v, &x))
				t->segments = x;
			else if ((v = kv(line, "access")))
				t->fpp = !strcmp(v, "file-per-process");
			else if ((v = kv(line, "ordering in a file")))
				t->random = !strcmp(v, "random");
			else if ((v = kv(line, "ordering inter file")))
				t->reorder = !strcmp(v, "constant task offset");
			if (v)
				continue;
		}
		/* the per-repetition table: "access bw(MiB/s) IOPS Latency(s) ... iter" */
		if (!strcmp(tok[0], "access") && k > 2 && !strncmp(tok[1], "bw(MiB/s)", 9)) {
			c_bw = 1;
			c_iter = -1;
			for (int i = 0; i < k; i++)
				if (!strcmp(tok[i], "iter"))
					c_iter = i;
			table = 1;
			if (!t && !(t = test_of(st, next_id++, l.no)))
				return -1;
			continue;
		}
		if (!strcmp(tok[0], "Summary") && k > 3 && !strcmp(tok[2], "all")) {
			summary = 1;
			table = 0;
			continue;
		}
		/* the summary's header; under summaryPerTest one after each test, with no "Summary" line */
		if (!strcmp(tok[0], "Operation") && k > 2 && !strcmp(tok[1], "Max(MiB)")) {
			summary = 1;
			table = 0;
			/* "StdDev" twice: MiB/s, then OPs; "Max(OPs)" etc. */
			int sd_seen = 0;

			for (int i = 0, c = 0; i < k; i++, c++) {
				const char *h = tok[i];

				if (!strcmp(h, "Max(MiB)")) c_max = c;
				else if (!strcmp(h, "Min(MiB)")) c_min = c;
				else if (!strcmp(h, "Mean(MiB)")) c_mean = c;
				else if (!strcmp(h, "StdDev") && !sd_seen++) c_sd = c;
				else if (!strcmp(h, "Mean(OPs)")) c_opsmean = c;
				else if (!strcmp(h, "Test#")) c_test = c;
				else if (!strcmp(h, "#Tasks")) c_tasks = c;
				else if (!strcmp(h, "tPN")) c_tpn = c;
				else if (!strcmp(h, "reps")) c_reps = c;
				else if (!strcmp(h, "fPP")) c_fpp = c;
				else if (!strcmp(h, "reord")) c_reord = c;
				else if (!strcmp(h, "segcnt")) c_seg = c;
				else if (!strcmp(h, "blksiz")) c_blk = c;
				else if (!strcmp(h, "xsize")) c_xfer = c;
				s_cols = c + 1;
			}
			if (c_max < 0 || c_min < 0 || c_mean < 0 || c_test < 0)
				return imp_fail(im, l.no, "an IOR summary header without Max(MiB), Min(MiB), "
						"Mean(MiB) or Test#");
			continue;
		}
		if ((!strcmp(tok[0], "write") || !strcmp(tok[0], "read")) && (table || summary)) {
			int o = strcmp(tok[0], "write") ? OP_READ : OP_WRITE;
			double vals[MAXTOK];

			if (l.unterminated)
				return imp_fail(im, l.no, "truncated IOR results row (the file ends inside it)");
			if (summary) {
				struct itest *u;
				struct op *p;
				long long id;

				if (!s_cols)
					return imp_fail(im, l.no, "an IOR summary row before its header");
				/* "NA" stands in the stonewall columns; API and RefNum are words */
				if (k < s_cols - 1)
					return imp_fail(im, l.no, "an IOR summary row with %d columns, its header "
							"names %d", k, s_cols);
				for (int i = 1; i < k && i < MAXTOK; i++)
					if (imp_num(tok[i], &vals[i]))
						vals[i] = NAN;
				if (imp_int(tok[c_test], &id))
					return imp_fail(im, l.no, "IOR summary row: Test# '%s' is not a number",
							tok[c_test]);
				u = test_of(st, id, l.no);
				if (!u)
					return -1;
				p = &u->op[o];
				p->max = vals[c_max];
				p->min = vals[c_min];
				p->mean = vals[c_mean];
				p->sd = c_sd >= 0 ? vals[c_sd] : 0;
				p->ops_mean = c_opsmean >= 0 && isfinite(vals[c_opsmean]) ? vals[c_opsmean] : -1;
				if (!(p->max >= 0 && p->min >= 0 && p->mean >= 0 && p->sd >= 0))
					return imp_fail(im, l.no, "malformed IOR summary row: a bandwidth that is not "
							"a number");
				p->summ = 1;
				p->line = l.no;
				if (c_tasks >= 0 && isfinite(vals[c_tasks])) u->tasks = (long long)vals[c_tasks];
				if (c_tpn >= 0 && isfinite(vals[c_tpn])) u->tpn = (long long)vals[c_tpn];
				if (c_reps >= 0 && isfinite(vals[c_reps])) u->reps = (long long)vals[c_reps];
				if (c_fpp >= 0 && isfinite(vals[c_fpp])) u->fpp = (long long)vals[c_fpp];
				if (c_reord >= 0 && isfinite(vals[c_reord])) u->reorder = (long long)vals[c_reord];
				if (c_seg >= 0 && isfinite(vals[c_seg])) u->segments = (long long)vals[c_seg];
				if (c_blk >= 0 && isfinite(vals[c_blk])) u->block = (long long)vals[c_blk];
				if (c_xfer >= 0 && isfinite(vals[c_xfer])) u->xfer = (long long)vals[c_xfer];
				if (u->reps > 0 && p->nrep > u->reps)
					return imp_fail(im, l.no, "IOR test %lld lists %d %s results for %lld "
							"repetitions (two runs in one file?)", u->id, p->nrep,
							tok[0], u->reps);
				continue;
			}
			if (k <= c_bw || (c_iter >= 0 && k <= c_iter))
				return imp_fail(im, l.no, "an IOR results row with %d columns", k);
			if (imp_num(tok[c_bw], &vals[0]) || !isfinite(vals[0]) || vals[0] < 0)
				return imp_fail(im, l.no, "malformed IOR results row: bandwidth '%s' is not a number",
						tok[c_bw]);
			if (t->op[o].nrep == MAX_REPS)
				return imp_fail(im, l.no, "more than %d IOR repetitions", MAX_REPS);
			t->op[o].bw[t->op[o].nrep++] = vals[0];
			if (!t->op[o].line)
				t->op[o].line = l.no;
			continue;
		}
	}
	if (!st->version[0])
		return imp_fail(im, 1, "not an IOR output: no 'IOR-VERSION: MPI Coordinated Test of Parallel "
				"I/O' line");
	if (!st->finished)
		return imp_fail(im, last, "truncated IOR output: no 'Finished' line (the run did not finish, "
				"or the log was cut)");
	for (int i = 0; i < st->nt; i++)
		for (int o = 0; o < OP_N; o++)
			if (st->t[i].op[o].nrep && !st->t[i].op[o].summ)
				return imp_fail(im, last, "IOR test %lld has %s results but no row in 'Summary of "
						"all tests' (the log was cut, or two runs mixed?)", st->t[i].id,
						ops[o]);
	return 0;
}

/*
 * IOR writes its warnings ("WARNING: ...", "ior WARNING: ...") to the same
 * stream as the JSON summary unless -O summaryFile= separates them: the JSON
 * without those lines, or NULL; *nwarn counts them.
 */
static json_t *json_without_warnings(const struct imp *im, int *nwarn)
{
	char *copy = malloc(im->size - im->doc_at + 1);
	struct imp_lines l;
	const char *s;
	size_t n;
	json_t *doc;

	*nwarn = 0;
	if (!copy)
		return NULL;
	memcpy(copy, im->buf + im->doc_at, im->size - im->doc_at);
	imp_lines_init(&l, copy, im->size - im->doc_at);
	while (imp_next_line(&l, &s, &n)) {
		size_t i = 0;

		while (i < n && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if ((n - i >= 8 && !memcmp(s + i, "WARNING:", 8)) || (n - i >= 12 && !memcmp(s + i, "ior WARNING:", 12))) {
			memset((char *)s, ' ', n);
			(*nwarn)++;
		}
	}
	doc = *nwarn ? json_loadb(copy, im->size - im->doc_at, JSON_DISABLE_EOF_CHECK, NULL) : NULL;
	free(copy);
	if (!json_is_object(doc)) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}

static int ior_parse(struct imp *im, const json_t *doc)
{
	struct st *st = calloc(1, sizeof(*st));
	json_t *own = NULL;
	int rc, nwarn = 0;

	if (!st)
		return imp_fail(im, 0, "out of memory");
	st->im = im;
	/* a JSON summary that did not parse: without IOR's warnings, or import.c says where it stops */
	if (!doc && memmem(im->buf, im->size < 65536 ? im->size : 65536, "\"Command line\"", 14)) {
		doc = own = json_without_warnings(im, &nwarn);
		if (!doc) {
			free(st);
			return -1;
		}
	}
	rc = doc ? ior_json(st, doc) : ior_text(st);
	json_decref(own);
	if (!rc && nwarn)
		json_object_set_new(im->extra, "warnings_in_json", json_integer(nwarn));
	if (!rc)
		rc = finish(st, imp_line_at(im, im->buf + im->size));
	free(st);
	return rc;
}

static int ior_detect(const char *buf, size_t n, const json_t *doc)
{
	size_t m = n < 65536 ? n : 65536;

	if (doc)
		return json_is_array(json_object_get(doc, "tests")) && json_object_get(doc, "Began") &&
		       json_object_get(doc, "Command line");
	return memmem(buf, m, "MPI Coordinated Test of Parallel I/O", 36) ||
	       (memmem(buf, m, "\"Command line\"", 14) && memmem(buf, m, "\"Began\"", 7));
}

const struct importer import_ior = {
	.name = "ior",
	.what = "IOR -O summaryFormat=JSON, or its default text output (IOR 3.2 to 4.0)",
	.detect = ior_detect,
	.parse = ior_parse,
};
