#ifndef CCDIAG_RENDER_PRIV_H
#define CCDIAG_RENDER_PRIV_H

/* Shared between report/render*.c and report/chart*.c; not part of ccreport's API. */
#include <jansson.h>
#include <stdio.h>

#include "render.h"

/* One chart drawn by gnuplot, kept in memory for every renderer. */
struct chart {
	char file[40];      /* "chart-busbw-1.svg": written beside report.md; never a result string */
	char *title;        /* plain text: renderers escape it */
	char *note;         /* plain text such as "worst 64 of 8192 elements shown", or NULL */
	char *svg;          /* the file as gnuplot wrote it */
	char *inline_svg;   /* prolog and namespace URIs stripped, ids prefixed: for index.html */
	int crit;           /* index into criteria[] for per-element bars, -1 otherwise */
};

struct charts {
	struct chart *v;
	int n;
	char *status;       /* NULL when charts were drawn, else why none were ("charts not drawn: ...") */
	char **errors;      /* one line per chart that failed; the others are still drawn */
	int nerr;
};

/* chart.c: draws every chart the summary has data for; never fails the report */
void charts_draw(const json_t *summary, const struct render_opts *o, struct charts *c);
void charts_free(struct charts *c);
/* the longest a gnuplot child may run before it is killed, unless render_opts says */
#define CHART_TIMEOUT_S 30
/* per-element bar charts show at most this many elements, the worst ones */
#define CHART_MAX_BARS 64

/* render_md.c, render_html.c, render_junit.c: one document each; 0 or -1 on a write error */
int render_md(FILE *f, const json_t *s, const struct charts *c);
int render_html(FILE *f, const json_t *s, const struct charts *c);
int render_junit(FILE *f, const json_t *s);

/* render.c: reading the summary leniently; a missing field reads as empty */
const char *j_str(const json_t *o, const char *key);           /* "" unless a string */
const char *j_text(const json_t *v, char *buf, size_t len);    /* string, number, bool; "" otherwise */
int j_num(const json_t *o, const char *key, double *out);      /* 1 when a number */
const json_t *j_arr(const json_t *o, const char *key);         /* NULL unless an array */
void fmt_value(char *buf, size_t len, const json_t *v);        /* number with sensible digits, or "n/a" */
void fmt_value_unit(char *buf, size_t len, const json_t *o, const char *key, const char *unit);
void fmt_failure(char *buf, size_t len, const json_t *fl);  /* "el (host h): v, bound b, shortfall s%" */
void fmt_bound(char *buf, size_t len, const json_t *crit);     /* ">= 335 GB/s", relative bounds explained */
const char *verdict_word(const char *v);
char *j_plain(const json_t *v);    /* malloc'd plain text of any value: arrays "a, b", objects "k=v, ..." */
/* formats plain text, then writes it through esc (escape.h): nothing formatted escapes it */
void put_esc(FILE *f, void (*esc)(FILE *, const char *), const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void put_plain(FILE *f, void (*esc)(FILE *, const char *), const json_t *v);                       /* "PASS", "FAIL", ... or "UNKNOWN" */

#endif
