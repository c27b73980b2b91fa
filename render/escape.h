#ifndef CCDIAG_ESCAPE_H
#define CCDIAG_ESCAPE_H

#include <jansson.h>
#include <stdio.h>

/*
 * Escaping for every string ccreport copies out of the summary document
 * (host names, element names, reasons, paths: all of it comes from results
 * files and profiles, so none of it is trusted). Each function writes s to f
 * so that it reads back as the same text and nothing else: no markup, no
 * entity, no new line or table cell, no gnuplot markup. NULL writes nothing.
 * Control characters are dropped (tab and new line are turned into a space
 * where they would change the structure). docs/rendering.md lists the rules.
 */
void esc_html(FILE *f, const char *s);      /* text and quoted attribute values */
void esc_md(FILE *f, const char *s);        /* inline Markdown, table cells included */
void esc_xml(FILE *f, const char *s);       /* XML 1.0 text and attribute values */
void esc_gnuplot(FILE *f, const char *s);   /* inside a single-quoted gnuplot string */

/*
 * esc_str(fn, s): the escaped text as a malloc'd string (the caller frees
 * it), or NULL when out of memory. For tests and for short labels.
 */
char *esc_str(void (*fn)(FILE *, const char *), const char *s);

/* formats plain text, then writes it through esc: nothing formatted escapes it */
void put_esc(FILE *f, void (*esc)(FILE *, const char *), const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* a summary value as plain text (fmt_value, j_plain of fmt/fmt.h) through esc */
void put_plain(FILE *f, void (*esc)(FILE *, const char *), const json_t *v);

#endif
