/*
 * report/import_nvbandwidth.c: NVIDIA nvbandwidth's output (v0.4 to v0.8;
 * the text, and the JSON of -j from v0.5): each testcase's matrix as the GPU
 * probes' records (docs/gpu.md). The copy-engine tests ccprobe also runs take
 * its test names (host_to_device_memcpy_ce is pcie h2d,
 * device_to_device_memcpy_write_ce nvlink p2p_uni, device_local_copy hbm
 * copy_engine, ...); every other testcase keeps its own name under the probe of its
 * link (pcie when the host takes part, else nvlink). A row-by-column matrix
 * gives one record per GPU pair (row, column), a one-row matrix one per GPU.
 * Figures are GB/s (1e9 bytes/s) as nvbandwidth prints them; latencies ns,
 * written as us. docs/import.md says what nvbandwidth cannot say.
 */
#include "import.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MATS 256
#define MAX_DIM 1024
#define MAX_DEVS 256
#define MAXTOK (MAX_DIM + 2)

/* the testcases ccprobe runs too: their records take ccprobe's names */
static const struct known {
	const char *key;         /* nvbandwidth's testcase */
	const char *probe, *test;
	const char *field;       /* pcie bidir: the direction this testcase measures */
} known[] = {
	/* cudaMemcpyAsync within the GPU: hbm's copy_engine, not its copy kernel (docs/gpu.md) */
	{ "device_local_copy", "hbm", "copy_engine", NULL },
	{ "device_to_device_bidirectional_memcpy_write_ce", "nvlink", "p2p_bidir", NULL },
	{ "device_to_device_memcpy_write_ce", "nvlink", "p2p_uni", NULL },
	{ "device_to_host_bidirectional_memcpy_ce", "pcie", "bidir", "d2h_GBps" },
	{ "device_to_host_memcpy_ce", "pcie", "d2h", NULL },
	{ "all_to_host_memcpy_ce", "pcie", "d2h_all", NULL },
	{ "host_to_all_memcpy_ce", "pcie", "h2d_all", NULL },
	{ "host_to_device_bidirectional_memcpy_ce", "pcie", "bidir", "h2d_GBps" },
	{ "host_to_device_memcpy_ce", "pcie", "h2d", NULL },
};

/* one printed matrix: a testcase's, or one part of a bidirectional one (read1, read2, total) */
struct mat {
	char key[128];           /* the testcase */
	char part[16];           /* "", "read1", "read2", "write1", "write2", "total" */
	int rows, cols;
	int lat;                 /* ns, not GB/s */
	double *v;               /* rows x cols; NAN: N/A */
	long line;
};

struct dev {
	char name[128], bus[32];
	char host[256];          /* multinode: the process's host */
	int index;               /* multinode: the process's device */
};

struct st {
	struct imp *im;
	struct mat m[MAX_MATS];
	int nm;
	struct dev dev[MAX_DEVS];
	int ndev, nproc;         /* devices of the host, or processes of a multinode run */
	char host[256], version[32], driver[64], cuda[32];
	json_t *bad;             /* error and skip records, in order */
	int waived_unnamed;      /* "Waived: " lines of the text (they do not say which) */
};

static const struct known *known_of(const char *key)
{
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(known[i].key, key))
			return &known[i];
	return NULL;
}

/* the probe of a testcase: pcie when the host takes part, hbm for the local copy, else nvlink */
static const char *probe_of(const char *key)
{
	const struct known *k = known_of(key);

	return k ? k->probe : strstr(key, "host") ? "pcie" : "nvlink";
}

static const char *test_of(const char *key)
{
	const struct known *k = known_of(key);

	return k ? k->test : key;
}

/* "12080" (CUDA's integer) -> "12.8" */
static void cuda_version(const char *s, char *out, size_t len)
{
	long long v;

	if (!imp_int(s, &v) && v >= 1000 && v < 1000000)
		snprintf(out, len, "%lld.%lld", v / 1000, v % 1000 / 10);
	else
		snprintf(out, len, "%s", s);
}

