/*
 * report/decision.c: the summary's "decision" (docs/report.md): what the
 * verdict means and what to do, read back from the summary's own criteria,
 * diagnoses, hardware check, inputs and estimate, so that every renderer
 * opens with the same block and a script (ccdiag's drain list) can use it.
 */
#include "decision.h"
#include "../fmt/fmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WHY_MAX 4    /* reasons named per node to drain; the rest counted */

/* the node's entry of drain (created in order of first blame) */
static json_t *drain_entry(json_t *drain, const char *node)
{
	json_t *d;
	size_t i;

	json_array_foreach(drain, i, d)
		if (!strcmp(j_str(d, "node"), node))
			return d;
	d = json_pack("{s:s, s:[]}", "node", node, "why");
	json_array_append_new(drain, d);
	return d;
}

static void blame(json_t *drain, const char *node, const char *why)
{
	json_array_append_new(json_object_get(drain_entry(drain, node), "why"), json_string(why));
}

/* "node2" of "node2/gpu3", "node2#1/mlx5_0:1": a link's or rail pair's end */
static void end_host(const char *end, size_t n, char *buf, size_t len)
{
	size_t k = strcspn(end, "/#");

	if (k > n)
		k = n;
	snprintf(buf, len, "%.*s", (int)k, end);
}

static int is_host(const json_t *hosts, const char *name)
{
	const json_t *h;
	size_t i;

	json_array_foreach(hosts, i, h)
		if (json_is_string(h) && !strcmp(json_string_value(h), name))
			return 1;
	return 0;
}

int link_ends(const char *element, const json_t *hosts, char *a, char *b, size_t len)
{
	const char *dash;

	for (dash = strchr(element, '-'); dash; dash = strchr(dash + 1, '-')) {
		end_host(element, (size_t)(dash - element), a, len);
		end_host(dash + 1, strlen(dash + 1), b, len);
		if (!json_array_size(hosts) || (is_host(hosts, a) && is_host(hosts, b)))
			return 0;
	}
	return -1;
}

/* 1 when one end of ELEMENT is a node named bad; that node in buf */
static int link_end_drained(const char *element, const json_t *hosts, const char *bad[], size_t nbad,
			    char *buf, size_t len)
{
	char a[256], b[256];

	if (link_ends(element, hosts, a, b, sizeof(a)))
		return 0;
	for (size_t i = 0; i < nbad; i++)
		if (!strcmp(bad[i], a) || !strcmp(bad[i], b)) {
			snprintf(buf, len, "%s", bad[i]);
			return 1;
		}
	return 0;
}

/* a node, link, rail pair or uplink to check; a second reason for one element joins the first */
static void check_add(json_t *check, const char *element, const char *what, const char *why)
{
	json_t *c;
	size_t i;

	json_array_foreach(check, i, c)
		if (!strcmp(j_str(c, "element"), element)) {
			char *both;

			if (asprintf(&both, "%s; %s", j_str(c, "reason"), why) >= 0) {
				json_object_set_new(c, "reason", json_string(both));
				free(both);
			}
			return;
		}
	json_array_append_new(check, json_pack("{s:s, s:s, s:s}", "element", element, "what", what, "reason", why));
}

/*
 * A diagnosis that is not "node bad" (docs/netpair.md): an inconclusive, ambiguous
 * or suspect node or link, a bad link, a switch uplink. It names what to check and
 * why; it never drains a node (the evidence does not single one out).
 */
static void check_diagnosis(json_t *check, const json_t *v)
{
	const char *subj = j_str(v, "subject"), *verdict = j_str(v, "verdict");
	char why[1024];
	int unsure = strstr(verdict, "inconclusive") || strstr(verdict, "ambiguous") || strstr(verdict, "suspect");

	snprintf(why, sizeof(why), "%s diagnosis: %s %s%s%s%s", j_str(v, "probe"), subj, verdict,
		 *j_str(v, "evidence") ? ": " : "", j_str(v, "evidence"),
		 unsure ? "; not drained: the evidence does not single it out, measure it again (`ccprobe "
			  "netpair` on these hosts, on a quiet cluster)" : "");
	check_add(check, j_str(v, "element"), !strcmp(subj, "node") || !strcmp(subj, "link") ? subj :
		  !strcmp(subj, "uplink") ? "switch uplink" : "network", why);
}

