#include "run.h"
#include "log.h"
#include "timer.h"

double run_elapsed(const struct cc_run *run)
{
	return timer_now() - run->t_start;
}

int run_record(struct cc_run *run, const char *type, json_t *rec)
{
	if (run->mpi->rank != 0 || !run->res) {
		json_decref(rec);
		return 0;
	}
	json_object_set_new(rec, "elapsed_s", json_real(run_elapsed(run)));
	return results_write(run->res, type, rec);
}

void run_skip(struct cc_run *run, const char *kind, const char *name, const char *reason)
{
	if (run->mpi->rank != 0)
		return;
	log_info("%s '%s' skipped: %s", kind, name, reason);
	run_record(run, "skip", json_pack("{s:s, s:s, s:s}", "kind", kind, "name", name,
					  "reason", reason));
}

void run_error(struct cc_run *run, const char *kind, const char *name, const char *message)
{
	if (run->mpi->rank != 0)
		return;
	log_error("%s '%s': %s", kind, name, message);
	run->failures++;
	run_record(run, "error", json_pack("{s:s, s:s, s:s}", "kind", kind, "name", name,
					   "message", message));
}

json_t *run_stats_json(const struct stats *s, double scale)
{
	return json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:f}", "n", (json_int_t)s->n,
			 "min", s->min * scale, "median", s->median * scale, "mean", s->mean * scale,
			 "max", s->max * scale, "p99", s->p99 * scale, "cv", s->cv);
}
