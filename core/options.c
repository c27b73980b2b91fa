#include "options.h"
#include "size.h"
#include "version.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void options_defaults(struct cc_options *o)
{
	memset(o, 0, sizeof(*o));
	o->min_bytes = 8;
	o->max_bytes = (size_t)16 << 20;
	o->factor = 2;
	o->iters = 20;
	o->warmup = 5;
	o->reps = 10;
	o->check_iters = 1;
	o->timeout_s = 300.0;
	o->time_per_size = 2.0;
	o->backend = "mpi";
	o->dtypes = "float";
	o->ops = "sum";
	o->root = 0;
	o->soak_interval = 1.0;
}

int options_fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	options_one_line(err);
	return -1;
}

void options_one_line(char *msg)
{
	/* quoted arguments may hold control characters; a message stays one line */
	for (char *c = msg; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
}

static int parse_int(const char *s, long lo, long hi, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

static int parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= lo && v <= hi))
		return -1;
	*out = v;
	return 0;
}

int options_duration(const char *s, double *out)
{
	double t = 0, v;
	char *end;
	int units = 0;

	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (!errno && end != s && !*end && v >= 0 && v < 1e9) {
		*out = v;
		return 0;
	}
	/* 1h30m, 10m, 90s: whole numbers with a unit each, largest first */
	while (*s) {
		unsigned long n;
		int rank;

		if (*s < '0' || *s > '9')
			return -1;
		errno = 0;
		n = strtoul(s, &end, 10);
		if (errno || n > 100000000UL)
			return -1;
		rank = *end == 'h' ? 3 : *end == 'm' ? 2 : *end == 's' ? 1 : 0;
		if (!rank || (units && rank >= units))
			return -1;
		units = rank;
		t += (double)n * (rank == 3 ? 3600 : rank == 2 ? 60 : 1);
		s = end + 1;
	}
	*out = t;
	return 0;
}

static int parse_size_arg(const char *opt, const char *s, size_t *out,
			  char *err, size_t len)
{
	if (size_parse(s, out))
		return options_fail(err, len, "invalid size '%s' for %s (use e.g. 8, 64K, 1M, 8G)", s, opt);
	return 0;
}

int options_nonce_ok(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= 128 &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:+/=-") == n;
}

int options_split(const char *list, char **buf, const char **items, int max)
{
	char *save = NULL, *tok;
	int n = 0;

	*buf = strdup(list);
	if (!*buf)
		return -1;
	for (tok = strtok_r(*buf, ",", &save); tok && n < max; tok = strtok_r(NULL, ",", &save))
		items[n++] = tok;
	return n;
}

