/*
 * diag/results.c: the phase line's findings and the drain list (results.h).
 */
#include "results.h"

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

/* a value as jq's tostring after num: numbers to 4 decimals */
static char *num_text(json_t *v)
{
	char buf[64];

	if (json_is_number(v)) {
		fmt_number(buf, sizeof(buf), round(json_number_value(v) * 10000) / 10000);
		return xstrdup(buf);
	}
	if (json_is_string(v))
		return xstrdup(json_string_value(v));
	if (!v || json_is_null(v))
		return xstrdup("null");
	return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

static int truthy(json_t *v)
{
	return v && !json_is_null(v) && !json_is_false(v);
}

/* "ID ELEMENT VALUE UNIT (bound OP BOUND)" of failure f of criterion c */
static char *why(json_t *c, json_t *f)
{
	json_t *b = json_object_get(c, "bound");
	char *val = num_text(json_object_get(f, "value")), *bound, *el = num_text(json_object_get(f, "element"));
	char *id = num_text(json_object_get(c, "id")), *out;

	if (truthy(json_object_get(b, "relative"))) {
		char *r = num_text(json_object_get(b, "relative"));

		bound = xasprintf("%s %s of rate", str(b, "op") ?: "null", r);
		free(r);
	} else {
		char *v = num_text(json_object_get(b, "value"));

		bound = xasprintf("%s %s %s", str(b, "op") ?: "null", v, str(b, "unit") ?: "");
		free(v);
	}
	out = xasprintf("%s %s %s %s (bound %s)", id, el, val, str(f, "unit") ?: "", bound);
	free(val);
	free(bound);
	free(el);
	free(id);
	return out;
}

struct blame {
	char *node, *why;
	int order;
};

static int cmp_blame(const void *a, const void *b)
{
	const struct blame *x = a, *y = b;
	int c = strcmp(x->node, y->node);

	return c ? c : x->order - y->order;
}

static int scope_in(const char *s, const char *const *set)
{
	for (; s && *set; set++)
		if (!strcmp(s, *set))
			return 1;
	return 0;
}

/* the reason of one node: no controls, no quotes, backslashes, $ or backquotes,
 * 240 characters at most (whole UTF-8 characters) */
static char *clean_reason(const char *s, size_t max)
{
	char *c = xstrdup(s), *t, *p;
	size_t chars = 0, k;

	for (p = c; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	t = safe_text(c);
	free(c);
	for (p = t; *p; p++)
		if (*p == '"' || *p == '\\' || *p == '$' || *p == '`')
			*p = '\'';
	for (k = 0; t[k]; k++)
		if (((unsigned char)t[k] & 0xc0) != 0x80 && ++chars > max)
			break;
	t[k] = '\0';
	return t;
}

int drain_list(const char *path, const char *profile, struct strv *nodes, struct strv *reasons,
	       struct strv *refused, char *err, size_t errlen)
{
	json_error_t je;
	json_t *s = json_load_file(path, 0, &je), *crit, *diags, *c, *f, *d;
	struct blame *bl = NULL;
	struct strv diag_nodes = { 0 }, diag_why = { 0 };
	static const char *const own[] = { "node", "gpu", "nic", "gpu_pair", NULL };
	static const char *const links[] = { "link", "rail_pair", NULL };
	size_t i, j, nb = 0, cap = 0;
	char *pname;

	if (!s || !json_is_object(s) || !json_is_array(crit = json_object_get(s, "criteria"))) {
		snprintf(err, errlen, "%s: not a ccreport summary.json", path);
		json_decref(s);
		return -1;
	}
	if (profile)
		pname = xstrdup(profile);
	else if (str(json_object_get(s, "profile"), "name"))
		pname = xstrdup(str(json_object_get(s, "profile"), "name"));
	else
		pname = xstrdup(str(s, "profile") ?: "?");
#define BLAME(n, w) do { \
		if (nb == cap) { \
			cap = cap ? 2 * cap : 16; \
			bl = realloc(bl, cap * sizeof(*bl)); \
			if (!bl) abort(); \
		} \
		bl[nb] = (struct blame){ xstrdup(n), (w), (int)nb }; \
		nb++; \
	} while (0)
	/* a diagnosis naming a node bad */
	diags = json_object_get(s, "diagnoses");
	json_array_foreach(diags, i, d) {
		json_t *ev = json_object_get(d, "evidence");
		char *e, *w;

		if (!str(d, "subject") || strcmp(str(d, "subject"), "node") || !str(d, "verdict") ||
		    strcmp(str(d, "verdict"), "bad") || !str(d, "element"))
			continue;
		e = truthy(ev) ? num_text(ev) : xstrdup("");
		w = xasprintf("%s diagnosis: node bad: %s", str(d, "probe") ?: "null", e);
		free(e);
		strv_add(&diag_nodes, str(d, "element"));
		strv_add(&diag_why, w);
		BLAME(str(d, "element"), w);
	}
	/* a failed criterion on a node's own element */
	json_array_foreach(crit, i, c) {
		if (!str(c, "verdict") || strcmp(str(c, "verdict"), "fail") || !scope_in(str(c, "scope"), own))
			continue;
		json_array_foreach(json_object_get(c, "failures"), j, f)
			if (str(f, "host") && *str(f, "host"))
				BLAME(str(f, "host"), why(c, f));
	}
	/* the failed links or rail pairs of a node named bad */
	json_array_foreach(crit, i, c) {
		if (!str(c, "verdict") || strcmp(str(c, "verdict"), "fail") || !scope_in(str(c, "scope"), links))
			continue;
		json_array_foreach(json_object_get(c, "failures"), j, f) {
			struct strv ends = { 0 };

			if (!str(f, "element"))
				continue;
			strv_split(&ends, str(f, "element"), '-');
			for (int e = 0; e < ends.n; e++)
				ends.v[e][strcspn(ends.v[e], "/#")] = '\0';
			for (int k = 0; k < diag_nodes.n; k++)
				if (strv_find(&ends, diag_nodes.v[k]) >= 0)
					BLAME(diag_nodes.v[k], why(c, f));
			strv_free(&ends);
		}
	}
	qsort(bl, nb, sizeof(*bl), cmp_blame);
	for (i = 0; i < nb; ) {
		struct strv ws = { 0 };
		char *joined, *reason, *clean;

		for (j = i; j < nb && !strcmp(bl[j].node, bl[i].node); j++)
			if (ws.n < 4)
				strv_add(&ws, bl[j].why);
		joined = strv_join(&ws, "; ");
		{
			char *cp = clean_reason(pname, 64), *cj = clean_reason(joined, 240);

			reason = xasprintf("ccdiag %s: %s", cp, cj);
			free(cp);
			free(cj);
		}
		clean = xstrdup(reason);
		if (slurm_node_name_ok(bl[i].node)) {
			strv_add(nodes, bl[i].node);
			strv_add(reasons, clean);
		} else {
			char *n = safe_text(bl[i].node);

			strv_addf(refused, "not drained: '%s' is not one Slurm node name", n);
			free(n);
		}
		free(joined);
		free(reason);
		free(clean);
		strv_free(&ws);
		i = j;
	}
	for (i = 0; i < nb; i++) {
		free(bl[i].node);
		free(bl[i].why);
	}
	free(bl);
	free(pname);
	strv_free(&diag_nodes);
	strv_free(&diag_why);
	json_decref(s);
	return 0;
}
