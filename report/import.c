/*
 * report/import.c: the table of importers and what they share: recognising
 * the tool, the run header, the records' "source", the end record, and
 * `ccreport import`. docs/import.md describes each tool's mapping.
 */
#include "import.h"
#include "report.h"

#include <errno.h>
#include <math.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* the only list of importers: recognised in this order (keep the JSON ones first) */
const struct importer *const importers[] = {
	&import_dcgm, &import_fio, &import_ior, &import_nccltests, &import_nvbandwidth, &import_perftest, NULL,
};

int imp_fail(struct imp *im, long line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (line > 0)
		n = snprintf(im->err, im->errlen, "%s:%ld: ", im->file, line);
	else
		n = snprintf(im->err, im->errlen, "%s: ", im->file);
	if (n < 0 || (size_t)n >= im->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(im->err + n, im->errlen - n, fmt, ap);
	va_end(ap);
	/* one line, whatever the input held */
	for (char *p = im->err; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return -1;
}

int imp_host(struct imp *im, const char *name)
{
	json_t *h;
	size_t i;

	json_array_foreach(im->hosts, i, h)
		if (!strcmp(json_string_value(json_object_get(h, "name")), name))
			return (int)i;
	h = json_pack("{s:s, s:[]}", "name", name, "ranks");
	if (!h || json_array_append_new(im->hosts, h))
		return -1;
	return (int)json_array_size(im->hosts) - 1;
}

int imp_host_rank(struct imp *im, int h, int rank)
{
	json_t *r = json_object_get(json_array_get(im->hosts, h), "ranks");

	return r ? json_array_append_new(r, json_integer(rank)) : -1;
}

int imp_record(struct imp *im, json_t *rec, long line)
{
	if (!rec)
		return -1;
	if (json_object_set_new(rec, "source", json_pack("{s:s, s:s, s:I}", "tool", im->tool, "file",
							 im->file, "line", (json_int_t)line)) ||
	    json_array_append_new(im->recs, rec))
		return -1;
	return 0;
}

void imp_lines_init(struct imp_lines *l, const char *buf, size_t size)
{
	*l = (struct imp_lines){ .p = buf, .end = buf + size };
}

int imp_next_line(struct imp_lines *l, const char **s, size_t *n)
{
	const char *nl;

	if (l->p >= l->end)
		return 0;
	nl = memchr(l->p, '\n', l->end - l->p);
	*s = l->p;
	*n = nl ? (size_t)(nl - l->p) : (size_t)(l->end - l->p);
	l->unterminated = !nl;
	l->p = nl ? nl + 1 : l->end;
	if (*n && (*s)[*n - 1] == '\r')
		(*n)--;
	l->no++;
	return 1;
}

int imp_tokens(const char *s, size_t n, char *buf, size_t buflen, char **tok, int max)
{
	size_t at = 0;
	int k = 0;

	for (size_t i = 0; i < n && k < max;) {
		size_t j;

		while (i < n && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (i == n)
			break;
		for (j = i; j < n && s[j] != ' ' && s[j] != '\t'; j++)
			;
		if (at + (j - i) + 1 > buflen)
			break;
		memcpy(buf + at, s + i, j - i);
		buf[at + (j - i)] = '\0';
		tok[k++] = buf + at;
		at += j - i + 1;
		i = j;
	}
	return k;
}

int imp_num(const char *tok, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(tok, &end);
	return end == tok || *end || errno ? -1 : 0;
}

int imp_count(const char *tok, double *v)
{
	return imp_num(tok, v) || !isfinite(*v) || *v < 0 || *v > IMP_MAX ? -1 : 0;
}

int imp_int(const char *tok, long long *v)
{
	char *end;

	errno = 0;
	*v = strtoll(tok, &end, 10);
	return end == tok || *end || errno ? -1 : 0;
}

/* ---- recognising and running ---- */

static uint64_t fnv1a(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/* the first non-blank line: a JSON object with a "type" (a ccprobe results file) */
static int is_results_jsonl(const char *buf, size_t size)
{
	struct imp_lines l;
	const char *s;
	size_t n;

	imp_lines_init(&l, buf, size);
	while (imp_next_line(&l, &s, &n)) {
		size_t i = 0;
		json_t *j;
		int yes;

		while (i < n && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (i == n)
			continue;
		if (s[i] != '{')
			return 0;
		j = json_loadb(s, n, 0, NULL);
		yes = json_is_object(j) && json_is_string(json_object_get(j, "type"));
		json_decref(j);
		/* a line that is not a whole object: a multi-line JSON document, or a broken record */
		return yes || !j ? (yes ? 1 : -1) : 0;
	}
	return 1;       /* empty: the results reader says so */
}

long imp_line_at(const struct imp *im, const char *p)
{
	long line = 1;

	if (p < im->buf || p > im->buf + im->size)
		return 0;
	for (const char *q = im->buf; q < p; q++)
		line += *q == '\n';
	return line;
}

long imp_key_line(const struct imp *im, const char *key, int nth)
{
	char pat[80];
	const char *p = im->buf + im->doc_at, *end = im->buf + im->size;
	int n = snprintf(pat, sizeof(pat), "\"%s\"", key);

	if (n <= 0 || (size_t)n >= sizeof(pat) || im->doc_at > im->size)
		return 0;
	for (int k = 0; p < end; k++) {
		const char *q = memmem(p, end - p, pat, n);

		if (!q)
			return 0;
		if (k == nth)
			return imp_line_at(im, q);
		p = q + n;
	}
	return 0;
}

void imp_file_host(const char *file, const char *const *more, char *host, size_t len)
{
	static const char *const suffixes[] = { ".json", ".jsonl", ".txt", ".log", ".out", NULL };
	const char *b = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	int cut = 1;

	snprintf(host, len, "%s", *b ? b : "host");
	while (cut) {
		size_t n = strlen(host);

		cut = 0;
		for (int k = 0; k < 2 && !cut; k++) {
			const char *const *l = k ? more : suffixes;

			for (int i = 0; l && l[i]; i++) {
				size_t s = strlen(l[i]);

				if (n > s && !strcasecmp(host + n - s, l[i])) {
					host[n - s] = '\0';
					cut = 1;
					break;
				}
			}
		}
	}
}

void imp_utc(time_t t, char *buf, size_t len)
{
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "%s", "");
}

/*
 * The JSON document the file holds, from its first line that starts with '{'.
 * Text after it is allowed (fio's --output-format=json,normal prints its text
 * report after the JSON); a second document is not: *second is its line.
 */
static json_t *load_doc(const char *buf, size_t size, long *skipped, size_t *at, long *second,
			json_error_t *je)
{
	struct imp_lines l;
	const char *s;
	size_t n;

	*second = 0;
	imp_lines_init(&l, buf, size);
	while (imp_next_line(&l, &s, &n))
		if (n && s[0] == '{') {
			json_t *doc;
			size_t rest = (size_t)(buf + size - s);

			*skipped = l.no - 1;
			*at = (size_t)(s - buf);
			doc = json_loadb(s, rest, JSON_REJECT_DUPLICATES | JSON_DISABLE_EOF_CHECK, je);
			if (doc && (size_t)je->position <= rest) {
				const char *q = s + je->position, *end = buf + size;
				long line = l.no;

				for (const char *c = s; c < q; c++)
					line += *c == '\n';
				for (; q < end && (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n'); q++)
					line += *q == '\n';
				if (q < end && (*q == '{' || *q == '['))
					*second = line;
			}
			return doc;
		}
	*skipped = 0;
	*at = 0;
	je->line = 1;
	snprintf(je->text, sizeof(je->text), "no JSON object");
	return NULL;
}

static json_t *header(struct imp *im, const struct importer *imp)
{
	char id[17];
	json_t *h, *v;
	const char *k;
	int nodes = (int)json_array_size(im->hosts), rpn = -1;
	size_t i;

	snprintf(id, sizeof(id), "%016llx", (unsigned long long)fnv1a(im->buf, im->size));
	json_array_foreach(im->hosts, i, v) {
		int r = (int)json_array_size(json_object_get(v, "ranks"));

		rpn = i == 0 ? r : rpn == r ? rpn : -2;
	}
	h = json_pack("{s:s, s:i, s:s, s:s, s:s, s:s, s:[], s:i, s:i, s:O}", "type", "run", "schema", 1,
		      "run_id", id, "start_utc", "", "tool", imp->name, "version", "unknown", "argv",
		      "world_size", im->world_size, "nodes", nodes, "hosts", im->hosts);
	if (!h)
		return NULL;
	json_object_set_new(h, "ranks_per_node", rpn > 0 ? json_integer(rpn) : json_null());
	/* the importer's facts: version, versions, start_utc, options ... */
	json_object_foreach(im->extra, k, v)
		json_object_set(h, k, v);
	json_object_set_new(h, "imported", json_pack("{s:s, s:O, s:s}", "tool", imp->name, "version",
						     json_object_get(h, "version"), "file", im->file));
	return h;
}

static int emit(struct imp *im, const struct importer *imp, char **out, size_t *outlen)
{
	json_t *h = header(im, imp), *r;
	FILE *m;
	size_t i;
	int rc = 0;

	*out = NULL;
	*outlen = 0;
	m = open_memstream(out, outlen);
	if (!h || !m) {
		json_decref(h);
		if (m)
			fclose(m);
		free(*out);
		return imp_fail(im, 0, "out of memory");
	}
	rc |= json_dumpf(h, m, JSON_COMPACT | JSON_REAL_PRECISION(10));
	fputc('\n', m);
	json_array_foreach(im->recs, i, r) {
		rc |= json_dumpf(r, m, JSON_COMPACT | JSON_REAL_PRECISION(10));
		fputc('\n', m);
	}
	fprintf(m, "{\"type\":\"end\",\"status\":\"complete\"}\n");
	json_decref(h);
	if (fclose(m) || rc) {
		free(*out);
		*out = NULL;
		return imp_fail(im, 0, "out of memory");
	}
	return 0;
}

static const struct importer *by_name(const char *name)
{
	for (int i = 0; importers[i]; i++)
		if (!strcmp(importers[i]->name, name))
			return importers[i];
	return NULL;
}

static void names(char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (int i = 0; importers[i] && at < len; i++)
		at += snprintf(buf + at, len - at, "%s%s", i ? ", " : "", importers[i]->name);
}

int import_buffer(const char *buf, size_t size, const char *name, const char *from,
		  char **out, size_t *outlen, char *err, size_t len)
{
	struct imp im = { .file = name, .err = err, .errlen = len, .buf = buf, .size = size };
	const struct importer *imp = NULL;
	json_error_t je = { 0 };
	json_t *doc = NULL;
	long skipped = 0, second = 0;
	char list[128];
	int rc = -1, jl = 0;

	err[0] = '\0';
	names(list, sizeof(list));
	if (from) {
		imp = by_name(from);
		if (!imp) {
			snprintf(err, len, "%s: unknown tool '%s' (--from: %s)", name, from, list);
			return -1;
		}
	} else if ((jl = is_results_jsonl(buf, size)) > 0) {
		return 0;
	}
	if (memchr(buf, '\0', size))
		return imp_fail(&im, 0, "a binary file (a NUL byte), not a tool's output");
	doc = load_doc(buf, size, &skipped, &im.doc_at, &second, &je);
	if (!json_is_object(doc)) {
		json_decref(doc);
		doc = NULL;
	}
	/* --from a tool whose output this is not: say so, and whose it looks like */
	if (imp && !imp->detect(buf, size, doc)) {
		const struct importer *like = NULL;

		for (int i = 0; !like && importers[i]; i++)
			if (importers[i]->detect(buf, size, doc))
				like = importers[i];
		json_decref(doc);
		snprintf(err, len, "%s:1: not %s output (--from %s)%s%s%s", name, imp->name, imp->name,
			 like ? ": it looks like " : "", like ? like->name : "", like ? "'s" : "");
		return -1;
	}
	for (int i = 0; !imp && importers[i]; i++)
		if (importers[i]->detect(buf, size, doc))
			imp = importers[i];
	/* a first line that starts a JSON object but is none: the results reader names its fault */
	if (!imp && jl < 0) {
		json_decref(doc);
		return 0;
	}
	if (!imp) {
		json_decref(doc);
		snprintf(err, len, "%s:1: not a ccprobe results file, nor the output of a tool ccreport "
			 "imports (%s; docs/import.md)", name, list);
		return -1;
	}
	im.tool = imp->name;
	/* a JSON tool's output followed by another: two runs, never one import */
	if (doc && second) {
		imp_fail(&im, second, "a second JSON document starts here (two %s runs in one file? give "
			 "each its own file)", imp->name);
		json_decref(doc);
		return -1;
	}
	im.hosts = json_array();
	im.recs = json_array();
	im.extra = json_object();
	if (!im.hosts || !im.recs || !im.extra) {
		imp_fail(&im, 0, "out of memory");
		goto out;
	}
	if (imp->parse(&im, doc) || emit(&im, imp, out, outlen))
		goto out;
	rc = 1;
out:
	/* a JSON tool whose document did not parse: where jansson stopped */
	if (rc < 0 && !doc && !err[0])
		imp_fail(&im, skipped + je.line, "not a whole JSON document (%s output cut short?): %s",
			 imp->name, je.text);
	if (rc < 0 && !err[0])
		imp_fail(&im, 0, "cannot import");
	json_decref(doc);
	json_decref(im.hosts);
	json_decref(im.recs);
	json_decref(im.extra);
	return rc;
}

int import_file(const char *path, const char *from, char **out, size_t *outlen, char *err,
		size_t len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	size_t n;
	int rc;

	if (!f) {
		snprintf(err, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	buf = malloc(IMPORT_MAX_BYTES + 1);
	if (!buf) {
		fclose(f);
		snprintf(err, len, "%s: out of memory", path);
		return -1;
	}
	n = fread(buf, 1, IMPORT_MAX_BYTES + 1, f);
	if (ferror(f)) {
		snprintf(err, len, "%s: read error: %s", path, strerror(errno));
		rc = -1;
	} else if (n > IMPORT_MAX_BYTES) {
		snprintf(err, len, "%s: larger than %ld MiB: not a tool's output", path,
			 IMPORT_MAX_BYTES >> 20);
		rc = -1;
	} else {
		rc = import_buffer(buf, n, path, from, out, outlen, err, len);
	}
	fclose(f);
	free(buf);
	return rc;
}

int import_sniff(FILE *f)
{
	static const char want[] = "{\"type\":";
	size_t k = 0;
	int c, other = 0;

	while ((c = getc(f)) != EOF) {
		if (!k && (c == ' ' || c == '\t' || c == '\n' || c == '\r'))
			continue;
		if (c != want[k]) {
			other = 1;
			break;
		}
		if (!want[++k])
			break;
	}
	rewind(f);
	return other;
}

/* ---- ccreport import ---- */

static void import_usage(FILE *f)
{
	fprintf(f,
"usage: ccreport import [--from TOOL] FILE... -o OUT.jsonl\n"
"\n"
"Turns other tools' outputs into one ccprobe results file per input (docs/import.md):\n"
"with one FILE, OUT is that file; with several, OUT is a folder (created) of\n"
"BASENAME.jsonl files. ccreport also reads these outputs directly as inputs.\n"
"\n"
"  -f, --from TOOL   the tool (default: recognised from the content):\n");
	for (int i = 0; importers[i]; i++)
		fprintf(f, "                      %-11s %s\n", importers[i]->name, importers[i]->what);
	fprintf(f,
"  -o, --out OUT     where to write (required)\n"
"  -h, --help        this text\n"
"\n"
"Exit codes: 0 imported; 2 usage error, or an input that is not a whole output of a\n"
"known tool (one line: file:line: what); 3 the output could not be written.\n");
}

static int write_all(const char *path, const char *buf, size_t n, char *err, size_t len)
{
	char *tmp = NULL;
	FILE *f = NULL;
	int rc = -1;

	if (asprintf(&tmp, "%s.tmp", path) < 0) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	f = fopen(tmp, "w");
	if (!f || fwrite(buf, 1, n, f) != n || fclose(f)) {
		snprintf(err, len, "cannot write '%.900s': %s", tmp, strerror(errno));
		if (f)
			unlink(tmp);
	} else if (rename(tmp, path)) {
		snprintf(err, len, "cannot rename '%.900s': %s", tmp, strerror(errno));
		unlink(tmp);
	} else {
		rc = 0;
	}
	free(tmp);
	return rc;
}

int import_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "from", required_argument, NULL, 'f' },
		{ "out", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *from = NULL, *outp = NULL;
	char err[1024], list[128];
	int c, rc = RPT_EXIT_PASS;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":f:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f': from = optarg; break;
		case 'o': outp = optarg; break;
		case 'h': import_usage(stdout); return RPT_EXIT_PASS;
		case ':':
			fprintf(stderr, "ccreport import: option '%s' needs a value\n", argv[optind - 1]);
			return RPT_EXIT_USAGE;
		default:
			fprintf(stderr, "ccreport import: unknown option '%s'\n", argv[optind - 1]);
			return RPT_EXIT_USAGE;
		}
	}
	names(list, sizeof(list));
	if (from && !by_name(from)) {
		fprintf(stderr, "ccreport import: unknown tool '%s' (--from: %s)\n", from, list);
		return RPT_EXIT_USAGE;
	}
	if (!outp || optind == argc) {
		fprintf(stderr, "ccreport import: %s\nusage: ccreport import [--from TOOL] FILE... -o OUT "
			"(ccreport import --help)\n", !outp ? "no output (-o OUT)" : "no input files");
		return RPT_EXIT_USAGE;
	}
	if (argc - optind > 1 && mkdir(outp, 0777) && errno != EEXIST) {
		fprintf(stderr, "ccreport import: cannot create '%s': %s\n", outp, strerror(errno));
		return RPT_EXIT_OUTPUT;
	}
	for (int i = optind; i < argc; i++) {
		char *out = NULL, path[4200];
		size_t n = 0;
		int k = import_file(argv[i], from, &out, &n, err, sizeof(err));

		if (k == 0)
			snprintf(err, sizeof(err), "%s: already a ccprobe results file: nothing to import",
				 argv[i]);
		if (k <= 0) {
			fprintf(stderr, "%s\n", err);
			return RPT_EXIT_USAGE;
		}
		if (argc - optind > 1) {
			const char *b = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];

			snprintf(path, sizeof(path), "%s/%s.jsonl", outp, b);
		} else {
			snprintf(path, sizeof(path), "%s", outp);
		}
		if (write_all(path, out, n, err, sizeof(err))) {
			fprintf(stderr, "ccreport import: %s\n", err);
			rc = RPT_EXIT_OUTPUT;
		} else {
			printf("ccreport import: %s -> %s\n", argv[i], path);
		}
		free(out);
		if (rc)
			break;
	}
	return rc;
}
