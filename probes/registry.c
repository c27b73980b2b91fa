#include "probe.h"

#include <string.h>

extern const struct probe probe_dcgm, probe_gemm, probe_gpuhealth, probe_hbm, probe_ib, probe_isolate, probe_netpair,
	probe_nvlink, probe_pcie, probe_storage, probe_trainstep;

/* The only list of probes; keep sorted by name. */
const struct probe *const probes[] = {
	&probe_dcgm,
	&probe_gemm,
	&probe_gpuhealth,
	&probe_hbm,
	&probe_ib,
	&probe_isolate,
	&probe_netpair,
	&probe_nvlink,
	&probe_pcie,
	&probe_storage,
	&probe_trainstep,
	NULL,
};

const char *probe_phase_name(int phase)
{
	static const char *const names[PHASE_N] = { "node", "pairs", "collectives", "storage", "train" };

	return phase >= 0 && phase < PHASE_N ? names[phase] : "?";
}

double probe_sweep_seconds(const struct cc_options *o, size_t min, size_t max, double GBps,
			   int copies)
{
	double ops = o->warmup + (double)o->iters * o->reps, t = 0;

	if (o->sizes_set) {
		min = o->min_bytes;
		max = o->max_bytes;
	}
	for (size_t s = min; s && s <= max; s = o->step ? s + o->step : s * o->factor) {
		t += ops * (10e-6 + copies * (double)s / (GBps * 1e9));
		if ((o->step ? s + o->step : s * o->factor) <= s)
			break;
	}
	return t;
}

const struct probe *probe_find(const char *name)
{
	for (int i = 0; probes[i]; i++)
		if (!strcmp(probes[i]->name, name))
			return probes[i];
	return NULL;
}