/* "NVIDIA H100 80GB HBM3 (00000000:18:00)": the name and the bus id in sysfs form */
static void device_info(const char *s, struct dev *d)
{
	const char *p = strrchr(s, '(');
	unsigned dom, bus, devno;

	snprintf(d->name, sizeof(d->name), "%.*s", (int)(p ? p - s : (long)strlen(s)), s);
	for (size_t n = strlen(d->name); n && d->name[n - 1] == ' ';)
		d->name[--n] = '\0';
	d->bus[0] = '\0';
	if (p && sscanf(p, "(%x:%x:%x)", &dom, &bus, &devno) == 3)
		snprintf(d->bus, sizeof(d->bus), "%04x:%02x:%02x.0", dom & 0xffff, bus & 0xff, devno & 0xff);
}

static int add_bad(struct st *st, const char *type, const char *key, const char *msg, long line)
{
	char text[600];
	json_t *r;

	snprintf(text, sizeof(text), "%snvbandwidth %s: %s", strcmp(type, "skip") ? "" : "skipped: ", key, msg);
	r = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I}", "type", type, "kind", "probe", "name", probe_of(key),
		      "test", test_of(key), strcmp(type, "skip") ? "message" : "reason", text, "line",
		      (json_int_t)line);
	return !r || json_array_append_new(st->bad, r) ? imp_fail(st->im, 0, "out of memory") : 0;
}

static struct mat *new_mat(struct st *st, const char *key, int rows, int cols, long line)
{
	struct mat *m;

	if (st->nm == MAX_MATS) {
		imp_fail(st->im, line, "more than %d nvbandwidth matrices in one output", MAX_MATS);
		return NULL;
	}
	if (rows < 1 || cols < 1 || rows > MAX_DIM || cols > MAX_DIM) {
		imp_fail(st->im, line, "an nvbandwidth matrix of %d x %d", rows, cols);
		return NULL;
	}
	m = &st->m[st->nm];
	memset(m, 0, sizeof(*m));
	m->v = malloc(sizeof(double) * rows * cols);
	if (!m->v) {
		imp_fail(st->im, 0, "out of memory");
		return NULL;
	}
	snprintf(m->key, sizeof(m->key), "%s", key);
	m->rows = rows;
	m->cols = cols;
	m->line = line;
	st->nm++;
	return m;
}

/* "Read1 bandwidth", "memcpy ... Total bandwidth (GB/s)": the part a description names */
static void part_of(const char *desc, char *part, size_t len)
{
	static const char *const parts[] = { "Read1", "Read2", "Write1", "Write2", "Total", NULL };

	part[0] = '\0';
	for (int i = 0; parts[i]; i++)
		if (strstr(desc, parts[i])) {
			snprintf(part, len, "%s", parts[i]);
			for (char *c = part; *c; c++)
				*c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
		}
}

/* ---- records ---- */

/* where GPU i (of a host's list, or a multinode run's process i) is */
static void gpu_name(const struct st *st, int i, char *host, size_t hlen, char *gpu, size_t glen, int *idx)
{
	if (st->nproc && i < st->nproc) {
		snprintf(host, hlen, "%s", st->dev[i].host);
		*idx = st->dev[i].index;
	} else {
		snprintf(host, hlen, "%s", st->host);
		*idx = i;
	}
	snprintf(gpu, glen, "%s/gpu%d", host, *idx);
}

static const struct mat *find(const struct st *st, const char *key, const char *part)
{
	for (int i = 0; i < st->nm; i++)
		if (!strcmp(st->m[i].key, key) && !strcmp(st->m[i].part, part))
			return &st->m[i];
	return NULL;
}

static json_t *base(const char *probe, const char *test, const char *scope, const char *el,
		    const char *host, const char *key)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "type", "measurement", "kind", "probe",
			 "name", probe, "test", test, "scope", scope, "element", el, "host", host, "testcase",
			 key);
}

/* the record's "unknown": {METRIC: why}, the reason a criterion gives for an element without it */
static void unknown(json_t *r, const char *metric, const char *why)
{
	json_t *u = json_object_get(r, "unknown");

	if (!u) {
		u = json_object();
		json_object_set_new(r, "unknown", u);
	}
	json_object_set_new(u, metric, json_string(why));
}

