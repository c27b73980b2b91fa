/*
 * groups: the job's hosts in groups, read once on rank 0 and sent to every
 * rank (probes/groups.h); the pair schedule of the node-pair probes on them.
 */
#include "groups.h"
#include "schedule.h"
#include "../core/topology.h"
#include "../gpu/gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct job_groups cached;
static int cached_state;          /* 0 not yet, 1 ok, -1 failed (cached_err) */
static char cached_err[300];

static void groups_free(struct job_groups *g)
{
	for (int i = 0; g->names && i < g->ngroups; i++)
		free(g->names[i]);
	for (int i = 0; g->spines && i < g->ngroups; i++)
		free(g->spines[i]);
	free(g->names);
	free(g->spines);
	free(g->group_of);
	memset(g, 0, sizeof(*g));
}

/* g from topology t mapped onto the job's hosts; -1 with err */
static int from_topo(const struct topo *t, char *const *hosts, int n, int given,
		     struct job_groups *g, char *err, size_t len)
{
	const char **names = malloc((size_t)n * sizeof(*names));
	int rc = -1;

	memset(g, 0, sizeof(*g));
	g->n = n;
	g->given = given;
	snprintf(g->source, sizeof(g->source), "%s", t->source);
	g->group_of = malloc((size_t)n * sizeof(int));
	if (!names || !g->group_of) {
		snprintf(err, len, "out of memory");
		goto out;
	}
	if (topo_assign(t, hosts, n, g->group_of, &g->ngroups, names, err, len))
		goto out;
	g->names = calloc((size_t)g->ngroups, sizeof(char *));
	g->spines = calloc((size_t)g->ngroups, sizeof(char *));
	if (!g->names || !g->spines) {
		snprintf(err, len, "out of memory");
		goto out;
	}
	for (int k = 0; k < g->ngroups; k++) {
		g->names[k] = strdup(names[k]);
		for (int j = 0; j < t->ngroups; j++)
			if (t->groups[j] == names[k] && t->spine[j] >= 0)
				g->spines[k] = strdup(t->spines[t->spine[j]]);
		if (!g->names[k]) {
			snprintf(err, len, "out of memory");
			goto out;
		}
	}
	rc = 0;
out:
	free(names);
	if (rc)
		groups_free(g);
	return rc;
}

/*
 * Rank 0, --topology nvlink: a group per NVLink domain from every host's
 * answer (domains[node], "UUID/CLIQUE" or "!why"). -1 with err naming the
 * first host NVML cannot place: absent is said, never guessed.
 */
static int from_nvlink(char *const *hosts, int n, char (*domains)[GPU_FABRIC_LEN],
		       struct job_groups *g, char *err, size_t len)
{
	char **names = calloc((size_t)n, sizeof(char *));
	struct topo t;
	int rc = -1;

	if (!names) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	for (int x = 0; x < n; x++) {
		if (domains[x][0] == '!' || !domains[x][0]) {
			snprintf(err, len, "--topology nvlink: host '%s' has no NVLink domain: %s",
				 hosts[x], domains[x][0] ? domains[x] + 1 : "no answer");
			goto out;
		}
		names[x] = domains[x];
	}
	if (topo_from_list(hosts, names, n, "nvlink: NVML fabric info (cluster UUID/clique id)",
			   &t, err, len))
		goto out;
	rc = from_topo(&t, hosts, n, 1, g, err, len);
	topo_free(&t);
out:
	free(names);
	return rc;
}

/* the groups as one JSON text (rank 0 -> every rank) */
static char *groups_dump(const struct job_groups *g)
{
	json_t *of = json_array(), *names = json_array(), *spines = json_array(), *j;
	char *s;

	for (int x = 0; x < g->n; x++)
		json_array_append_new(of, json_integer(g->group_of[x]));
	for (int k = 0; k < g->ngroups; k++) {
		json_array_append_new(names, json_string(g->names[k]));
		json_array_append_new(spines, g->spines[k] ? json_string(g->spines[k]) : json_null());
	}
	j = json_pack("{s:s, s:i, s:o, s:o, s:o}", "source", g->source, "given", g->given,
		      "group_of", of, "names", names, "spines", spines);
	s = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	return s;
}

