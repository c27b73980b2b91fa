/*
 * report/identity.c: what ties the inputs to one run of one cluster
 * (docs/provenance.md). Each GPU UUID and NIC GUID belongs to one host (a
 * node's records relabelled as another's repeat them under two names: an
 * input error); the inputs' host sets and time windows agree (those that do
 * not are named in the report, a warn); and each input's bytes are those a
 * MANIFEST beside it lists (ccdiag run writes it; a file changed or added
 * after the run is an input error).
 */
#include "identity.h"
#include "eval_state.h"
#include "load.h"
#include "manifest.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* the physical host of a host name: HOST#RANK is a rank playing a node of HOST (docs/rdma.md) */
static size_t host_len(const char *h)
{
	return strcspn(h, "#");
}

/* an identifier a device without one reports: empty, or only zeros and separators */
static int unset_id(const char *id)
{
	return !id || !id[strspn(id, "0:-.xGPU ")];
}

/*
 * Notes that device id (KIND "GPU UUID", "NIC GUID") of element el is on
 * host; -1 with a message when another host has it already.
 */
static int note_id(struct eval *e, const char *kind, const char *id, const char *el, const char *host,
		   long line, char *err, size_t len)
{
	const char *path = e->nin ? e->in[e->nin - 1].path : "?";
	const json_t *seen;
	char key[200];

	if (unset_id(id) || !host)
		return 0;
	snprintf(key, sizeof(key), "%s %.150s", kind, id);
	seen = json_object_get(e->device_ids, key);
	if (seen) {
		const char *other = str(seen, "host");

		if (host_len(other) == host_len(host) && !strncmp(other, host, host_len(host)))
			return 0;
		snprintf(err, len, "%s %.80s of %.100s (host %.100s) is also %.100s's (host %.100s, %.200s:%lld): "
			 "one device cannot be in two hosts (a node's records relabelled as another's?)",
			 kind, id, el ?: "?", host, str(seen, "element"), other, str(seen, "path"),
			 (long long)json_integer_value(json_object_get(seen, "line")));
		return -1;
	}
	if (json_object_set_new(e->device_ids, key, json_pack("{s:s, s:s, s:s, s:I}", "host", host, "element",
							       el ?: "?", "path", path, "line", (json_int_t)line))) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	return 0;
}

int identity_inventory(struct eval *e, const json_t *rec, long line, char *err, size_t len)
{
	const char *host = str(rec, "host"), *kind = str(rec, "kind");
	const json_t *d;
	size_t i;

	/* a test double's devices (fixture trees, the CUDA test double) are every host's alike */
	if (!host || (str(rec, "transport") && !strcmp(str(rec, "transport"), "fake")) || !kind)
		return 0;
	if (!strcmp(kind, "gpu"))
		json_array_foreach(json_object_get(rec, "gpus"), i, d)
			if (note_id(e, "GPU UUID", str(d, "uuid"), str(d, "element"), host, line, err, len))
				return -1;
	if (!strcmp(kind, "rdma"))
		json_array_foreach(json_object_get(rec, "devices"), i, d) {
			char el[300];

			snprintf(el, sizeof(el), "%s/%s", host, str(d, "name") ?: "?");
			if (note_id(e, "NIC GUID", str(d, "node_guid"), el, host, line, err, len))
				return -1;
		}
	return 0;
}

/* ---- the MANIFEST beside the inputs ---- */

struct mf {
	char *dir, *path;
	struct manifest m;
	int checked;
	char *given;             /* per listed file: 1 when an input */
};

static void mf_free(struct mf *v, int n)
{
	for (int i = 0; i < n; i++) {
		free(v[i].dir);
		free(v[i].path);
		free(v[i].given);
		manifest_free(&v[i].m);
	}
	free(v);
}

