#ifndef CCDIAG_MODEL_H
#define CCDIAG_MODEL_H

/*
 * report/model.c: what ccreport derives from the collective records: the
 * scaling chart and the training estimate (docs/estimate.md).
 */

struct eval;
struct rv;

/* a fit record (kind "fit"); 0 or -1 on no memory */
int model_note_fit(struct eval *e, const struct rv *r);
/* builds e->scaling and e->estimate and feeds the derived criteria; before judging */
void model_build(struct eval *e);

#endif