static int groups_load(const char *text, int n, struct job_groups *g)
{
	json_t *j = json_loads(text, 0, NULL), *of, *names, *spines;
	int rc = -1;

	memset(g, 0, sizeof(*g));
	if (!j)
		return -1;
	of = json_object_get(j, "group_of");
	names = json_object_get(j, "names");
	spines = json_object_get(j, "spines");
	if (json_array_size(of) != (size_t)n || !json_array_size(names))
		goto out;
	g->n = n;
	g->ngroups = (int)json_array_size(names);
	g->given = (int)json_integer_value(json_object_get(j, "given"));
	snprintf(g->source, sizeof(g->source), "%s",
		 json_string_value(json_object_get(j, "source")) ?: "?");
	g->group_of = malloc((size_t)n * sizeof(int));
	g->names = calloc((size_t)g->ngroups, sizeof(char *));
	g->spines = calloc((size_t)g->ngroups, sizeof(char *));
	if (!g->group_of || !g->names || !g->spines)
		goto out;
	for (int x = 0; x < n; x++)
		g->group_of[x] = (int)json_integer_value(json_array_get(of, (size_t)x));
	for (int k = 0; k < g->ngroups; k++) {
		const char *s = json_string_value(json_array_get(spines, (size_t)k));

		g->names[k] = strdup(json_string_value(json_array_get(names, (size_t)k)) ?: "?");
		g->spines[k] = s ? strdup(s) : NULL;
		if (!g->names[k])
			goto out;
	}
	rc = 0;
out:
	json_decref(j);
	if (rc)
		groups_free(g);
	return rc;
}

const struct job_groups *job_groups(const struct cc_options *o, const struct mpictx *mpi,
				    char *err, size_t len)
{
	int nvlink = o->topology && !strcmp(o->topology, "nvlink");
	char (*domains)[GPU_FABRIC_LEN] = NULL, mine[GPU_FABRIC_LEN] = "";
	char *text = NULL;
	int hdr[2] = { -1, 0 };          /* status (0 ok), bytes of the text or message */

	if (cached_state) {
		if (cached_state < 0)
			snprintf(err, len, "%s", cached_err);
		return cached_state > 0 ? &cached : NULL;
	}
	if (nvlink) {
		/* every host's leader asks NVML; rank 0 gets all the answers */
		if (mpi->local_rank == 0 && gpu_fabric_domain(mine, sizeof(mine)) < 0 && mine[0] != '!')
			snprintf(mine, sizeof(mine), "!NVML gave no answer");
		if (mpi->rank == 0)
			domains = calloc((size_t)mpi->size, sizeof(*domains));
		MPI_Gather(mine, GPU_FABRIC_LEN, MPI_CHAR, domains, GPU_FABRIC_LEN, MPI_CHAR, 0,
			   mpi->world);
	}
	if (mpi->rank == 0) {
		struct job_groups g = { 0 };
		struct topo t;
		int rc;

		if (nvlink) {
			char (*by_node)[GPU_FABRIC_LEN] = domains ?
				calloc((size_t)mpi->nnodes, sizeof(*by_node)) : NULL;

			if (!by_node) {
				snprintf(cached_err, sizeof(cached_err), "out of memory");
				rc = -1;
			} else {
				for (int x = 0; x < mpi->nnodes; x++)
					memcpy(by_node[x], domains[mpi->node_leader[x]], GPU_FABRIC_LEN);
				rc = from_nvlink(mpi->hosts, mpi->nnodes, by_node, &g, cached_err,
						 sizeof(cached_err));
			}
			free(by_node);
		} else if (o->topology) {
			rc = topo_read(o->topology, &t, cached_err, sizeof(cached_err));
			if (!rc) {
				rc = from_topo(&t, mpi->hosts, mpi->nnodes, 1, &g, cached_err,
					       sizeof(cached_err));
				topo_free(&t);
			}
		} else {
			rc = topo_fallback(mpi->hosts, mpi->nnodes, o->group_size, &t);
			if (rc)
				snprintf(cached_err, sizeof(cached_err), "out of memory");
			else {
				rc = from_topo(&t, mpi->hosts, mpi->nnodes, 0, &g, cached_err,
					       sizeof(cached_err));
				topo_free(&t);
			}
		}
		if (!rc && !(text = groups_dump(&g))) {
			snprintf(cached_err, sizeof(cached_err), "out of memory");
			rc = -1;
		}
		groups_free(&g);
		hdr[0] = rc ? -1 : 0;
		hdr[1] = (int)strlen(rc ? cached_err : text) + 1;
	}
	free(domains);
	MPI_Bcast(hdr, 2, MPI_INT, 0, mpi->world);
	if (mpi->rank != 0 && !(text = malloc((size_t)hdr[1])))
		MPI_Abort(MPI_COMM_WORLD, CC_EXIT_RUNTIME);
	MPI_Bcast(hdr[0] ? cached_err : text, hdr[1], MPI_CHAR, 0, mpi->world);
	if (!hdr[0] && groups_load(text, mpi->nnodes, &cached)) {
		snprintf(cached_err, sizeof(cached_err), "out of memory");
		hdr[0] = -1;
	}
	free(text);
	cached_state = hdr[0] ? -1 : 1;
	if (cached_state < 0)
		snprintf(err, len, "%s", cached_err);
	return cached_state > 0 ? &cached : NULL;
}

json_t *job_groups_json(const struct job_groups *g, char *const *hosts)
{
	json_t *groups = json_array();

	for (int k = 0; k < g->ngroups; k++) {
		json_t *hs = json_array();

		for (int x = 0; x < g->n; x++)
			if (g->group_of[x] == k)
				json_array_append_new(hs, json_string(hosts[x]));
		json_array_append_new(groups, json_pack("{s:s, s:s?, s:o}", "name", g->names[k],
							"spine", g->spines[k], "hosts", hs));
	}
	return json_pack("{s:s, s:b, s:o}", "source", g->source, "given", g->given, "groups", groups);
}

