#ifndef CCDIAG_CHART_KINDS_H
#define CCDIAG_CHART_KINDS_H

#include <jansson.h>

struct chart_ctx;

/* the charts of the summary document, each it has data for (charts_draw_with) */
void chart_summary(struct chart_ctx *ctx, const json_t *summary);

#endif
