/*
 * report/judge.c: results judged into a summary document in memory, for
 * ccreport compare's RUNs that are results rather than summaries: the same
 * steps as ccreport itself (profile, --workload flags, every input read,
 * judged, summarised; docs/report.md), no file written.
 */
#include "judge.h"
#include "compare.h"
#include "eval.h"
#include "eval_state.h"
#include "load.h"
#include "profile.h"
#include "summary.h"
#include "workload.h"

#include <stdlib.h>
#include <string.h>

json_t *judge_results(const struct cmp_judge *j, const char *path, char *err, size_t len)
{
	struct summary_opts so = { 0 };
	struct profile p;
	struct eval e;
	char **paths = NULL, *ppath, *arg = (char *)path;
	json_t *s = NULL;
	int n = 0;

	ppath = profile_find(j->profile, j->argv0);
	if (!ppath) {
		profile_not_found(err, len, j->profile, j->argv0);
		return NULL;
	}
	if (profile_load(&p, ppath, err, len)) {
		free(ppath);
		return NULL;
	}
	for (int i = 0; i < j->nwl; i++)
		if (workload_flag(&p.wl, j->wl[i], err, len))
			goto free_profile;
	if (workload_check(&p.wl, ppath, err, len))
		goto free_profile;
	if (eval_init(&e, &p)) {
		snprintf(err, len, "out of memory");
		goto free_profile;
	}
	n = results_expand(&arg, 1, &paths, err, len);
	if (n < 0 || eval_read_inputs(&e, paths, n, err, len))
		goto free_eval;
	eval_finish(&e);
	so.profile_path = ppath;
	so.baseline_tol = p.baseline_tol;
	so.now = j->now;
	s = summary_build(&e, &so, err, len);
free_eval:
	eval_free(&e);
	for (int i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
free_profile:
	profile_free(&p);
	free(ppath);
	return s;
}
