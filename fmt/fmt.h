#ifndef CCDIAG_FMT_H
#define CCDIAG_FMT_H

/*
 * fmt/fmt.c: reading and wording the documents ccreport writes (summary.json,
 * compare.json, the history document), beneath both halves of ccreport: the
 * renderers (render/) and the parts of report/ that read summaries again
 * (compare, nodes, history). The readers are lenient: a missing or mistyped
 * field reads as empty and never crashes a reader.
 */
#include <jansson.h>
#include <stddef.h>

const char *j_str(const json_t *o, const char *key);           /* "" unless a string */
const char *j_text(const json_t *v, char *buf, size_t len);    /* string, number, bool; "" otherwise */
int j_num(const json_t *o, const char *key, double *out);      /* 1 when a number */
const json_t *j_arr(const json_t *o, const char *key);         /* NULL unless an array */
char *j_plain(const json_t *v);    /* malloc'd plain text of any value: arrays "a, b", objects "k=v, ..." */
void fmt_value(char *buf, size_t len, const json_t *v);        /* number with sensible digits, or "n/a" */
void fmt_value_unit(char *buf, size_t len, const json_t *o, const char *key, const char *unit);
void fmt_failure(char *buf, size_t len, const json_t *fl);  /* "el (host h): v, bound b, shortfall s%" */
void fmt_bound(char *buf, size_t len, const json_t *crit);     /* ">= 335 GB/s", relative bounds explained */
const char *verdict_word(const char *v);                       /* "PASS", "FAIL", ... or "UNKNOWN" */
/* a decision's "judged": "4 nodes (node0, ...), 3 phases (results files) of 4 ranks each" */
void fmt_judged(char *buf, size_t len, const json_t *judged);
/* a decision's "estimate": days, GPU-hours, cost (or "no price"), exposed communication in %, the step,
 * extrapolated or not, and the measured step beside it when there is one */
void fmt_headline(char *buf, size_t len, const json_t *h);

#endif
