#ifndef CCDIAG_RENDER_MD_H
#define CCDIAG_RENDER_MD_H

#include <jansson.h>
#include <stdio.h>

struct charts;
struct markup;

/* report.md (render_doc with the Markdown markup); 0 or -1 on a write error */
int render_md(FILE *f, const json_t *s, const struct charts *c);
/* the Markdown markup, for the other documents (compare, history) */
const struct markup *markup_md(void);

#endif
