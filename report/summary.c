/*
 * report/summary.c: the summary document (docs/report.md), the one thing
 * ccreport decides; every other output renders it. Also the terminal summary.
 */
#include "summary.h"
#include "../fmt/fmt.h"
#include "baseline.h"
#include "consistency.h"
#include "decision.h"
#include "eval.h"
#include "eval_state.h"
#include "load.h"
#include "model_compute.h"
#include "profile.h"
#include "report.h"
#include "series.h"
#include "../core/size.h"

#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define FAILURES_LISTED 3       /* problems named per criterion; the rest are in its failures */
#define LISTED 20               /* problems of one kind (regressions, outliers...); the rest counted */

static void problem(json_t *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(json_t *a, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) >= 0) {
		json_array_append_new(a, json_string(s));
		free(s);
	}
	va_end(ap);
}

/* true while a kind of problem may still be listed; adds "and N more" once, at the end */
static int listed(json_t *pr, size_t i, size_t n, const char *what)
{
	if (i < LISTED)
		return 1;
	if (i == LISTED)
		problem(pr, "... and %zu more %s (summary.json)", n - LISTED, what);
	return 0;
}

static const char *size_name(long long size, char *buf, size_t len)
{
	if (size == SIZE_PLATEAU)
		return "plateau";
	if (size == SIZE_ANY)
		return "any";
	snprintf(buf, len, "%lld", size);
	return buf;
}

static json_t *criterion_json(const struct crit_state *s)
{
	const struct criterion *c = s->c;
	json_t *j, *bound, *worst = json_null();
	char buf[32];

	if (c->node_best)
		bound = json_pack("{s:s, s:f, s:s, s:f, s:s}", "op", ">=", "value", c->relative,
				  "unit", "of node_best", "relative", c->relative,
				  "basis", "fraction of the best element of the same host");
	else if (c->relative > 0)
		bound = json_pack("{s:s, s:f, s:s, s:f, s:s}", "op", c->ge ? ">=" : "<=",
				  "value", c->relative, "unit", "of rate", "relative", c->relative,
				  "basis", "fraction of each element's rate_GBps as the run reported it");
	else
		bound = json_pack("{s:s, s:f, s:s, s:n, s:s}", "op", c->ge ? ">=" : "<=",
				  "value", c->bound, "unit", c->unit, "relative", "basis", "absolute");
	if (s->worst >= 0)
		worst = json_pack("{s:s, s:s, s:f, s:s}", "element", s->el[s->worst].name,
				  "host", s->el[s->worst].host, "value", s->worst_pt.value, "unit", c->unit);
	/* which sizes made the worst element's plateau: [[bytes, value], ...] */
	if (s->worst >= 0 && c->size == SIZE_PLATEAU && !c->derived)
		json_object_set_new(worst, "plateau", elem_plateau_json(c, &s->el[s->worst]));
	j = json_pack("{s:s, s:s?, s:s, s:s?, s:s?, s:s?, s:s?, s:s, s:s, s:s, s:s, s:s, s:b, s:o}",
		      "id", c->id, "title", c->title, "kind", c->probe ? "probe" : c->collective ?
		      "collective" : "estimate", "probe", c->probe ?: c->collective ?: "estimate", "test", c->test,
		      "backend", c->backend, "dtype", c->dtype, "op", c->op ?: "",
		      "metric", c->metric, "unit", c->unit, "scope", rpt_scope_name(c->scope),
		      "severity", c->fail ? "fail" : "warn", "required", c->required, "bound", bound);
	if (!c->op)
		json_object_del(j, "op");
	json_object_set_new(j, "size", c->size >= 0 ? json_integer(c->size) :
			    json_string(size_name(c->size, buf, sizeof(buf))));
	json_object_set_new(j, "verdict", json_string(rpt_verdict_name(s->verdict)));
	json_object_set_new(j, "reason", json_string(s->reason ? s->reason : ""));
	json_object_set_new(j, "elements", json_integer(s->values_total));
	json_object_set_new(j, "records", json_integer(s->records));
	json_object_set_new(j, "worst", worst);
	json_object_set(j, "failures", s->failures);
	json_object_set(j, "values", s->values);
	json_object_set(j, "incomplete_elements", s->incomplete);
	json_object_set(j, "implausible", s->implausible);
	json_object_set(j, "plateau_questioned", s->plateau);
	return j;
}