static void set_value(json_t *r, const struct mat *m, double v, const char *why)
{
	if (!strcmp(probe_of(m->key), "pcie"))
		unknown(r, "rate_GBps", "nvbandwidth prints no PCIe link rate (run `ccprobe pcie` to read the "
			"link under load)");
	if (isnan(v)) {
		unknown(r, m->lat ? "lat_us" : "bw_GBps", why);
		return;
	}
	if (m->lat)
		json_object_set_new(r, "lat_us", json_pack("{s:f}", "median", v / 1e3));
	else if (!strcmp(test_of(m->key), "copy_engine")) {
		/* ccprobe's hbm counts read and write; nvbandwidth the bytes once (docs/gpu.md) */
		json_object_set_new(r, "bw_GBps", json_real(2 * v));
		json_object_set_new(r, "copy_GBps", json_real(v));
		json_object_set_new(r, "method", json_string("cudaMemcpyAsync"));
		json_object_set_new(r, "bytes_counted", json_integer(2));
		json_object_set_new(r, "counts_read_and_write", json_true());
		json_object_set_new(r, "convention", json_string("nvbandwidth device_local_copy: copy_GBps is its "
			"figure, the bytes copied once; bw_GBps counts read and write (2 x), as ccprobe's hbm"));
	}
	else
		json_object_set_new(r, "bw_GBps", json_real(v));
}

static int emit_mat(struct st *st, const struct mat *m)
{
	struct imp *im = st->im;
	const char *probe = probe_of(m->key), *test = test_of(m->key);
	const struct mat *p1 = NULL, *p2 = NULL;
	char a[300], b[300], ha[256], hb[256], el[700];
	int ia, ib;

	/* a bidirectional pair's parts: the total is the figure, the parts each way beside it */
	if (m->part[0] && strcmp(m->part, "total"))
		return 0;
	if (m->part[0]) {
		p1 = find(st, m->key, "read1") ?: find(st, m->key, "write1");
		p2 = find(st, m->key, "read2") ?: find(st, m->key, "write2");
	}
	if (known_of(m->key) && known_of(m->key)->field)
		return 0;       /* pcie bidir: both directions' testcases make one record (emit_bidir) */
	for (int r = 0; r < m->rows; r++)
		for (int c = 0; c < m->cols; c++) {
			double v = m->v[r * m->cols + c];
			json_t *rec;

			if (m->rows > 1 && r == c)
				continue;       /* a GPU with itself: "N/A" or 0.00 */
			if (m->rows == 1) {
				gpu_name(st, c, ha, sizeof(ha), a, sizeof(a), &ia);
				rec = base(probe, test, "gpu", a, ha, m->key);
				if (rec)
					json_object_set_new(rec, "gpu", json_integer(ia));
				if (rec && !st->nproc && c < st->ndev && st->dev[c].bus[0])
					json_object_set_new(rec, "bus_id", json_string(st->dev[c].bus));
			} else {
				gpu_name(st, r, ha, sizeof(ha), a, sizeof(a), &ia);
				gpu_name(st, c, hb, sizeof(hb), b, sizeof(b), &ib);
				if (!strcmp(ha, hb))
					snprintf(el, sizeof(el), "%s-gpu%d", a, ib);
				else
					snprintf(el, sizeof(el), "%s-%s", a, b);
				rec = base(probe, test, "gpu_pair", el, ha, m->key);
				if (rec && strcmp(ha, hb))
					json_object_set_new(rec, "peer", json_string(hb));
				if (rec)
					json_object_set_new(rec, "src_gpu", json_integer(ia)),
					json_object_set_new(rec, "dst_gpu", json_integer(ib));
			}
			if (!rec)
				return imp_fail(im, 0, "out of memory");
			set_value(rec, m, v, "nvbandwidth printed N/A: it did not measure this (no peer "
				  "access, or a GPU it skipped)");
			/* part 1 copies column -> row, part 2 row -> column (testcases_ce.cpp) */
			if (p1 && p2 && p1->rows == m->rows && p2->rows == m->rows) {
				double ba = p1->v[r * m->cols + c], ab = p2->v[r * m->cols + c];

				if (!isnan(ab))
					json_object_set_new(rec, "ab_GBps", json_real(ab));
				if (!isnan(ba))
					json_object_set_new(rec, "ba_GBps", json_real(ba));
			}
			if (imp_record(im, rec, m->line))
				return imp_fail(im, 0, "out of memory");
		}
	return 0;
}

