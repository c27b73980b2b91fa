/*
 * report/import_fio.c: fio's JSON output (--output-format=json or json+, fio
 * 2.x to 3.x; per job or under group_reporting; the client/server form whose
 * jobs carry a "hostname") as the storage probe's records (docs/storage.md):
 * per host, fio group and test one node record, and one cluster record over
 * the hosts. The jobs of a group run at once, so a group's rate is its bytes
 * over its slowest job's time, the storage probe's rule. Units: fio's "bw"
 * fields are KiB/s (1024 bytes), "bw_bytes" B/s (fio 3.2 and later),
 * latencies ns ("clat_ns", fio 3.0 and later) or us ("clat", before); records
 * say GB/s (1e9 bytes/s) and us. docs/import.md says what fio cannot say.
 */
#include "import.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GROUPS 256
#define MAX_JOBS_LISTED 64

/* one host's jobs of one fio group and one test */
struct grp {
	int host;                /* index in im->hosts */
	long long groupid;
	char test[64];
	double bytes, ios;       /* summed over the jobs */
	double runtime_ms;       /* the slowest job's */
	double bs;               /* the block size: bytes per I/O of the first job */
	int bs_mixed;
	int jobs;
	int verified;            /* verify= set: fio checked what it read */
	long line;               /* the first job's line */
	json_t *job_bw;          /* [{job, bw_GBps}] */
	json_t *lat;             /* lat_us of the job with the worst p99 (or the only job) */
	double lat_p99;
	json_t *stats;           /* bw_stats_GBps of a single job, else NULL */
	char dir[512];           /* where fio wrote: directory= or dirname(filename=) */
	int direct;
};

struct st {
	struct imp *im;
	const json_t *global;    /* "global options" (an object; an array with several clients) */
	struct grp g[MAX_GROUPS];
	int ng;
	int errors;
};

static const char *opt(const struct st *st, const json_t *job, const char *key)
{
	const char *v = json_string_value(json_object_get(json_object_get(job, "job options"), key));

	return v ? v : json_is_object(st->global) ? json_string_value(json_object_get(st->global, key)) : NULL;
}

/* a number fio wrote; -1 when absent or not a number (fio's counters are never negative) */
static double num(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : -1;
}

/*
 * The test name: the storage probe's (write, read, rand_read) where fio's rw=
 * is one of those; else rw and the direction ("randwrite" -> rand_write,
 * "randrw" -> randrw_read and randrw_write, a write job's verify reads
 * "write_read").
 */
static void test_name(const char *rw, const char *dir, char *out, size_t len)
{
	char mode[24];
	size_t n;

	snprintf(mode, sizeof(mode), "%s", rw && *rw ? rw : "read");    /* fio's default */
	n = strcspn(mode, ":");                                          /* rw=randread:8 */
	mode[n] = '\0';
	if (!strcmp(mode, "readwrite"))
		snprintf(mode, sizeof(mode), "rw");
	if (!strcmp(mode, dir))
		snprintf(out, len, "%s", dir);
	else if (!strcmp(mode, "randread") && !strcmp(dir, "read"))
		snprintf(out, len, "rand_read");
	else if (!strcmp(mode, "randwrite") && !strcmp(dir, "write"))
		snprintf(out, len, "rand_write");
	else
		snprintf(out, len, "%s_%s", mode, dir);
}

