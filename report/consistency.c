/*
 * report/consistency.c: versions that must agree across hosts (MPI library,
 * ccprobe, driver, CUDA, NCCL, firmware). versions = {key: {value: [hosts]}}.
 */
#include "report.h"

#include <string.h>

static int has(const json_t *a, const char *s)
{
	size_t i;
	json_t *v;

	json_array_foreach(a, i, v)
		if (!strcmp(json_string_value(v), s))
			return 1;
	return 0;
}

void consistency_note(json_t *versions, const char *key, const char *value, const char *host)
{
	json_t *k = json_object_get(versions, key), *hosts;

	if (!k) {
		k = json_object();
		if (!k || json_object_set_new(versions, key, k))
			return;
	}
	hosts = json_object_get(k, value);
	if (!hosts) {
		hosts = json_array();
		if (!hosts || json_object_set_new(k, value, hosts))
			return;
	}
	/* a host is listed once per value; inventories repeat per kind */
	if (!has(hosts, host))
		json_array_append_new(hosts, json_string(host));
}

json_t *consistency_diff(json_t *versions)
{
	json_t *out = json_array(), *vals, *hosts;
	const char *key, *value;

	if (!out)
		return NULL;
	json_object_foreach(versions, key, vals) {
		json_t *list;

		if (json_object_size(vals) < 2)
			continue;
		list = json_array();
		json_object_foreach(vals, value, hosts)
			json_array_append_new(list, json_pack("{s:s, s:O}", "value", value, "hosts", hosts));
		json_array_append_new(out, json_pack("{s:s, s:o}", "key", key, "values", list));
	}
	return out;
}