/* pcie bidir: nvbandwidth measures each direction in its own testcase, against the other's traffic */
static int emit_bidir(struct st *st)
{
	const struct mat *h = find(st, "host_to_device_bidirectional_memcpy_ce", ""),
			 *d = find(st, "device_to_host_bidirectional_memcpy_ce", "");
	int cols = h ? h->cols : d ? d->cols : 0;

	for (int c = 0; c < cols; c++) {
		double hv = h && c < h->cols ? h->v[c] : NAN, dv = d && c < d->cols ? d->v[c] : NAN;
		char host[256], gpu[300];
		int idx;
		json_t *rec;

		gpu_name(st, c, host, sizeof(host), gpu, sizeof(gpu), &idx);
		rec = base("pcie", "bidir", "gpu", gpu, host, h && d ? "host_to_device_bidirectional_memcpy_ce + "
			   "device_to_host_bidirectional_memcpy_ce" : h ? h->key : d->key);
		if (!rec)
			return imp_fail(st->im, 0, "out of memory");
		json_object_set_new(rec, "gpu", json_integer(idx));
		if (!st->nproc && c < st->ndev && st->dev[c].bus[0])
			json_object_set_new(rec, "bus_id", json_string(st->dev[c].bus));
		if (!isnan(hv))
			json_object_set_new(rec, "h2d_GBps", json_real(hv));
		if (!isnan(dv))
			json_object_set_new(rec, "d2h_GBps", json_real(dv));
		unknown(rec, "rate_GBps", "nvbandwidth prints no PCIe link rate (run `ccprobe pcie` to read "
			"the link under load)");
		if (!isnan(hv) && !isnan(dv))
			json_object_set_new(rec, "bw_GBps", json_real(hv + dv));
		else
			unknown(rec, "bw_GBps", h && d ? "nvbandwidth printed N/A for one direction" :
				"nvbandwidth ran only one direction's bidirectional testcase: both make the figure");
		if (imp_record(st->im, rec, (h ? h : d)->line))
			return imp_fail(st->im, 0, "out of memory");
	}
	return 0;
}

static int finish(struct st *st)
{
	struct imp *im = st->im;
	json_t *r, *gpus;
	size_t i;
	int measured = 0;

	if (!st->host[0]) {
		static const char *const suffixes[] = { ".nvbandwidth", "-nvbandwidth", "_nvbandwidth", ".nvb",
							"-nvb", "_nvb", NULL };

		imp_file_host(im->file, suffixes, st->host, sizeof(st->host));
	}
	/* the hosts: this one, or a multinode run's, each with its processes as ranks */
	if (st->nproc) {
		for (int p = 0; p < st->nproc; p++) {
			int h = imp_host(im, st->dev[p].host);

			if (h < 0 || imp_host_rank(im, h, p))
				return imp_fail(im, 0, "out of memory");
		}
		im->world_size = st->nproc;
	} else {
		if (imp_host(im, st->host) != 0 || imp_host_rank(im, 0, 0))
			return imp_fail(im, 0, "out of memory");
		im->world_size = 1;
	}
	/* the GPUs it lists: all those CUDA let it see (CUDA_VISIBLE_DEVICES may hide some) */
	gpus = json_array();
	for (int d = 0; !st->nproc && d < st->ndev && gpus; d++) {
		char el[300];

		snprintf(el, sizeof(el), "%s/gpu%d", st->host, d);
		json_array_append_new(gpus, json_pack("{s:i, s:s, s:s, s:s?}", "index", d, "element", el,
						      "name", st->dev[d].name, "bus_id",
						      st->dev[d].bus[0] ? st->dev[d].bus : NULL));
	}
	r = json_pack("{s:s, s:s, s:s, s:o, s:b, s:{}}", "type", "inventory", "kind", "gpu", "host", st->host,
		      "gpus", gpus ?: json_array(), "gpus_used_only", 1, "versions");
	if (!r)
		return imp_fail(im, 0, "out of memory");
	if (st->driver[0])
		json_object_set_new(json_object_get(r, "versions"), "driver", json_string(st->driver));
	if (st->cuda[0])
		json_object_set_new(json_object_get(r, "versions"), "cuda_driver", json_string(st->cuda));
	if ((st->ndev || st->driver[0]) && imp_record(im, r, 1))
		return imp_fail(im, 0, "out of memory");
	if (!(st->ndev || st->driver[0]))
		json_decref(r);
	for (int k = 0; k < st->nm; k++) {
		measured++;
		if (emit_mat(st, &st->m[k]))
			return -1;
	}
	if ((find(st, "host_to_device_bidirectional_memcpy_ce", "") ||
	     find(st, "device_to_host_bidirectional_memcpy_ce", "")) && emit_bidir(st))
		return -1;
	json_array_foreach(st->bad, i, r) {
		long line = (long)json_integer_value(json_object_get(r, "line"));

		json_object_del(r, "line");
		json_object_set_new(r, "host", json_string(st->host));
		if (imp_record(im, json_incref(r), line))
			return imp_fail(im, 0, "out of memory");
	}
	if (!measured && !json_array_size(st->bad))
		return imp_fail(im, 1, "nvbandwidth output with no testcase result: nothing to judge");
	json_object_set_new(im->extra, "version", json_string(st->version[0] ? st->version : "unknown"));
	if (st->driver[0] || st->cuda[0])
		json_object_set_new(im->extra, "versions", json_pack("{s:s, s:s}", "driver", st->driver,
								     "cuda_driver", st->cuda));
	if (st->waived_unnamed)
		json_object_set_new(im->extra, "waived_unnamed", json_integer(st->waived_unnamed));
	return 0;
}

