/*
 * diag/plan.c: ccdiag's planner (plan.h, docs/ccdiag.md). The order of the
 * rules follows the documentation: what the profile needs, the phases,
 * the soak, quick, then the shrink levels and the budget.
 */
#include "plan.h"
#include "../core/size.h"
#include "../report/profile.h"
#include "../report/workload.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* what the criteria need measured (as ccreport --needs: report/needs.c), one per
 * kind, name and backend, in the order of the profile */
enum need_kind { NEED_PROBE, NEED_COLLECTIVE, NEED_SOAK };
struct need {
	enum need_kind kind;
	const char *name, *backend;   /* backend NULL: the default */
	int scale, max_nodes, required;
	long long big;                /* the largest size a criterion names; -1 none */
};

static struct need *need_entry(struct need *list, int *n, enum need_kind kind, const char *name,
			       const char *backend)
{
	for (int i = 0; i < *n; i++)
		if (list[i].kind == kind && !strcmp(list[i].name, name) &&
		    !strcmp(list[i].backend ?: "", backend ?: ""))
			return &list[i];
	list[*n] = (struct need){ kind, name, backend, 0, 0, 0, -1 };
	return &list[(*n)++];
}

/* the needs of profile p into list (p->ncrit entries at most); returns their count */
static int profile_needs_list(const struct profile *p, struct need *list)
{
	int n = 0;

	for (int i = 0; i < p->ncrit; i++) {
		const struct criterion *c = &p->crit[i];
		struct need *e;

		if (c->derived == DERIVED_COMM)
			/* the estimate reads all_reduce at the bucket size: the workload's backend */
			e = need_entry(list, &n, NEED_COLLECTIVE, "all_reduce", p->wl.s[WL_BACKEND]);
		else if (c->probe || c->collective)
			e = need_entry(list, &n, c->derived == DERIVED_SOAK ? NEED_SOAK :
				       c->probe ? NEED_PROBE : NEED_COLLECTIVE,
				       c->probe ? c->probe : c->collective, c->backend);
		else
			continue;
		if (c->required)
			e->required = 1;
		if (c->size >= 0 && c->size > e->big)
			e->big = c->size;
		if (c->derived == DERIVED_SCALING)
			e->scale = 1;
		if (c->max_nodes > 0)
			e->max_nodes = c->max_nodes;
	}
	return n;
}

/*
 * The level the dcgm probe runs at: what the profile's criterion on
 * dcgm.level asks (">= 3": 3), else 1, DCGM's seconds-long quick level.
 */