/* fio's latency object (ns, or us before fio 3.0) as lat_us; NULL without figures */
static json_t *latency(const json_t *d, double *p99)
{
	static const struct { const char *key, *stat; } pcts[] = {
		{ "50.000000", "median" }, { "99.000000", "p99" }, { "99.900000", "p999" },
	};
	/* the total latency when fio kept its percentiles (lat_percentiles=1), else completion */
	static const char *const keys[] = { "lat_ns", "clat_ns", "lat", "clat" };
	const json_t *o = NULL, *pct;
	double scale = 1;
	json_t *lat;
	int k;

	for (k = 0; k < 4 && !o; k++)
		if (json_is_object(json_object_get(json_object_get(d, keys[k]), "percentile")))
			o = json_object_get(d, keys[k]);
	if (!o || num(o, "N") == 0)
		return NULL;
	scale = k <= 2 ? 1e-3 : 1;      /* k is one past the key found */
	pct = json_object_get(o, "percentile");
	lat = json_pack("{s:s}", "source", keys[k - 1]);
	if (!lat)
		return NULL;
	if (num(o, "N") > 0)
		json_object_set_new(lat, "n", json_integer((json_int_t)num(o, "N")));
	if (num(o, "min") >= 0)
		json_object_set_new(lat, "min", json_real(num(o, "min") * scale));
	if (num(o, "mean") >= 0)
		json_object_set_new(lat, "mean", json_real(num(o, "mean") * scale));
	if (num(o, "max") >= 0)
		json_object_set_new(lat, "max", json_real(num(o, "max") * scale));
	if (num(o, "stddev") >= 0 && num(o, "mean") > 0)
		json_object_set_new(lat, "cv", json_real(num(o, "stddev") / num(o, "mean")));
	*p99 = -1;
	for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++) {
		double v = num(pct, pcts[i].key);

		if (v >= 0) {
			json_object_set_new(lat, pcts[i].stat, json_real(v * scale));
			if (!strcmp(pcts[i].stat, "p99"))
				*p99 = v * scale;
		}
	}
	return lat;
}

static struct grp *group(struct st *st, int host, long long groupid, const char *test, long line)
{
	struct grp *g;

	for (int i = 0; i < st->ng; i++)
		if (st->g[i].host == host && st->g[i].groupid == groupid && !strcmp(st->g[i].test, test))
			return &st->g[i];
	if (st->ng == MAX_GROUPS) {
		imp_fail(st->im, line, "more than %d fio groups and tests in one output", MAX_GROUPS);
		return NULL;
	}
	g = &st->g[st->ng++];
	memset(g, 0, sizeof(*g));
	g->host = host;
	g->groupid = groupid;
	g->line = line;
	g->lat_p99 = -1;
	snprintf(g->test, sizeof(g->test), "%s", test);
	g->job_bw = json_array();
	if (!g->job_bw) {
		imp_fail(st->im, 0, "out of memory");
		return NULL;
	}
	return g;
}