/* ---- the text ---- */

/* a matrix: its header, rows until a blank line, then "SUM KEY N" (or "&&&& PERF KEY N...") */
static int text_matrix(struct st *st, struct imp_lines *l, const char *cur, const char *desc, long dline)
{
	struct imp *im = st->im;
	const char *s;
	size_t n;
	char *buf = malloc(16 * MAX_DIM + 64), **tok = malloc(sizeof(char *) * MAXTOK), part[16];
	double *v = NULL;
	int cols = 0, rows = 0, rc = -1, k;
	struct mat *m;

	if (!buf || !tok) {
		imp_fail(im, 0, "out of memory");
		goto out;
	}
	part_of(desc, part, sizeof(part));
	/* the header: one label per column */
	if (!imp_next_line(l, &s, &n) || !(cols = imp_tokens(s, n, buf, 16 * MAX_DIM + 64, tok, MAXTOK)) ||
	    l->unterminated) {
		imp_fail(im, l->no ?: dline, "truncated nvbandwidth output: a matrix without its column "
			 "header");
		goto out;
	}
	if (cols > MAX_DIM) {
		imp_fail(im, l->no, "an nvbandwidth matrix of more than %d columns", MAX_DIM);
		goto out;
	}
	v = malloc(sizeof(double) * MAX_DIM * cols);
	if (!v) {
		imp_fail(im, 0, "out of memory");
		goto out;
	}
	for (;;) {
		if (!imp_next_line(l, &s, &n)) {
			imp_fail(im, l->no, "truncated nvbandwidth output: the matrix of '%s' ends after %d "
				 "row(s), without its SUM line", cur, rows);
			goto out;
		}
		k = imp_tokens(s, n, buf, 16 * MAX_DIM + 64, tok, MAXTOK);
		if (!k)
			break;
		if (l->unterminated || k != cols + 1) {
			imp_fail(im, l->no, l->unterminated ? "truncated nvbandwidth output: the file ends "
				 "inside a matrix row" : "an nvbandwidth matrix row with %d values, its header "
				 "names %d columns", k - 1, cols);
			goto out;
		}
		if (rows == MAX_DIM) {
			imp_fail(im, l->no, "an nvbandwidth matrix of more than %d rows", MAX_DIM);
			goto out;
		}
		for (int c = 0; c < cols; c++) {
			double x;

			if (!strcmp(tok[c + 1], "N/A"))
				x = NAN;
			else if (imp_num(tok[c + 1], &x) || !isfinite(x) || x < 0) {
				imp_fail(im, l->no, "malformed nvbandwidth matrix: '%s' is not a figure", tok[c + 1]);
				goto out;
			}
			v[rows * cols + c] = x;
		}
		rows++;
	}
	/* the closing line names the matrix: KEY, or KEY_read1, KEY_total ... */
	for (;;) {
		if (!imp_next_line(l, &s, &n)) {
			imp_fail(im, l->no, "truncated nvbandwidth output: the matrix of '%s' has no SUM line",
				 cur);
			goto out;
		}
		k = imp_tokens(s, n, buf, 16 * MAX_DIM + 64, tok, 8);
		if (k)
			break;
	}
	if (!((k >= 3 && !strcmp(tok[0], "SUM")) || (k >= 4 && !strcmp(tok[0], "&&&&") &&
						       !strcmp(tok[1], "PERF")))) {
		imp_fail(im, l->no, "truncated nvbandwidth output: the matrix of '%s' is not followed by its "
			 "SUM line", cur);
		goto out;
	}
	{
		const char *key = tok[0][0] == 'S' ? tok[1] : tok[2];

		if (strncmp(key, cur, strlen(cur))) {
			imp_fail(im, l->no, "a matrix of '%s' under 'Running %s.' (two runs' outputs mixed?)",
				 key, cur);
			goto out;
		}
	}
	m = new_mat(st, cur, rows, cols, dline);
	if (!m)
		goto out;
	memcpy(m->v, v, sizeof(double) * rows * cols);
	snprintf(m->part, sizeof(m->part), "%s", part);
	m->lat = strstr(desc, "(ns)") != NULL;
	rc = 0;
out:
	free(buf);
	free(tok);
	free(v);
	return rc;
}