static json_t *input_json(const struct input_info *in)
{
	json_t *hosts = json_array(), *h, *j;
	const json_t *imp = json_object_get(in->header, "imported");
	size_t i;

	json_array_foreach(json_object_get(in->header, "hosts"), i, h)
		if (json_is_string(json_object_get(h, "name")))
			json_array_append(hosts, json_object_get(h, "name"));
	j = json_pack("{s:s, s:s, s:s, s:s, s:I, s:s, s:o, s:I, s:O?}", "path", in->path,
		      "sha256", in->sha256, "run_id", in->run_id ?: "", "start_utc", in->start_utc ?: "",
		      "records", (json_int_t)in->records, "end", in->end, "hosts", hosts, "ranks",
		      json_integer_value(json_object_get(in->header, "world_size")),
		      "features", json_object_get(in->header, "features"));
	/* the groups the run planned by, and how its node pairs were played (docs/netpair.md) */
	if (j && json_is_object(json_object_get(in->header, "topology"))) {
		const json_t *t = json_object_get(in->header, "topology");
		const json_t *ps = json_object_get(in->header, "pair_schedule");

		json_object_set_new(j, "topology", json_pack("{s:O?, s:O?, s:i, s:O?, s:O?, s:O?, s:O?}",
			"source", json_object_get(t, "source"), "error", json_object_get(t, "error"),
			"groups", (int)json_array_size(json_object_get(t, "groups")),
			"pair_schedule", json_object_get(ps, "schedule"), "why", json_object_get(ps, "why"),
			"rounds_inside", json_object_get(ps, "rounds_inside"),
			"rounds_across", json_object_get(ps, "rounds_across")));
	}
	/* evidence another tool wrote (docs/import.md): which tool and version */
	if (j && json_is_object(imp))
		json_object_set_new(j, "imported", json_pack("{s:O?, s:O?}", "tool", json_object_get(imp, "tool"),
							     "version", json_object_get(imp, "version")));
	return j;
}

static json_t *netpair_json(const struct eval *e)
{
	json_t *hosts, *m;
	int any = 0;

	if (!e->np || e->np_dropped || e->nhosts > NETPAIR_MAX_HOSTS)
		return json_null();
	hosts = json_array();
	m = json_array();
	for (int i = 0; i < e->nhosts; i++) {
		json_t *row = json_array();

		json_array_append_new(hosts, json_string(e->host_names[i]));
		for (int k = 0; k < e->nhosts; k++) {
			float v = e->np[(size_t)i * e->npn + k];

			any |= !isnan(v);
			json_array_append_new(row, isnan(v) ? json_null() : json_real(v));
		}
		json_array_append_new(m, row);
	}
	if (!any) {
		json_decref(hosts);
		json_decref(m);
		return json_null();
	}
	return json_pack("{s:o, s:s, s:o}", "hosts", hosts, "unit", "Gb/s", "matrix", m);
}

