/*
 * report/load.c: reads results files (docs/results.md) one line at a time,
 * so memory does not grow with the number of records. Every problem is one
 * "file:line: what" message; nothing in the input can crash the reader.
 */
#include "load.h"
#include "import.h"
#include "manifest.h"
#include "record.h"

#include "htab.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int blank(const char *s, size_t n)
{
	for (; n; s++, n--)
		if (*s != ' ' && *s != '\t' && *s != '\r' && *s != '\n')
			return 0;
	return 1;
}

/* ---- lines, read in chunks: a line is bounded, the bytes read are hashed ---- */

#define CHUNK 65536

struct lines {
	FILE *f;
	char *buf;
	size_t cap, start, end;  /* the unread bytes are buf[start, end) */
	size_t scanned;          /* of them, bytes known to hold no '\n' */
	int eof;
	EVP_MD_CTX *md;          /* SHA-256 of every byte read */
};

/* the next line (with its '\n' if any): 1; 0 at the end; -1 longer than RESULTS_LINE_MAX; -2 read error */
static int next_line(struct lines *l, char **line, size_t *n)
{
	for (;;) {
		char *nl = l->buf ? memchr(l->buf + l->start + l->scanned, '\n',
					   l->end - l->start - l->scanned) : NULL;
		size_t got;

		if (nl || (l->eof && l->end > l->start)) {
			*line = l->buf + l->start;
			*n = nl ? (size_t)(nl + 1 - *line) : l->end - l->start;
			if (*n > RESULTS_LINE_MAX)
				return -1;
			l->start += *n;
			l->scanned = 0;
			return 1;
		}
		if (l->eof)
			return 0;
		l->scanned = l->end - l->start;
		if (l->scanned > RESULTS_LINE_MAX)
			return -1;
		if (l->start) {
			memmove(l->buf, l->buf + l->start, l->end - l->start);
			l->end -= l->start;
			l->start = 0;
		}
		if (l->cap - l->end < CHUNK) {
			/* doubling, never far past the longest line allowed */
			size_t nc = l->cap ? 2 * l->cap : 4 * CHUNK;
			char *b;

			if (nc < l->end + CHUNK)
				nc = l->end + CHUNK;
			if (nc > RESULTS_LINE_MAX + 2 * CHUNK)
				nc = RESULTS_LINE_MAX + 2 * CHUNK;
			b = realloc(l->buf, nc);
			if (!b)
				return -2;
			l->buf = b;
			l->cap = nc;
		}
		got = fread(l->buf + l->end, 1, l->cap - l->end, l->f);
		if (got && l->md)
			EVP_DigestUpdate(l->md, l->buf + l->end, got);
		l->end += got;
		if (!got) {
			if (ferror(l->f))
				return -2;
			l->eof = 1;
		}
	}
}

/* ---- what a record may say: hosts of its header, numbers that can be ---- */

/* the header's host names, each once; 0 or -1 with err */
static int header_hosts(const json_t *rec, struct htab *h, const char *name, char *err, size_t len)
{
	const json_t *v;
	size_t i;

	json_array_foreach(json_object_get(rec, "hosts"), i, v) {
		const char *s = json_string_value(json_object_get(v, "name"));

		if (!s)
			continue;
		if (htab_get(h, s) >= 0) {
			snprintf(err, len, "%s:1: host '%s' is listed twice in the run header", name, s);
			return -1;
		}
		if (htab_put(h, s, (int)i)) {
			snprintf(err, len, "%s: out of memory", name);
			return -1;
		}
	}
	return 0;
}

/* a host of the header; HOST#RANK is a rank playing a node of HOST (docs/rdma.md) */
static int known_host(const struct htab *h, const char *s)
{
	const char *hash = strchr(s, '#');
	char tmp[256];

	if (htab_get(h, s) >= 0)
		return 1;
	if (!hash || (size_t)(hash - s) >= sizeof(tmp))
		return 0;
	memcpy(tmp, s, hash - s);
	tmp[hash - s] = '\0';
	return htab_get(h, tmp) >= 0;
}

/* the fields of a record that name a host of its run (a and b: a diagnosis's link) */
static const char *const host_fields[] = { "host", "src", "dst", "peer", "a", "b" };