static int dcgm_level(const struct profile *p)
{
	int level = 1;

	for (int i = 0; i < p->ncrit; i++) {
		const struct criterion *c = &p->crit[i];

		if (c->metric && !strcmp(c->metric, "dcgm.level") && c->ge && c->relative <= 0 &&
		    ceil(c->bound) > level)
			level = ceil(c->bound) > 4 ? 4 : (int)ceil(c->bound);
	}
	return level;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* adds str to s unless it is there */
static void add_unique(struct strv *s, const char *str)
{
	if (strv_find(s, str) < 0)
		strv_add(s, str);
}

static struct plan_phase *add_phase(struct plan *pl, const char *name, enum plan_kind kind, int rpn)
{
	struct plan_phase *ph = &pl->ph[pl->nph++];

	memset(ph, 0, sizeof(*ph));
	snprintf(ph->name, sizeof(ph->name), "%s", name);
	ph->kind = kind;
	ph->rpn = rpn;
	return ph;
}

/* %g as awk prints a number */
static void fmt_num(char *buf, size_t len, double v)
{
	snprintf(buf, len, "%.6g", v);
}

/* seconds each item of the soak phase gets at level */
static double soak_each(const struct plan *pl, int level, int nitems)
{
	double d = level >= 1 ? pl->soak_cut : pl->soak_s;

	return floor(d / nitems * 10 + 0.5) / 10;
}

void plan_args(const struct plan *pl, int k, int level, struct strv *out)
{
	const struct plan_phase *ph = &pl->ph[k];
	int lvl = level - pl->soak_first;
	struct strv a = { 0 };
	char buf[64];

	strv_addv(&a, &ph->args);
	if (ph->kind == PK_SOAK) {
		fmt_num(buf, sizeof(buf), soak_each(pl, level, ph->names.n));
		strv_insert(&a, 0, "--soak");
		strv_insert(&a, 1, buf);
	} else if (ph->kind == PK_COLLECTIVE) {
		double tps = atof(pl->in->tps);
		int i;

		if (lvl >= 1 && tps > 1)
			tps = 1;
		if (lvl >= 2 && (i = strv_find(&a, "-e")) >= 0 && i + 1 < a.n) {
			size_t e = 0;
			int b = strv_find(&a, "-b");

			size_parse(a.v[i + 1], &e);
			if (b >= 0 && b + 1 < a.n) {
				free(a.v[b + 1]);
				a.v[b + 1] = xasprintf("%zu", e / 32 > 8 ? e / 32 : 8);
			}
		}
		if (lvl >= 3) {
			static const char *const few[] = { "-n", "5", "-r", "3" };

			for (i = 0; i < 4; i++)
				strv_insert(&a, i, few[i]);
			if (tps > 0.5)
				tps = 0.5;
		}
		if (lvl >= 4 && (i = strv_find(&a, "--scale")) >= 0)
			strv_remove(&a, i);
		fmt_num(buf, sizeof(buf), lvl >= 1 ? tps : atof(pl->in->tps));
		strv_insert(&a, 0, "--time-per-size");
		strv_insert(&a, 1, lvl >= 1 ? buf : pl->in->tps);
	} else if (!strcmp(ph->name, "pairs") && lvl >= 3) {
		static const char *const few[] = { "--pair-time", "0.05", "--pair-iters", "200",
			"--ib-reps", "3", "--ib-iters", "20", "--ib-lat-iters", "1000" };

		for (int i = 0; i < 10; i++)
			strv_insert(&a, i, few[i]);
	}
	/* the emulated hosts share this machine's cores: netpair's auto cap, written out */
	if (pl->in->launch == PLAN_EMULATED &&
	    (!strcmp(ph->name, "pairs") || (ph->kind == PK_SOAK && strv_find(&ph->names, "netpair") >= 0))) {
		snprintf(buf, sizeof(buf), "%d", pl->in->ncpu / 2 > 1 ? pl->in->ncpu / 2 : 1);
		strv_insert(&a, 0, "--pair-concurrency");
		strv_insert(&a, 1, buf);
	}
	/*
	 * netpair's reference rate: the profile's NIC rate (the fabric's), not
	 * what the node's default route or UCX's devices say (an HGX node's
	 * management Ethernet); the emulated cluster states each host's shaped
	 * rate itself (CCDIAG_LINK_RATE_MBIT). No nic_rate: ccprobe finds the
	 * rate of MPI's interface, or leaves it unknown (criterion incomplete).
	 */
	if (pl->in->launch != PLAN_EMULATED && pl->in->prof->nic_rate_gbps > 0 &&
	    strv_find(&ph->names, "netpair") >= 0) {
		snprintf(buf, sizeof(buf), "%.15g", pl->in->prof->nic_rate_gbps * 1000);
		strv_insert(&a, 0, "--pair-link-rate");
		strv_insert(&a, 1, buf);
	}
	if (pl->in->extra && ph->kind != PK_FRAMEWORK)
		strv_addv(out, pl->in->extra);
	strv_addv(out, &a);
	strv_free(&a);
}

double plan_launch_seconds(const struct plan *pl)
{
	return 3 + 0.01 * pl->in->nodes;
}

/* the estimate of phase k at level: its entries' models and the launch, to 0.1 s */
static double estimate(struct plan *pl, int k, int level)
{
	struct plan_phase *ph = &pl->ph[k];
	struct strv a = { 0 };
	char err[512] = "";
	double t;

	if (ph->skipped)
		return 0;
	if (ph->kind == PK_FRAMEWORK) {
		/* the proxy's model of the same shape (its --train-* options), twice (the framework's
		 * own work beside the products), and 20 s to import torch and join the ranks */
		int j = k > 0 && !strcmp(pl->ph[k - 1].name, "train-proxy") ? k - 1 : -1;

		return j >= 0 ? floor((2 * (pl->ph[j].est[level] - plan_launch_seconds(pl)) + 20 +
				       plan_launch_seconds(pl)) * 10 + 0.5) / 10 : 20 + plan_launch_seconds(pl);
	}
	plan_args(pl, k, level, &a);
	t = pl->reg->estimate(pl->reg->ctx, pl->in->nodes, ph->rpn, pl->gbps, &a, err, sizeof(err));
	strv_free(&a);
	if (t < 0) {
		/* the launch will say why (ccprobe refuses the same options): the plan counts
		 * the launch alone, and says so once */
		char *line = xasprintf("phase %s: ccprobe --plan refused its options: %s", ph->name, err);

		add_unique(&pl->estimate_errors, line);
		free(line);
		t = 0;
	}
	{
		char buf[64];

		/* to 0.1 s as printf rounds it (the figure the plan prints is the figure summed) */
		snprintf(buf, sizeof(buf), "%.1f", t + plan_launch_seconds(pl));
		return atof(buf);
	}
}

static double total_at(struct plan *pl, int level)
{
	double t = 0;

	for (int k = 0; k < pl->nph; k++)
		t += pl->ph[k].est[level];
	return t;
}

static int fail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return 2;
}

