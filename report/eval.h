#ifndef CCDIAG_EVAL_H
#define CCDIAG_EVAL_H

/*
 * report/eval.c: feeds records to the criteria and judges them
 * (docs/profiles.md); the state it fills is eval_state.h's.
 */
#include <jansson.h>
#include <stddef.h>

#include "eval_state.h"

struct rv;

/* the name of verdict v (enum rpt_verdict) in summary.json */
const char *rpt_verdict_name(int v);

int eval_init(struct eval *e, const struct profile *p);
/* feeds one record (the header included); returns 0 or -1 with err */
int eval_record(struct eval *e, json_t *rec, long line, char *err, size_t len);
/* feeds one measurement */
int eval_measurement(struct eval *e, const struct rv *r, char *err, size_t len);
/* judges every criterion; call once after all inputs */
void eval_finish(struct eval *e);
void eval_free(struct eval *e);
/*
 * Reads every input path into e (which must be initialised). Returns 0, or
 * -1 with "path:line: what" in err.
 */
int eval_read_inputs(struct eval *e, char **paths, int npaths, char *err, size_t len);
/* Reads results held in memory (named name in errors) as one more input; the same. */
int eval_read_mem(struct eval *e, const char *buf, size_t size, const char *name, char *err,
		  size_t len);
/* the value judged for an element (docs/profiles.md, aggregation) */
void elem_value(const struct criterion *c, const struct elem *el, struct pt *out);
/* [[bytes, value], ...]: the sizes that made the element's plateau, smallest first */
json_t *elem_plateau_json(const struct criterion *c, const struct elem *el);

#endif