/* one direction of one job into its group; 0, or -1 after imp_fail */
static int job_dir(struct st *st, const json_t *job, int jobno, int host, const char *dir, long line)
{
	struct imp *im = st->im;
	const json_t *d = json_object_get(job, dir);
	const char *name = json_string_value(json_object_get(job, "jobname"));
	const char *rw = opt(st, job, "rw") ?: opt(st, job, "readwrite");
	const char *verify = opt(st, job, "verify"), *direct = opt(st, job, "direct");
	const char *where = opt(st, job, "directory") ?: opt(st, job, "filename");
	double bytes = num(d, "io_bytes"), ios = num(d, "total_ios"), rt = num(d, "runtime"),
	       bwb = num(d, "bw_bytes"), bwk = num(d, "bw"), bw, p99 = -1;
	char test[64], jn[160];
	struct grp *g;
	json_t *lat;

	if (!json_is_object(d))
		return 0;
	if (bytes < 0 || rt < 0 || (bwb < 0 && bwk < 0))
		return imp_fail(im, line, "fio job '%s': its \"%s\" has no io_bytes, runtime or bw (not fio's "
				"JSON output?)", name ?: "?", dir);
	if (bytes == 0)
		return 0;       /* this job did not do I/O this way */
	/* before fio 2.21 "io_bytes" counted KiB (and "io_kbytes" did not exist) */
	if (!json_object_get(d, "io_kbytes"))
		bytes *= 1024;
	if (rt == 0)
		return imp_fail(im, line, "fio job '%s': %.0f bytes %s in a runtime of 0 ms", name ?: "?",
				bytes, dir);
	test_name(rw, strcmp(dir, "mixed") ? dir : "mixed", test, sizeof(test));
	g = group(st, host, (long long)num(job, "groupid"), test, line);
	if (!g)
		return -1;
	bw = bwb >= 0 ? bwb / 1e9 : bwk * 1024 / 1e9;      /* bw_bytes B/s; bw KiB/s */
	g->bytes += bytes;
	g->ios += ios > 0 ? ios : 0;
	g->runtime_ms = rt > g->runtime_ms ? rt : g->runtime_ms;
	if (ios > 0) {
		double bs = round(bytes / ios);

		if (!g->jobs)
			g->bs = bs;
		else if (bs != g->bs)
			g->bs_mixed = 1;
	}
	g->verified |= verify && strcmp(verify, "0") && strcmp(verify, "none");
	g->direct |= direct && strcmp(direct, "0");
	if (!g->jobs && where) {
		/* filename= may name a file or a device; directory= may list several (a:b) */
		const char *slash = strrchr(where, '/');

		snprintf(g->dir, sizeof(g->dir), "%.*s", (int)(opt(st, job, "directory") ?
			 strcspn(where, ":") : slash ? (size_t)(slash - where) : strlen(where)), where);
	}
	snprintf(jn, sizeof(jn), "%s#%d", name ?: "job", jobno);
	if (json_array_size(g->job_bw) < MAX_JOBS_LISTED)
		json_array_append_new(g->job_bw, json_pack("{s:s, s:f}", "job", jn, "bw_GBps", bw));
	lat = latency(d, &p99);
	if (lat && (!g->lat || p99 > g->lat_p99)) {
		json_decref(g->lat);
		g->lat = lat;
		g->lat_p99 = p99;
	} else {
		json_decref(lat);
	}
	/* the spread of one job's bandwidth samples (KiB/s); several jobs: see job_bw_GBps */
	json_decref(g->stats);
	g->stats = NULL;
	if (!g->jobs && num(d, "bw_samples") >= 2 && num(d, "bw_mean") > 0) {
		double k = 1024 / 1e9;

		g->stats = json_pack("{s:I, s:f, s:f, s:f, s:f}", "n", (json_int_t)num(d, "bw_samples"),
				     "min", num(d, "bw_min") * k, "mean", num(d, "bw_mean") * k, "max",
				     num(d, "bw_max") * k, "cv", num(d, "bw_dev") > 0 ?
				     num(d, "bw_dev") / num(d, "bw_mean") : 0.0);
	}
	g->jobs++;
	return 0;
}

