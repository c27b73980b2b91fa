#include "probe.h"

#include <string.h>

extern const struct probe probe_gemm, probe_gpuhealth, probe_hbm, probe_ib, probe_netpair,
	probe_nvlink, probe_pcie, probe_storage;

/* The only list of probes; keep sorted by name. */
const struct probe *const probes[] = {
	&probe_gemm,
	&probe_gpuhealth,
	&probe_hbm,
	&probe_ib,
	&probe_netpair,
	&probe_nvlink,
	&probe_pcie,
	&probe_storage,
	NULL,
};

const struct probe *probe_find(const char *name)
{
	for (int i = 0; probes[i]; i++)
		if (!strcmp(probes[i]->name, name))
			return probes[i];
	return NULL;
}
