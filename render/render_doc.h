#ifndef CCDIAG_RENDER_DOC_H
#define CCDIAG_RENDER_DOC_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

struct chart;
struct charts;

/*
 * The markup of one document kind. render_doc.c walks the summary once for
 * every kind; render_md.c and render_html.c each fill in one of these. The
 * strings are literal markup; every hook writes summary text through esc.
 */
struct markup {
	void (*esc)(FILE *f, const char *s);       /* esc_md, esc_html (escape.h) */
	int max_failures;                          /* listed under each criterion */
	/* "# Cluster acceptance: ..." up to the profile name; n = criteria, count fail/warn/incomplete/pass */
	void (*header)(FILE *f, const json_t *s, size_t n, const int count[5]);   /* fail warn incomplete pass, optional of incomplete */
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

/* the sections of report.md and index.html, in order */
void render_doc(FILE *f, const struct markup *m, const json_t *s, const struct charts *c);

/*
 * The "Charts" section of the other documents (compare, history): why none
 * were drawn, those that failed (one note each), then the charts.
 */
void render_doc_charts(FILE *f, const struct markup *m, const struct charts *c);

#endif