/* the collectives phase of backend be */
static int plan_collectives(struct plan *pl, const struct need *needs, int nn, const char *be,
			    const char *defbe, long long bucket, char *err, size_t len)
{
	const struct plan_input *in = pl->in;
	struct strv colls = { 0 };
	int scale = 0;
	long long big = bucket;
	size_t max = 0;
	const char *maxs = in->max_size ? in->max_size : !strcmp(be, "nccl") ? "8G" : "1M";
	struct plan_phase *ph;

	for (int i = 0; i < nn; i++) {
		if (needs[i].kind != NEED_COLLECTIVE)
			continue;
		/* the largest size any collective criterion names, and the bucket */
		if (needs[i].big > big)
			big = needs[i].big;
		if (strcmp(needs[i].backend ? needs[i].backend : defbe, be))
			continue;
		add_unique(&colls, needs[i].name);
		if (needs[i].scale || (needs[i].max_nodes > 0 && needs[i].max_nodes < in->nodes))
			scale = 1;
	}
	if (in->nodes < 2)
		scale = 0;
	if (size_parse(maxs, &max) || !max) {
		strv_free(&colls);
		return fail(err, len, "invalid size '%s' for --max-size", maxs);
	}
	qsort(colls.v, colls.n, sizeof(*colls.v), cmp_str);
	ph = add_phase(pl, "", PK_COLLECTIVE, !strcmp(be, "nccl") ? (pl->gpus > 0 ? pl->gpus : 1) : 1);
	snprintf(ph->name, sizeof(ph->name), "collectives-%s", be);
	strv_add(&ph->args, "-B");
	strv_add(&ph->args, be);
	strv_add(&ph->args, "-b");
	strv_add(&ph->args, "8");
	strv_add(&ph->args, "-e");
	if (big > 0 && (unsigned long long)big > max)
		strv_addf(&ph->args, "%lld", big);
	else
		strv_add(&ph->args, maxs);
	if (scale)
		strv_add(&ph->args, "--scale");
	strv_addv(&ph->args, &colls);
	strv_addv(&ph->names, &colls);
	strv_free(&colls);
	return 0;
}