/* the figures of a set of groups (one, or one per host) as a storage record */
static json_t *record(const struct st *st, const struct grp *const *set, int n, const char *scope)
{
	const struct grp *g = set[0];
	double bytes = 0, ios = 0, rt = 0, bw;
	int jobs = 0, verified = 1;
	const struct grp *worst = NULL;
	json_t *r, *jb = json_array();
	char el[600];

	for (int i = 0; i < n; i++) {
		bytes += set[i]->bytes;
		ios += set[i]->ios;
		rt = set[i]->runtime_ms > rt ? set[i]->runtime_ms : rt;
		jobs += set[i]->jobs;
		verified &= set[i]->verified;
		if (set[i]->lat && (!worst || set[i]->lat_p99 > worst->lat_p99))
			worst = set[i];
		for (size_t k = 0; k < json_array_size(set[i]->job_bw) && jb; k++)
			json_array_append(jb, json_array_get(set[i]->job_bw, k));
	}
	bw = bytes / (rt / 1e3) / 1e9;
	if (!strcmp(scope, "node"))
		snprintf(el, sizeof(el), "%s", json_string_value(json_object_get(
				 json_array_get(st->im->hosts, g->host), "name")));
	else
		snprintf(el, sizeof(el), "storage:%s", g->dir[0] ? g->dir : "unknown");
	r = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:f, s:f, s:f, s:I, s:i, s:i, s:o}",
		      "type", "measurement", "kind", "probe", "name", "storage", "test", g->test, "scope",
		      scope, "element", el, "bw_GBps", bw, "iops", ios / (rt / 1e3), "time_s", rt / 1e3,
		      "total_bytes", (json_int_t)bytes, "ranks", jobs, "nodes", n, "job_bw_GBps", jb ?: json_array());
	if (!r)
		return NULL;
	if (!strcmp(scope, "node")) {
		json_object_set_new(r, "host", json_string(el));
		json_object_set_new(r, "node_bytes", json_integer((json_int_t)bytes));
	}
	json_object_set_new(r, "fio_group", json_integer(g->groupid));
	if (g->bs > 0 && !g->bs_mixed)
		json_object_set_new(r, "bytes", json_integer((json_int_t)g->bs));
	if (g->dir[0])
		json_object_set_new(r, "dir", json_string(g->dir));
	json_object_set_new(r, "o_direct", json_boolean(g->direct));
	if (n == 1 && g->jobs == 1 && g->stats)
		json_object_set_new(r, "bw_stats_GBps", json_deep_copy(g->stats));
	if (worst) {
		json_object_set_new(r, "lat_us", json_deep_copy(worst->lat));
		if (jobs > 1)
			json_object_set_new(r, "lat_of", json_string("the job with the worst p99 (fio prints "
								     "each job's percentiles; they do not add up)"));
	}
	/* what fio read back was checked only under verify= (a failed check ends the job: an error) */
	if (strstr(g->test, "read")) {
		if (verified)
			json_object_set_new(r, "wrong", json_integer(0));
		else
			json_object_set_new(r, "unknown", json_pack("{s:s}", "wrong", "fio ran without verify=: "
								     "it did not check the data it read"));
	}
	return r;
}

static int emit_groups(struct st *st)
{
	struct imp *im = st->im;
	const struct grp *set[MAX_GROUPS];
	int done[MAX_GROUPS] = { 0 };

	for (int i = 0; i < st->ng; i++) {
		set[0] = &st->g[i];
		if (imp_record(im, record(st, set, 1, "node"), st->g[i].line))
			return imp_fail(im, 0, "out of memory");
	}
	/* the cluster: the same fio group and test on every host, run at once */
	for (int i = 0; i < st->ng; i++) {
		int n = 0;

		if (done[i])
			continue;
		for (int j = i; j < st->ng; j++)
			if (!done[j] && st->g[j].groupid == st->g[i].groupid &&
			    !strcmp(st->g[j].test, st->g[i].test)) {
				set[n++] = &st->g[j];
				done[j] = 1;
			}
		if (imp_record(im, record(st, set, n, "cluster"), st->g[i].line))
			return imp_fail(im, 0, "out of memory");
	}
	return 0;
}