static void criterion_problems(const struct crit_state *s, int verdict, json_t *pr)
{
	const struct criterion *c = s->c;
	size_t i, n = json_array_size(s->failures);
	json_t *f;

	if (s->verdict != verdict)
		return;
	if (verdict == V_INCOMPLETE && !c->required) {
		problem(pr, "NOT JUDGED (optional) %s: %s", c->id, s->reason ?: "");
		return;
	}
	if (!n || verdict == V_INCOMPLETE) {
		problem(pr, "%s %s: %s", verdict == V_INCOMPLETE ? "INCOMPLETE" :
			verdict == V_FAIL ? "FAIL" : "WARN", c->id, s->reason ?: "");
		return;
	}
	json_array_foreach(s->failures, i, f) {
		const json_t *sh = json_object_get(f, "shortfall_pct");

		if (i == FAILURES_LISTED) {
			problem(pr, "%s %s: and %zu more %ss %s the bound", verdict == V_FAIL ? "FAIL" : "WARN",
				c->id, n - i, rpt_scope_name(c->scope), c->ge ? "below" : "above");
			break;
		}
		char tail[48] = "";

		if (json_is_number(sh))
			snprintf(tail, sizeof(tail), " (short by %.1f%%)", json_number_value(sh));
		problem(pr, "%s %s: %s %s %.4g %s, bound %s %.4g %s%s",
			verdict == V_FAIL ? "FAIL" : "WARN", c->id,
			json_string_value(json_object_get(f, "element")), c->metric,
			json_number_value(json_object_get(f, "value")), c->unit, c->ge ? ">=" : "<=",
			json_number_value(json_object_get(f, "bound")), c->unit, tail);
	}
}

/* implausible figures and questioned plateaus, one line each (also in the criterion's reason) */
static void odd_problems(const struct crit_state *s, json_t *pr)
{
	const struct criterion *c = s->c;
	const json_t *v, *pt;
	size_t i, k;

	json_array_foreach(s->implausible, i, v)
		if (listed(pr, i, json_array_size(s->implausible), "implausible figures"))
			problem(pr, "IMPLAUSIBLE %s: %s %.4g %s, above the %.4g %s that is possible (%s)",
				c->id, json_string_value(json_object_get(v, "element")),
				json_number_value(json_object_get(v, "value")), c->unit,
				json_number_value(json_object_get(v, "limit")), c->unit,
				json_string_value(json_object_get(v, "why")));
	json_array_foreach(s->plateau, i, v) {
		char pts[256], sz[32];
		size_t at = 0;

		if (!listed(pr, i, json_array_size(s->plateau), "plateaus questioned"))
			break;
		pts[0] = '\0';
		json_array_foreach(json_object_get(v, "points"), k, pt)
			if (at < sizeof(pts))
				at += snprintf(pts + at, sizeof(pts) - at, "%s%.4g %s at %s", k ? ", " : "",
					       json_number_value(json_array_get(pt, 1)), c->unit,
					       size_human(json_number_value(json_array_get(pt, 0)), sz, sizeof(sz)));
		problem(pr, "PLATEAU %s: %s %s at the largest size (%s): %s", c->id,
			json_string_value(json_object_get(v, "element")),
			!strcmp(json_string_value(json_object_get(v, "shape")), "rising") ?
			"still rising" : "collapses", pts,
			!strcmp(json_string_value(json_object_get(v, "shape")), "rising") ?
			"the curve never flattened, the value judged is a slope" :
			"the median of the plateau sizes hides it");
	}
}

/*
 * The profile's gpu_model against an inventory's name: the same string, or
 * a shell pattern when it has one of * ? [ ("NVIDIA A100-SXM4-*"). Never a
 * substring: "NVIDIA H100 PCIe" is no H100 SXM.
 */
static int model_matches(const char *want, const char *found)
{
	if (strpbrk(want, "*?["))
		return !fnmatch(want, found, 0);
	return !strcmp(want, found);
}

/*
 * Hosts without the inventory the profile's hardware needs (GPUs when it
 * states gpu_model or gpus_per_node, RDMA when nics_per_node): "KIND: N of M
 * hosts: a, b (and K more)", malloc'd; NULL when every host has it.
 */
static char *inventory_missing(const struct eval *e, const char *kind)
{
	const json_t *seen = json_object_get(e->inventoried, kind);
	char *names = NULL, *t;
	int n = 0, of = 0;

	for (int i = 0; i < e->nhosts; i++) {
		/* HOST#RANK: a rank playing a node in a one-host ib run (docs/rdma.md), no host */
		if (strchr(e->host_names[i], '#'))
			continue;
		of++;
		if (json_object_get(seen, e->host_names[i]) || ++n > 3)
			continue;
		if (asprintf(&t, "%s%s%s", names ?: "", names ? ", " : "", e->host_names[i]) < 0)
			break;
		free(names);
		names = t;
	}
	if (!n) {
		free(names);
		return NULL;
	}
	if (asprintf(&t, "no %s inventory from %d of %d host(s): %s%s", kind, n, of, names ?: "",
		     n > 3 ? " (and more)" : "") < 0)
		t = NULL;
	free(names);
	return t;
}

