/*
 * report/series.c: the collective series eval.c collects from the records
 * (busbw against message size, one series per collective, backend, dtype,
 * op and node count): their key, and their curves as summary.json and the
 * baseline comparison read them.
 */
#include "series.h"

#include <stdio.h>
#include <stdlib.h>

void series_key_of(char *buf, size_t len, const char *name, const char *be, const char *dt,
		   const char *op, double nodes, int scale)
{
	snprintf(buf, len, "%s|%s|%s|%s|%.0f%s", name ?: "", be ?: "", dt ?: "", op ?: "", nodes,
		 scale ? "|scale" : "");
}

static int cmp_point(const void *a, const void *b)
{
	double x = json_number_value(json_array_get(*(json_t *const *)a, 0));
	double y = json_number_value(json_array_get(*(json_t *const *)b, 0));

	return (x > y) - (x < y);
}

/*
 * The collective curves of summary.json: one point [bytes, busbw_GBps] per
 * size, in size order (a repeated size keeps its lowest busbw), and beside
 * them spread_pct, the spread of each point's time (time_us.cv, %).
 */
json_t *series_curves(const json_t *series)
{
	json_t *out = json_array(), *s;
	const char *key;

	json_object_foreach((json_t *)series, key, s) {
		json_t *pts = json_object_get(s, "points"), *n = json_deep_copy(s);
		json_t *np = json_array(), *sp = json_array();
		size_t cnt = json_array_size(pts);
		json_t **v = malloc((cnt ? cnt : 1) * sizeof(*v));

		if (!v || !n || !np || !sp)
			break;
		for (size_t i = 0; i < cnt; i++)
			v[i] = json_array_get(pts, i);
		qsort(v, cnt, sizeof(*v), cmp_point);
		for (size_t i = 0; i < cnt; i++) {
			size_t last = json_array_size(np) - 1;
			json_t *lp = json_array_get(np, last);

			if (lp && json_equal(json_array_get(lp, 0), json_array_get(v[i], 0))) {
				if (json_number_value(json_array_get(v[i], 1)) <
				    json_number_value(json_array_get(lp, 1))) {
					json_array_set(lp, 1, json_array_get(v[i], 1));
					json_array_set(sp, last, json_array_get(v[i], 2));
				}
				continue;
			}
			json_array_append_new(np, json_pack("[O, O]", json_array_get(v[i], 0),
							    json_array_get(v[i], 1)));
			json_array_append(sp, json_array_get(v[i], 2));
		}
		free(v);
		json_object_set_new(n, "points", np);
		json_object_set_new(n, "spread_pct", sp);
		json_array_append_new(out, n);
	}
	return out;
}