static int fio_parse(struct imp *im, const json_t *doc)
{
	static const char *const suffixes[] = { ".fio", "-fio", "_fio", NULL };
	struct st st = { .im = im };
	const json_t *jobs, *job;
	const char *ver;
	char host[256];
	size_t i;
	int rc = -1, ranks = 0, client;

	if (!doc)
		return -1;      /* import.c says where the JSON stops */
	ver = json_string_value(json_object_get(doc, "fio version"));
	jobs = json_object_get(doc, "jobs");
	client = !jobs && json_is_array(json_object_get(doc, "client_stats"));
	if (client)
		jobs = json_object_get(doc, "client_stats");
	if (!json_is_array(jobs))
		return imp_fail(im, 1, "fio output without \"jobs\" (nor \"client_stats\")");
	if (!json_array_size(jobs))
		return imp_fail(im, 1, "fio output with no job: nothing was measured");
	st.global = json_object_get(doc, "global options");
	imp_file_host(im->file, suffixes, host, sizeof(host));
	json_array_foreach(jobs, i, job) {
		const char *name = json_string_value(json_object_get(job, "jobname"));
		long line = imp_key_line(im, "jobname", (int)i);
		long long err = (long long)num(job, "error");
		int h;

		if (!json_is_object(job) || !name)
			return imp_fail(im, line ?: 1, "fio job %zu has no \"jobname\" (not fio's JSON output?)",
					i + 1);
		/* the client/server form adds each host's sum as "All clients": the cluster is ours */
		if (client && !strcmp(name, "All clients"))
			continue;
		h = imp_host(im, client ? json_string_value(json_object_get(job, "hostname")) ?: host : host);
		if (h < 0 || imp_host_rank(im, h, ranks))
			return imp_fail(im, 0, "out of memory");
		if (err > 0) {
			/* a failed job is no figure: an error record, as ccprobe's storage probe writes */
			const char *rw = opt(&st, job, "rw") ?: opt(&st, job, "readwrite");
			char msg[512], test[64];

			/* the test its figures would have had: rw= names the direction that matters */
			test_name(rw, rw && strstr(rw, "write") && !strstr(rw, "rw") ? "write" : "read", test,
				  sizeof(test));
			/* EILSEQ (84): what fio read back differed from what it wrote (verify=) */
			snprintf(msg, sizeof(msg), "fio job '%s' (group %lld) on %s ended with error %lld (%s)",
				 name, (long long)num(job, "groupid"),
				 json_string_value(json_object_get(json_array_get(im->hosts, h), "name")), err,
				 err == 84 ? "EILSEQ: the data check (verify=) found a block that differs" :
				 strerror((int)err));
			if (imp_record(im, json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:s}", "type", "error",
						     "kind", "probe", "name", "storage", "test",
						     test, "host", json_string_value(
						     json_object_get(json_array_get(im->hosts, h), "name")),
						     "errno", (json_int_t)err, "message", msg), line))
				goto out;
			st.errors++;
			ranks++;
			continue;
		}
		if (job_dir(&st, job, ranks, h, "read", line) || job_dir(&st, job, ranks, h, "write", line) ||
		    job_dir(&st, job, ranks, h, "mixed", line))
			goto out;
		ranks++;
	}
	if (!st.ng && !st.errors) {
		imp_fail(im, imp_key_line(im, "jobname", 0) ?: 1, "fio output whose jobs read and wrote "
			 "nothing (trim only, or a run stopped before I/O): nothing to judge");
		goto out;
	}
	if (emit_groups(&st))
		goto out;
	im->world_size = ranks;
	json_object_set_new(im->extra, "version", json_string(ver && *ver ? ver : "unknown"));
	if (num(doc, "timestamp") > 0) {
		char utc[32];

		imp_utc((time_t)num(doc, "timestamp"), utc, sizeof(utc));
		json_object_set_new(im->extra, "end_utc", json_string(utc));
	}
	json_object_set_new(im->extra, "options", json_pack("{s:b, s:s}", "client_server", client,
							    "host_from", client ? "fio's client list" :
							    "the file's name"));
	rc = 0;
out:
	for (int k = 0; k < st.ng; k++) {
		json_decref(st.g[k].job_bw);
		json_decref(st.g[k].lat);
		json_decref(st.g[k].stats);
	}
	return rc;
}

static int fio_detect(const char *buf, size_t n, const json_t *doc)
{
	size_t m = n < 65536 ? n : 65536;

	if (doc)
		return json_is_string(json_object_get(doc, "fio version"));
	/* a document cut short: its opening still names the tool */
	return memmem(buf, m, "\"fio version\"", 13) != NULL;
}

const struct importer import_fio = {
	.name = "fio",
	.what = "fio --output-format=json (or json+) output, per job or group_reporting",
	.detect = fio_detect,
	.parse = fio_parse,
};
