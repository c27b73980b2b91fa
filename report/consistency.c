/*
 * report/consistency.c: versions that must agree across hosts (MPI library,
 * ccprobe, driver, CUDA, NCCL, firmware). versions = {key: {value: [hosts]}}.
 */
#include "consistency.h"
#include "htab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void consistency_note(json_t *versions, struct htab *seen, const char *key, const char *value,
		      const char *host)
{
	json_t *k = json_object_get(versions, key), *hosts;
	char *id;

	/* a host is listed once per key and value; inventories repeat per kind */
	if (asprintf(&id, "%s\x1f%s\x1f%s", key, value, host) < 0)
		return;
	if (htab_get(seen, id) >= 0 || htab_put(seen, id, 1)) {
		free(id);
		return;
	}
	free(id);

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