int job_pair_plan(const struct cc_options *o, const struct mpictx *mpi, int **pairs,
		  int **round_of, int *npairs, int *grouped, int *within, const char **why,
		  char *err, size_t len)
{
	const struct job_groups *g = job_groups(o, mpi, err, len);
	int n = mpi->nnodes, rounds;

	*pairs = *round_of = NULL;
	*npairs = *within = *grouped = 0;
	if (!g)
		return -1;
	*grouped = schedule_use_grouped(o->pair_schedule, n, g->given ? g->ngroups : 0, why);
	if (*grouped) {
		rounds = schedule_grouped(n, g->group_of, g->ngroups, pairs, round_of, npairs, within);
	} else {
		rounds = schedule_all_pairs(n, pairs, round_of);
		*npairs = n * (n - 1) / 2;
	}
	if (rounds < 0)
		snprintf(err, len, "out of memory for the pairs of %d nodes", n);
	return rounds;
}

void job_groups_header(const struct cc_options *o, const struct mpictx *mpi, json_t *rec,
		       int pairs)
{
	char err[300];
	const struct job_groups *g = job_groups(o, mpi, err, sizeof(err));

	if (!json_object_get(rec, "topology"))
		json_object_set_new(rec, "topology", g ? job_groups_json(g, mpi->hosts) :
				    json_pack("{s:s}", "error", err));
	if (pairs && g && mpi->nnodes >= 2 && !json_object_get(rec, "pair_schedule")) {
		int *p, *r, np, grouped, within, rounds;
		const char *why;

		rounds = job_pair_plan(o, mpi, &p, &r, &np, &grouped, &within, &why, err, sizeof(err));
		if (rounds >= 0)
			json_object_set_new(rec, "pair_schedule", json_pack(
				"{s:s, s:s, s:i, s:i, s:i, s:i}", "schedule",
				grouped ? "grouped" : "all-pairs", "why", why, "groups", g->ngroups,
				"pairs", np, "rounds_inside", within, "rounds_across", rounds - within));
		free(p);
		free(r);
	}
}

int plan_pair_rounds(const struct cc_options *o, int n, int *within, int *grouped, long *npairs,
		     const char **why)
{
	struct topo t = { 0 };
	char err[300];
	int *of = NULL, *dense = NULL, *p = NULL, *r = NULL, ng = 0, np = 0, rounds = -1, given = 0;

	*within = *grouped = 0;
	*npairs = 0;
	if (n < 2)
		return 0;
	if (o->topology && strcmp(o->topology, "nvlink")) {
		if (topo_read(o->topology, &t, err, sizeof(err)))
			return -1;
		given = 1;
	}
	of = malloc((size_t)n * sizeof(int));
	dense = malloc((size_t)(t.ngroups + n) * sizeof(int));
	if (!of || !dense)
		goto out;
	for (int x = 0; x < n; x++) {
		int k = given ? topo_sqrt_size(n) : o->group_size > 0 ? o->group_size : topo_sqrt_size(n);

		/* the file's first n hosts in its groups, any more in groups of k after them */
		of[x] = x < t.nhosts ? t.group[x] : t.ngroups + (x - t.nhosts) / k;
	}
	for (int i = 0; i < t.ngroups + n; i++)
		dense[i] = -1;
	for (int x = 0; x < n; x++) {
		if (dense[of[x]] < 0)
			dense[of[x]] = ng++;
		of[x] = dense[of[x]];
	}
	*grouped = schedule_use_grouped(o->pair_schedule, n, given ? ng : 0, why);
	if (*grouped) {
		rounds = schedule_grouped(n, of, ng, &p, &r, &np, within);
		*npairs = np;
	} else {
		rounds = schedule_rounds(n);
		*npairs = (long)n * (n - 1) / 2;
	}
out:
	free(of);
	free(dense);
	free(p);
	free(r);
	topo_free(&t);
	return rounds;
}

void plan_pair_note(const struct cc_options *o, char *buf, size_t len)
{
	int n = o->plan_nodes, within, grouped, rounds;
	const char *why = NULL;
	long np;

	rounds = plan_pair_rounds(o, n, &within, &grouped, &np, &why);
	if (n < 2 || rounds < 0 || !why) {
		snprintf(buf, len, "model");
		return;
	}
	if (grouped)
		snprintf(buf, len, "model; grouped schedule (%s): %d round(s) inside groups + %d across, "
			 "%ld pairs (all-pairs: %d rounds)", why, within, rounds - within, np,
			 schedule_rounds(n));
	else
		snprintf(buf, len, "model; all-pairs schedule (%s): %d round(s), %ld pairs", why, rounds, np);
}
