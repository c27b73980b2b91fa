#ifndef CCDIAG_REPORT_SOAK_H
#define CCDIAG_REPORT_SOAK_H

/*
 * report/soak.c: stability of a soak (ccprobe --soak, docs/results.md):
 * the interval records of each element (a netpair link, a collective on the
 * cluster) kept as a series, and the soak metrics of docs/profiles.md
 * computed from them here, so a profile can re-judge a soak with other
 * thresholds: soak_cv (%), soak_worst (the worst interval against the
 * median, %) and soak_drops (intervals below drop_below x the median).
 */
#include <stddef.h>

struct criterion;
struct eval;
struct rv;

#define SOAK_MIN_INTERVALS 3     /* fewer samples judge nothing: incomplete */
#define SOAK_DROP_BELOW 0.5      /* drop_below's default: half the median */

/* What a series of interval values says about its stability. */
struct soak_stats {
	int n;                   /* intervals */
	double median, mean;
	double cv;               /* sample standard deviation / mean (core/stats.c); 0 when mean is 0 */
	double worst;            /* the lowest value */
	int worst_at;            /* its index (the first, when repeated) */
	double worst_ratio;      /* worst / median; 1 when the median is 0 */
	int drops;               /* values below drop_below x median */
};

/*
 * The statistics of v[0..n) (record order), drop_below a fraction of the
 * median. Returns 0, or -1 when n is 0 or memory runs out (out zeroed).
 */
int soak_stats(const double *v, int n, double drop_below, struct soak_stats *out);

/* ---- hooks of the profile (profile.c) ---- */
/*
 * Whether name is a soak metric: then *unit and *higher (1: higher is
 * better) say how it reads. The soak metrics' only list.
 */
int soak_metric(const char *name, const char **unit, int *higher);
/*
 * The bound of a soak criterion: s is c->bound_text after its operator (the
 * profile read it: has_op, c->ge), soak_cv and soak_worst FRACTION or
 * PERCENT% (kept in %), soak_drops COUNT. Returns 0, or -1 with what is
 * wrong in err.
 */
int soak_bound(struct criterion *c, const char *s, int has_op, char *err, size_t len);
/* What a soak criterion lacks or must not have ("'bound'", ...), or NULL when it is whole. */
const char *soak_needs(const struct criterion *c);

/* ---- hooks of the evaluation (eval.c) ---- */
/* a record of kind "soak": its value goes to its element's series; 0 or -1 on no memory */
int soak_note(struct eval *e, const struct rv *r);
/* feeds every soak criterion its elements' values (or says why none); before judging */
void soak_build(struct eval *e);
void soak_free(struct eval *e);

#endif