/* the soak phase: what the profile's soak criteria judge, else netpair and all_reduce */
static int plan_soak(struct plan *pl, const struct need *needs, int nn, const char *defbe,
		     char *err, size_t len)
{
	const struct plan_input *in = pl->in;
	const struct plan_registry *reg = pl->reg;
	struct strv want = { 0 }, wantbe = { 0 }, names = { 0 };
	const char *soak_be = NULL, *maxs;
	size_t max = 0;
	struct plan_phase *ph;

	for (int i = 0; i < nn; i++)
		if (needs[i].kind == NEED_SOAK) {
			strv_add(&want, needs[i].name);
			strv_add(&wantbe, needs[i].backend ? needs[i].backend : defbe);
		}
	if (!want.n) {
		pl->soak_note = xstrdup("the profile judges no soak: its records are kept, not judged");
		if (in->nodes >= 2) {
			strv_add(&want, "netpair");
			strv_add(&wantbe, defbe);
		}
		strv_add(&want, "all_reduce");
		strv_add(&wantbe, defbe);
	}
	for (int i = 0; i < want.n; i++) {
		const char *n = want.v[i], *b = wantbe.v[i], *phase;

		if (!reg->can_soak(reg->ctx, n, in->nodes)) {
			strv_addf(&pl->unrunnable, "soak %s: this ccprobe cannot soak it", n);
		} else if (!strcmp(n, "netpair") && in->nodes < 2) {
			free(pl->soak_note);
			pl->soak_note = xstrdup("netpair needs 2 nodes or more: its soak criteria will be incomplete");
		} else if ((phase = reg->phase(reg->ctx, n)) && !strcmp(phase, "collectives")) {
			/* one backend per launch: the first soak's */
			if (!soak_be || !strcmp(soak_be, b)) {
				soak_be = b;
				add_unique(&names, n);
			} else {
				strv_addf(&pl->unrunnable, "soak %s over %s: one backend per soak phase (%s)",
					  n, b, soak_be);
			}
		} else {
			add_unique(&names, n);
		}
	}
	if (names.n) {
		maxs = in->max_size ? in->max_size : !strcmp(soak_be ? soak_be : defbe, "nccl") ? "8G" : "1M";
		if (size_parse(maxs, &max) || !max) {
			strv_free(&want);
			strv_free(&wantbe);
			strv_free(&names);
			return fail(err, len, "invalid size '%s' for --max-size", maxs);
		}
		ph = add_phase(pl, "soak", PK_SOAK,
			       soak_be && !strcmp(soak_be, "nccl") ? (pl->gpus > 0 ? pl->gpus : 1) : 1);
		strv_add(&ph->args, "-B");
		strv_add(&ph->args, soak_be ? soak_be : defbe);
		strv_add(&ph->args, "-e");
		strv_add(&ph->args, maxs);
		strv_addv(&ph->args, &names);
		strv_addv(&ph->names, &names);
	}
	strv_free(&want);
	strv_free(&wantbe);
	strv_free(&names);
	return 0;
}

/*
 * The train phases, when the profile has a [workload] (docs/ccdiag.md, "The train
 * phase"): ccprobe trainstep (train-proxy) and the framework's step
 * (workloads/torch_step.py: train), on the workload's shape. Tokens per rank are the
 * workload's tokens per step over the job's ranks, on host memory at most what the
 * workload's rate (peak_tflops x mfu) computes in TRAIN_STEP_S (a time budget: the
 * records carry the tokens run); under --soak each steps for a quarter of it.
 */
#define TRAIN_STEP_S 0.1         /* host memory: seconds of compute per step at the workload's rate */
#define TRAIN_STEPS "6"          /* timed steps (after 1 warm-up), each run 3 ways */
/* the step's shape as options, the same for ccprobe trainstep ("--train-") and torch_step.py ("--") */
static void step_args(struct strv *a, const char *pre, double params, double layers, double tok, double bucket,
		      const char *seconds)
{
	strv_addf(a, "%sparams=%.6g", pre, params);
	strv_addf(a, "%slayers=%.0f", pre, layers);
	strv_addf(a, "%stokens=%.0f", pre, tok);
	strv_addf(a, "%sbucket=%.0f", pre, bucket);
	strv_addf(a, "%ssteps=%s", pre, TRAIN_STEPS);
	strv_addf(a, "%swarmup=1", pre);
	if (seconds)
		strv_addf(a, "%sseconds=%s", pre, seconds);
}

