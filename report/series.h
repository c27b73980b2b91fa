#ifndef CCDIAG_SERIES_H
#define CCDIAG_SERIES_H

/* report/series.c: the collective series eval.c collects (summary.json's charts.collectives) */
#include <jansson.h>
#include <stddef.h>

/* the key of a collective series: name|backend|dtype|op|nodes[|scale] */
void series_key_of(char *buf, size_t len, const char *name, const char *be, const char *dt,
		   const char *op, double nodes, int scale);
/* charts.collectives of the summary from eval.series (with spread_pct per point) */
json_t *series_curves(const json_t *series);

#endif
