#ifndef CCDIAG_CHART_COMPARE_H
#define CCDIAG_CHART_COMPARE_H

#include <jansson.h>

struct chart_ctx;

/* the charts of the comparison document (charts_draw_with) */
void chart_compare(struct chart_ctx *ctx, const json_t *doc);

#endif