static int in(const char *s, const char *const *set)
{
	for (; *set; set++)
		if (!strcmp(s, *set))
			return 1;
	return 0;
}

/* "ID " + the failure as the report words it */
static void why_text(char *buf, size_t len, const json_t *crit, const json_t *fl)
{
	char t[512];

	fmt_failure(t, sizeof(t), fl);
	snprintf(buf, len, "%s %s", j_str(crit, "id"), t);
}

/* each drained node's reasons, joined: "a; b; c; d (and 2 more)" */
static void drain_reasons(json_t *drain)
{
	json_t *d;
	size_t i;

	json_array_foreach(drain, i, d) {
		const json_t *why = json_object_get(d, "why");
		size_t n = json_array_size(why), k, at = 0;
		char reason[2048] = "";

		for (k = 0; k < n && k < WHY_MAX && at < sizeof(reason); k++)
			at += snprintf(reason + at, sizeof(reason) - at, "%s%s", k ? "; " : "",
				       json_string_value(json_array_get(why, k)));
		if (n > WHY_MAX && at < sizeof(reason))
			snprintf(reason + at, sizeof(reason) - at, " (and %zu more)", n - WHY_MAX);
		json_object_set_new(d, "reason", json_string(reason));
	}
}

/* the fix at the end of an incomplete criterion's reason, or "" */
static const char *fix_of(const char *reason)
{
	const char *f = strstr(reason, "; fix: ");

	return f ? f + 7 : "";
}

static json_t *estimate_headline(const json_t *e)
{
	const json_t *o = json_object_get(e, "outputs"), *m;
	double frac;

	if (!json_is_object(e))
		return json_null();
	if (!json_is_object(o))
		return json_pack("{s:b, s:s}", "made", 0, "reason", j_str(e, "reason"));
	o = json_pack("{s:b, s:O?, s:O?, s:O?, s:O?, s:O?}", "made", 1,
		      "days", json_object_get(o, "days"), "gpu_hours", json_object_get(o, "gpu_hours"),
		      "cost", json_object_get(o, "cost"), "step_s", json_object_get(o, "step_s"),
		      "extrapolated", json_object_get(e, "extrapolated"));
	if (j_num(json_object_get(e, "outputs"), "comm_fraction", &frac))
		json_object_set_new((json_t *)o, "comm_pct", json_real(100 * frac));
	/* the measured step beside the model (docs/estimate.md, "Measured against a real step") */
	m = json_object_get(e, "from_measured");
	if (json_is_object(m))
		json_object_set_new((json_t *)o, "measured_step", json_pack("{s:s, s:O?, s:O?, s:O?, s:O?}",
			"source", j_str(m, "source"), "step_s", json_object_get(m, "step_s"),
			"days", json_object_get(m, "days"), "gpu_hours", json_object_get(m, "gpu_hours"),
			"cost", json_object_get(m, "cost")));
	return (json_t *)o;
}

