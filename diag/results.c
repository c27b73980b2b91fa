/*
 * diag/results.c: the phase line's findings and the drain list (results.h).
 */
#include "results.h"
#include "../fmt/fmt.h"
#include "../report/decision.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* a number as jq prints it: the shortest form that reads back */
static void fmt_number(char *buf, size_t len, double v)
{
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	/* 1e+06 -> 1000000 as jq writes integers */
	if (strchr(buf, 'e') && fabs(v) < 1e17 && v == floor(v))
		snprintf(buf, len, "%.0f", v);
}

char *phase_found(const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, *out, *fin = NULL, num[64];
	size_t cap = 0;
	long m = 0, nerr = 0, nskip = 0;
	struct strv bad = { 0 }, soak = { 0 }, w = { 0 }, steps = { 0 };
	char *peak_name = NULL;
	double peak = -INFINITY;
	int have_peak = 0;
	ssize_t n;

	if (!f)
		return xstrdup("no results");
	/* one record at a time: a pairs phase of 1,024 nodes is gigabytes */
	while ((n = getline(&line, &cap, f)) > 0) {
		json_t *r = json_loadb(line, n, JSON_DECODE_ANY, NULL);
		const char *type;

		if (!r)
			continue;
		if (!json_is_object(r) || !(type = str(r, "type"))) {
			json_decref(r);
			continue;
		}
		free(fin);
		fin = !strcmp(type, "end") ? xstrdup(str(r, "status") ?: "null") : NULL;
		/* what a diagnosis blames, and what it names without blaming (netpair's inconclusive) */
		if (!strcmp(type, "diagnosis") && str(r, "verdict") &&
		    (!strcmp(str(r, "verdict"), "bad") || !strcmp(str(r, "verdict"), "inconclusive"))) {
			const char *v = str(r, "verdict");
			char *d = str(r, "host") ? xasprintf("%s %s %s", str(r, "subject") ?: "null", str(r, "host"), v) :
				  xasprintf("%s %s-%s %s", str(r, "subject") ?: "null", str(r, "a") ?: "",
					    str(r, "b") ?: "", v);

			if (strv_find(&bad, d) < 0)
				strv_add(&bad, d);
			free(d);
		} else if (!strcmp(type, "error")) {
			nerr++;
		} else if (!strcmp(type, "skip")) {
			nskip++;
		} else if (!strcmp(type, "measurement")) {
			const char *kind = str(r, "kind");
			json_t *bw = json_object_get(r, "busbw_GBps");

			m++;
			if (kind && !strcmp(kind, "collective") && json_is_number(bw) &&
			    json_number_value(bw) >= peak) {
				peak = json_number_value(bw);
				free(peak_name);
				peak_name = xstrdup(str(r, "name") ?: "null");
				have_peak = 1;
			} else if (kind && !strcmp(kind, "soak")) {
				strv_add(&soak, str(r, "name") ?: "null");
			} else if (kind && !strcmp(kind, "probe") && str(r, "test") && !strcmp(str(r, "test"), "summary") &&
				   json_is_number(json_object_get(r, "step_s")) &&
				   json_is_number(json_object_get(r, "compute_s"))) {
				/* a training step: its median, compute alone and the rank it waits for */
				json_t *wf = json_object_get(r, "waits_for");
				char a[32], b[32];

				fmt_number(a, sizeof(a), round(json_number_value(json_object_get(r, "step_s")) * 1e4) / 1e4);
				fmt_number(b, sizeof(b), round(json_number_value(json_object_get(r, "compute_s")) * 1e4) / 1e4);
				strv_addf(&steps, "%s step %s s (compute alone %s s)%s%s%s%s", str(r, "name") ?: "null", a, b,
					  json_is_object(wf) ? ", waits for " : "",
					  json_is_object(wf) ? (str(wf, "host") ?: "?") : "",
					  json_is_object(wf) ? " " : "",
					  json_is_object(wf) ? (str(wf, "cause") ?: "") : "");
			}
		}
		json_decref(r);
	}
	free(line);
	fclose(f);
	strv_addf(&w, "%ld measurement(s)", m);
	qsort(bad.v, bad.n, sizeof(*bad.v), cmp_str);
	for (int i = 0; i < bad.n; i++)
		strv_add(&w, bad.v[i]);
	if (have_peak) {
		fmt_number(num, sizeof(num), round(peak * 1000) / 1000);
		strv_addf(&w, "%s peak busbw %s GB/s", peak_name, num);
	}
	qsort(soak.v, soak.n, sizeof(*soak.v), cmp_str);
	for (int i = 0, j; i < soak.n; i = j) {
		for (j = i; j < soak.n && !strcmp(soak.v[j], soak.v[i]); j++)
			;
		strv_addf(&w, "%s soak %d sample(s)", soak.v[i], j - i);
	}
	strv_addv(&w, &steps);
	if (nerr)
		strv_addf(&w, "%ld error(s)", nerr);
	if (nskip)
		strv_addf(&w, "%ld skipped", nskip);
	if (!fin || strcmp(fin, "complete"))
		strv_addf(&w, "end: %s", fin ? fin : "no end record");
	out = strv_join(&w, ", ");
	free(fin);
	free(peak_name);
	strv_free(&bad);
	strv_free(&soak);
	strv_free(&steps);
	strv_free(&w);
	return out;
}

