#ifndef CCDIAG_OPTIONS_H
#define CCDIAG_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

/* Exit codes of ccprobe; documented in README.md and --help. */
enum cc_exit {
	CC_EXIT_OK = 0,          /* every measurement that ran checked out (skips said on stderr, recorded) */
	CC_EXIT_FAIL = 1,        /* a measurement failed: wrong data, an error record, a bad node or link */
	CC_EXIT_USAGE = 2,       /* bad command line */
	CC_EXIT_RUNTIME = 3,     /* setup failed: results file, MPI, memory; or a results write failed */
	CC_EXIT_TIMEOUT = 4,     /* a measurement passed its deadline (--timeout) */
	CC_EXIT_INTERRUPTED = 5, /* SIGINT or SIGTERM */
	CC_EXIT_NOTHING = 6,     /* nothing measured: every probe and collective named was skipped or not built */
};

/*
 * A named option contributed by a probe or backend, so core knows none of
 * them: "--NAME VALUE" or "--NAME=VALUE" on the command line.
 */
enum cc_param_type { CC_PARAM_SIZE, CC_PARAM_INT, CC_PARAM_DOUBLE, CC_PARAM_STRING };

struct cc_param {
	const char *name;        /* long option name without "--" */
	enum cc_param_type type;
	void *ptr;               /* size_t *, int *, double * or const char ** */
	const char *help;        /* one line for --help */
};

/*
 * --pair-schedule: how the node-pair probes (netpair, ib) pair the nodes.
 * auto: grouped when a topology puts the job in two groups or more, or above
 * SCHEDULE_ALL_PAIRS_MAX nodes (probes/schedule.h); else every pair.
 */
enum cc_pair_schedule { CC_PAIRS_AUTO, CC_PAIRS_ALL, CC_PAIRS_GROUPED };

struct cc_options {
	size_t min_bytes;        /* -b */
	size_t max_bytes;        /* -e */
	size_t factor;           /* -f: multiply size by this each step */
	size_t step;             /* -i: or add this each step (0: use factor) */
	int sizes_set;           /* -b or -e was given (probes with their own default range) */
	int iters;               /* -n: timed iterations per repetition */
	int warmup;              /* -w: untimed warm-up iterations */
	int reps;                /* -r: repetitions, each one timing sample */
	int check_iters;         /* -c: separate data-check iterations */
	double timeout_s;        /* --timeout: deadline of one measurement, 0 = none */
	double time_per_size;    /* --time-per-size: seconds one sweep size may take, 0 = no limit */
	const char *out_path;    /* -o */
	const char *backend;     /* -B: collective backend */
	const char *dtypes;      /* -d: comma list */
	const char *ops;         /* --op: comma list */
	int root;                /* --root: broadcast root */
	int scale;               /* --scale: sweep on 1, 2, 4 ... N nodes */
	double soak_s;           /* --soak: seconds to repeat one measurement for; 0 = no soak */
	double soak_interval;    /* --soak-interval: seconds one soak sample measures */
	size_t soak_size;        /* --soak-size: a collective's soak size; 0 = -e */
	const char *nonce;       /* --nonce: a value the customer chose, copied into the header; NULL = none */
	int verbose;             /* -v, repeatable */
	int quiet;               /* -q: no table on stdout */
	int list, help, version; /* actions */
	int plan_nodes;          /* --plan N[:RPN[:GBPS]]: print estimates for N nodes; 0 = run */
	int plan_rpn;            /* ranks per node of the plan [1] */
	double plan_gbps;        /* each node's network rate in Gb/s; 0 = unknown */
	const char *topology;    /* --topology: a topology file, or "nvlink"; NULL = none (docs/isolation.md) */
	int group_size;          /* --group-size: hosts per group without a topology; 0 = ceil(sqrt(N)) */
	int pair_schedule;       /* --pair-schedule: enum cc_pair_schedule */
	char **names;            /* collectives or probes to run, in order */
	int nnames;
	int argc;                /* the original command line, for the run header */
	char **argv;
};

/* Sets every field to its default. */
void options_defaults(struct cc_options *o);

/*
 * Parses argv into o; params (NULL-terminated array of NULL-terminated
 * tables) are the extra named options. Returns 0, or -1 with a one-line
 * message in err (no trailing newline).
 */
int options_parse(struct cc_options *o, int argc, char **argv,
		  const struct cc_param *const *params, char *err, size_t errlen);

/* Writes the --help text; params as for options_parse. */
void options_usage(FILE *f, const struct cc_param *const *params);

/*
 * Formats a message into err[len] as one line (see options_one_line) and
 * returns -1: the error return of any parser that reports into a buffer.
 */
int options_fail(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Replaces control characters in msg (from quoted arguments) so it prints as one line. */
void options_one_line(char *msg);

/*
 * Parses a duration: seconds ("90", "2.5") or units h, m, s ("90s", "10m",
 * "1h30m"). Returns 0, or -1 for anything else (empty, negative, junk).
 */
int options_duration(const char *s, double *out);

/*
 * A --nonce value (ccprobe's and ccdiag's): 1 to 128 characters of letters,
 * digits and . _ : + / = - (a hex, base64 or UUID string fits). 1 when it is one.
 */
int options_nonce_ok(const char *s);

/* Splits a comma list into at most max items (pointers into a copy kept in *buf). */
int options_split(const char *list, char **buf, const char **items, int max);

/*
 * The message sizes of a sweep (-b, -e, -f, -i): min, then times factor (or
 * plus step) while not above max. Returns how many were written to out (at
 * most max_out). Shared by the collective sweep and the GPU probes.
 */
size_t sweep_sizes(const struct cc_options *o, size_t *out, size_t max_out);

#endif