static void plan_train(struct plan *pl)
{
	const struct plan_input *in = pl->in;
	const struct workload *w = &in->prof->wl;
	const char *be = pl->gpus > 0 ? "nccl" : "mpi", *ph;
	int rpn = pl->gpus > 0 ? pl->gpus : 1;
	double params = workload_value(w, WL_PARAMS), layers = w->from[WL_LAYERS] ? workload_value(w, WL_LAYERS) : 4;
	double ranks = (double)in->nodes * rpn, tok = floor(workload_value(w, WL_TOKENS_PER_STEP) / ranks);
	double rate = workload_value(w, WL_PEAK_TFLOPS) * workload_value(w, WL_MFU) * 1e12, soak = 0;
	double bucket = workload_value(w, WL_BUCKET);
	struct plan_phase *tp, *fw;
	char sbuf[32];

	if (pl->nph + 2 > PLAN_MAX_PHASES)
		return;
	if (!strcmp(be, "mpi") && rate > 0 && params > 0 && tok > TRAIN_STEP_S * rate / (6 * params))
		tok = floor(TRAIN_STEP_S * rate / (6 * params));
	if (tok < 1)
		tok = 1;
	if (in->soak_s > 0)
		soak = fmax(10, in->soak_s / 4.0);
	fmt_num(sbuf, sizeof(sbuf), soak);
	if ((ph = pl->reg->phase(pl->reg->ctx, "trainstep")) && !strcmp(ph, "train")) {
		tp = add_phase(pl, "train-proxy", PK_PROBE, rpn);
		strv_add(&tp->args, "-B");
		strv_add(&tp->args, be);
		step_args(&tp->args, "--train-", params, layers, tok, bucket, soak > 0 ? sbuf : NULL);
		strv_add(&tp->args, "trainstep");
		strv_add(&tp->names, "trainstep");
	} else {
		strv_add(&pl->unrunnable, "probe trainstep: not a probe of this ccprobe");
	}
	fw = add_phase(pl, "train", PK_FRAMEWORK, rpn);
	strv_add(&fw->names, "torch_step");
	step_args(&fw->args, "--", params, layers, tok, bucket, soak > 0 ? sbuf : NULL);
	if (in->framework == 0) {
		fw->skipped = 1;
		snprintf(fw->skip_why, sizeof(fw->skip_why), "%s", in->framework_why ? in->framework_why :
			 "the framework is not present");
	}
}

