#ifndef CCDIAG_RENDER_COMPARE_H
#define CCDIAG_RENDER_COMPARE_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

struct render_opts;

/* compare.md, compare.html (charts drawn first) into ro's folder; 0, or -1 with err */
int render_compare(const json_t *doc, const struct render_opts *ro, char *err, size_t len);
/* the terminal text of the comparison */
void compare_print(const json_t *doc, FILE *f);

#endif
