/*
 * core/dcgm_parse.c: dcgmi diag's JSON (DCGM 2.x to 4.x) to per-GPU records.
 * DCGM 3.2 and later: {"DCGM Diagnostic": {"test_categories": [{"category",
 * "tests": [{"name", "results": [{"entity_group", "entity_id", "status",
 * "warnings": [{"warning", "error_id", ...}], "info": [...]}]}]}]},
 * "metadata": {"version", "Driver Version Detected"}}; before: "DCGM GPU
 * Diagnostic", results with "gpu_ids" ("0" or "0,1,...") and "warnings" as
 * strings or objects, "version" and "Driver Version Detected" inside it.
 */
#include "dcgm_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GPUS 64

/* the run levels and the tests each adds (dcgmi diag -r 1..4) */
static const struct {
	const char *test;
	int level;
} levels[] = {
	{ "pcie", 2 }, { "memory", 2 }, { "diagnostic", 3 }, { "targeted_stress", 3 },
	{ "targeted_power", 3 }, { "memory_bandwidth", 3 }, { "sm_stress", 3 }, { "memtest", 4 },
	{ "pulse_test", 4 }, { "eud", 4 }, { "nvbandwidth", 2 },
};

/* "Targeted Stress" -> "targeted_stress" */
static void test_key(const char *name, char *out, size_t len)
{
	size_t k = 0;

	for (const char *p = name; *p && k + 1 < len; p++)
		out[k++] = *p == ' ' || *p == '-' ? '_' : (*p >= 'A' && *p <= 'Z') ? *p - 'A' + 'a' : *p;
	out[k] = '\0';
}

static const char *status_of(const char *s)
{
	if (!s)
		return NULL;
	if (!strcasecmp(s, "pass")) return "pass";
	if (!strcasecmp(s, "fail")) return "fail";
	if (!strcasecmp(s, "warn")) return "warn";
	if (!strcasecmp(s, "skip")) return "skip";
	return NULL;    /* "Not Run" and anything else: no result */
}

/* the messages of one result: warnings (strings or {warning}) and info (string or list) */
static json_t *messages(const json_t *res)
{
	json_t *out = json_array(), *w, *v;
	size_t i;

	w = json_object_get(res, "warnings");
	if (json_is_string(w))
		json_array_append(out, w);
	json_array_foreach(w, i, v) {
		if (json_is_string(v))
			json_array_append(out, v);
		else if (json_is_string(json_object_get(v, "warning")))
			json_array_append(out, json_object_get(v, "warning"));
	}
	return out;
}

/* the GPUs a result is for: entity_id (GPU group), or gpu_ids "0,1"; none: n = 0 */
static int gpus_of(const json_t *res, int *ids)
{
	const json_t *g = json_object_get(res, "entity_group"), *e = json_object_get(res, "entity_id");
	const char *s = json_string_value(json_object_get(res, "gpu_ids"));
	int n = 0;

	if (json_is_integer(e)) {
		if (g && (!json_is_string(g) || strcasecmp(json_string_value(g), "GPU")))
			return 0;
		if (json_integer_value(e) >= 0 && json_integer_value(e) < MAX_GPUS)
			ids[n++] = (int)json_integer_value(e);
		return n;
	}
	if (json_is_integer(json_object_get(res, "gpu_id"))) {
		long long v = json_integer_value(json_object_get(res, "gpu_id"));

		if (v >= 0 && v < MAX_GPUS)
			ids[n++] = (int)v;
		return n;
	}
	while (s && *s && n < MAX_GPUS) {
		char *end;
		long v = strtol(s, &end, 10);

		if (end == s)
			break;
		if (v >= 0 && v < MAX_GPUS)
			ids[n++] = (int)v;
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			break;
	}
	return n;
}

struct gpu_sum {
	int seen, tests, failed, warned, skipped;
	json_t *failed_tests, *msgs;
};