/* "FAIL: do not accept the cluster as it is: 2 criteria failed; the hardware ..." */
static json_t *words(const char *verdict, size_t nfail, size_t nwarn, size_t nreq, size_t ndrain,
		     size_t nhw, size_t ncons, size_t nreg)
{
	char buf[640];
	size_t at;

	if (!strcmp(verdict, "pass"))
		return json_string("PASS: accept the cluster: every required check was measured and passed.");
	if (!strcmp(verdict, "warn")) {
		snprintf(buf, sizeof(buf), "WARN: acceptable, but look at %zu warning(s) before signing%s; "
			 "every required check passed.", nwarn + ncons, ncons ? " (versions differ across hosts)" : "");
		return json_string(buf);
	}
	if (strcmp(verdict, "fail")) {
		snprintf(buf, sizeof(buf), "INCOMPLETE: no decision yet: %zu required check(s) not measured or a "
			 "run that did not finish; measure them (the commands below) and judge again.", nreq);
		return json_string(buf);
	}
	at = (size_t)snprintf(buf, sizeof(buf), "FAIL: do not accept the cluster as it is:");
#define PIECE(cond, ...) if ((cond) && at < sizeof(buf)) \
		at += (size_t)snprintf(buf + at, sizeof(buf) - at, __VA_ARGS__)
	PIECE(nfail, " %zu criteri%s failed;", nfail, nfail == 1 ? "on" : "a");
	PIECE(nhw, " the hardware is not what the profile expects;");
	PIECE(ncons, " versions differ across hosts;");
	PIECE(nreg, " %zu regression(s) against the baseline;", nreg);
	PIECE(ndrain, " drain %zu node(s) and test again;", ndrain);
	PIECE(nreq, " %zu required check(s) not measured;", nreq);
#undef PIECE
	if (at < sizeof(buf) && buf[at - 1] == ';')
		buf[at - 1] = '.';
	return json_string(buf);
}

