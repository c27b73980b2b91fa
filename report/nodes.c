/*
 * report/nodes.c: how many nodes to rent. From a --scale run's curve
 * (charts.scaling: the plateau busbw per node count) and the Hockney fit of
 * the estimate's series, the workload's step time, days and cost at every
 * node count measured, and beyond the largest one extrapolated from the fit
 * and labelled so; then the node count that costs least within the deadline
 * (-w deadline_days) or takes least time within the budget (-w budget_usd).
 * docs/compare.md gives the formulas; the model is estimate.c's.
 */
#include "nodes.h"
#include "estimate.h"
#include "../fmt/fmt.h"

#include <math.h>
#include <string.h>

/* node counts beyond the largest measured, as multiples of it */
static const int beyond[] = { 2, 4, 8 };

static double num(const json_t *o, const char *key)
{
	double v;

	return j_num(o, key, &v) ? v : NAN;
}

/* the scaling entry of the estimate's series, else the first */
static const json_t *curve_of(const json_t *summary, const json_t *meas)
{
	const json_t *sc = j_arr(json_object_get(summary, "charts"), "scaling"), *s;
	size_t i;

	json_array_foreach(sc, i, s)
		if (!strcmp(j_str(s, "name"), j_str(meas, "collective")) &&
		    !strcmp(j_str(s, "backend"), j_str(meas, "backend")) &&
		    !strcmp(j_str(s, "dtype"), j_str(meas, "dtype")) &&
		    !strcmp(j_str(s, "op"), j_str(meas, "op")))
			return s;
	return json_array_get(sc, 0);
}

/*
 * A ring all_reduce of S bytes over R ranks under Hockney: the fit at R0
 * ranks is t = alpha + S / beta; alpha counts 2(R-1) latency steps and the
 * bandwidth term moves 2(R-1)/R of S, so at R ranks
 *   t(R) = alpha (R-1)/(R0-1) + (S/beta) ((R-1)/R) / ((R0-1)/R0)
 * and busbw(R) = S 2(R-1)/R / t(R).
 */
static double fit_busbw(double alpha_us, double beta_GBps, double S, double r0, double r)
{
	double t = alpha_us * 1e-6 * (r - 1) / (r0 - 1) +
		   S / (beta_GBps * 1e9) * ((r - 1) / r) / ((r0 - 1) / r0);

	return S * 2 * (r - 1) / r / t / 1e9;
}

static json_t *point(const struct est_inputs *base, int nodes, double gpn, double mp, double busbw,
		     int extrapolated, const char *why)
{
	struct est_inputs in = *base;
	struct est_outputs out;
	char err[256];

	in.gpus = (int)lround(nodes * gpn);
	in.dp_size = (int)lround(in.gpus / mp);
	in.busbw_GBps = busbw;
	if (in.gpus < 1 || in.dp_size < 1 || (in.dp_size > 1 && !(busbw > 0)) ||
	    est_compute(&in, &out, err, sizeof(err)))
		return NULL;
	return json_pack("{s:i, s:i, s:i, s:f, s:f, s:f, s:f, s:f, s:o, s:b, s:s}", "nodes", nodes, "gpus",
			 in.gpus, "dp_size", in.dp_size, "busbw_GBps", busbw, "step_s", out.step_s,
			 "days", out.days, "gpu_hours", out.gpu_hours, "comm_fraction", out.comm_fraction,
			 "cost", in.price_gpu_hour > 0 ? json_real(out.cost) : json_null(),
			 "extrapolated", extrapolated, "busbw_from", why);
}

/* the cheapest within the deadline, the fastest within the budget, else the cheapest */
static json_t *choose(json_t *pts, double deadline_days, double budget_usd, int priced)
{
	const char *cost_key = priced ? "cost" : "gpu_hours";
	const json_t *p, *best = NULL;
	char why[300];
	size_t i;

	json_array_foreach(pts, i, p) {
		double d = num(p, "days"), c = num(p, priced ? "cost" : "gpu_hours");

		if (deadline_days > 0 && !(d <= deadline_days))
			continue;
		if (budget_usd > 0 && (!priced || !(c <= budget_usd)))
			continue;
		if (!best)
			best = p;
		else if (budget_usd > 0 && !(deadline_days > 0) ? d < num(best, "days")
								: c < num(best, cost_key))
			best = p;
	}
	if (budget_usd > 0 && !priced)
		return json_pack("{s:n, s:s}", "nodes", "why", "no price: a budget cannot be checked");
	if (!best) {
		snprintf(why, sizeof(why), "no node count meets %s", deadline_days > 0 && budget_usd > 0
			 ? "the deadline and the budget" : deadline_days > 0 ? "the deadline" : "the budget");
		return json_pack("{s:n, s:s}", "nodes", "why", why);
	}
	if (budget_usd > 0 && !(deadline_days > 0))
		snprintf(why, sizeof(why), "the fewest days within the budget of $%.6g", budget_usd);
	else if (deadline_days > 0)
		snprintf(why, sizeof(why), "the least %s within the deadline of %.4g days%s",
			 priced ? "cost" : "GPU-hours (no price)", deadline_days,
			 budget_usd > 0 ? " and the budget" : "");
	else
		snprintf(why, sizeof(why), "the least %s (no deadline or budget given)",
			 priced ? "cost" : "GPU-hours (no price)");
	return json_pack("{s:O, s:s, s:b}", "nodes", json_object_get(best, "nodes"), "why", why,
			 "extrapolated", json_is_true(json_object_get(best, "extrapolated")));
}

