#ifndef CCDIAG_RENDER_HISTORY_H
#define CCDIAG_RENDER_HISTORY_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

struct render_opts;

/* history.md, history.html and charts into ro's folder; 0, or -1 with err */
int render_history(const json_t *doc, const struct render_opts *ro, char *err, size_t len);
/* the terminal text of the history document */
void history_print(const json_t *doc, FILE *f);

#endif