/* path's folder ("." for a bare name), malloc'd */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	return slash == path ? strdup("/") : strndup(path, slash - path);
}

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* one input against its folder's MANIFEST: 0, or -1 with a message */
static int check_input(const struct input_info *in, struct mf *mf, char *err, size_t len)
{
	const char *mn = manifest_meta(&mf->m, "nonce"), *hn = str(in->header, "nonce");
	int k = manifest_find(&mf->m, base_of(in->path));

	if (k < 0) {
		snprintf(err, len, "%s: not listed in %s (a results file added after the run?)", in->path, mf->path);
		return -1;
	}
	mf->given[k] = 1;
	if (!*in->sha256 || strcmp(in->sha256, mf->m.hex[k])) {
		snprintf(err, len, "%s: SHA-256 %.16s... is not %s's %.16s... (line %d): the file changed after "
			 "the run", in->path, *in->sha256 ? in->sha256 : "(unread)", mf->path, mf->m.hex[k],
			 mf->m.line[k]);
		return -1;
	}
	/* ccprobe copies ccdiag's --nonce into every header; another tool's log has none */
	if (!json_object_get(in->header, "imported") && (mn || hn) && (!mn || !hn || strcmp(mn, hn))) {
		snprintf(err, len, "%s: the run header's nonce %s%.130s%s is not %s's %s%.130s%s", in->path,
			 hn ? "'" : "", hn ?: "(none)", hn ? "'" : "", mf->path, mn ? "'" : "", mn ?: "(none)",
			 mn ? "'" : "");
		return -1;
	}
	mf->checked++;
	return 0;
}

/* a results file the MANIFEST lists beside the inputs that is gone: deleted after the run */
static int listed_missing(const struct mf *mf, char *err, size_t len)
{
	for (int k = 0; k < mf->m.n; k++) {
		const char *name = mf->m.name[k];
		size_t n = strlen(name);
		struct stat st;
		char *p;

		if (mf->given[k] || strchr(name, '/') || n < 7 || strcmp(name + n - 6, ".jsonl"))
			continue;
		if (asprintf(&p, "%s/%s", mf->dir, name) < 0)
			return -1;
		if (lstat(p, &st) && errno == ENOENT) {
			snprintf(err, len, "%s lists %s (line %d), which is missing: a results file deleted after "
				 "the run?", mf->path, name, mf->m.line[k]);
			free(p);
			return -1;
		}
		free(p);
	}
	return 0;
}

static json_t *mf_json(const struct mf *mf)
{
	static const char *const keys[] = { "run_id", "nonce", "tool", "commit", "profile", "start", "end",
		"hosts_planned", "hosts_actual" };
	json_t *j = json_pack("{s:s, s:i, s:i}", "path", mf->path, "listed", mf->m.n, "checked", mf->checked);

	for (size_t i = 0; j && i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *v = manifest_meta(&mf->m, keys[i]);

		json_object_set_new(j, keys[i], v ? json_string(v) : json_null());
	}
	return j;
}

static int check_manifests(struct eval *e, char *err, size_t len)
{
	struct mf *v = NULL;
	int n = 0, rc = -1, total = 0;
	json_t *list = json_array();

	for (int i = 0; i < e->nin; i++) {
		char *dir = dir_of(e->in[i].path), *mpath = NULL;
		struct stat st;
		int k;

		if (!dir)
			goto nomem;
		for (k = 0; k < n && strcmp(v[k].dir, dir); k++)
			;
		if (k == n) {
			struct mf *t;

			if (asprintf(&mpath, "%s/MANIFEST", dir) < 0) {
				free(dir);
				goto nomem;
			}
			/* none beside this input: nothing to check it against (summary.json says so) */
			if (lstat(mpath, &st) && errno == ENOENT) {
				free(dir);
				free(mpath);
				continue;
			}
			t = realloc(v, (n + 1) * sizeof(*v));
			if (!t) {
				free(dir);
				free(mpath);
				goto nomem;
			}
			v = t;
			memset(&v[n], 0, sizeof(v[n]));
			v[n].dir = dir;
			v[n].path = mpath;
			n++;
			if (manifest_read(&v[k].m, mpath, err, len))
				goto out;
			v[k].given = calloc(v[k].m.n, 1);
			if (!v[k].given)
				goto nomem;
		} else {
			free(dir);
		}
		if (check_input(&e->in[i], &v[k], err, len))
			goto out;
	}
	for (int k = 0; k < n; k++) {
		if (listed_missing(&v[k], err, len))
			goto out;
		total += v[k].checked;
		json_array_append_new(list, mf_json(&v[k]));
	}
	json_decref(e->manifest);
	e->manifest = n ? json_pack("{s:i, s:O}", "checked", total, "manifests", list) : json_null();
	rc = 0;
	goto out;
nomem:
	snprintf(err, len, "out of memory");
out:
	json_decref(list);
	mf_free(v, n);
	return rc;
}

/* ---- one host set and one time window ---- */

#define WINDOW_GAP_S (6 * 3600.0)   /* inputs further apart than this are not one run */
#define OVERLAP_S 60.0               /* inputs on the same hosts at once by more than this */

