/*
 * Hockney fit: weighted linear least squares in (alpha, g = 1 / beta).
 *
 * Why relative error: sweep times span 4-6 decades (8 B in a few us, 1 GiB
 * in seconds). Plain least squares on t is decided by the two or three
 * largest sizes and leaves alpha wherever they put it, often negative or
 * 100x off; least squares on log t is not linear in alpha and beta. Weights
 * w_i = 1 / t_i^2 make each residual count as a fraction of its own time,
 * so every size has the same say, the problem stays linear (closed-form
 * 2x2 normal equations) and the minimised quantity, the relative RMS
 * residual, is directly the quality figure reported.
 */
#include "fit.h"

#include <math.h>

static int usable(double x, double t)
{
	return x > 0 && isfinite(x) && t > 0 && isfinite(t);
}

/*
 * Weighted means of the usable points (pass 1), then the centred sums
 * Sxx = sum w (x - mx)^2 and Sxt = sum w (x - mx)(t - mt) (pass 2): centring
 * avoids the cancellation of s0 * sxx - sx^2 when sizes span 1e0..1e10.
 */
struct wsums {
	double sw, mx, mt, sxx, sxt;
	size_t n;
};

static void wsums(const double *x, const double *t, size_t n, struct wsums *s)
{
	*s = (struct wsums){ 0 };
	for (size_t i = 0; i < n; i++) {
		double w;

		if (!usable(x[i], t[i]))
			continue;
		w = 1.0 / (t[i] * t[i]);
		s->sw += w;
		s->mx += w * x[i];
		s->mt += w * t[i];
		s->n++;
	}
	if (!s->n)
		return;
	s->mx /= s->sw;
	s->mt /= s->sw;
	for (size_t i = 0; i < n; i++) {
		double w;

		if (!usable(x[i], t[i]))
			continue;
		w = 1.0 / (t[i] * t[i]);
		s->sxx += w * (x[i] - s->mx) * (x[i] - s->mx);
		s->sxt += w * (x[i] - s->mx) * (t[i] - s->mt);
	}
}

static void quality(const double *x, const double *t, size_t n, struct fit_result *f,
		    double g, double mean)
{
	double ss_res = 0, ss_tot = 0;

	f->max_rel = 0;
	for (size_t i = 0; i < n; i++) {
		double e, d;

		if (!usable(x[i], t[i]))
			continue;
		e = (f->alpha_s + x[i] * g - t[i]) / t[i];
		d = (t[i] - mean) / t[i];
		ss_res += e * e;
		ss_tot += d * d;
		if (fabs(e) > f->max_rel)
			f->max_rel = fabs(e);
	}
	f->rel_rms = sqrt(ss_res / (double)f->n);
	f->r2 = ss_tot > 0 ? 1.0 - ss_res / ss_tot : (ss_res == 0 ? 1.0 : 0.0);
}

int fit_hockney(const double *bytes, const double *t_s, size_t n, struct fit_result *out)
{
	struct wsums s;
	double alpha, g;

	*out = (struct fit_result){ .ok = 0 };
	wsums(bytes, t_s, n, &s);
	out->n = s.n;
	if (s.n < FIT_MIN_POINTS) {
		out->why = "fewer than 3 sizes with a time";
		return 0;
	}
	if (!(s.sxx > 0) || !isfinite(s.sxx)) {
		out->why = "all sizes equal: no slope";
		return 0;
	}
	g = s.sxt / s.sxx;
	alpha = s.mt - g * s.mx;
	if (!(g > 0) || !isfinite(g) || !isfinite(alpha)) {
		out->why = "time does not grow with size (beta would not be above 0)";
		return 0;
	}
	out->ok = 1;
	out->alpha_s = alpha;
	out->beta_Bps = 1.0 / g;
	quality(bytes, t_s, n, out, g, s.mt);
	return 1;
}

double fit_time(const struct fit_result *f, double bytes)
{
	return f->ok ? f->alpha_s + bytes / f->beta_Bps : NAN;
}