int slurm_node_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (!n || n > 64 || !((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z') ||
			      (name[0] >= '0' && name[0] <= '9')))
		return 0;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '-' || *p == '_' || *p == '.'))
			return 0;
	return 1;
}

/* a reason's text: no controls, no quotes, backslashes, $ or backquotes */
static char *clean_reason(const char *s)
{
	char *c = xstrdup(s), *t, *p;

	for (p = c; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	t = safe_text(c);
	free(c);
	for (p = t; *p; p++)
		if (*p == '"' || *p == '\\' || *p == '$' || *p == '`')
			*p = '\'';
	return t;
}

/* t cut to at most max bytes at a space (else at a character's start), "..." added */
static void cut_words(char *t, size_t max)
{
	size_t k;

	if (strlen(t) <= max)
		return;
	k = max - 3;
	while (k > max / 2 && t[k] != ' ')
		k--;
	if (t[k] != ' ')
		for (k = max - 3; k > 0 && ((unsigned char)t[k] & 0xc0) == 0x80; k--)
			;
	strcpy(t + k, "...");
}

/*
 * The reason of one node from the report's own reasons (decision.drain[].why, in
 * the report's words and digits): whole reasons while they fit in max bytes, then
 * "(and N more)"; never a reason cut mid-word (a first one too long ends in "...").
 */
static char *drain_reason(const json_t *why, size_t max)
{
	size_t n = json_array_size(why), k, at = 0;
	char *out = calloc(1, max + 1), tail[48];

	if (!out)
		abort();
	for (k = 0; k < n; k++) {
		char *c = clean_reason(json_string_value(json_array_get(why, k)) ?: "");
		size_t room = max - (k + 1 < n ? sizeof(" (and 9999 more)") : 0);

		if (!k) {
			cut_words(c, room);
		} else if (at + 2 + strlen(c) > room) {
			free(c);
			break;
		}
		at += (size_t)snprintf(out + at, max + 1 - at, "%s%s", k ? "; " : "", c);
		free(c);
	}
	if (k < n) {
		snprintf(tail, sizeof(tail), " (and %zu more)", n - k);
		if (at + strlen(tail) <= max)
			strcpy(out + at, tail);
	}
	return out;
}

static int cmp_node(const void *a, const void *b)
{
	return strcmp(j_str(*(json_t *const *)a, "node"), j_str(*(json_t *const *)b, "node"));
}

int drain_list(const char *path, const char *profile, struct strv *nodes, struct strv *reasons,
	       struct strv *refused, char *err, size_t errlen)
{
	json_error_t je;
	json_t *s = json_load_file(path, 0, &je), *d, *drain;
	const json_t **byname;
	char *pname;
	size_t i, n;

	if (!s || !json_is_object(s) || !json_is_array(json_object_get(s, "criteria"))) {
		snprintf(err, errlen, "%s: not a ccreport summary.json", path);
		json_decref(s);
		return -1;
	}
	/* the report's own decision; a summary from before it had one: the same, built here */
	d = json_is_object(json_object_get(s, "decision")) ? json_incref(json_object_get(s, "decision")) :
	    decision_build(s);
	drain = json_object_get(d, "drain");
	if (profile)
		pname = clean_reason(profile);
	else
		pname = clean_reason(*j_str(json_object_get(s, "profile"), "name") ?
				     j_str(json_object_get(s, "profile"), "name") : j_str(s, "profile"));
	cut_words(pname, 64);
	n = json_array_size(drain);
	byname = calloc(n ? n : 1, sizeof(*byname));
	if (!byname)
		abort();
	for (i = 0; i < n; i++)
		byname[i] = json_array_get(drain, i);
	qsort(byname, n, sizeof(*byname), cmp_node);
	for (i = 0; i < n; i++) {
		const char *node = j_str(byname[i], "node");

		if (slurm_node_name_ok(node)) {
			char *r = drain_reason(json_object_get(byname[i], "why"), 240);

			strv_add(nodes, node);
			strv_addf(reasons, "ccdiag %s: %s", pname, r);
			free(r);
		} else {
			char *t = safe_text(node);

			strv_addf(refused, "not drained: '%s' is not one Slurm node name", t);
			free(t);
		}
	}
	free(byname);
	free(pname);
	json_decref(d);
	json_decref(s);
	return 0;
}
