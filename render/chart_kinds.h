#ifndef CCDIAG_CHART_KINDS_H
#define CCDIAG_CHART_KINDS_H

#include <jansson.h>

struct charts;
struct render_opts;

/* draws every chart the summary has data for into c; never fails the report */
void charts_draw(const json_t *summary, const struct render_opts *o, struct charts *c);

#endif
