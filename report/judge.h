#ifndef CCDIAG_JUDGE_H
#define CCDIAG_JUDGE_H

#include <jansson.h>
#include <stddef.h>

struct cmp_judge;

/*
 * report/judge.c: results (file or folder) judged into a summary document
 * with j's profile and flags, as ccreport itself does; NULL with err.
 */
json_t *judge_results(const struct cmp_judge *j, const char *path, char *err, size_t len);

#endif