json_t *nodes_plan(const char *name, const json_t *summary, const json_t *inputs,
		   double deadline_days, double budget_usd)
{
	const json_t *est = json_object_get(summary, "estimate"), *meas = json_object_get(est, "measured");
	const json_t *curve = curve_of(summary, meas), *e;
	struct est_inputs in = { 0 };
	double mnodes = num(meas, "nodes"), mranks = num(meas, "ranks"), bus0, plateau0 = NAN,
	       gpn, mp, largest = 0, plateau_l = NAN, alpha, beta, S;
	json_t *pts, *plan;
	char why[200];
	size_t i;

	if (!curve || !json_is_object(inputs))
		return NULL;
	if (est_inputs_of(inputs, &in))
		return NULL;
	/*
	 * the busbw given at each node count already carries that ring's latency
	 * (measured, or the fit's ring extrapolation): the estimate must not add
	 * the latency of more ranks than the fit measured a second time
	 */
	in.fit_ranks = 0;
	alpha = in.alpha_us;
	beta = in.beta_GBps;
	bus0 = num(inputs, "busbw_GBps");
	if (!(mnodes >= 1) || !(mranks >= 1) || !(in.dp_size >= 1))
		return NULL;
	gpn = in.gpus / mnodes;
	mp = (double)in.gpus / in.dp_size;
	json_array_foreach(j_arr(curve, "efficiency"), i, e) {
		if (num(e, "nodes") == mnodes)
			plateau0 = num(e, "busbw_GBps");
		if (num(e, "nodes") > largest && num(e, "busbw_GBps") > 0) {
			largest = num(e, "nodes");
			plateau_l = num(e, "busbw_GBps");
		}
	}
	if (!(plateau0 > 0))
		return NULL;
	pts = json_array();
	/*
	 * measured node counts: the bucket's busbw of the estimate, scaled by how the
	 * plateau changes from the estimate's node count (the curve is of the plateau)
	 */
	json_array_foreach(j_arr(curve, "efficiency"), i, e) {
		double n = num(e, "nodes"), b = num(e, "busbw_GBps") * bus0 / plateau0;
		json_t *p = point(&in, (int)n, gpn, mp, b, 0, "measured: the bucket's busbw scaled by the "
				  "curve's plateau at this node count");

		if (p)
			json_array_append_new(pts, p);
	}
	S = in.bucket_bytes;
	if (isfinite(alpha) && isfinite(beta) && alpha > 0 && beta > 0 && mranks > 1 && largest > 0) {
		double rl = largest * mranks / mnodes, bl = plateau_l * bus0 / plateau0,
		       fl = fit_busbw(alpha, beta, S, mranks, rl);

		for (i = 0; i < sizeof(beyond) / sizeof(beyond[0]); i++) {
			int n = (int)largest * beyond[i];
			double r = n * mranks / mnodes;
			json_t *p = point(&in, n, gpn, mp, bl * fit_busbw(alpha, beta, S, mranks, r) / fl, 1,
					  "extrapolated: the Hockney fit of a ring all_reduce beyond the "
					  "largest node count measured");

			if (p)
				json_array_append_new(pts, p);
		}
		snprintf(why, sizeof(why), "beyond %d nodes: extrapolated from the Hockney fit", (int)largest);
	} else {
		snprintf(why, sizeof(why), "no Hockney fit of the series: no extrapolation beyond %d nodes",
			 (int)largest);
	}
	plan = json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:s, s:s}", "cluster", name, "collective",
			 j_str(curve, "name"), "backend", j_str(curve, "backend"), "label",
			 "model, not a measurement", "extrapolation", why, "points", pts, "busbw_scaled_from",
			 "the estimate's busbw at the bucket, times plateau(n) / plateau(estimate's nodes)",
			 "formulas", "docs/compare.md");
	if (plan)
		json_object_set_new(plan, "choice", choose(pts, deadline_days, budget_usd, in.price_gpu_hour > 0));
	return plan;
}