static int utc_seconds(const char *s, double *t)
{
	struct tm tm = { 0 };
	const char *end;

	if (!s || !(end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm)) || *end)
		return -1;
	*t = (double)timegm(&tm);
	return 0;
}

static int in_header(const json_t *hdr, const char *host)
{
	const json_t *h;
	size_t i;

	json_array_foreach(json_object_get(hdr, "hosts"), i, h)
		if (str(h, "name") && !strcmp(str(h, "name"), host))
			return 1;
	return 0;
}

static void name_it(struct eval *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void name_it(struct eval *e, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) >= 0) {
		json_array_append_new(e->identity, json_string(s));
		free(s);
	}
	va_end(ap);
}

/*
 * The inputs of one acceptance run cover one host set (a phase may run on
 * fewer hosts, never on others) and one stretch of time (phases one after
 * another, never two on the same hosts at once, never hours apart).
 */
static void check_runs(struct eval *e)
{
	int big = -1;

	for (int i = 0; i < e->nin; i++)
		if (big < 0 || json_array_size(json_object_get(e->in[i].header, "hosts")) >
			       json_array_size(json_object_get(e->in[big].header, "hosts")))
			big = i;
	/*
	 * when no input spans two hosts, the inputs are per-node files (fio or
	 * nvbandwidth run on each node, imported one by one): their union is the
	 * host set, and one of another host is expected
	 */
	if (big >= 0 && json_array_size(json_object_get(e->in[big].header, "hosts")) < 2)
		big = -1;
	for (int i = 0; big >= 0 && i < e->nin; i++) {
		const json_t *h;
		const char *out = NULL;
		size_t k, nout = 0;

		if (i == big)
			continue;
		json_array_foreach(json_object_get(e->in[i].header, "hosts"), k, h)
			if (str(h, "name") && !in_header(e->in[big].header, str(h, "name")) && !nout++)
				out = str(h, "name");
		if (nout)
			name_it(e, "%s runs on %zu host(s) that %s does not (%s%s): the inputs are not of one host "
				"set", e->in[i].path, nout, e->in[big].path, out, nout > 1 ? ", ..." : "");
	}
	/* overlaps: two inputs on a shared host at once */
	for (int i = 0; i < e->nin; i++)
		for (int j = i + 1; j < e->nin; j++) {
			double a0, b0, over;
			const json_t *hh;
			size_t k;
			int shared = 0;

			if (utc_seconds(e->in[i].start_utc, &a0) || utc_seconds(e->in[j].start_utc, &b0))
				continue;
			over = fmin(a0 + e->in[i].elapsed_last, b0 + e->in[j].elapsed_last) - fmax(a0, b0);
			json_array_foreach(json_object_get(e->in[i].header, "hosts"), k, hh)
				shared |= str(hh, "name") && in_header(e->in[j].header, str(hh, "name"));
			if (shared && over > OVERLAP_S)
				name_it(e, "%s and %s ran on the same hosts at the same time (%.0f s of overlap): "
					"not phases of one run", e->in[i].path, e->in[j].path, over);
		}
	/* gaps: in start order, an input that starts long after every earlier one ended */
	{
		int *ord = malloc((e->nin ? e->nin : 1) * sizeof(*ord)), n = 0, last = -1;
		double *t0 = malloc((e->nin ? e->nin : 1) * sizeof(*t0)), end = -INFINITY;

		for (int i = 0; ord && t0 && i < e->nin; i++)
			if (!utc_seconds(e->in[i].start_utc, &t0[i]))
				ord[n++] = i;
		for (int a = 1; a < n; a++)
			for (int b = a; b > 0 && t0[ord[b]] < t0[ord[b - 1]]; b--) {
				int t = ord[b];

				ord[b] = ord[b - 1];
				ord[b - 1] = t;
			}
		for (int a = 0; a < n; a++) {
			int i = ord[a];

			if (last >= 0 && t0[i] - end > WINDOW_GAP_S)
				name_it(e, "%s (from %s) starts %.1f h after %s ended: the inputs are not of one time "
					"window", e->in[i].path, e->in[i].start_utc, (t0[i] - end) / 3600,
					e->in[last].path);
			if (last < 0 || t0[i] + e->in[i].elapsed_last > end) {
				end = t0[i] + e->in[i].elapsed_last;
				last = i;
			}
		}
		free(ord);
		free(t0);
	}
}

int identity_inputs(struct eval *e, char *err, size_t len)
{
	if (!e->identity)
		e->identity = json_array();
	if (!e->identity || check_manifests(e, err, len))
		return -1;
	check_runs(e);
	return 0;
}