static int nvb_text(struct st *st)
{
	struct imp *im = st->im;
	struct imp_lines l;
	const char *s;
	size_t n;
	char cur[128] = "", prev[256] = "", line[1024];
	int done = 1, note = 0, after_test = 0, major, minor;
	long last = 0, run_line = 0;

	imp_lines_init(&l, im->buf, im->size);
	while (imp_next_line(&l, &s, &n)) {
		const char *v;
		long long x;

		snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) ? n : sizeof(line) - 1), s);
		if (!line[strspn(line, " \t")])
			continue;
		last = l.no;
		if (!strncmp(line, "nvbandwidth Version: ", 21)) {
			if (st->version[0])
				return imp_fail(im, l.no, "a second nvbandwidth run starts here (two runs in one "
						"file? give each its own file)");
			snprintf(st->version, sizeof(st->version), "%.31s", line + 21);
		} else if (!strncmp(line, "CUDA Driver Version: ", 21)) {
			cuda_version(line + 21, st->cuda, sizeof(st->cuda));
		} else if (!strncmp(line, "Driver Version: ", 16)) {
			snprintf(st->driver, sizeof(st->driver), "%.63s", line + 16);
		} else if (!strncmp(line, "Device ", 7) && sscanf(line + 7, "%lld", &x) == 1 &&
			   (v = strstr(line, ": "))) {
			if (x != st->ndev || st->ndev == MAX_DEVS)
				return imp_fail(im, l.no, "nvbandwidth device %lld listed out of order (two runs' "
						"outputs mixed?)", x);
			/* v0.8 prints the host's name alone on the line before its devices */
			if (!x && prev[0] && !strchr(prev, ' ') && !strchr(prev, ':'))
				snprintf(st->host, sizeof(st->host), "%s", prev);
			device_info(v + 2, &st->dev[st->ndev++]);
		} else if (!strncmp(line, "Process ", 8) && strstr(line, "): device ")) {
			/* multinode: "Process 0 (node01): device 3: NVIDIA GB200 (00000009:01:00)" */
			struct dev *d = &st->dev[st->nproc];
			const char *o = strchr(line, '('), *c = strstr(line, "): device "), *nm;
			int dn;

			if (st->nproc == MAX_DEVS || !o || c < o || sscanf(c + 10, "%d", &dn) != 1 ||
			    !(nm = strstr(c + 10, ": ")))
				return imp_fail(im, l.no, "a malformed nvbandwidth process line");
			snprintf(d->host, sizeof(d->host), "%.*s", (int)(c - o - 1), o + 1);
			d->index = dn;
			device_info(nm + 2, d);
			st->nproc++;
		} else if (!strncmp(line, "Running ", 8) || !strncmp(line, "Waiving ", 8)) {
			/* "Running KEY." (and v0.4's "Waiving KEY.") */
			size_t k = strlen(line);

			if (!done)
				return imp_fail(im, l.no, "nvbandwidth testcase '%s' (line %ld) printed no result "
						"before the next one (the output was cut, or mixed?)", cur, run_line);
			while (k && line[k - 1] == ' ')
				line[--k] = '\0';
			if (k && line[k - 1] == '.')
				line[--k] = '\0';
			snprintf(cur, sizeof(cur), "%.127s", line + 8);
			run_line = l.no;
			if (line[0] == 'W') {
				if (add_bad(st, "skip", cur, "waived (not run on this system)", l.no))
					return -1;
			} else {
				done = 0;
			}
			after_test = 1;
		} else if (!strncmp(line, "Waived:", 7)) {
			/* v0.5 and later print no name with it */
			st->waived_unnamed++;
		} else if ((!strncmp(line, "Error: ", 7) || !strncmp(line, "ERROR: ", 7)) && cur[0] && !done) {
			if (add_bad(st, "error", cur, line + 7, l.no))
				return -1;
			done = 1;
		} else if (cur[0] && (strstr(line, "bandwidth (GB/s)") || strstr(line, "(ns)"))) {
			if (text_matrix(st, &l, cur, line, l.no))
				return -1;
			done = 1;
		} else if (!strncmp(line, "NOTE: The reported results may not reflect", 42)) {
			note = after_test;
		}
		snprintf(prev, sizeof(prev), "%s", line);
	}
	if (!st->version[0] && !st->nm)
		return imp_fail(im, 1, "not an nvbandwidth output: no 'nvbandwidth Version:' line and no "
				"testcase");
	if (!done)
		return imp_fail(im, last, "truncated nvbandwidth output: testcase '%s' (line %ld) has no result",
				cur, run_line);
	/* v0.6 and later end with their NOTE: without it the run did not finish */
	if (!note && sscanf(st->version, "v%d.%d", &major, &minor) == 2 && (major > 0 || minor >= 6))
		return imp_fail(im, last, "truncated nvbandwidth output: no closing 'NOTE: The reported results "
				"...' line after the last testcase (the run did not finish, or the log was cut)");
	return 0;
}