json_t *decision_build(const json_t *s)
{
	static const char *const own[] = { "node", "gpu", "nic", "gpu_pair", NULL };
	static const char *const links[] = { "link", "rail_pair", NULL };
	json_t *d, *drain = json_array(), *check = json_array(), *req = json_array(), *failed = json_array();
	json_t *warned = json_array(), *unfinished = json_array(), *ranks = json_array(), *look = json_array();
	json_t *nohw = json_array(), *measure = json_array();
	const json_t *c, *fl, *v, *hosts = j_arr(json_object_get(s, "cluster"), "hosts");
	json_t *hw = j_arr(s, "hardware") ? json_incref((json_t *)j_arr(s, "hardware")) : json_array();
	const char *bad[256];
	size_t i, j, nbad = 0, nopt = 0;
	char why[1024], host[128];

	/* nodes a diagnosis named bad come first, with the evidence */
	json_array_foreach(j_arr(s, "diagnoses"), i, v)
		if (!strcmp(j_str(v, "subject"), "node") && !strcmp(j_str(v, "verdict"), "bad")) {
			snprintf(why, sizeof(why), "%s diagnosis: node bad%s%s", j_str(v, "probe"),
				 *j_str(v, "evidence") ? ": " : "", j_str(v, "evidence"));
			blame(drain, j_str(v, "element"), why);
			if (nbad < sizeof(bad) / sizeof(bad[0]))
				bad[nbad++] = j_str(v, "element");
		}
	/* the rest (inconclusive nodes and links above all) are checked, never drained */
	json_array_foreach(j_arr(s, "diagnoses"), i, v)
		if (strcmp(j_str(v, "subject"), "node") || strcmp(j_str(v, "verdict"), "bad"))
			check_diagnosis(check, v);
	json_array_foreach(j_arr(s, "criteria"), i, c) {
		const char *verdict = j_str(c, "verdict"), *scope = j_str(c, "scope");
		int fail = !strcmp(verdict, "fail");

		if (fail)
			json_array_append_new(failed, json_string(j_str(c, "id")));
		if (!strcmp(verdict, "warn"))
			json_array_append_new(warned, json_string(j_str(c, "id")));
		if (!strcmp(verdict, "incomplete")) {
			if (json_is_true(json_object_get(c, "required")))
				json_array_append_new(req, json_pack("{s:s, s:s, s:s}", "criterion", j_str(c, "id"),
					"reason", j_str(c, "reason"), "fix", fix_of(j_str(c, "reason"))));
			else
				nopt++;
		}
		if (!fail && strcmp(verdict, "warn"))
			continue;
		/* a warning that names no link to check: the criterion, its reason and its worst */
		if (!fail && !(in(scope, links) && json_array_size(j_arr(c, "failures")))) {
			char worst[512] = "";

			if (json_array_size(j_arr(c, "failures"))) {
				strcpy(worst, "; worst ");
				fmt_failure(worst + 8, sizeof(worst) - 8, json_array_get(j_arr(c, "failures"), 0));
			}
			json_array_append_new(look, json_pack("{s:s, s:s+}", "criterion", j_str(c, "id"),
							      "reason", j_str(c, "reason"), worst));
		}
		json_array_foreach(j_arr(c, "failures"), j, fl) {
			why_text(why, sizeof(why), c, fl);
			if (fail && in(scope, own) && *j_str(fl, "host"))
				blame(drain, j_str(fl, "host"), why);
			else if (in(scope, links) && link_end_drained(j_str(fl, "element"), hosts, bad, nbad,
								      host, sizeof(host)))
				blame(drain, host, why);
			else if (in(scope, links))
				check_add(check, j_str(fl, "element"), !strcmp(scope, "link") ? "link" : "rail pair", why);
		}
	}
	drain_reasons(drain);
	/* the required checks not measured, grouped by the command that measures them */
	json_array_foreach(req, i, v) {
		const char *fix = *j_str(v, "fix") ? j_str(v, "fix") : j_str(v, "reason");
		json_t *g = NULL, *x;

		json_array_foreach(measure, j, x)
			if (!strcmp(j_str(x, "fix"), fix))
				g = x;
		if (!g) {
			g = json_pack("{s:s, s:[]}", "fix", fix, "criteria");
			json_array_append_new(measure, g);
		}
		json_array_append_new(json_object_get(g, "criteria"), json_string(j_str(v, "criterion")));
	}
	json_array_foreach(j_arr(s, "consistency"), i, v) {
		snprintf(why, sizeof(why), "%s differs across hosts (%zu values)", j_str(v, "key"),
			 json_array_size(j_arr(v, "values")));
		json_array_append_new(look, json_pack("{s:s, s:s}", "criterion", "consistency", "reason", why));
	}
	/* a profile stating hardware, and results without the inventory that shows it */
	json_array_foreach(j_arr(s, "hardware_missing"), i, v)
		json_array_append_new(nohw, json_pack("{s:s, s:s}", "what", json_string_value(v) ?: "",
			"fix", strstr(json_string_value(v) ?: "", "rdma") ?
			"run `ccprobe ib` (it writes each host's RDMA inventory)" :
			"run `ccprobe gpuhealth` or another GPU probe (each writes the host's GPU inventory)"));
	json_array_foreach(j_arr(s, "inputs"), i, v) {
		json_array_append(ranks, json_object_get(v, "ranks"));
		if (strcmp(j_str(v, "end"), "complete"))
			json_array_append_new(unfinished, json_pack("{s:s, s:s}", "path", j_str(v, "path"),
								    "end", j_str(v, "end")));
	}
	d = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:i, s:o, s:o, s:o}",
		      "verdict", j_str(s, "verdict"),
		      "words", words(j_str(s, "verdict"), json_array_size(failed), json_array_size(warned),
				     json_array_size(req) + json_array_size(unfinished) + json_array_size(nohw),
				     json_array_size(drain),
				     json_array_size(hw), json_array_size(j_arr(s, "consistency")),
				     json_array_size(j_arr(json_object_get(s, "baseline"), "regressions"))),
		      "drain", drain, "check", check, "hardware", hw,
		      "required_not_measured", req, "optional_not_measured", (int)nopt,
		      "unfinished", unfinished, "failed", failed, "warned", warned);
	json_object_set_new(d, "look_at", look);
	json_object_set_new(d, "hardware_not_checked", nohw);
	json_object_set_new(d, "to_measure", measure);
	json_object_set_new(d, "judged", json_pack("{s:O?, s:O?, s:i, s:o}",
		"nodes", json_object_get(json_object_get(s, "cluster"), "nodes"),
		"hosts", json_object_get(json_object_get(s, "cluster"), "hosts"),
		"phases", (int)json_array_size(j_arr(s, "inputs")), "ranks_per_phase", ranks));
	json_object_set_new(d, "estimate", estimate_headline(json_object_get(s, "estimate")));
	return d;
}