/* what the inventories found against the profile's hardware: [{key, expected, found, hosts}] */
static json_t *hardware_check(const struct eval *e)
{
	const struct profile *p = e->p;
	json_t *out = json_array(), *hosts;
	const char *found;
	char want[16];

	json_object_foreach(json_object_get(e->versions, "gpu_model"), found, hosts)
		if (p->gpu_model && !model_matches(p->gpu_model, found))
			json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:O}", "key", "gpu_model",
				"expected", p->gpu_model, "found", found, "hosts", hosts));
	snprintf(want, sizeof(want), "%d", p->gpus_per_node);
	json_object_foreach(json_object_get(e->versions, "gpu_count"), found, hosts)
		if (p->gpus_per_node && strcmp(found, want))
			json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:O}", "key", "gpu_count",
				"expected", want, "found", found, "hosts", hosts));
	/* rails at the NIC rate from the RDMA inventories: a port down or trained down shows */
	snprintf(want, sizeof(want), "%d", p->nics_per_node);
	json_object_foreach(json_object_get(e->versions, "nics_at_rate"), found, hosts)
		if (p->nics_per_node && atoi(found) < p->nics_per_node)
			json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:O}", "key", "nics_at_rate",
				"expected", want, "found", found, "hosts", hosts));
	/* memory per GPU (model_compute.c): a GPU short of it names itself */
	hosts = compute_memory_check(e);
	json_array_extend(out, hosts);
	json_decref(hosts);
	return out;
}