int plan_make(struct plan *pl, const struct plan_input *in, const struct plan_registry *reg,
	      char *err, size_t len)
{
	const struct profile *p = in->prof;
	struct need *needs = xmalloc((p->ncrit + 1) * sizeof(*needs));
	struct strv byphase[4] = { { 0 } }, backends = { 0 };
	static const char *const phases[4] = { "node", "pairs", "collectives", "storage" };
	const char *defbe;
	long long bucket = 0;
	int nn, rc = 0, any_soak = 0, nics_rpn;
	char a[32], b[32];

	memset(pl, 0, sizeof(*pl));
	pl->in = in;
	pl->reg = reg;
	pl->gpus = p->gpus_per_node;
	pl->nics = p->nics_per_node;
	pl->soak_s = pl->soak_cut = in->soak_s;
	/* each node's network rate: the emulated rate, else the profile's NICs */
	pl->gbps = in->launch == PLAN_EMULATED ? in->emu_gbps :
		   p->nic_rate_gbps * (p->nics_per_node > 0 ? p->nics_per_node : 1);
	defbe = pl->gpus > 0 ? "nccl" : "mpi";
	nics_rpn = pl->nics > 0 ? pl->nics : 1;
	nn = profile_needs_list(p, needs);
	if (p->wl.any)
		bucket = (long long)floor(workload_value(&p->wl, WL_BUCKET));

	/* probes go to the phase their registry entry names */
	for (int i = 0; i < nn; i++) {
		const char *ph;

		if (needs[i].kind == NEED_SOAK) {
			any_soak = 1;
			if (needs[i].required && !in->soak_s)
				pl->soak_needed = 1;
			continue;
		}
		if (needs[i].kind == NEED_COLLECTIVE) {
			add_unique(&backends, needs[i].backend ? needs[i].backend : defbe);
			continue;
		}
		ph = reg->phase(reg->ctx, needs[i].name);
		if (!ph) {
			strv_addf(&pl->unrunnable, "probe %s: not a probe of this ccprobe", needs[i].name);
			continue;
		}
		for (int k = 0; k < 4; k++)
			if (!strcmp(ph, phases[k]))
				add_unique(&byphase[k], needs[i].name);
	}
	/* ccdiag quick is a minute: DCGM's diagnostics (seconds to 90 minutes) are not part of it */
	if (in->quick && strv_find(&byphase[0], "dcgm") >= 0)
		strv_remove(&byphase[0], strv_find(&byphase[0], "dcgm"));
	for (int k = 0; k < 2; k++) {
		struct plan_phase *ph;
		int rpn = 1;

		if (!byphase[k].n)
			continue;
		for (int i = 0; i < byphase[k].n; i++)
			if (k == 0)
				rpn = pl->gpus > 0 ? pl->gpus : 1;
			else if (!strcmp(byphase[k].v[i], "ib"))
				rpn = nics_rpn;
		ph = add_phase(pl, phases[k], PK_PROBE, rpn);
		strv_addv(&ph->names, &byphase[k]);
		if (k == 0 && strv_find(&byphase[k], "dcgm") >= 0) {
			strv_add(&ph->args, "--dcgm-level");
			strv_addf(&ph->args, "%d", dcgm_level(p));
		}
		strv_addv(&ph->args, &byphase[k]);
	}
	qsort(backends.v, backends.n, sizeof(*backends.v), cmp_str);
	for (int i = 0; i < backends.n && !rc; i++)
		rc = plan_collectives(pl, needs, nn, backends.v[i], defbe, bucket, err, len);
	if (!rc && in->soak_s > 0)
		rc = plan_soak(pl, needs, nn, defbe, err, len);
	if (!rc && byphase[3].n) {
		struct plan_phase *ph = add_phase(pl, "storage", PK_PROBE, pl->gpus > 0 ? pl->gpus : 1);

		if (in->storage_dir) {
			strv_add(&ph->args, "--storage-dir");
			strv_add(&ph->args, in->storage_dir);
		} else {
			ph->skipped = 1;
			snprintf(ph->skip_why, sizeof(ph->skip_why), "no --storage-dir given (the filesystem to test)");
		}
		strv_addv(&ph->args, &byphase[3]);
		strv_addv(&ph->names, &byphase[3]);
	}
	if (!rc && p->wl.any && !in->quick)
		plan_train(pl);
	if (rc)
		goto out;

	if (in->quick) {
		/* the node phase alone, short, judged by its probes' criteria alone */
		static const char *const short_sweep[] = { "-n", "5", "-r", "3", "-w", "1", "-b", "64M",
			"-e", "64M", "--timeout", "20", "--gemm-shapes", "8192", "--gemm-iters", "10",
			"--gemm-warmup", "2", "--gemm-seconds", "5", NULL };
		struct plan_phase node;
		int k = -1;

		for (int i = 0; i < pl->nph; i++)
			if (!strcmp(pl->ph[i].name, "node"))
				k = i;
		if (k < 0) {
			rc = fail(err, len, "profile '%s' has no node-local criterion (ccdiag quick runs the node phase alone)",
				  p->name);
			goto out;
		}
		node = pl->ph[k];
		for (int i = 0; i < pl->nph; i++)
			if (i != k) {
				strv_free(&pl->ph[i].names);
				strv_free(&pl->ph[i].args);
			}
		strv_free(&node.args);
		for (int i = 0; short_sweep[i]; i++)
			strv_add(&node.args, short_sweep[i]);
		strv_addv(&node.args, &node.names);
		pl->ph[0] = node;
		pl->nph = 1;
		for (int i = 0; i < p->ncrit; i++)
			if (p->crit[i].probe && strv_find(&node.names, p->crit[i].probe) >= 0)
				strv_add(&pl->quick_keep, p->crit[i].id);
	}
	if (!pl->nph) {
		if (!in->soak_s && any_soak) {
			rc = fail(err, len, "profile '%s' judges soaks only: give --soak DURATION", p->name);
		} else {
			char *u = strv_join(&pl->unrunnable, " ");

			rc = fail(err, len, "profile '%s' has no criterion this ccprobe can run%s%s%s", p->name,
				  *u ? " (" : "", u, *u ? ")" : "");
			free(u);
		}
		goto out;
	}

	/* shrink levels: each adds cuts to the phases; with a soak phase the soak is cut first */
	for (int k = 0; k < pl->nph; k++)
		if (pl->ph[k].kind == PK_SOAK)
			pl->soak_first = 1;
	pl->nlevels = 0;
	pl->cut[pl->nlevels++] = xstrdup("");
	if (pl->soak_first)
		pl->cut[pl->nlevels++] = xasprintf("soak %lds -> (fitted)", in->soak_s);
	pl->cut[pl->nlevels++] = xasprintf("time per size %s s -> 1 s", in->tps);
	pl->cut[pl->nlevels++] = xstrdup("collectives: 6 largest sizes only (plateau, fit)");
	pl->cut[pl->nlevels++] = xstrdup("collectives: -n 5 -r 3, time per size 0.5 s; pairs: "
					 "--pair-time 0.05 --pair-iters 200, ib 3 reps of 20");
	pl->cut[pl->nlevels++] = xstrdup("collectives: no --scale (scaling criteria not judged)");
	for (int k = 0; k < pl->nph; k++)
		pl->ph[k].est[0] = estimate(pl, k, 0);
	pl->total = total_at(pl, 0);
	if (in->budget_s >= 0 && pl->total > in->budget_s) {
		if (!in->shrink) {
			rc = fail(err, len, "the plan needs ~%s, over --budget %s (--shrink cuts it to fit; --dry-run shows it)",
				  human(pl->total, a, sizeof(a)), human(in->budget_s, b, sizeof(b)));
			pl->over_budget = 1;
			goto out;
		}
		if (pl->soak_first) {
			/* the soak shorter by what the plan is over, but not below a quarter of it */
			double d = in->soak_s;
			long c = (long)(d - (pl->total - in->budget_s));

			if (c < d / 4)
				c = (long)(d / 4 + 0.5);
			if (c < 1)
				c = 1;
			pl->soak_cut = c;
			free(pl->cut[1]);
			pl->cut[1] = xasprintf("soak %s -> %s", human(d, a, sizeof(a)), human(c, b, sizeof(b)));
		}
		while (pl->level < pl->nlevels - 1 && pl->total > in->budget_s) {
			pl->level++;
			for (int k = 0; k < pl->nph; k++)
				pl->ph[k].est[pl->level] = estimate(pl, k, pl->level);
			pl->total = total_at(pl, pl->level);
		}
		if (pl->total > in->budget_s) {
			rc = fail(err, len, "--budget %s cannot hold even the minimal plan (~%s)",
				  human(in->budget_s, a, sizeof(a)), human(pl->total, b, sizeof(b)));
			pl->over_budget = 1;
			goto out;
		}
	}
out:
	for (int k = 0; k < 4; k++)
		strv_free(&byphase[k]);
	strv_free(&backends);
	free(needs);
	return rc;
}

void plan_free(struct plan *pl)
{
	for (int k = 0; k < pl->nph; k++) {
		strv_free(&pl->ph[k].names);
		strv_free(&pl->ph[k].args);
	}
	for (int l = 0; l < PLAN_MAX_LEVELS; l++)
		free(pl->cut[l]);
	free(pl->soak_note);
	strv_free(&pl->unrunnable);
	strv_free(&pl->quick_keep);
	strv_free(&pl->estimate_errors);
	memset(pl, 0, sizeof(*pl));
}