static const struct option base_longopts[] = {
	{ "minbytes", required_argument, NULL, 'b' },
	{ "maxbytes", required_argument, NULL, 'e' },
	{ "stepfactor", required_argument, NULL, 'f' },
	{ "stepbytes", required_argument, NULL, 'i' },
	{ "iters", required_argument, NULL, 'n' },
	{ "warmup_iters", required_argument, NULL, 'w' },
	{ "reps", required_argument, NULL, 'r' },
	{ "check", required_argument, NULL, 'c' },
	{ "output", required_argument, NULL, 'o' },
	{ "backend", required_argument, NULL, 'B' },
	{ "datatype", required_argument, NULL, 'd' },
	{ "op", required_argument, NULL, 'O' },
	{ "root", required_argument, NULL, 'R' },
	{ "timeout", required_argument, NULL, 'T' },
	{ "scale", no_argument, NULL, 'S' },
	{ "time-per-size", required_argument, NULL, 'P' },
	{ "plan", required_argument, NULL, 'A' },
	{ "soak", required_argument, NULL, 'K' },
	{ "soak-interval", required_argument, NULL, 'I' },
	{ "soak-size", required_argument, NULL, 'Z' },
	{ "topology", required_argument, NULL, 'Y' },
	{ "pair-schedule", required_argument, NULL, 'G' },
	{ "group-size", required_argument, NULL, 'g' },
	{ "nonce", required_argument, NULL, 'N' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "list", no_argument, NULL, 'L' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
};
#define NBASE (sizeof(base_longopts) / sizeof(base_longopts[0]))
#define PARAM_BASE 1000

static int set_param(const struct cc_param *p, const char *arg, char *err, size_t len)
{
	switch (p->type) {
	case CC_PARAM_SIZE:
		if (size_parse(arg, p->ptr))
			return options_fail(err, len, "invalid size '%s' for --%s", arg, p->name);
		return 0;
	case CC_PARAM_INT:
		if (parse_int(arg, 0, INT_MAX, p->ptr))
			return options_fail(err, len, "invalid number '%s' for --%s", arg, p->name);
		return 0;
	case CC_PARAM_DOUBLE:
		if (parse_double(arg, 0.0, 1e12, p->ptr))
			return options_fail(err, len, "invalid number '%s' for --%s", arg, p->name);
		return 0;
	case CC_PARAM_STRING:
		*(const char **)p->ptr = arg;
		return 0;
	}
	return options_fail(err, len, "internal: bad type for --%s", p->name);
}

int options_parse(struct cc_options *o, int argc, char **argv,
		  const struct cc_param *const *params, char *err, size_t errlen)
{
	const struct cc_param *flat[128];
	struct option longopts[NBASE + 129];
	size_t nflat = 0, i;
	int c, rc = 0;

	o->argc = argc;
	o->argv = argv;
	for (i = 0; params && params[i]; i++)
		for (const struct cc_param *p = params[i]; p->name && nflat < 128; p++)
			flat[nflat++] = p;
	memcpy(longopts, base_longopts, sizeof(base_longopts));
	for (i = 0; i < nflat; i++)
		longopts[NBASE + i] = (struct option){ flat[i]->name, required_argument,
						       NULL, PARAM_BASE + (int)i };
	memset(&longopts[NBASE + nflat], 0, sizeof(struct option));

	opterr = 0;
	optind = 0;  /* glibc: 0 also resets the scan inside grouped short options */
	while (!rc && (c = getopt_long(argc, argv, ":b:e:f:i:n:w:r:c:o:B:d:t:vqhV",
				       longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			rc = parse_size_arg("-b", optarg, &o->min_bytes, err, errlen);
			o->sizes_set = 1;
			break;
		case 'e':
			rc = parse_size_arg("-e", optarg, &o->max_bytes, err, errlen);
			o->sizes_set = 1;
			break;
		case 'f':
			if (size_parse(optarg, &o->factor) || o->factor < 2)
				rc = options_fail(err, errlen, "invalid step factor '%s' for -f (an integer >= 2)", optarg);
			break;
		case 'i': rc = parse_size_arg("-i", optarg, &o->step, err, errlen); break;
		case 'n':
			if (parse_int(optarg, 1, 100000000, &o->iters))
				rc = options_fail(err, errlen, "invalid iteration count '%s' for -n (1 or more)", optarg);
			break;
		case 'w':
			if (parse_int(optarg, 0, 100000000, &o->warmup))
				rc = options_fail(err, errlen, "invalid warm-up count '%s' for -w (0 or more)", optarg);
			break;
		case 'r':
			if (parse_int(optarg, 1, 100000, &o->reps))
				rc = options_fail(err, errlen, "invalid repetition count '%s' for -r (1 or more)", optarg);
			break;
		case 'c':
			if (parse_int(optarg, 0, 1000, &o->check_iters))
				rc = options_fail(err, errlen, "invalid check count '%s' for -c (0 or more)", optarg);
			break;
		case 'o': o->out_path = optarg; break;
		case 'B': o->backend = optarg; break;
		case 'd': o->dtypes = optarg; break;
		case 'O': o->ops = optarg; break;
		case 'R':
			if (parse_int(optarg, 0, INT_MAX, &o->root))
				rc = options_fail(err, errlen, "invalid root '%s' for --root", optarg);
			break;
		case 'T':
		case 't':
			if (parse_double(optarg, 0.0, 1e7, &o->timeout_s))
				rc = options_fail(err, errlen, "invalid timeout '%s' for --timeout (seconds, 0 = none)", optarg);
			break;
		case 'S': o->scale = 1; break;
		case 'A':
			o->plan_rpn = 1;
			o->plan_gbps = 0;
			if (sscanf(optarg, "%d:%d:%lf", &o->plan_nodes, &o->plan_rpn, &o->plan_gbps) < 1 ||
			    o->plan_nodes < 1 || o->plan_nodes > 1000000 || o->plan_rpn < 1 ||
			    o->plan_rpn > 1024 || !(o->plan_gbps >= 0) ||
			    strspn(optarg, "0123456789.:eE+") != strlen(optarg))
				rc = options_fail(err, errlen, "invalid plan '%s' for --plan (NODES[:RANKS_PER_NODE[:GBPS]])", optarg);
			break;
		case 'P':
			if (parse_double(optarg, 0.0, 1e6, &o->time_per_size))
				rc = options_fail(err, errlen, "invalid time '%s' for --time-per-size (seconds, 0 = no limit)", optarg);
			break;
		case 'K':
			if (options_duration(optarg, &o->soak_s) || !(o->soak_s > 0))
				rc = options_fail(err, errlen, "invalid duration '%s' for --soak (seconds, or e.g. 90s, 10m, 1h30m; above 0)", optarg);
			break;
		case 'I':
			if (parse_double(optarg, 0.01, 3600, &o->soak_interval))
				rc = options_fail(err, errlen, "invalid interval '%s' for --soak-interval (seconds, 0.01 to 3600)", optarg);
			break;
		case 'Z':
			rc = parse_size_arg("--soak-size", optarg, &o->soak_size, err, errlen);
			if (!rc && !o->soak_size)
				rc = options_fail(err, errlen, "invalid size '%s' for --soak-size (at least 1 byte)", optarg);
			break;
		case 'Y':
			if (!*optarg)
				rc = options_fail(err, errlen, "--topology needs a file (or 'nvlink')");
			o->topology = optarg;
			break;
		case 'g':
			if (parse_int(optarg, 0, 1000000, &o->group_size))
				rc = options_fail(err, errlen, "invalid size '%s' for --group-size (hosts, 0 = ceil(sqrt(N)))", optarg);
			break;
		case 'G':
			if (!strcmp(optarg, "auto"))
				o->pair_schedule = CC_PAIRS_AUTO;
			else if (!strcmp(optarg, "all-pairs"))
				o->pair_schedule = CC_PAIRS_ALL;
			else if (!strcmp(optarg, "grouped"))
				o->pair_schedule = CC_PAIRS_GROUPED;
			else
				rc = options_fail(err, errlen, "invalid schedule '%s' for --pair-schedule (auto, all-pairs or grouped)", optarg);
			break;
		case 'N':
			if (!options_nonce_ok(optarg))
				rc = options_fail(err, errlen, "invalid value '%s' for --nonce (1 to 128 letters, digits, '.', '_', ':', '+', '/', '=', '-')", optarg);
			o->nonce = optarg;
			break;
		case 'v': o->verbose++; break;
		case 'q': o->quiet = 1; break;
		case 'L': o->list = 1; break;
		case 'h': o->help = 1; break;
		case 'V': o->version = 1; break;
		case ':':
			rc = options_fail(err, errlen, "option '%s' needs a value", argv[optind - 1]);
			break;
		case '?':
			/* a long flag given a value ("--quiet=1") sets optopt to its code */
			if (optopt && !strncmp(argv[optind - 1], "--", 2) &&
			    strchr(argv[optind - 1], '='))
				rc = options_fail(err, errlen, "option '%.*s' takes no value",
					  (int)strcspn(argv[optind - 1], "="), argv[optind - 1]);
			else if (optopt)
				rc = options_fail(err, errlen, "unknown option '-%c'", optopt);
			else
				rc = options_fail(err, errlen, "unknown option '%s'", argv[optind - 1]);
			break;
		default:
			if (c >= PARAM_BASE && (size_t)(c - PARAM_BASE) < nflat)
				rc = set_param(flat[c - PARAM_BASE], optarg, err, errlen);
			else
				rc = options_fail(err, errlen, "internal: unhandled option %d", c);
		}
	}
	if (rc)
		return rc;
	if (o->min_bytes > o->max_bytes) {
		char a[32], b[32];

		return options_fail(err, errlen, "minimum size %s (-b) is above maximum size %s (-e)",
			    size_format(o->min_bytes, a, sizeof(a)), size_format(o->max_bytes, b, sizeof(b)));
	}
	if (o->soak_s > 0 && o->scale)
		return options_fail(err, errlen, "--soak and --scale cannot be combined (a soak runs on every node of the job)");
	if (o->soak_s > 0 && o->soak_interval > o->soak_s)
		return options_fail(err, errlen, "--soak-interval %g s is longer than the --soak of %g s",
				    o->soak_interval, o->soak_s);
	o->names = argv + optind;
	o->nnames = argc - optind;
	return 0;
}

void options_usage(FILE *f, const struct cc_param *const *params)
{
	fprintf(f,
		"usage: ccprobe [options] [NAME...]\n"
		"Runs collective benchmarks and probes of a GPU cluster; launch under mpirun or srun,\n"
		"one rank per GPU (or per node for host-memory runs). NAME is a collective or probe\n"
		"(see --list); without NAME, every collective runs.\n"
		"\n"
		"Sweep (sizes take K, M, G, T suffixes = powers of 1024):\n"
		"  -b, --minbytes SIZE     smallest message size [8]\n"
		"  -e, --maxbytes SIZE     largest message size [16M]\n"
		"  -f, --stepfactor N      multiply the size by N each step [2]\n"
		"  -i, --stepbytes SIZE    add SIZE each step instead of multiplying\n"
		"  -n, --iters N           timed iterations per repetition [20]\n"
		"  -w, --warmup_iters N    untimed warm-up iterations per size [5]\n"
		"  -r, --reps N            repetitions per size; each gives one timing sample [10]\n"
		"  -c, --check N           data-check iterations per size, not timed [1]\n"
		"      --time-per-size SEC\n"
		"                          about how long one size may take: at large sizes -w, -n\n"
		"                          and then -r shrink to fit (at least 3 reps, 1 warm-up and\n"
		"                          the check); records carry the counts run; 0 = off [2]\n"
		"  -B, --backend NAME      collective backend: mpi (host memory), nccl (GPU memory) [mpi]\n"
		"  -d, --datatype LIST     float, double, int32, comma separated [float]\n"
		"      --op LIST           sum, prod, min, max, comma separated [sum]\n"
		"      --root N            root rank of broadcast [0]\n"
		"      --scale             run the collectives on the first 1, 2, 4 ... nodes and on\n"
		"                          all N (every rank of each), one backend start per node\n"
		"                          count; records carry nodes, plus a Hockney fit per series\n"
		"Soak (burn-in, flaky links: docs/results.md, \"soak\"):\n"
		"      --soak DURATION     repeat each named collective (at one size) or netpair\n"
		"                          (the pair tournament) for DURATION (90, 90s, 10m,\n"
		"                          1h30m) and record one sample per interval; warm-up and\n"
		"                          setup not counted, every collective's data checked\n"
		"      --soak-interval SEC\n"
		"                          seconds one sample measures: a collective's interval,\n"
		"                          one direction of one netpair link [1]\n"
		"      --soak-size SIZE    a collective's soak message size [-e]\n"
		"Topology (docs/isolation.md, docs/netpair.md):\n"
		"      --topology FILE     groups of hosts (leaf switches, blocks) from a Slurm\n"
		"                          topology.conf, ibnetdiscover output or 'HOST GROUP\n"
		"                          [SPINE]' lines; 'nvlink': one group per NVLink domain\n"
		"                          (NVML fabric info); none: groups of ceil(sqrt(N)) hosts\n"
		"      --group-size K      hosts per group without --topology, in host order;\n"
		"                          0 = ceil(sqrt(N)) [0]\n"
		"      --pair-schedule S   netpair and ib: all-pairs (the tournament), grouped\n"
		"                          (pairs inside groups, a sampled matrix across) or auto:\n"
		"                          grouped with a topology of 2 groups or more, or above\n"
		"                          128 nodes [auto]\n"
		"Run:\n"
		"  -o, --output FILE       results file, JSON Lines [ccprobe-results.jsonl]\n"
		"  -t, --timeout SEC       deadline of one measurement; 0 disables [300]\n"
		"      --nonce VALUE       written into the header as given: a value the customer\n"
		"                          chose, so results cannot predate it (docs/provenance.md)\n"
		"  -v, --verbose           more log lines on stderr (repeat for debug)\n"
		"  -q, --quiet             no table on stdout\n"
		"      --list              list collectives, backends and probes\n"
		"      --plan N[:R[:G]]    print, per NAME, its ccdiag phase and the estimated\n"
		"                          seconds on N nodes of R ranks with G Gb/s per node\n"
		"                          under these options, and exit (no MPI; docs/ccdiag.md)\n"
		"      --help, --version\n");
	if (params && params[0]) {
		fprintf(f, "Probe options:\n");
		for (size_t i = 0; params[i]; i++)
			for (const struct cc_param *p = params[i]; p->name; p++)
				/* at least two spaces between a name and its text (help2man's rule) */
				fprintf(f, strlen(p->name) < 20 ? "      --%-20s %s\n" :
					   "      --%s\n                           %s\n", p->name, p->help);
	}
	fprintf(f,
		"\n"
		"Units: GB/s = 1e9 bytes/s, Gb/s = 1e9 bits/s, us = microseconds.\n"
		"\n"
		"Exit codes: 0 every measurement that ran checked out (a probe that could not\n"
		"run is a skip record and one stderr line, then \"N of M probes skipped\"; ccreport\n"
		"judges it incomplete); 1 a measurement failed (wrong data, an error record, or\n"
		"a probe named a bad node or link); 2 bad command line; 3 setup failed (results\n"
		"file, MPI, memory) or the results file could not be written (the run stops at\n"
		"once); 4 a measurement passed its deadline; 5 interrupted; 6 nothing measured:\n"
		"every probe and collective named was skipped or not built.\n"
		"\n"
		"ccprobe %s (git %s)\n", CCDIAG_VERSION, ccdiag_commit);
}

size_t sweep_sizes(const struct cc_options *o, size_t *out, size_t max_out)
{
	size_t n = 0, s = o->min_bytes;

	while (s <= o->max_bytes && n < max_out) {
		size_t next;

		out[n++] = s;
		if (o->step)
			next = s + o->step;
		else
			next = s * o->factor;
		if (next <= s)  /* overflow, or a zero size that would not grow */
			break;
		s = next;
	}
	return n;
}
