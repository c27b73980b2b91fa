/*
 * diag/registry.c: the plan entries of a ccprobe binary (registry.h).
 */
#include "registry.h"
#include "../core/spawn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the names of ccprobe --list (collectives and probes), then their phases in one --plan */
static void load(struct ccprobe_registry *r)
{
	char *out = NULL, *line, *save = NULL;
	struct strv argv = { 0 }, names = { 0 };
	int section = 0;

	r->loaded = 1;
	strv_add(&argv, r->ccprobe);
	strv_add(&argv, "--list");
	if (spawn_capture(argv.v, &out, NULL, 60) == 0)
		for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char name[128];

			if (line[0] != ' ') {
				section = !strcmp(line, "collectives:") || !strcmp(line, "probes:");
				continue;
			}
			if (section && sscanf(line, " %127s", name) == 1)
				strv_add(&names, name);
		}
	free(out);
	strv_free(&argv);
	if (!names.n)
		return;
	strv_add(&argv, r->ccprobe);
	strv_add(&argv, "--plan");
	strv_add(&argv, "1");
	strv_addv(&argv, &names);
	out = NULL;
	if (spawn_capture(argv.v, &out, NULL, 60) == 0)
		for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char *tab = strchr(line, '\t'), *tab2;

			/* '#': the header (names and units) */
			if (line[0] == '#' || !tab || !(tab2 = strchr(tab + 1, '\t')))
				continue;
			*tab = *tab2 = '\0';
			strv_add(&r->names, line);
			strv_add(&r->phases, tab + 1);
		}
	free(out);
	strv_free(&argv);
	strv_free(&names);
}

static const char *phase(void *ctx, const char *name)
{
	struct ccprobe_registry *r = ctx;
	int i;

	if (!r->loaded)
		load(r);
	i = strv_find(&r->names, name);
	return i < 0 ? NULL : r->phases.v[i];
}

static int can_soak(void *ctx, const char *name, int nodes)
{
	struct ccprobe_registry *r = ctx;
	struct strv argv = { 0 };
	char *key = xasprintf("%d %s", nodes, name);
	int i = strv_find(&r->soak_keys, key), ok;

	if (i >= 0) {
		free(key);
		return r->soak_vals[i];
	}
	strv_add(&argv, r->ccprobe);
	strv_add(&argv, "--plan");
	strv_addf(&argv, "%d", nodes);
	strv_add(&argv, "--soak");
	strv_add(&argv, "1");
	strv_add(&argv, name);
	ok = spawn_capture(argv.v, NULL, NULL, 60) == 0;
	strv_free(&argv);
	strv_add(&r->soak_keys, key);
	free(key);
	r->soak_vals = realloc(r->soak_vals, r->soak_keys.n * sizeof(int));
	if (!r->soak_vals)
		abort();
	r->soak_vals[r->soak_keys.n - 1] = ok;
	return ok;
}

static double estimate(void *ctx, int nodes, int rpn, double gbps, const struct strv *args,
		       char *err, size_t errlen)
{
	struct ccprobe_registry *r = ctx;
	struct strv argv = { 0 };
	char *out = NULL, *errout = NULL, *key, *line, *save = NULL;
	double t = 0;
	int i, rc;

	strv_add(&argv, r->ccprobe);
	strv_add(&argv, "--plan");
	strv_addf(&argv, "%d:%d:%g", nodes, rpn, gbps);
	strv_addv(&argv, args);
	key = strv_join(&argv, "\x1f");
	if ((i = strv_find(&r->est_keys, key)) >= 0) {
		free(key);
		strv_free(&argv);
		if (r->est_vals[i] < 0)
			snprintf(err, errlen, "%s", r->est_errs[i]);
		return r->est_vals[i];
	}
	rc = spawn_capture(argv.v, &out, &errout, 60);
	strv_free(&argv);
	if (rc == 0) {
		for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char *f = strchr(line, '\t');

			if (line[0] != '#' && f && (f = strchr(f + 1, '\t')))
				t += atof(f + 1);
		}
	} else {
		char *nl = errout ? strchr(errout, '\n') : NULL, *m = errout ? errout : "";

		if (nl)
			*nl = '\0';
		if (!strncmp(m, "ccprobe: ", 9))
			m += 9;
		if (!strncmp(m, "error: ", 7))
			m += 7;
		snprintf(err, errlen, "%s", *m ? m : rc < 0 ? "cannot run ccprobe" : "no reason given");
		t = -1;
	}
	strv_add(&r->est_keys, key);
	free(key);
	r->est_vals = realloc(r->est_vals, r->est_keys.n * sizeof(double));
	r->est_errs = realloc(r->est_errs, r->est_keys.n * sizeof(char *));
	if (!r->est_vals || !r->est_errs)
		abort();
	r->est_vals[r->est_keys.n - 1] = t;
	r->est_errs[r->est_keys.n - 1] = xstrdup(t < 0 ? err : "");
	free(out);
	free(errout);
	return t;
}

void ccprobe_registry_init(struct ccprobe_registry *r, struct plan_registry *reg)
{
	reg->phase = phase;
	reg->can_soak = can_soak;
	reg->estimate = estimate;
	reg->ctx = r;
}

void ccprobe_registry_free(struct ccprobe_registry *r)
{
	for (int i = 0; i < r->est_keys.n; i++)
		free(r->est_errs[i]);
	strv_free(&r->names);
	strv_free(&r->phases);
	strv_free(&r->soak_keys);
	strv_free(&r->est_keys);
	free(r->soak_vals);
	free(r->est_vals);
	free(r->est_errs);
}
