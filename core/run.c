#include "run.h"
#include "log.h"
#include "timer.h"
#include "watchdog.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	/* a results file that cannot be written ends the run at once (logged
	 * by results_write, the file cut back to its last record): measuring on
	 * into nothing would end in a pass with no evidence */
	if (results_write(run->res, type, rec))
		watchdog_abort(CC_EXIT_RUNTIME);
	return 0;
}

int run_skipped(const struct cc_run *run, const char *name)
{
	for (int i = 0; i < run->nskipped; i++)
		if (!strcmp(run->skipped[i], name))
			return 1;
	return 0;
}

void run_skip(struct cc_run *run, const char *kind, const char *name, const char *reason)
{
	if (run->mpi->rank != 0)
		return;
	/* one stderr line per name skipped (a probe run before and after says it once) */
	if (!run_skipped(run, name)) {
		char **v = realloc(run->skipped, (run->nskipped + 1) * sizeof(*v));

		if (v) {
			run->skipped = v;
			if ((v[run->nskipped] = strdup(name)))
				run->nskipped++;
		}
		log_warn("%s '%s' %s%s", kind, name, !strncmp(reason, "skipped: ", 9) ||
			 !strncmp(reason, "not built: ", 11) ? "" : "skipped: ", reason);
	}
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

static void gather_oom(void)
{
	log_error("out of memory gathering results on rank 0");
	MPI_Abort(MPI_COMM_WORLD, CC_EXIT_RUNTIME);
}

json_t *run_gather_json(MPI_Comm comm, json_t *mine)
{
	char *text = mine ? json_dumps(mine, JSON_COMPACT) : NULL;
	int len = text ? (int)strlen(text) : 0, *lens = NULL, *displ = NULL, total = 0;
	int rank, size;
	char *all = NULL;
	json_t *out = NULL;

	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	if (rank == 0) {
		lens = calloc((size_t)size, sizeof(int));
		displ = calloc((size_t)size, sizeof(int));
		if (!lens || !displ)
			gather_oom();
	}
	MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, comm);
	if (rank == 0) {
		for (int r = 0; r < size; r++) {
			displ[r] = total;
			total += lens[r];
		}
		all = malloc((size_t)total + 1);
		if (!all)
			gather_oom();
	}
	MPI_Gatherv(text, len, MPI_CHAR, all, lens, displ, MPI_CHAR, 0, comm);
	if (rank == 0) {
		out = json_array();
		for (int r = 0; r < size; r++) {
			json_t *v = lens[r] ? json_loadb(all + displ[r], (size_t)lens[r], 0, NULL) : NULL;

			json_array_append_new(out, v ? v : json_null());
		}
	}
	json_decref(mine);
	free(text);
	free(all);
	free(lens);
	free(displ);
	return out;
}

int run_agree(MPI_Comm comm, int mine, const char *host, char *why, size_t len)
{
	int sev = mine < 0 ? 2 : mine > 0 ? 1 : 0, worst, rank, who, cand;
	char buf[512] = "";

	MPI_Comm_rank(comm, &rank);
	MPI_Allreduce(&sev, &worst, 1, MPI_INT, MPI_MAX, comm);
	if (worst == 0)
		return 0;
	cand = sev == worst ? rank : INT_MAX;
	MPI_Allreduce(&cand, &who, 1, MPI_INT, MPI_MIN, comm);
	if (rank == who)
		snprintf(buf, sizeof(buf), "%s (rank %d on %s)", why[0] ? why : "failed", rank,
			 host);
	MPI_Bcast(buf, (int)sizeof(buf), MPI_CHAR, who, comm);
	buf[sizeof(buf) - 1] = '\0';
	snprintf(why, len, "%s", buf);
	return worst == 2 ? -1 : 1;
}

int run_phase_end(struct cc_run *run, const char *name, int failed, const char *why)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "%s", why);
	if (!run_agree(run->mpi->world, failed ? -1 : 0, run->mpi->host, msg, sizeof(msg)))
		return 0;
	run_error(run, "probe", name, msg);
	return -1;
}

extern char **environ;

json_t *run_env_json(void)
{
	static const char *const prefixes[] = { "NCCL_", "UCX_", "OMPI_MCA_", NULL };
	json_t *env = json_object();

	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		int want = eq && !strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21);

		for (int i = 0; !want && eq && prefixes[i]; i++)
			want = !strncmp(*e, prefixes[i], strlen(prefixes[i]));
		if (want) {
			char name[256];

			snprintf(name, sizeof(name), "%.*s", (int)(eq - *e), *e);
			json_object_set_new(env, name, json_string(eq + 1));
		}
	}
	return env;
}

int run_env_shared(const char *name)
{
	static const char *const mca[] = { "pml", "btl", "osc", "mtl", "coll", NULL };

	if (!strncmp(name, "NCCL_", 5) || !strncmp(name, "UCX_", 4))
		return 1;
	if (strncmp(name, "OMPI_MCA_", 9))
		return 0;
	for (int i = 0; mca[i]; i++) {
		size_t n = strlen(mca[i]);

		if (!strncmp(name + 9, mca[i], n) && (name[9 + n] == '\0' || name[9 + n] == '_'))
			return 1;
	}
	return 0;
}