/* ---- the JSON (-j, v0.5 and later) ---- */

static int nvb_json(struct st *st, const json_t *doc)
{
	struct imp *im = st->im;
	const json_t *root = json_object_get(doc, "nvbandwidth"), *tcs, *tc, *devs, *d;
	const char *err = json_string_value(json_object_get(root, "error"));
	size_t i;

	if (!json_is_object(root))
		return imp_fail(im, 1, "nvbandwidth JSON without its \"nvbandwidth\" object");
	snprintf(st->version, sizeof(st->version), "%s", json_string_value(json_object_get(root, "version")) ?: "");
	snprintf(st->driver, sizeof(st->driver), "%s",
		 json_string_value(json_object_get(root, "Driver Version")) ?: "");
	if (json_is_integer(json_object_get(root, "CUDA Runtime Version"))) {
		char n[32];

		/* the driver's CUDA version, whatever the key says (nvbandwidth.cpp) */
		snprintf(n, sizeof(n), "%lld", (long long)json_integer_value(json_object_get(root, "CUDA Runtime Version")));
		cuda_version(n, st->cuda, sizeof(st->cuda));
	}
	/* v0.8: "0: NVIDIA H100 80GB HBM3 (00000000:18:00): (node01)" */
	devs = json_object_get(root, "GPU Device list");
	json_array_foreach(devs, i, d) {
		const char *s = json_string_value(d), *c = s ? strchr(s, ':') : NULL, *h;
		char desc[256];

		if (!c || st->ndev == MAX_DEVS)
			continue;
		h = strstr(c + 1, "): (");
		snprintf(desc, sizeof(desc), "%.*s", (int)(h ? h + 1 - (c + 2) : (long)strlen(c + 2)), c + 2);
		device_info(desc, &st->dev[st->ndev++]);
		if (h && !st->host[0])
			snprintf(st->host, sizeof(st->host), "%.*s", (int)strcspn(h + 4, ")"), h + 4);
	}
	tcs = json_object_get(root, "testcases");
	if (!json_is_array(tcs)) {
		if (err)
			return imp_fail(im, 1, "nvbandwidth stopped with an error, nothing measured: %s", err);
		return imp_fail(im, 1, "nvbandwidth JSON without \"testcases\"");
	}
	json_array_foreach(tcs, i, tc) {
		const char *name = json_string_value(json_object_get(tc, "name")),
			   *status = json_string_value(json_object_get(tc, "status")),
			   *desc = json_string_value(json_object_get(tc, "bandwidth_description")) ?: "",
			   *terr = json_string_value(json_object_get(tc, "error"));
		const json_t *mat = json_object_get(tc, "bandwidth_matrix"), *row;
		long line = imp_key_line(im, "name", (int)i);
		size_t rows = json_array_size(mat), cols, parts, per;

		if (!name || !status)
			return imp_fail(im, line ?: 1, "nvbandwidth testcase %zu without a name or status", i + 1);
		if (!strcmp(status, "Waived")) {
			if (add_bad(st, "skip", name, "waived (not run on this system)", line))
				return -1;
			continue;
		}
		if (strcmp(status, "Passed")) {
			/* "Error", "ERROR", "Not Found", or "Running": it never finished */
			char msg[512];

			snprintf(msg, sizeof(msg), "status %s%s%s", status, terr ? ": " : "", terr ?: "");
			if (add_bad(st, "error", name, msg, line))
				return -1;
			continue;
		}
		if (!json_is_array(mat) || !rows || !json_is_array(json_array_get(mat, 0)) ||
		    !(cols = json_array_size(json_array_get(mat, 0))) || cols > MAX_DIM)
			return imp_fail(im, line, "nvbandwidth testcase '%s' passed without a bandwidth matrix",
					name);
		/*
		 * A matrix is one row (host or local tests) or square; v0.6 and later append the
		 * rows of a bidirectional pair's three matrices (read1, read2, total) to one.
		 */
		per = rows == 1 || rows == cols ? rows : rows == 3 * cols ? cols : rows == 3 ? 1 : 0;
		if (!per)
			return imp_fail(im, line, "nvbandwidth testcase '%s': a matrix of %zu rows and %zu columns "
					"(neither one row, square, nor three of them)", name, rows, cols);
		parts = rows / per;
		for (size_t p = 0; p < parts; p++) {
			struct mat *m = new_mat(st, name, (int)per, (int)cols, line);

			if (!m)
				return -1;
			m->lat = strstr(desc, "(ns)") != NULL;
			if (parts == 3)
				snprintf(m->part, sizeof(m->part), "%s%s", p == 2 ? "total" : strstr(name, "read") ?
					 "read" : "write", p == 0 ? "1" : p == 1 ? "2" : "");
			for (size_t r = 0; r < per; r++) {
				row = json_array_get(mat, p * per + r);
				if (json_array_size(row) != cols)
					return imp_fail(im, line, "nvbandwidth testcase '%s': row %zu has %zu values, "
							"not %zu", name, p * per + r + 1, json_array_size(row), cols);
				for (size_t c = 0; c < cols; c++) {
					const char *s = json_string_value(json_array_get(row, c));
					double x;

					if (s && !strcmp(s, "N/A"))
						x = NAN;
					else if (!s || imp_num(s, &x) || !isfinite(x) || x < 0)
						return imp_fail(im, line, "nvbandwidth testcase '%s': '%s' is not a "
								"figure", name, s ? s : "(not a string)");
					m->v[r * cols + c] = x;
				}
			}
		}
	}
	return 0;
}

