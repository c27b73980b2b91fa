#ifndef CCDIAG_EVAL_STATE_H
#define CCDIAG_EVAL_STATE_H

/*
 * What an evaluation holds (struct eval): per criterion its elements and
 * the points kept of each, the cluster's hosts, and what is collected on
 * the way for the summary and the model. eval.c fills it from the records,
 * model*.c from what they derive; eval_state.c keeps its tables.
 */
#include <jansson.h>

#include "htab.h"

struct criterion;
struct input_info;
struct profile;

struct pt {                      /* the worst (or best) value seen at one size and direction */
	long long bytes;         /* 0 for criteria of any size */
	int dir;                 /* 1: measured from the later name to the earlier */
	double judged;           /* the value compared: value, or value / rate */
	double value;            /* in the metric's unit */
	double rate;             /* the record's rate in the metric's unit; 0 = none */
	double spread;           /* % */
};

struct elem {
	const char *name;        /* the element table's key */
	const char *host;        /* the eval's host name, "" when none */
	int n, cap;              /* points used, allocated: 1, or PLATEAU_SIZES at the plateau */
	struct pt *pt;
	long records;
	long norate;             /* records without rate_GBps under a relative bound */
	long nometric;           /* records without a usable value of the metric */
	double imp_value, imp_limit; /* the most implausible value seen, and its limit; 0 = none */
	int link_a, link_b;      /* a link named "A-B" of a record's src and dst (a rail pair: host and peer): their host indices + 1; 0 unknown */
	int rail;                /* a rail pair's rail (its first record's "rail"), -1 none */
};

struct crit_state {
	const struct criterion *c;
	struct eval *e;
	struct htab idx;
	struct elem *el;
	int nel, capel;
	int last;                /* the element found last (a link's two directions come one after the other); -1 */
	long records, nometric, skips, errors, scope_mismatch;
	long fake;               /* records of the test transport (transport "fake"), never judged */
	long other_size;         /* records of other sizes than the criterion's */
	char *skip_reason, *error_msg;
	char *why_none;          /* derived criteria: why the model gave no value */
	char *unknown_why;       /* why a record has no value of the metric (its "unknown" object) */
	char *caveat;            /* derived criteria: why the value is a warn, never a pass or fail */
	/* results of eval_finish */
	int verdict;
	char *reason;
	int worst;               /* element with the worst value, or -1 */
	struct pt worst_pt;
	json_t *failures, *values;
	json_t *incomplete;      /* names of the elements measured without the metric or the rate */
	json_t *implausible;     /* [{element, host, value, limit, unit, why}]: measurement faults */
	json_t *plateau;         /* [{element, host, shape, points}]: plateaus that never flattened or collapsed */
	long values_total;       /* elements judged; values holds at most VALUES_MAX of them */
};
#define NETPAIR_MAX_HOSTS 256    /* the netpair matrix's hosts at most (a larger heatmap is unreadable) */
#define VALUES_MAX 10000         /* per criterion in summary.json: the worst first beyond it */
#define RATE_MARGIN 0.10         /* a bandwidth above its rate by more than this is implausible */
#define SCALING_EFF_MAX 1.5      /* a scaling efficiency above this is implausible */

struct eval {
	const struct profile *p;
	struct crit_state *cs;
	int ncs;
	/* cluster */
	struct htab hosts;
	char **host_names;
	int nhosts, caphosts;
	long ranks;
	/* inputs */
	struct input_info *in;
	int nin;
	/* collected on the way */
	json_t *series;          /* collective curves: key -> {name, backend, dtype, op, nodes, points} */
	json_t *diagnoses;       /* netpair node/link verdicts other than ok */
	json_t *isolate_rounds;  /* isolate's tests, one row each in the order run (docs/isolation.md) */
	json_t *timeouts;        /* one line each */
	json_t *inventoried;     /* {"gpu": {host: true}, "rdma": {...}}: the hosts whose inventory was read */
	json_t *unjudged;        /* failures no criterion judged (wrong > 0, errors, end failures): one line each */
	long nunjudged;          /* all of them; unjudged lists the first ones */
	json_t *versions;        /* key -> value -> [hosts] (consistency.c) */
	struct htab vseen;       /* key, value, host noted */
	json_t *outliers;        /* filled by eval_finish */
	/* netpair matrix: one-way pass-1 bandwidth, Gb/s, row = sender; of NETPAIR_MAX_HOSTS
	 * hosts at most (summary.json leaves a larger one out): past them it is dropped, never
	 * grown (a header of 17,000 hosts would have asked 4 GiB) */
	float *np;
	int npn;
	int np_dropped;
	/* the model (model.c) */
	json_t *fits;            /* Hockney fit records: series key -> the record's numbers */
	json_t *ranks_of;        /* series key -> ranks */
	json_t *scaling;         /* charts.scaling, filled by eval_finish */
	json_t *estimate;        /* summary.estimate: null, or the model (or why there is none) */
	json_t *compute;         /* gemm and gpuhealth figures for the estimate (model_compute.c) */
	/* node-to-node bandwidth for pipeline sends: [0] ib write_bw, [1] netpair bw_uni (pass 1) */
	struct pair_bw {
		double bytes;    /* the largest size seen */
		double Gbps;     /* the worst element at it, Gb/s */
		long n;          /* records at it */
	} pair[2];
	json_t *storage_write;   /* the slowest aggregate storage write record seen (model_ckpt.c); NULL none */
	json_t *checkpoint;      /* summary.checkpoint: null, or the checkpoint model (or why none) */
	struct soak_state *soak; /* the soak series (soak.c); NULL before the first soak record */
	json_t *steps;           /* measured training steps by source (model_step.c); NULL none */
	/*
	 * The criteria that select the last measurements' kind, name, test...
	 * (eval.c): records come in runs of a few kinds (a GPU's h2d, d2h, bidir).
	 */
#define SEL_MEMO 8
	struct sel_memo {
		char v[6][48];   /* kind, name, test, backend, dtype, op; "" none */
		unsigned has;    /* bit i: v[i] is set */
		double nodes;
		int valid, n;
		int *idx;        /* the criteria (e->ncs at most) */
	} memo[SEL_MEMO];
	int memo_next;           /* the entry replaced next */
	/* what ties the inputs together (identity.c) */
	json_t *device_ids;      /* "GPU UUID id" / "NIC GUID id" -> {host, element, path, line} */
	json_t *identity;        /* inputs whose host sets or time windows disagree: one line each */
	json_t *manifest;        /* summary.manifest: null, or what the MANIFEST(s) checked */
};

/* the index of host in e's host table, entered when new; -1 on no memory */
int eval_host(struct eval *e, const char *name);
/* a is worse than b by c's direction */
int eval_worse(const struct criterion *c, double a, double b);
/* the element name of s (on host, NULL none), entered when new; NULL on no memory */
struct elem *eval_elem(struct crit_state *s, const char *name, const char *host);
/* keeps point p of element el: the worst (or with repeat = best the best) per size and direction; 0 or -1 */
int eval_add_point(const struct criterion *c, struct elem *el, const struct pt *p);
/* feeds a derived criterion one element's value; 0 or -1 on no memory (model*.c) */
int eval_add_value(struct crit_state *s, const char *element, double value);
/*
 * The same with the element's host (may be NULL); a value that is not finite
 * names the element as measured without a value (incomplete, never judged).
 */
int eval_add_element(struct crit_state *s, const char *element, const char *host, double value);

#endif