json_t *summary_build(struct eval *e, const struct summary_opts *o, char *err, size_t len)
{
	const struct profile *p = e->p;
	json_t *s, *crit = json_array(), *inputs = json_array(), *hosts = json_array();
	json_t *pr = json_array(), *cons, *base = json_null(), *v, *hw;
	int verdict = V_PASS, unfinished = 0, judged = 0;
	char *hw_missing[2] = { NULL, NULL };
	char when[32];
	size_t i;

	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&o->now));
	for (int i = 0; i < e->ncs; i++) {
		const struct crit_state *cs = &e->cs[i];

		json_array_append_new(crit, criterion_json(cs));
		if (cs->c->required || cs->verdict != V_INCOMPLETE)
			verdict = cs->verdict > verdict ? cs->verdict : verdict;
	}
	for (int i = 0; i < e->nin; i++) {
		json_array_append_new(inputs, input_json(&e->in[i]));
		unfinished += strcmp(e->in[i].end, "complete") != 0;
	}
	for (int i = 0; i < e->nhosts; i++)
		json_array_append_new(hosts, json_string(e->host_names[i]));
	if (unfinished && verdict < V_INCOMPLETE)
		verdict = V_INCOMPLETE;
	/* failures no criterion judged, and hangs: at least a warn, listed below */
	if ((e->nunjudged || json_array_size(e->timeouts)) && verdict < V_WARN)
		verdict = V_WARN;
	/* a pass says something was judged: at least one criterion had evidence */
	for (int i = 0; i < e->ncs; i++)
		judged += e->cs[i].verdict != V_INCOMPLETE;
	if (!judged && verdict < V_INCOMPLETE)
		verdict = V_INCOMPLETE;
	/* a bound that can never fail judged nothing: never a plain pass */
	if (p->nwarnings && verdict < V_WARN)
		verdict = V_WARN;
	/* inputs of other host sets or times than the rest: maybe not one run (identity.c) */
	if (json_array_size(e->identity) && verdict < V_WARN)
		verdict = V_WARN;
	cons = consistency_diff(e->versions);
	if (json_array_size(cons))
		verdict = p->consistency_fail ? V_FAIL : verdict > V_WARN ? verdict : V_WARN;
	hw = hardware_check(e);
	if (json_array_size(hw))
		verdict = V_FAIL;
	/* a profile that states hardware is not checked on results without inventories */
	if (p->gpu_model || p->gpus_per_node)
		hw_missing[0] = inventory_missing(e, "gpu");
	if (p->nics_per_node)
		hw_missing[1] = inventory_missing(e, "rdma");
	if ((hw_missing[0] || hw_missing[1]) && verdict < V_INCOMPLETE)
		verdict = V_INCOMPLETE;
	if (o->baseline) {
		base = baseline_compare(e, o->baseline, o->baseline_tol, err, len);
		if (!base)
			goto fail;
		if (json_array_size(json_object_get(base, "regressions")))
			verdict = V_FAIL;
	}

	/* problems, worst first: failures, regressions, mismatches, then what could not be judged */
	for (int i = 0; i < e->ncs; i++)
		criterion_problems(&e->cs[i], V_FAIL, pr);
	json_array_foreach(e->diagnoses, i, v) {
		const char *el = json_string_value(json_object_get(v, "element")) ?: "?";
		/* a switch's element names its granularity itself: "switch uplink leaf2 (...)" */
		int named = !strncmp(el, "switch uplink ", 14) || !strncmp(el, "between groups", 14);

		if (listed(pr, i, json_array_size(e->diagnoses), "diagnoses"))
			problem(pr, "%s diagnosis: %s%s%s %s%s%s", json_string_value(json_object_get(v, "probe")) ?: "",
				named ? "" : json_string_value(json_object_get(v, "subject")), named ? "" : " ",
				el, json_string_value(json_object_get(v, "verdict")),
				json_is_string(json_object_get(v, "evidence")) ? ": " : "",
				json_string_value(json_object_get(v, "evidence")) ?: "");
	}
	json_array_foreach(hw, i, v)
		problem(pr, "FAIL hardware: %s '%s' on %s%s, the profile expects %s",
			json_string_value(json_object_get(v, "key")), json_string_value(json_object_get(v, "found")),
			json_string_value(json_array_get(json_object_get(v, "hosts"), 0)),
			json_array_size(json_object_get(v, "hosts")) > 1 ? " and others" : "",
			json_string_value(json_object_get(v, "expected")));
	json_array_foreach(json_object_get(base, "regressions"), i, v)
		if (listed(pr, i, json_array_size(json_object_get(base, "regressions")), "regressions"))
			problem(pr, "REGRESSION %s: %s %.4g -> %.4g %s (%+.1f%%, spread %.1f%%)",
				json_string_value(json_object_get(v, "metric")),
				json_string_value(json_object_get(v, "element")),
				json_number_value(json_object_get(v, "old")), json_number_value(json_object_get(v, "new")),
				json_string_value(json_object_get(v, "unit")),
				json_number_value(json_object_get(v, "change_pct")),
				json_number_value(json_object_get(v, "spread_pct")));
	json_array_foreach(cons, i, v) {
		json_t *val;
		size_t k;
		char *line = NULL, *t;

		json_array_foreach(json_object_get(v, "values"), k, val) {
			json_t *h = json_object_get(val, "hosts");

			if (asprintf(&t, "%s%s'%s' on %s%s", line ?: "", line ? ", " : "",
				     json_string_value(json_object_get(val, "value")),
				     json_string_value(json_array_get(h, 0)),
				     json_array_size(h) > 1 ? " and others" : "") < 0)
				break;
			free(line);
			line = t;
		}
		problem(pr, "%s versions differ: %s: %s", p->consistency_fail ? "FAIL" : "WARN",
			json_string_value(json_object_get(v, "key")), line ?: "");
		free(line);
	}
	for (int i = 0; i < e->nin; i++)
		if (strcmp(e->in[i].end, "complete"))
			problem(pr, !strcmp(e->in[i].end, "not_run") ? "INCOMPLETE %s: the phase was not run (end: %s)" :
				"INCOMPLETE %s: the run did not finish (end: %s)", e->in[i].path, e->in[i].end);
	json_array_foreach(e->timeouts, i, v)
		if (listed(pr, i, json_array_size(e->timeouts), "timeouts"))
			problem(pr, "INCOMPLETE timeout during %s", json_string_value(v));
	for (int k = 0; k < 2; k++)
		if (hw_missing[k])
			problem(pr, "INCOMPLETE hardware: %s (the profile states %s)", hw_missing[k],
				k ? "nics_per_node" : "the GPUs");
	for (int i = 0; i < p->nwarnings; i++)
		problem(pr, "WARN profile %s", p->warnings[i]);
	json_array_foreach(e->identity, i, v)
		problem(pr, "WARN inputs: %s", json_string_value(v));
	if (!judged)
		problem(pr, "INCOMPLETE nothing judged: no criterion of profile %s had evidence in the results "
			"(a pass needs at least one)", p->name);
	json_array_foreach(e->unjudged, i, v)
		if (listed(pr, i, (size_t)e->nunjudged, "failures no criterion judged"))
			problem(pr, "WARN not judged by any criterion: %s", json_string_value(v));
	for (int i = 0; i < e->ncs; i++)
		if (e->cs[i].c->required)
			criterion_problems(&e->cs[i], V_INCOMPLETE, pr);
	for (int i = 0; i < e->ncs; i++)
		criterion_problems(&e->cs[i], V_WARN, pr);
	for (int i = 0; i < e->ncs; i++)
		odd_problems(&e->cs[i], pr);
	json_array_foreach(e->outliers, i, v)
		if (listed(pr, i, json_array_size(e->outliers), "outliers"))
			problem(pr, "OUTLIER %s: %s %.4g %s, %.1f%% worse than the %s (%.4g; tolerance %.0f%%)",
				json_string_value(json_object_get(v, "criterion")),
				json_string_value(json_object_get(v, "element")),
				json_number_value(json_object_get(v, "value")),
				json_string_value(json_object_get(v, "unit")),
				json_number_value(json_object_get(v, "below_pct")),
				json_string_value(json_object_get(v, "reference")),
				json_number_value(json_object_get(v, "peer_reference")),
				json_number_value(json_object_get(v, "tolerance_pct")));
	for (int i = 0; i < e->ncs; i++)
		if (!e->cs[i].c->required)
			criterion_problems(&e->cs[i], V_INCOMPLETE, pr);

	s = json_pack("{s:i, s:s, s:s, s:s, s:s, s:i, s:s}", "schema", 1, "tool", "ccreport",
		      "version", RPT_VERSION, "commit", ccdiag_commit, "verdict", rpt_verdict_name(verdict), "exit_code",
		      verdict == V_FAIL ? RPT_EXIT_FAIL : verdict == V_INCOMPLETE ? RPT_EXIT_INCOMPLETE : 0,
		      "generated_utc", when);
	json_object_set_new(s, "profile", json_pack("{s:s, s:s, s:s?, s:{s:s?, s:i, s:i, s:f}}",
		"name", p->name, "path", o->profile_path, "description", p->description, "expected",
		"gpu_model", p->gpu_model, "gpus_per_node", p->gpus_per_node, "nics_per_node",
		p->nics_per_node, "nic_rate_gbps", p->nic_rate_gbps));
	if (p->gpu_memory_gb > 0)
		json_object_set_new(json_object_get(json_object_get(s, "profile"), "expected"),
				    "gpu_memory_gb", json_real(p->gpu_memory_gb));
	json_object_set_new(s, "inputs", inputs);
	json_object_set(s, "manifest", e->manifest);
	json_object_set(s, "inputs_disagree", e->identity);
	json_object_set_new(s, "cluster", json_pack("{s:i, s:I, s:o}", "nodes", e->nhosts,
						    "ranks", (json_int_t)e->ranks, "hosts", hosts));
	json_object_set_new(s, "criteria", crit);
	json_object_set(s, "outliers", e->outliers);
	json_object_set_new(s, "consistency", cons);
	json_object_set_new(s, "hardware", hw);
	v = json_array();
	for (int k = 0; k < 2; k++)
		if (hw_missing[k])
			json_array_append_new(v, json_string(hw_missing[k]));
	json_object_set_new(s, "hardware_missing", v);
	free(hw_missing[0]);
	free(hw_missing[1]);
	hw_missing[0] = hw_missing[1] = NULL;
	json_object_set_new(s, "baseline", base);
	json_object_set(s, "diagnoses", e->diagnoses);
	if (json_array_size(e->isolate_rounds))   /* isolate's tests, round by round (docs/isolation.md) */
		json_object_set(s, "isolate_rounds", e->isolate_rounds);
	json_object_set_new(s, "problems", pr);
	json_object_set_new(s, "unjudged", json_pack("{s:I, s:O}", "count", (json_int_t)e->nunjudged,
						     "listed", e->unjudged));
	json_object_set_new(s, "charts", json_pack("{s:o, s:o, s:O}", "collectives",
		series_curves(e->series), "netpair", netpair_json(e), "scaling", e->scaling));
	json_object_set(s, "estimate", e->estimate);
	json_object_set_new(s, "checkpoint", e->checkpoint ? json_incref(e->checkpoint) : json_null());
	/* read back from the rest: what the verdict means, what to do */
	json_object_set_new(s, "decision", decision_build(s));
	return s;