static int nvb_parse(struct imp *im, const json_t *doc)
{
	struct st *st = calloc(1, sizeof(*st));
	int rc;

	if (!st)
		return imp_fail(im, 0, "out of memory");
	st->im = im;
	st->bad = json_array();
	if (!st->bad) {
		free(st);
		return imp_fail(im, 0, "out of memory");
	}
	/* a JSON output that did not parse: import.c says where it stops */
	if (!doc && memmem(im->buf, im->size < 65536 ? im->size : 65536, "\"nvbandwidth\"", 13))
		rc = -1;
	else
		rc = doc ? nvb_json(st, doc) : nvb_text(st);
	if (!rc)
		rc = finish(st);
	for (int i = 0; i < st->nm; i++)
		free(st->m[i].v);
	json_decref(st->bad);
	free(st);
	return rc;
}

static int nvb_detect(const char *buf, size_t n, const json_t *doc)
{
	size_t m = n < 65536 ? n : 65536;

	if (doc)
		return json_is_object(json_object_get(doc, "nvbandwidth"));
	return memmem(buf, m, "nvbandwidth Version:", 20) || memmem(buf, m, "\"nvbandwidth\"", 13) ||
	       (memmem(buf, m, "Running ", 8) && memmem(buf, m, "_memcpy_", 8) &&
		memmem(buf, m, "bandwidth (GB/s)", 16));
}

const struct importer import_nvbandwidth = {
	.name = "nvbandwidth",
	.what = "nvbandwidth text or -j JSON (v0.4 to v0.8): pcie, nvlink and hbm matrices",
	.detect = nvb_detect,
	.parse = nvb_parse,
};
