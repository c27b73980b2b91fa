/*
 * diag/topo.c: the run's topology for ccdiag (diag/topo.h): found, checked
 * against the job's hosts, shown in the plan, placed in the results folder.
 */
#include "topo.h"
#include "../core/spawn.h"
#include "../core/topology.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the bytes of path, malloc'd and NUL-terminated; NULL when it cannot be read */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;
	FILE *m;
	int c;

	if (!f)
		return NULL;
	m = open_memstream(&buf, &len);
	if (!m) {
		fclose(f);
		return NULL;
	}
	while ((c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(f);
	fclose(m);
	return buf;
}

/* text into a private temporary file (mkstemps); its malloc'd path, or NULL */
static char *to_temp(const char *text)
{
	const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char *name = xasprintf("%s/ccdiag-topology.XXXXXX.txt", dir);
	int fd = mkstemps(name, 4);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (!f || fputs(text, f) < 0 || fclose(f)) {
		if (fd >= 0)
			unlink(name);
		free(name);
		return NULL;
	}
	return name;
}

/* inside Slurm: scontrol show topology, else the topology.conf beside slurm.conf */
static int from_slurm(struct diag_topo *t)
{
	char *argv[] = { "scontrol", "show", "topology", NULL }, *out = NULL, *conf, *slash;
	int rc = spawn_capture(argv, &out, NULL, 20);

	if (rc == 0 && out && strstr(out, "Name=") && strstr(out, "Nodes=")) {
		t->text = out;
		t->origin = xstrdup("scontrol show topology");
		return 0;
	}
	free(out);
	conf = xstrdup(getenv("SLURM_CONF") && *getenv("SLURM_CONF") ? getenv("SLURM_CONF") :
		       "/etc/slurm/slurm.conf");
	slash = strrchr(conf, '/');
	if (slash) {
		char *tc = xasprintf("%.*s/topology.conf", (int)(slash - conf), conf);

		if ((t->text = slurp(tc))) {
			t->origin = xasprintf("Slurm's %s", tc);
			t->path = tc;
			free(conf);
			return 0;
		}
		free(tc);
	}
	t->note = xasprintf("inside Slurm, no topology: scontrol show topology %s, and no %.*s/topology.conf",
			    rc == 0 ? "printed no switch or block" : rc == 127 || rc < 0 ? "not found" :
			    "failed", slash ? (int)(slash - conf) : 0, slash ? conf : "");
	free(conf);
	return 0;
}

/* the plan's lines: source, the job's groups (4 shown), their sizes */
static void describe(struct diag_topo *t, const struct topo *tp, const struct strv *hosts)
{
	int n = hosts->n, *of = NULL, ng = 0, gmin = 0, gmax = 0;
	const char **names = NULL;
	char err[300];

	strv_addf(&t->lines, "topology: %s (%s): %d hosts in %d groups%s", t->origin, tp->source,
		  tp->nhosts, tp->ngroups, tp->nspines ? "" : ", no spine named");
	if (!n)
		return;
	of = xmalloc((size_t)n * sizeof(int));
	names = xmalloc((size_t)n * sizeof(char *));
	if (topo_assign(tp, hosts->v, n, of, &ng, names, err, sizeof(err)))
		goto out;
	for (int g = 0; g < ng; g++) {
		int c = 0;

		for (int x = 0; x < n; x++)
			c += of[x] == g;
		gmin = !g || c < gmin ? c : gmin;
		gmax = c > gmax ? c : gmax;
	}
	if (gmin == gmax)
		strv_addf(&t->lines, "topology: the job's %d hosts in %d group(s) of %d hosts", n, ng, gmin);
	else
		strv_addf(&t->lines, "topology: the job's %d hosts in %d group(s) of %d to %d hosts", n, ng,
			  gmin, gmax);
	for (int g = 0; g < ng && g < 4; g++) {
		int first = -1, last = -1, c = 0;

		for (int x = 0; x < n; x++)
			if (of[x] == g) {
				first = first < 0 ? x : first;
				last = x;
				c++;
			}
		strv_addf(&t->lines, "  group %s: %d host(s): %s%s%s", names[g], c, hosts->v[first],
			  c > 1 ? (c == 2 ? ", " : " ... ") : "", c > 1 ? hosts->v[last] : "");
	}
	if (ng > 4)
		strv_addf(&t->lines, "  ... and %d more group(s)", ng - 4);
out:
	free(of);
	free(names);
}

int diag_topo_find(struct diag_topo *t, const char *given, enum plan_launch launch, int nodes,
		   int leaves, const struct strv *hosts, char *err, size_t len)
{
	struct topo tp;
	int *of = NULL, ng;

	memset(t, 0, sizeof(*t));
	if (given) {
		if (!strcmp(given, "nvlink")) {
			/* read on the hosts at run time (NVML), nothing to show before */
			t->path = xstrdup("nvlink");
			t->origin = xstrdup("--topology nvlink");
			strv_addf(&t->lines, "topology: one group per NVLink domain, read by ccprobe from "
				  "NVML's fabric info on every host (a host without one fails the phase)");
			return 0;
		}
		if (!(t->text = slurp(given))) {
			snprintf(err, len, "%s: cannot read: %s", given, strerror(errno));
			return -1;
		}
		t->path = xstrdup(given);
		t->origin = xasprintf("--topology %s", given);
	} else if (launch == PLAN_SRUN) {
		from_slurm(t);
	} else if (launch == PLAN_EMULATED && leaves > 0) {
		/* as scripts/emucluster --leaves K places them: blocks of ceil(N/K) hosts */
		char *buf = NULL;
		size_t blen = 0;
		FILE *m = open_memstream(&buf, &blen);

		for (int k = 0; m && k < nodes; k++)
			fprintf(m, "node%d leaf%d spine\n", k, k / ((nodes + leaves - 1) / leaves));
		if (!m || fclose(m)) {
			snprintf(err, len, "out of memory");
			return -1;
		}
		t->text = buf;
		t->origin = xasprintf("the emulated cluster's %d leaves", leaves);
	}
	if (!t->text) {
		if (t->note)
			strv_addf(&t->lines, "topology: %s", t->note);
		return 0;
	}
	if (!t->path) {
		if (!(t->path = t->tmp = to_temp(t->text))) {
			snprintf(err, len, "cannot write a temporary copy of the topology: %s", strerror(errno));
			return -1;
		}
	}
	if (topo_read(t->path, &tp, err, len))
		return -1;
	/* a job host the topology lacks: said now, before anything runs */
	if (hosts->n) {
		of = xmalloc((size_t)hosts->n * sizeof(int));
		if (topo_assign(&tp, hosts->v, hosts->n, of, &ng, NULL, err, len)) {
			free(of);
			topo_free(&tp);
			return -1;
		}
		free(of);
	}
	describe(t, &tp, hosts);
	topo_free(&tp);
	return 0;
}

char *diag_topo_place(const struct diag_topo *t, const char *dir)
{
	char *path;
	FILE *f;

	if (!t->text)
		return NULL;
	path = xasprintf("%s/topology.txt", dir);
	f = fopen(path, "w");
	if (!f || fputs(t->text, f) < 0 || fclose(f)) {
		free(path);
		return NULL;
	}
	return path;
}

void diag_topo_free(struct diag_topo *t)
{
	if (t->tmp)
		unlink(t->tmp);
	free(t->text);
	free(t->path);
	free(t->origin);
	free(t->note);
	strv_free(&t->lines);
	memset(t, 0, sizeof(*t));
}