fail:
	free(hw_missing[0]);
	free(hw_missing[1]);
	json_decref(crit);
	json_decref(inputs);
	json_decref(hosts);
	json_decref(pr);
	json_decref(cons);
	json_decref(hw);
	return NULL;
}

/* strings from results may hold control characters: print them inert */
static void put_inert(FILE *f, const char *q)
{
	for (; q && *q; q++)
		fputc((unsigned char)*q < 0x20 || *q == 0x7f ? '?' : *q, f);
}

static void line(FILE *f, const char *head, const char *text)
{
	fputs(head, f);
	put_inert(f, text);
	fputc('\n', f);
}

/* the decision block: what the verdict means and what to do (docs/report.md) */
static void decision_print(const json_t *d, FILE *f)
{
	const json_t *v, *hw = json_object_get(d, "hardware");
	char buf[1024];
	size_t i, k;
	double nopt = 0;

	line(f, "ccreport: ", json_string_value(json_object_get(d, "words")));
	json_array_foreach(json_object_get(d, "drain"), i, v) {
		snprintf(buf, sizeof(buf), "  drain %s: ", json_string_value(json_object_get(v, "node")) ?: "");
		put_inert(f, buf);
		line(f, "", json_string_value(json_object_get(v, "reason")));
	}
	json_array_foreach(json_object_get(d, "check"), i, v) {
		if (i == 10) {
			fprintf(f, "  ... and %zu more nodes, links or rail pairs to check\n",
				json_array_size(json_object_get(d, "check")) - i);
			break;
		}
		fprintf(f, "  check %s ", json_string_value(json_object_get(v, "what")) ?: "");
		put_inert(f, json_string_value(json_object_get(v, "element")));
		line(f, ": ", json_string_value(json_object_get(v, "reason")));
	}
	json_array_foreach(json_object_get(d, "look_at"), i, v) {
		fputs("  look at ", f);
		put_inert(f, json_string_value(json_object_get(v, "criterion")));
		line(f, ": ", json_string_value(json_object_get(v, "reason")));
	}
	json_array_foreach(hw, i, v) {
		const json_t *h;

		fputs("  wrong hardware: ", f);
		put_inert(f, json_string_value(json_object_get(v, "key")));
		fputs(" '", f);
		put_inert(f, json_string_value(json_object_get(v, "found")));
		fputs("' on ", f);
		json_array_foreach(json_object_get(v, "hosts"), k, h) {
			fputs(k ? ", " : "", f);
			put_inert(f, json_string_value(h));
		}
		line(f, "; the profile expects ", json_string_value(json_object_get(v, "expected")));
	}
	json_array_foreach(json_object_get(d, "hardware_not_checked"), i, v) {
		fputs("  hardware not checked: ", f);
		put_inert(f, json_string_value(json_object_get(v, "what")));
		line(f, "; fix: ", json_string_value(json_object_get(v, "fix")));
	}
	json_array_foreach(json_object_get(d, "unfinished"), i, v) {
		fputs("  not finished: ", f);
		put_inert(f, json_string_value(json_object_get(v, "path")));
		line(f, ": end ", json_string_value(json_object_get(v, "end")));
	}
	json_array_foreach(json_object_get(d, "to_measure"), i, v) {
		char *ids = j_plain(json_object_get(v, "criteria"));

		fputs("  not measured (required): ", f);
		put_inert(f, ids);
		free(ids);
		line(f, ": ", json_string_value(json_object_get(v, "fix")));
	}
	j_num(d, "optional_not_measured", &nopt);
	if (nopt > 0)
		fprintf(f, "  %.0f optional check(s) not measured (listed below and in report.md; they do not "
			"change the verdict)\n", nopt);
	fmt_judged(buf, sizeof(buf), json_object_get(d, "judged"));
	line(f, "  judged: ", buf);
	/* without a workload, how to give one */
	fmt_headline(buf, sizeof(buf), json_object_get(d, "estimate"));
	line(f, "  estimate (a model, not a measurement): ", buf);
}

