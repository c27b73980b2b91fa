#ifndef CCDIAG_RENDER_PRIV_H
#define CCDIAG_RENDER_PRIV_H

/* Shared between report/render*.c and report/chart*.c; not part of ccreport's API. */
#include <jansson.h>
#include <stdio.h>

#include "escape.h"
#include "render.h"
#include "../fmt/fmt.h"

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

/* chart_kinds.c: draws every chart the summary has data for; never fails the report */
void charts_draw(const json_t *summary, const struct render_opts *o, struct charts *c);
void charts_free(struct charts *c);
struct chart_ctx;
/* chart.c: the same for any document (the summary, compare, history): draw adds its charts */
void charts_draw_with(const json_t *doc, const struct render_opts *o, struct charts *c,
		      void (*draw)(struct chart_ctx *, const json_t *));
/* the longest a gnuplot child may run before it is killed, unless render_opts says */
#define CHART_TIMEOUT_S 30
/* per-element bar charts show at most this many elements, the worst ones */
#define CHART_MAX_BARS 64

/*
 * The markup of one document kind. render_doc.c walks the summary once for
 * every kind; render_md.c and render_html.c each fill in one of these. The
 * strings are literal markup; every hook writes summary text through esc.
 */
struct markup {
	void (*esc)(FILE *f, const char *s);       /* esc_md, esc_html (escape.h) */
	int max_failures;                          /* listed under each criterion */
	/* "# Cluster acceptance: ..." up to the profile name; n = criteria, count fail/warn/incomplete/pass */
	void (*header)(FILE *f, const json_t *s, size_t n, const int count[4]);
	void (*heading)(FILE *f, int level, const char *id, const char *text);  /* id may be NULL */
	void (*p_open)(FILE *f, const char *cls);  /* cls: a CSS class or NULL */
	const char *p_close;
	const char *b_open, *b_close;
	void (*list_open)(FILE *f, const char *cls);
	const char *list_close, *li_open, *li_close;
	void (*table_open)(FILE *f, const char *const *heads, size_t n);
	const char *tr_open, *tr_close, *table_close;
	void (*td_open)(FILE *f, size_t k, const char *cls);   /* cell k of a row */
	const char *td_close;
	const char *cell_br;       /* a line break inside a table cell */
	const char *fail_sep;      /* between the failures named inside a table cell */
	void (*crit_name)(FILE *f, const json_t *crit);        /* id and title */
	void (*verdict_cell)(FILE *f, size_t k, const char *v);
	void (*verdict_inline)(FILE *f, const char *v);        /* after a criterion's id */
	void (*failures_open)(FILE *f, size_t n);              /* around a criterion's failure list */
	const char *failures_close;
	const char *box_open, *box_close;                      /* around the estimate */
	const char *dl_open, *dt_open, *dt_close, *dd_close, *dl_close;  /* name: value lines */
	void (*chart)(FILE *f, const struct chart *c);
};

/* render_doc.c: the sections of report.md and index.html, in order */
void render_doc(FILE *f, const struct markup *m, const json_t *s, const struct charts *c);

/* render_md.c, render_html.c, render_junit.c: one document each; 0 or -1 on a write error */
int render_md(FILE *f, const json_t *s, const struct charts *c);
int render_html(FILE *f, const json_t *s, const struct charts *c);
int render_junit(FILE *f, const json_t *s);
/* the markup of each kind, for the other documents (compare, history) */
const struct markup *markup_md(void);
const struct markup *markup_html(void);
/* index.html's head (CSS, Content-Security-Policy) up to <body>; title is escaped */
void html_page_open(FILE *f, const char *title);
/* render.c: writes DIR/NAME through fn (what: literal contents instead); 0, or -1 with err */
int render_write_file(const char *dir, const char *name, const char *what,
		      int (*fn)(FILE *, const json_t *, const struct charts *),
		      const json_t *s, const struct charts *c, char *err, size_t len);
/* removes the chart-*.svg an earlier report left in dir */
void render_remove_old_charts(const char *dir);

#endif