/* 0, or -1 with "file:line: ..." when a host field names no host of the header */
static int check_hosts(const struct htab *h, const struct rv *r, const json_t *rec, const char *name,
		       long line, char *err, size_t len)
{
	const char *seen[sizeof(host_fields) / sizeof(host_fields[0])];

	for (size_t i = 0; i < sizeof(host_fields) / sizeof(host_fields[0]); i++) {
		const char *s = rec ? json_string_value(json_object_get(rec, host_fields[i])) :
				rv_str(r, host_fields[i]);
		int again = 0;

		if (i >= 4 && rec && strcmp(json_string_value(json_object_get(rec, "type")) ?: "", "diagnosis"))
			break;
		if (i >= 4 && !rec)
			break;
		seen[i] = s;
		/* src is mostly host, dst peer: a name checked once in the record is known */
		for (size_t k = 0; s && k < i && !again; k++)
			again = seen[k] && !strcmp(seen[k], s);
		if (s && *s && !again && !known_host(h, s)) {
			snprintf(err, len, "%s:%ld: %s '%.100s' is not a host of the run header "
				 "(a record of another run?)", name, line, host_fields[i], s);
			return -1;
		}
	}
	return 0;
}

static int check_numbers(const struct rv *r, const char *name, long line, char *err, size_t len)
{
	char why[200];

	if (!rv_check(r, why, sizeof(why)))
		return 0;
	snprintf(err, len, "%s:%ld: %s", name, line, why);
	return -1;
}

/* the same for a record jansson read (end, diagnosis, inventory...), through r */
static int check_numbers_json(const json_t *rec, struct rv *r, const char *name, long line, char *err,
			      size_t len)
{
	rv_from_json(rec, r);
	return check_numbers(r, name, line, err, len);
}

/*
 * Records are written as they happen, by rank 0 on one clock: elapsed_s
 * never goes back within a file (the end record is the watchdog's, on its
 * own start time, and left out). A file that goes back holds records of
 * another run or was reordered.
 */
static int check_clock(const struct rv *r, double *last, const char *name, long line, char *err, size_t len)
{
	double t;

	if (rv_num(r, NULL, "elapsed_s", &t))
		return 0;
	if (t < *last) {
		snprintf(err, len, "%s:%ld: elapsed_s %.6g is before the previous record's %.6g "
			 "(records of another run, or reordered)", name, line, t, *last);
		return -1;
	}
	*last = t;
	return 0;
}

static int check_header(json_t *rec, const char *name, char *err, size_t len)

{
	json_t *schema = json_object_get(rec, "schema");

	if (strcmp(json_string_value(json_object_get(rec, "type")) ?: "", "run")) {
		snprintf(err, len, "%s:1: not a ccprobe results file: the first record is not a run header",
			 name);
		return -1;
	}
	if (!json_is_integer(schema)) {
		snprintf(err, len, "%s:1: the run header has no schema version", name);
		return -1;
	}
	if (json_integer_value(schema) != 1) {
		snprintf(err, len, "%s:1: unknown schema version %lld (ccreport reads schema 1)",
			 name, (long long)json_integer_value(schema));
		return -1;
	}
	if (!json_is_array(json_object_get(rec, "hosts"))) {
		snprintf(err, len, "%s:1: the run header has no hosts list", name);
		return -1;
	}
	return 0;
}

/*
 * isolate's tests: their host lists (nodes, padding) are arrays, which the
 * flat view does not hold, and the report draws them (docs/isolation.md), so
 * the whole record goes to the sink's record callback.
 */
static int needs_json(const struct rv *r)
{
	const char *kind = rv_str(r, "kind"), *name = rv_str(r, "name");

	return kind && name && !strcmp(kind, "probe") && !strcmp(name, "isolate");
}

/* a measurement the scanner could read, in r: 1; 0 leave it to jansson */
static int fast_path(const char *buf, size_t n, char **copy, size_t *cap, struct rv *r)
{
	const char *type;

	if (n + 1 > *cap) {
		char *c = realloc(*copy, n + 1);

		if (!c)
			return 0;
		*copy = c;
		*cap = n + 1;
	}
	/* the scanner writes into its copy; the line stays intact for jansson */
	memcpy(*copy, buf, n);
	(*copy)[n] = '\0';
	if (rv_scan(*copy, n, r))
		return 0;
	type = rv_str(r, "type");
	return type && !strcmp(type, "measurement") && !needs_json(r);
}

