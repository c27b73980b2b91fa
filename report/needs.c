/*
 * report/needs.c: what a profile's criteria need measured (ccreport --needs),
 * so that ccdiag plans only the probes, collectives, backends and sizes the
 * profile judges (docs/ccdiag.md). The profile stays the only list.
 */
#include "needs.h"
#include "profile.h"
#include "workload.h"

#include <string.h>

/* the record entry of probe (or collective) name with backend, made once */
static json_t *entry(json_t *list, const char *kind, const char *name, const char *backend)
{
	size_t i;
	json_t *v;

	json_array_foreach(list, i, v)
		if (!strcmp(json_string_value(json_object_get(v, "kind")), kind) &&
		    !strcmp(json_string_value(json_object_get(v, "name")), name) &&
		    !strcmp(json_string_value(json_object_get(v, "backend")) ?: "", backend ?: ""))
			return v;
	v = json_pack("{s:s, s:s, s:[], s:[], s:b, s:b, s:b}", "kind", kind, "name", name,
		      "tests", "sizes", "plateau", 0, "scale", 0, "required", 0);
	if (backend)
		json_object_set_new(v, "backend", json_string(backend));
	json_array_append_new(list, v);
	return v;
}

static void add_unique(json_t *arr, json_t *v)
{
	size_t i;
	json_t *w;

	json_array_foreach(arr, i, w)
		if (json_equal(w, v)) {
			json_decref(v);
			return;
		}
	json_array_append_new(arr, v);
}

json_t *profile_needs(const struct profile *p)
{
	json_t *list = json_array(), *crit = json_array(), *doc;

	for (int i = 0; i < p->ncrit; i++) {
		const struct criterion *c = &p->crit[i];
		json_t *e;

		if (c->derived == DERIVED_COMM) {
			/* the estimate reads all_reduce at the bucket size: the workload's backend */
			e = entry(list, "collective", "all_reduce", p->wl.s[WL_BACKEND]);
			json_object_set_new(e, "workload", json_true());
		} else if (c->probe || c->collective) {
			/* a soak criterion needs the soak of its probe or collective (ccprobe --soak) */
			e = entry(list, c->derived == DERIVED_SOAK ? "soak" : c->probe ? "probe" : "collective",
				  c->probe ? c->probe : c->collective, c->backend);
			if (c->derived == DERIVED_SOAK)
				json_object_set_new(e, "of", json_string(c->probe ? "probe" : "collective"));
		} else {
			continue;
		}
		json_array_append_new(crit, json_string(c->id));
		if (c->required)
			json_object_set_new(e, "required", json_true());
		if (c->test)
			add_unique(json_object_get(e, "tests"), json_string(c->test));
		if (c->size >= 0)
			add_unique(json_object_get(e, "sizes"), json_integer(c->size));
		else if (c->size == SIZE_PLATEAU && !c->derived)
			json_object_set_new(e, "plateau", json_true());
		if (c->derived == DERIVED_SCALING)
			json_object_set_new(e, "scale", json_true());
		/* a criterion of fewer nodes than the job needs the smaller steps of --scale */
		if (c->max_nodes > 0)
			json_object_set_new(e, "max_nodes", json_integer(c->max_nodes));
	}
	doc = json_pack("{s:s, s:s, s:i, s:i, s:f, s:o, s:o}", "profile", p->name, "path", p->path,
			"gpus_per_node", p->gpus_per_node, "nics_per_node", p->nics_per_node,
			"nic_rate_Gbps", p->nic_rate_gbps, "criteria", crit, "needs", list);
	if (p->wl.any)
		json_object_set_new(doc, "bucket_bytes",
				    json_real(workload_value(&p->wl, WL_BUCKET)));
	return doc;
}