int dcgm_diag_parse(const json_t *doc, struct dcgm_diag *d, char *err, size_t len)
{
	const json_t *diag = json_object_get(doc, "DCGM Diagnostic"), *cats, *cat, *t, *res;
	const json_t *meta = json_object_get(doc, "metadata");
	struct gpu_sum g[MAX_GPUS] = { 0 };
	json_t *per_test = json_array();
	size_t i, k, r;
	int rc = -1;

	memset(d, 0, sizeof(*d));
	d->level = 1;
	if (!diag)
		diag = json_object_get(doc, "DCGM GPU Diagnostic");
	if (!json_is_object(diag)) {
		snprintf(err, len, "not a dcgmi diag -j output: no \"DCGM Diagnostic\" object");
		goto out;
	}
	if (json_is_string(json_object_get(diag, "runtime_error"))) {
		snprintf(err, len, "dcgmi diag did not run: %.300s",
			 json_string_value(json_object_get(diag, "runtime_error")));
		goto out;
	}
	/* tests/fakes/dcgmi marks what it prints: records of a test double are never judged */
	d->test_double = json_is_true(json_object_get(doc, "ccdiag_test_double"));
	snprintf(d->version, sizeof(d->version), "%s",
		 json_string_value(json_object_get(meta, "version")) ?:
		 json_string_value(json_object_get(diag, "version")) ?: "");
	snprintf(d->driver, sizeof(d->driver), "%s",
		 json_string_value(json_object_get(meta, "Driver Version Detected")) ?:
		 json_string_value(json_object_get(diag, "Driver Version Detected")) ?: "");
	cats = json_object_get(diag, "test_categories");
	if (!json_is_array(cats) || !json_array_size(cats)) {
		snprintf(err, len, "a dcgmi diag output without test_categories (the run ended before any test?)");
		goto out;
	}
	/* first the GPUs any result names, so a result for no GPU can go to each */
	json_array_foreach(cats, i, cat)
		json_array_foreach(json_object_get(cat, "tests"), k, t)
			json_array_foreach(json_object_get(t, "results"), r, res) {
				int ids[MAX_GPUS], n = gpus_of(res, ids);

				for (int j = 0; j < n; j++)
					g[ids[j]].seen = 1;
			}
	json_array_foreach(cats, i, cat)
		json_array_foreach(json_object_get(cat, "tests"), k, t) {
			const char *name = json_string_value(json_object_get(t, "name"));
			char key[96];

			if (!name)
				continue;
			test_key(name, key, sizeof(key));
			for (size_t l = 0; l < sizeof(levels) / sizeof(levels[0]); l++)
				if (!strcmp(levels[l].test, key) && levels[l].level > d->level)
					d->level = levels[l].level;
			json_array_foreach(json_object_get(t, "results"), r, res) {
				const char *st = status_of(json_string_value(json_object_get(res, "status")));
				int ids[MAX_GPUS], n = gpus_of(res, ids), all = 0;
				char test[128];

				if (!st)
					continue;
				if (!n && !json_object_get(res, "entity_id"))
					all = 1;        /* a result of the whole host: every GPU's */
				snprintf(test, sizeof(test), "dcgm_%s", key);
				for (int j = 0; j < MAX_GPUS; j++) {
					json_t *m, *rec;
					int in = all ? g[j].seen : 0;

					for (int q = 0; !all && q < n; q++)
						in |= ids[q] == j;
					if (!in)
						continue;
					m = messages(res);
					rec = json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:s, s:s, s:i, s:o}", "type",
							"measurement", "kind", "probe", "name", "dcgm", "test", test,
							"scope", "gpu", "gpu", j, "status", st, "category",
							json_string_value(json_object_get(cat, "category")) ?: "",
							"fail", !strcmp(st, "fail"), "messages", m);
					if (!rec || json_array_append_new(per_test, rec)) {
						snprintf(err, len, "out of memory");
						goto out;
					}
					if (!g[j].failed_tests) {
						g[j].failed_tests = json_array();
						g[j].msgs = json_array();
					}
					g[j].seen = 1;
					g[j].tests++;
					g[j].failed += !strcmp(st, "fail");
					g[j].warned += !strcmp(st, "warn");
					g[j].skipped += !strcmp(st, "skip");
					if (!strcmp(st, "fail"))
						json_array_append_new(g[j].failed_tests, json_string(key));
					if (!strcmp(st, "fail") || !strcmp(st, "warn")) {
						json_t *v;
						size_t q;

						json_array_foreach(json_object_get(rec, "messages"), q, v) {
							char line[600];

							snprintf(line, sizeof(line), "%s: %s", key, json_string_value(v));
							json_array_append_new(g[j].msgs, json_string(line));
						}
					}
				}
			}
		}
	d->records = json_array();
	for (int j = 0; j < MAX_GPUS; j++) {
		json_t *rec;

		if (!g[j].tests)
			continue;
		d->gpus++;
		rec = json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:{s:i, s:i, s:i, s:i, s:i}, s:O, s:O}",
				"type", "measurement", "kind", "probe", "name", "dcgm", "test", "dcgm_diag",
				"scope", "gpu", "gpu", j, "dcgm", "level", d->level, "tests", g[j].tests,
				"failed", g[j].failed, "warned", g[j].warned, "skipped", g[j].skipped,
				"failed_tests", g[j].failed_tests, "messages", g[j].msgs);
		if (!rec || json_array_append_new(d->records, rec)) {
			snprintf(err, len, "out of memory");
			goto out;
		}
	}
	if (!d->gpus) {
		snprintf(err, len, "a dcgmi diag output with no GPU result");
		goto out;
	}
	json_array_extend(d->records, per_test);
	rc = 0;
out:
	for (int j = 0; j < MAX_GPUS; j++) {
		json_decref(g[j].failed_tests);
		json_decref(g[j].msgs);
	}
	json_decref(per_test);
	if (rc)
		dcgm_diag_free(d);
	return rc;
}

void dcgm_diag_free(struct dcgm_diag *d)
{
	json_decref(d->records);
	d->records = NULL;
}

int dcgm_record_name(json_t *rec, const char *host)
{
	char el[320];

	snprintf(el, sizeof(el), "%s/gpu%lld", host, (long long)json_integer_value(json_object_get(rec, "gpu")));
	return json_object_set_new(rec, "host", json_string(host)) ||
	       json_object_set_new(rec, "element", json_string(el)) ? -1 : 0;
}
