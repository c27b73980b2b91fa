#ifndef CCDIAG_IMPORT_H
#define CCDIAG_IMPORT_H

/*
 * report/import.c: other tools' outputs (nccl-tests, perftest, dcgmi diag)
 * turned into records of the ccprobe schema (docs/results.md, docs/import.md),
 * so everything behind the results reader judges them unchanged. One table of
 * importers (import.c); each importer has its own file (import_*.c) and
 * supplies only how to recognise and parse its tool's output. Plain C over
 * jansson: nothing here links MPI, CUDA, NCCL or verbs.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

/* what an importer is building: the header's facts and the records (import.c) */
struct imp {
	const char *file;        /* the input's name, as given */
	const char *tool;        /* the importer's name */
	char *err;               /* "file:line: what" on failure */
	size_t errlen;
	json_t *hosts;           /* [{name, ranks}] (owned) */
	json_t *recs;            /* records after the header, in order (owned) */
	json_t *extra;           /* fields for the header: version, versions, program, options (owned) */
	int world_size;
	const char *buf;         /* the whole input */
	size_t size;
	size_t doc_at;           /* where the JSON document starts in buf (JSON tools) */
};

struct importer {
	const char *name;        /* --from NAME; the header's tool */
	const char *what;        /* one line for --help */
	/* 1: buf (its first part, or the whole JSON document in doc) is this tool's output */
	int (*detect)(const char *buf, size_t n, const json_t *doc);
	/* fills im; 0, or -1 after imp_fail() */
	int (*parse)(struct imp *im, const json_t *doc);
};

/* the only list of importers (import.c), NULL-terminated */
extern const struct importer *const importers[];

/*
 * Turns buf (named name) into results JSON Lines in *out (malloc'd, *outlen
 * bytes): with from NULL the tool is recognised from the content. Returns 1
 * when it imported, 0 when buf is not another tool's output (a ccprobe
 * results file: *out untouched; also when from is NULL and nothing
 * recognises it), -1 with "name:line: what" in err.
 */
int import_buffer(const char *buf, size_t size, const char *name, const char *from,
		  char **out, size_t *outlen, char *err, size_t len);
/* the same for a file (read whole, at most IMPORT_MAX_BYTES) */
#define IMPORT_MAX_BYTES (256L << 20)
int import_file(const char *path, const char *from, char **out, size_t *outlen, char *err,
		size_t len);
/*
 * 1 when the stream does not start like a ccprobe results file ('{"type":'
 * after blanks), so the results reader should import it; rewinds f.
 */
int import_sniff(FILE *f);
/* ccreport import [--from TOOL] FILE... -o OUT: exit code (enum rpt_exit) */
int import_main(int argc, char **argv);

/* ---- for the importers ---- */

/* sets "file:line: what" (line 0: "file: what"); returns -1 */
int imp_fail(struct imp *im, long line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* the host's index in im->hosts, added when new (ranks empty); -1 out of memory */
int imp_host(struct imp *im, const char *name);
/* adds rank to host h's ranks */
int imp_host_rank(struct imp *im, int h, int rank);
/* appends rec (stolen) with "source" {tool, file, line}; -1 out of memory */
int imp_record(struct imp *im, json_t *rec, long line);

/* one line of the input at a time: s (not NUL-terminated), n bytes without the newline */
struct imp_lines {
	const char *p, *end;
	long no;                 /* the line number of the line returned last */
	int unterminated;        /* the line returned last had no newline: the file ends inside it */
};
void imp_lines_init(struct imp_lines *l, const char *buf, size_t size);
int imp_next_line(struct imp_lines *l, const char **s, size_t *n);

/* splits s (n bytes) at blanks into at most max NUL-terminated tokens in buf; the count */
int imp_tokens(const char *s, size_t n, char *buf, size_t buflen, char **tok, int max);
/* strict number parsing of a whole token: 0 ok, -1 not a number */
int imp_num(const char *tok, double *v);
/*
 * the same for what the results reader accepts as a count, size, time or rate
 * (docs/results.md): finite, 0 <= v <= IMP_MAX; -1 otherwise
 */
#define IMP_MAX 1e18
int imp_count(const char *tok, double *v);
int imp_int(const char *tok, long long *v);

/* the line of buf that p points into (1-based); 0 when p is outside buf */
long imp_line_at(const struct imp *im, const char *p);
/* the line of the nth (0-based) "key" in the JSON document; 0 when there is none */
long imp_key_line(const struct imp *im, const char *key, int nth);
/*
 * The host a saved output names in its file name, for tools that print none:
 * "logs/node07.json" -> "node07"; the suffixes in more (NULL-terminated, or
 * NULL) are cut too ("node07.fio.json" -> "node07" with ".fio").
 */
void imp_file_host(const char *file, const char *const *more, char *host, size_t len);
/* t as "2026-11-30T06:00:00Z" ("" when it cannot be written) */
void imp_utc(time_t t, char *buf, size_t len);

/* the importers (import_*.c) */
extern const struct importer import_dcgm, import_fio, import_ior, import_nccltests, import_nvbandwidth,
	import_perftest;

#endif
