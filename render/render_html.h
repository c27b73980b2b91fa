#ifndef CCDIAG_RENDER_HTML_H
#define CCDIAG_RENDER_HTML_H

#include <jansson.h>
#include <stdio.h>

struct charts;
struct markup;

/* index.html (render_doc with the HTML markup); 0 or -1 on a write error */
int render_html(FILE *f, const json_t *s, const struct charts *c);
/* the HTML markup, for the other documents (compare, history) */
const struct markup *markup_html(void);
/* index.html's head (CSS, Content-Security-Policy) up to <body>; title is escaped */
void html_page_open(FILE *f, const char *title);

#endif