void summary_print(const json_t *s, FILE *f, int max_problems)
{
	const char *v = json_string_value(json_object_get(s, "verdict"));
	const json_t *pr = json_object_get(s, "problems"), *c;
	int n[4] = { 0 }, nopt = 0;
	size_t i;

	json_array_foreach(json_object_get(s, "criteria"), i, c) {
		for (int k = V_PASS; k <= V_FAIL; k++)
			n[k] += !strcmp(json_string_value(json_object_get(c, "verdict")), rpt_verdict_name(k));
		nopt += !strcmp(json_string_value(json_object_get(c, "verdict")), "incomplete") &&
			json_is_false(json_object_get(c, "required"));
	}
	fprintf(f, "ccreport: verdict %s (exit %d): profile %s, %lld node(s), %zu input(s)\n",
		v ? v : "?", (int)json_integer_value(json_object_get(s, "exit_code")),
		json_string_value(json_object_get(json_object_get(s, "profile"), "name")),
		(long long)json_integer_value(json_object_get(json_object_get(s, "cluster"), "nodes")),
		json_array_size(json_object_get(s, "inputs")));
	if (json_is_object(json_object_get(s, "decision")))
		decision_print(json_object_get(s, "decision"), f);
	fprintf(f, "ccreport: criteria: %d pass, %d warn, %d fail, %d incomplete", n[V_PASS], n[V_WARN], n[V_FAIL],
		n[V_INCOMPLETE]);
	if (nopt)
		fprintf(f, " (%d of them optional)", nopt);
	fputc('\n', f);
	json_array_foreach(json_object_get(s, "inputs"), i, c) {
		const json_t *imp = json_object_get(c, "imported");

		if (imp)
			fprintf(f, "ccreport: imported evidence: %s %s from %s (docs/import.md)\n",
				json_string_value(json_object_get(imp, "tool")) ?: "?",
				json_string_value(json_object_get(imp, "version")) ?: "unknown",
				json_string_value(json_object_get(c, "path")) ?: "?");
	}
	/* what the inputs were checked against (docs/provenance.md) */
	json_array_foreach(json_object_get(json_object_get(s, "manifest"), "manifests"), i, c)
		fprintf(f, "ccreport: manifest: checked %lld of %lld file(s) listed in %s%s%s\n",
			(long long)json_integer_value(json_object_get(c, "checked")),
			(long long)json_integer_value(json_object_get(c, "listed")),
			json_string_value(json_object_get(c, "path")) ?: "?",
			json_is_string(json_object_get(c, "nonce")) ? ", nonce " : "",
			json_string_value(json_object_get(c, "nonce")) ?: "");
	json_array_foreach(pr, i, c) {
		if ((int)i == max_problems) {
			fprintf(f, "  ... and %zu more (summary.json, report.md)\n", json_array_size(pr) - i);
			break;
		}
		line(f, "  ", json_string_value(c));
	}
}
