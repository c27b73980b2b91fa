#ifndef CCDIAG_FIT_H
#define CCDIAG_FIT_H

#include <stddef.h>

/*
 * The Hockney model of one collective over a sweep: t(S) = alpha + S / beta,
 * S the sweep size in bytes (the record's `bytes`), t seconds per operation.
 * Pure: no MPI, no I/O. Method and weighting in docs/formulas.md.
 */
struct fit_result {
	int ok;              /* 1: alpha and beta hold a fit; 0: refused (why says so) */
	double alpha_s;      /* start-up time, seconds (may come out below 0: see rel_rms) */
	double beta_Bps;     /* asymptotic bandwidth, bytes of S per second (> 0 when ok) */
	double r2;           /* weighted coefficient of determination, 1 = perfect */
	double rel_rms;      /* root mean square of (model - t) / t over the points */
	double max_rel;      /* largest |model - t| / t over the points */
	size_t n;            /* points used: those with bytes > 0 and a finite t > 0 */
	const char *why;     /* when !ok: why no fit, one short phrase */
};

#define FIT_MIN_POINTS 3

/*
 * Fits t = alpha + bytes / beta to the n points (bytes[i], t_s[i]) by least
 * squares on the relative error, i.e. minimising
 * sum(((alpha + bytes_i / beta) - t_i) / t_i)^2. Points with bytes 0 or a
 * time that is not finite and above 0 are left out. Refuses (ok = 0) with
 * fewer than FIT_MIN_POINTS usable points, fewer than two distinct sizes, or
 * when the best slope gives a beta that is not above 0. Returns ok.
 */
int fit_hockney(const double *bytes, const double *t_s, size_t n, struct fit_result *out);

/* The model's time in seconds for a payload of bytes; NaN when !f->ok. */
double fit_time(const struct fit_result *f, double bytes);

#endif