static void hex(const unsigned char *d, unsigned n, char *out)
{
	for (unsigned i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

static int read_stream(FILE *f, const char *name, struct input_info *in,
		       const struct results_sink *sink, char *err, size_t len)
{
	struct lines l = { .f = f };
	struct htab hosts = { 0 };
	char *buf, *copy = NULL;
	size_t ccap = 0, n;
	struct rv *r = malloc(sizeof(*r));
	long line = 0;
	int rc = -1, ended = 0, got;
	double clock = 0;

	memset(in, 0, sizeof(*in));
	strcpy(in->end, "missing");
	in->path = strdup(name);
	l.md = EVP_MD_CTX_new();
	if (!in->path || !r || !l.md || !EVP_DigestInit_ex(l.md, EVP_sha256(), NULL)) {
		snprintf(err, len, "%s: out of memory", name);
		goto out;
	}
	while ((got = next_line(&l, &buf, &n)) > 0) {
		json_error_t je;
		json_t *rec;
		const char *type;
		int last = buf[n - 1] != '\n';

		line++;
		if (blank(buf, n)) {
			if (line == 1)
				break;
			continue;
		}
		if (line > 1 && !ended && sink->measurement && fast_path(buf, n, &copy, &ccap, r)) {
			in->records++;
			if (check_hosts(&hosts, r, NULL, name, line, err, len) ||
			    check_numbers(r, name, line, err, len) || check_clock(r, &clock, name, line, err, len))
				goto out;
			if (sink->measurement(r, line, sink->ctx)) {
				rc = -2;
				goto out;
			}
			continue;
		}
		rec = json_loadb(buf, n, JSON_REJECT_DUPLICATES, &je);
		if (!rec) {
			if (last)
				snprintf(err, len, "%s:%ld: truncated record (the file ends inside it)",
					 name, line);
			else
				snprintf(err, len, "%s:%ld: malformed record: %s", name, line, je.text);
			/* jansson quotes the text near the fault, a new line included: one line, always */
			for (char *c = err; *c; c++)
				if ((unsigned char)*c < 0x20)
					*c = ' ';
			goto out;
		}
		type = json_string_value(json_object_get(rec, "type"));
		if (!json_is_object(rec) || !type) {
			snprintf(err, len, "%s:%ld: malformed record: not an object with a \"type\"",
				 name, line);
		} else if (line == 1) {
			if (!check_header(rec, name, err, len) && !header_hosts(rec, &hosts, name, err, len)) {
				in->header = json_incref(rec);
				in->run_id = strdup(json_string_value(json_object_get(rec, "run_id")) ?: "");
				in->start_utc = strdup(json_string_value(json_object_get(rec, "start_utc")) ?: "");
			}
		} else if (ended) {
			snprintf(err, len, "%s:%ld: record after the end record", name, line);
		} else if (!strcmp(type, "run")) {
			snprintf(err, len, "%s:%ld: a second run header (concatenated files? give them separately)",
				 name, line);
		} else if (!strcmp(type, "end")) {
			const char *st = json_string_value(json_object_get(rec, "status"));

			ended = 1;
			/* not_run: a phase ccdiag recorded without running it (docs/ccdiag.md) */
			if (!st || (strcmp(st, "complete") && strcmp(st, "timeout") && strcmp(st, "interrupted") &&
				    strcmp(st, "not_run")))
				snprintf(err, len, "%s:%ld: end record with unknown status", name, line);
			else
				snprintf(in->end, sizeof(in->end), "%s", st);
		} else {
			check_hosts(&hosts, NULL, rec, name, line, err, len);
		}
		if (!*err) {
			in->records++;
			if (sink->measurement && !strcmp(type, "measurement")) {
				rv_from_json(rec, r);
				if (!check_hosts(&hosts, r, NULL, name, line, err, len) &&
				    !check_numbers(r, name, line, err, len) &&
				    !check_clock(r, &clock, name, line, err, len) &&
				    (needs_json(r) && sink->record ? sink->record(rec, line, sink->ctx) :
				     sink->measurement(r, line, sink->ctx)))
					rc = -2;
			} else if (line > 1 && !check_numbers_json(rec, r, name, line, err, len) &&
				   (ended || !check_clock(r, &clock, name, line, err, len)) &&
				   sink->record(rec, line, sink->ctx)) {
				rc = -2;
			} else if (line == 1 && sink->record(rec, line, sink->ctx)) {
				rc = -2;
			}
		}
		json_decref(rec);
		if (*err || rc == -2)
			goto out;
	}
	if (got == -1) {
		snprintf(err, len, "%s:%ld: line longer than %d MiB (not a results file?)", name, line + 1,
			 RESULTS_LINE_MAX >> 20);
		goto out;
	}
	if (got == -2) {
		snprintf(err, len, "%s:%ld: read error: %s", name, line + 1, ferror(f) ? strerror(errno) :
			 "out of memory");
		goto out;
	}
	if (!in->header) {
		snprintf(err, len, "%s:1: empty file: no run header", name);
		goto out;
	}
	in->elapsed_last = clock;
	{
		unsigned char d[EVP_MAX_MD_SIZE];
		unsigned dn = 0;

		/* what a blank first line or an early stop left unread is not in the digest: only complete reads get one */
		if (EVP_DigestFinal_ex(l.md, d, &dn) && dn == 32)
			hex(d, dn, in->sha256);
	}
	rc = 0;
out:
	free(l.buf);
	free(copy);
	free(r);
	EVP_MD_CTX_free(l.md);
	htab_free(&hosts);
	if (rc)
		rc = -1;
	return rc;
}

/* a regular file only: a FIFO or a device (/dev/zero) has no end a reader can count on */
static int open_regular(const char *path, FILE **fp, char *err, size_t len)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;

	if (fd < 0) {
		snprintf(err, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, len, "%s: not a regular file (a results file is read from disk)", path);
		close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	*fp = fdopen(fd, "r");
	if (!*fp) {
		snprintf(err, len, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return 0;
}

int results_read(const char *path, struct input_info *in, const struct results_sink *sink,
		 char *err, size_t len)
{
	FILE *f;
	int rc;

	err[0] = '\0';
	if (open_regular(path, &f, err, len)) {
		memset(in, 0, sizeof(*in));
		return -1;
	}
	/* another tool's output (docs/import.md): its records, converted, go the same way */
	if (import_sniff(f)) {
		char *buf = NULL;
		size_t n = 0;
		int k = import_file(path, NULL, &buf, &n, err, len);

		if (k) {
			fclose(f);
			memset(in, 0, sizeof(*in));
			rc = k < 0 ? -1 : results_read_mem(buf, n, path, in, sink, err, len);
			free(buf);
			/* the digest of the file given, not of the records converted from it */
			if (!rc && sha256_file(path, in->sha256)) {
				snprintf(err, len, "%s: %s", path, strerror(errno));
				rc = -1;
			}
			return rc;
		}
	}
	rc = read_stream(f, path, in, sink, err, len);
	fclose(f);
	return rc;
}

int results_read_mem(const char *buf, size_t size, const char *name, struct input_info *in,
		     const struct results_sink *sink, char *err, size_t len)
{
	FILE *f;
	int rc;

	err[0] = '\0';
	memset(in, 0, sizeof(*in));
	if (!size) {
		snprintf(err, len, "%s:1: empty file: no run header", name);
		return -1;
	}
	f = fmemopen((void *)buf, size, "r");
	if (!f) {
		snprintf(err, len, "%s: %s", name, strerror(errno));
		return -1;
	}
	rc = read_stream(f, name, in, sink, err, len);
	fclose(f);
	return rc;
}

void input_info_free(struct input_info *in)
{
	free(in->path);
	free(in->run_id);
	free(in->start_utc);
	json_decref(in->header);
	memset(in, 0, sizeof(*in));
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add(char ***v, int *n, const char *s)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return -1;
	*v = nv;
	nv[*n] = strdup(s);
	return nv[(*n)++] ? 0 : -1;
}

static int expand_dir(const char *dir, char ***v, int *n, char *err, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int first = *n;

	if (!d) {
		snprintf(err, len, "%s: %s", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		char *p;

		if (l < 7 || strcmp(de->d_name + l - 6, ".jsonl") || de->d_name[0] == '.')
			continue;
		if (asprintf(&p, "%s/%s", dir, de->d_name) < 0 || add(v, n, p)) {
			closedir(d);
			snprintf(err, len, "out of memory");
			return -1;
		}
		free(p);
	}
	closedir(d);
	if (*n == first) {
		snprintf(err, len, "%s: no *.jsonl results files in this folder", dir);
		return -1;
	}
	qsort(*v + first, *n - first, sizeof(**v), cmp);
	return 0;
}

int results_expand(char **args, int nargs, char ***paths, char *err, size_t len)
{
	char **v = NULL;
	int n = 0;

	for (int i = 0; i < nargs; i++) {
		struct stat st;

		if (stat(args[i], &st)) {
			snprintf(err, len, "%s: %s", args[i], strerror(errno));
			goto fail;
		}
		if (S_ISDIR(st.st_mode) ? expand_dir(args[i], &v, &n, err, len) : add(&v, &n, args[i])) {
			if (!S_ISDIR(st.st_mode))
				snprintf(err, len, "out of memory");
			goto fail;
		}
	}
	*paths = v;
	return n;
fail:
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
	return -1;
}
