/*
 * report/load.c: reads results files (docs/results.md) one line at a time,
 * so memory does not grow with the number of records. Every problem is one
 * "file:line: what" message; nothing in the input can crash the reader.
 */
#include "load.h"
#include "import.h"
#include "record.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int blank(const char *s)
{
	for (; *s; s++)
		if (*s != ' ' && *s != '\t' && *s != '\r' && *s != '\n')
			return 0;
	return 1;
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

/* a measurement the scanner could read: 1 sent (rc in *rc), 0 leave it to jansson */
static int fast_path(const char *buf, size_t n, char **copy, size_t *cap, struct rv *r,
		     const struct results_sink *sink, long line, int *rc)
{
	const char *type;

	if (!sink->measurement)
		return 0;
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
	if (!type || strcmp(type, "measurement"))
		return 0;
	*rc = sink->measurement(r, line, sink->ctx);
	return 1;
}

static int read_stream(FILE *f, const char *name, struct input_info *in,
		       const struct results_sink *sink, char *err, size_t len)
{
	char *buf = NULL, *copy = NULL;
	size_t cap = 0, ccap = 0;
	struct rv *r = malloc(sizeof(*r));
	ssize_t n;
	long line = 0;
	int rc = -1, ended = 0;

	memset(in, 0, sizeof(*in));
	strcpy(in->end, "missing");
	in->path = strdup(name);
	if (!in->path || !r) {
		free(r);
		snprintf(err, len, "%s: out of memory", name);
		return -1;
	}
	while ((n = getline(&buf, &cap, f)) > 0) {
		json_error_t je;
		json_t *rec;
		const char *type;
		int last = buf[n - 1] != '\n';

		line++;
		if (blank(buf)) {
			if (line == 1)
				break;
			continue;
		}
		if (line > 1 && !ended) {
			int frc = 0;

			if (fast_path(buf, (size_t)n, &copy, &ccap, r, sink, line, &frc)) {
				in->records++;
				if (frc) {
					rc = -2;
					goto out;
				}
				continue;
			}
		}
		rec = json_loadb(buf, (size_t)n, JSON_REJECT_DUPLICATES, &je);
		if (!rec) {
			if (last)
				snprintf(err, len, "%s:%ld: truncated record (the file ends inside it)",
					 name, line);
			else
				snprintf(err, len, "%s:%ld: malformed record: %s", name, line, je.text);
			goto out;
		}
		type = json_string_value(json_object_get(rec, "type"));
		if (!json_is_object(rec) || !type) {
			snprintf(err, len, "%s:%ld: malformed record: not an object with a \"type\"",
				 name, line);
		} else if (line == 1) {
			if (!check_header(rec, name, err, len)) {
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
		}
		if (!*err) {
			in->records++;
			if (sink->measurement && !strcmp(type, "measurement")) {
				rv_from_json(rec, r);
				if (sink->measurement(r, line, sink->ctx))
					rc = -2;
			} else if (sink->record(rec, line, sink->ctx)) {
				rc = -2;
			}
		}
		json_decref(rec);
		if (*err || rc == -2)
			goto out;
	}
	if (ferror(f)) {
		snprintf(err, len, "%s:%ld: read error: %s", name, line + 1, strerror(errno));
		goto out;
	}
	if (!in->header) {
		snprintf(err, len, "%s:1: empty file: no run header", name);
		goto out;
	}
	rc = 0;
out:
	free(buf);
	free(copy);
	free(r);
	if (rc)
		rc = -1;
	return rc;
}

int results_read(const char *path, struct input_info *in, const struct results_sink *sink,
		 char *err, size_t len)
{
	FILE *f = fopen(path, "r");
	int rc;

	err[0] = '\0';
	if (!f) {
		memset(in, 0, sizeof(*in));
		snprintf(err, len, "%s: %s", path, strerror(errno));
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
