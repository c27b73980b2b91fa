/*
 * report/profile.c: acceptance profiles (INI, read with libinih; the format
 * is in docs/profiles.md). Every mistake is reported as "file:line: what".
 */
#include "profile.h"
#include "report.h"
#include "soak.h"
#include "units.h"
#include "workload.h"

#include <ctype.h>
#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef CCDIAG_SHARE
#define CCDIAG_SHARE "/usr/local/share/ccdiag"
#endif

/*
 * The metrics a criterion may judge: the only list (docs/profiles.md). Each
 * states once which way is better; a bound without ">=" or "<=" takes it.
 */
enum sub { SUB_NONE, SUB_STAT, SUB_NAME };
enum better { LOWER, HIGHER };
static const struct metric {
	const char *field;       /* first path component */
	const char *unit;
	enum sub sub;            /* what may follow: nothing, a statistic, any counter name */
	const char *spread_of;   /* stats object whose cv is the measurement's spread */
	enum better better;      /* which way is better */
	const char *fix;         /* how the evidence is had when ccprobe has no probe that writes it */
} metrics[] = {
	{ "algbw_GBps", "GB/s", SUB_NONE, "time_us", HIGHER, NULL },
	{ "busbw_GBps", "GB/s", SUB_NONE, "time_us", HIGHER, NULL },
	{ "bw_GBps", "GB/s", SUB_NONE, "bw_stats_GBps", HIGHER, NULL },
	{ "bw_Gbps", "Gb/s", SUB_NONE, "bw_stats_GBps", HIGHER, NULL },
	{ "bw_stats_GBps", "GB/s", SUB_STAT, "bw_stats_GBps", HIGHER, NULL },
	{ "counter_delta", "count", SUB_NAME, NULL, LOWER, NULL },
	/* dcgmi diag: failed, warned, level; the dcgm probe's (probes/dcgm.c) or imported (report/import_dcgm.c) */
	{ "dcgm", "count", SUB_NAME, NULL, LOWER, "run `ccprobe dcgm --dcgm-level 3` with a rank on every node "
	  "where dcgmi and nv-hostengine run (`ccdiag run` runs it at the level the profile asks), or import the "
	  "output of `dcgmi diag -r 3 -j` run on each node (`ccreport import FILE -o run.jsonl`)" },
	{ "drop_pct", "%", SUB_NONE, NULL, LOWER, NULL },          /* gemm sustained: first vs last 10 % */
	{ "health", "count", SUB_NAME, NULL, LOWER, NULL },        /* gpuhealth: ECC, remaps, XIDs, ... */
	{ "iops", "IOPS", SUB_NONE, NULL, HIGHER, NULL },           /* storage: small random reads */
	{ "lat_us", "us", SUB_STAT, "lat_us", LOWER, NULL },
	{ "ops_per_s", "ops/s", SUB_NONE, "ops_stats", HIGHER, NULL }, /* storage: metadata */
	{ "pct_of_peak", "%", SUB_NONE, "tflops_stats", HIGHER, NULL },
	{ "pct_of_rate", "%", SUB_NONE, "bw_stats_GBps", HIGHER, NULL },
	{ "rate_GBps", "GB/s", SUB_NONE, NULL, HIGHER, NULL },
	{ "temp_c", "C", SUB_STAT, NULL, LOWER, NULL },
	{ "tflops", "TFLOP/s", SUB_NONE, "tflops_stats", HIGHER, NULL },
	{ "tflops_stats", "TFLOP/s", SUB_STAT, "tflops_stats", HIGHER, NULL },
	{ "throttle_samples", "count", SUB_NAME, NULL, LOWER, NULL },
	{ "time_us", "us", SUB_STAT, "time_us", LOWER, NULL },
	{ "wrong", "count", SUB_NONE, NULL, LOWER, NULL },
};
static const char *const stats[] = { "min", "median", "mean", "max", "p99", "p999", NULL };
static const char *const scopes[SC_N] = {
	"gpu", "gpu_pair", "nic", "rail_pair", "link", "node", "cluster",
};

const char *rpt_scope_name(int s)
{
	return s >= 0 && s < SC_N ? scopes[s] : "?";
}

struct parse {
	struct profile *p;
	const char *name;
	/* the reader counts lines so that every handler call knows its own */
	FILE *f;
	const char *s;           /* or a string */
	int done_lines, line;
	int err_line;
	char err[512];
	struct criterion *cur;
	char cur_section[128];
};

static int fail(struct parse *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static char *reader(char *str, int num, void *stream)
{
	struct parse *ps = stream;
	char *r;

	if (ps->f) {
		r = fgets(str, num, ps->f);
	} else {
		int i = 0;

		if (!*ps->s)
			return NULL;
		while (i < num - 1 && ps->s[i] && ps->s[i] != '\n')
			i++;
		if (i < num - 1 && ps->s[i] == '\n')
			i++;
		memcpy(str, ps->s, i);
		str[i] = '\0';
		ps->s += i;
		r = str;
	}
	if (!r)
		return NULL;
	ps->line = ps->done_lines + 1;
	if (strchr(str, '\n'))
		ps->done_lines++;
	else if ((int)strlen(str) == num - 1)
		/* inih would read the rest as a line of its own and lose count */
		fail(ps, "line longer than %d characters", num - 2);
	return r;
}

static int fail(struct parse *ps, const char *fmt, ...)
{
	va_list ap;

	if (!ps->err_line) {
		ps->err_line = ps->line;
		va_start(ap, fmt);
		vsnprintf(ps->err, sizeof(ps->err), fmt, ap);
		va_end(ap);
	}
	return 0;
}

static int set_str(struct parse *ps, char **dst, const char *name, const char *v)
{
	if (*dst)
		return fail(ps, "'%s' given twice", name);
	*dst = strdup(v);
	return *dst ? 1 : fail(ps, "out of memory");
}

/*
 * A decimal number as a profile writes it: strtod alone also reads hex
 * ("0x10" = 16), "inf" and "nan", which no bound means. Those leave *end
 * at v, the callers' "not a number".
 */
static double decimal(const char *v, char **end)
{
	const char *q = v;

	while (*q == ' ')
		q++;
	if (*q == '+' || *q == '-')
		q++;
	if (!(*q >= '0' && *q <= '9') && *q != '.')
		goto no;
	if (q[0] == '0' && (q[1] == 'x' || q[1] == 'X'))
		goto no;
	return strtod(v, end);
no:
	*end = (char *)v;
	return 0;
}

static int parse_int(const char *v, int *out)
{
	char *end;
	long x;

	errno = 0;
	x = strtol(v, &end, 10);
	if (errno || end == v || *end || x < 0 || x > INT_MAX)
		return -1;
	*out = (int)x;
	return 0;
}

/* "10%" or "0.10": a fraction in [0, 1] */
static int parse_fraction(const char *v, double *out)
{
	char *end;
	double x;

	errno = 0;
	x = decimal(v, &end);
	if (errno || end == v || !isfinite(x))
		return -1;
	while (*end == ' ')
		end++;
	if (*end == '%') {
		x /= 100;
		end++;
	}
	if (*end || x < 0 || x > 1)
		return -1;
	*out = x;
	return 0;
}

static int parse_bool(const char *v, int *out)
{
	if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1"))
		*out = 1;
	else if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "0"))
		*out = 0;
	else
		return -1;
	return 0;
}

static const struct metric *find_metric(struct criterion *c, char *err, size_t len)
{
	char buf[128], *save = NULL, *tok;
	const struct metric *m = NULL;

	if (strlen(c->metric) >= sizeof(buf)) {
		snprintf(err, len, "metric '%.40s...' is too long", c->metric);
		return NULL;
	}
	strcpy(buf, c->metric);
	c->npath = 0;
	for (tok = strtok_r(buf, ".", &save); tok; tok = strtok_r(NULL, ".", &save)) {
		if (c->npath == 3)
			break;
		c->path[c->npath] = strdup(tok);
		if (!c->path[c->npath])
			break;
		c->npath++;
	}
	for (size_t i = 0; c->npath && i < sizeof(metrics) / sizeof(metrics[0]); i++)
		if (!strcmp(metrics[i].field, c->path[0]))
			m = &metrics[i];
	if (!m || tok)
		goto unknown;
	if (m->sub == SUB_NONE && c->npath != 1)
		goto unknown;
	if (m->sub != SUB_NONE && c->npath != 2)
		goto unknown;
	if (m->sub == SUB_STAT) {
		int ok = 0;

		for (int i = 0; stats[i]; i++)
			ok |= !strcmp(stats[i], c->path[1]);
		if (!ok)
			goto unknown;
	}
	if (m->sub == SUB_NAME)
		for (const char *q = c->path[1]; *q; q++)
			if (!isalnum((unsigned char)*q) && *q != '_' && *q != '-')
				goto unknown;
	return m;
unknown:
	snprintf(err, len, "unknown metric '%s' (known: busbw_GBps, algbw_GBps, bw_GBps, "
		 "bw_Gbps, bw_stats_GBps.STAT, lat_us.STAT, time_us.STAT, pct_of_rate, rate_GBps, "
		 "counter_delta.NAME, wrong, tflops, tflops_stats.STAT, pct_of_peak, drop_pct, "
		 "temp_c.STAT, throttle_samples.NAME, health.NAME, dcgm.NAME, soak_cv, soak_worst, soak_drops; "
		 "STAT = min|median|mean|max|p99|p999)", c->metric);
	return NULL;
}

/* scaling_efficiency and comm_fraction: [>=|<=] FRACTION or PCT%, kept in % */
static int derived_bound(struct criterion *c, int has_op, double x, const char *s,
			 const char *end, char *err, size_t len)
{
	while (*end == ' ')
		end++;
	if (*end == '%') {
		x /= 100;
		end++;
	}
	if (end == s || *end || !isfinite(x) || x < 0 ||
	    x > (c->derived == DERIVED_SCALING ? 2 : c->derived == DERIVED_STEP ? 10 : 1)) {
		snprintf(err, len, "bound '%s': expected [>=|<=] FRACTION (0.8) or PERCENT (80%%)%s",
			 c->bound_text, c->derived == DERIVED_SCALING ? ", at most 2" :
			 c->derived == DERIVED_STEP ? ", at most 10 (1000 %)" : ", at most 1");
		return -1;
	}
	if (!has_op)       /* efficiency wants more, the communication fraction less */
		c->ge = c->derived == DERIVED_SCALING;
	c->bound = 100 * x;
	return 0;
}

/*
 * bound = [>=|<=] NUMBER UNIT  or  [>=|<=] FRACTION of rate  (FRACTION: 0.8 or 80%).
 * Units convert to the metric's: GB/s <-> Gb/s, us <-> ms; "%" and "count"
 * only for those metrics.
 */
static int parse_bound(struct criterion *c, char *err, size_t len)
{
	const char *s = c->bound_text, *u;
	char *end;
	double x, scale = 1;
	int has_op = 0;

	while (*s == ' ')
		s++;
	if (!strncmp(s, ">=", 2) || !strncmp(s, "<=", 2)) {
		c->ge = s[0] == '>';
		has_op = 1;
		s += 2;
	}
	if (c->derived == DERIVED_SOAK)
		return soak_bound(c, s, has_op, err, len);
	errno = 0;
	x = decimal(s, &end);
	if (c->derived)
		return derived_bound(c, has_op, x, s, end, err, len);
	if (end == s || errno || !isfinite(x) || x < 0) {
		snprintf(err, len, "bound '%s': expected [>=|<=] NUMBER UNIT, [>=|<=] FRACTION of rate "
			 "or [>=|<=] FRACTION of node_best",
			 c->bound_text);
		return -1;
	}
	for (u = end; *u == ' '; u++)
		;
	if (!has_op)       /* the metric table says which way is better */
		c->ge = c->higher;
	if (!strcmp(u, "of node_best") || !strcmp(u, "% of node_best")) {
		/* the best element of the same host: a straggler among its peers */
		if (*u == '%')
			x /= 100;
		if (x <= 0 || x > 1) {
			snprintf(err, len, "bound '%s': the fraction of node_best must be in (0, 1]",
				 c->bound_text);
			return -1;
		}
		if (c->scope != SC_GPU && c->scope != SC_NIC) {
			snprintf(err, len, "bound '%s': node_best needs scope gpu or nic", c->bound_text);
			return -1;
		}
		if (!c->ge) {
			snprintf(err, len, "bound '%s': node_best needs '>=' and a metric where higher "
				 "is better", c->bound_text);
			return -1;
		}
		c->relative = x;
		c->node_best = 1;
		return 0;
	}
	if (!strcmp(u, "of rate") || !strcmp(u, "% of rate")) {
		if (*u == '%')
			x /= 100;
		if (strcmp(c->unit, "GB/s") && strcmp(c->unit, "Gb/s")) {
			snprintf(err, len, "bound '%s': a fraction of the rate needs a bandwidth metric, not %s",
				 c->bound_text, c->unit);
			return -1;
		}
		if (x <= 0 || x > 4) {
			snprintf(err, len, "bound '%s': the fraction must be in (0, 4]", c->bound_text);
			return -1;
		}
		c->relative = x;
		return 0;
	}
	if (!strcmp(c->unit, "GB/s") && !strcmp(u, "Gb/s"))
		scale = 1.0 / 8;
	else if (!strcmp(c->unit, "Gb/s") && !strcmp(u, "GB/s"))
		scale = 8;
	else if (!strcmp(c->unit, "us") && !strcmp(u, "ms"))
		scale = 1000;
	else if (!strcmp(c->unit, "count") && !*u)
		scale = 1;
	else if (strcmp(c->unit, u)) {
		snprintf(err, len, "bound '%s': unit '%s' does not fit metric %s (unit %s)",
			 c->bound_text, u, c->metric, c->unit);
		return -1;
	}
	c->bound = x * scale;
	return 0;
}

/*
 * A bound no record can fail: ">= 0" (no count, size, time or rate is
 * negative) or "<=" at or above the largest number a record may hold
 * (1e18, report/record.c). A warning in the summary, not an error.
 */
static int never_fails(const struct criterion *c)
{
	if (c->derived || c->relative > 0)
		return 0;
	return c->ge ? c->bound <= 0 : c->bound >= 1e18;
}

static struct criterion *criterion_for(struct parse *ps, const char *section)
{
	struct profile *p = ps->p;
	const char *id = section + strlen("criterion");
	struct criterion *c;

	if (ps->cur && !strcmp(ps->cur_section, section))
		return ps->cur;
	while (*id == ' ')
		id++;
	if (!*id || strlen(id) > 64) {
		fail(ps, "criterion section needs an id: [criterion ID]");
		return NULL;
	}
	for (const char *q = id; *q; q++)
		if (!isalnum((unsigned char)*q) && !strchr("_.-", *q)) {
			fail(ps, "criterion id '%s': use letters, digits, '_', '.', '-'", id);
			return NULL;
		}
	for (int i = 0; i < p->ncrit; i++)
		if (!strcmp(p->crit[i].id, id)) {
			fail(ps, "criterion '%s' defined twice (the keys of a section must be together)", id);
			return NULL;
		}
	c = realloc(p->crit, (p->ncrit + 1) * sizeof(*c));
	if (!c) {
		fail(ps, "out of memory");
		return NULL;
	}
	p->crit = c;
	c = &p->crit[p->ncrit++];
	memset(c, 0, sizeof(*c));
	c->id = strdup(id);
	c->line = ps->line;
	c->size = SIZE_PLATEAU;
	c->fail = 1;
	c->required = 1;
	c->outlier_tol = NAN;        /* the profile's default */
	c->scope = -1;
	snprintf(ps->cur_section, sizeof(ps->cur_section), "%s", section);
	ps->cur = c;
	return c->id ? c : NULL;
}

/*
 * A probe, collective, backend or test name: lower-case letters, digits and
 * '_' (ccprobe's names), so that no value becomes an option, a glob or two
 * arguments where ccdiag passes it on (docs/profiles.md).
 */
static int set_name(struct parse *ps, char **dst, const char *k, const char *v)
{
	if (!*v || strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(v))
		return fail(ps, "%s '%s': a name of lower-case letters, digits and '_'", k, v);
	return set_str(ps, dst, k, v);
}

static int crit_key(struct parse *ps, struct criterion *c, const char *k, const char *v)
{
	if (!strcmp(k, "title"))
		return set_str(ps, &c->title, k, v);
	if (!strcmp(k, "probe"))
		return set_name(ps, &c->probe, k, v);
	if (!strcmp(k, "collective"))
		return set_name(ps, &c->collective, k, v);
	if (!strcmp(k, "backend"))
		return set_name(ps, &c->backend, k, v);
	if (!strcmp(k, "test"))
		return set_name(ps, &c->test, k, v);
	if (!strcmp(k, "dtype"))
		return set_str(ps, &c->dtype, k, v);
	if (!strcmp(k, "op"))
		return set_str(ps, &c->op, k, v);
	if (!strcmp(k, "nodes")) {
		int n = 0;
		size_t l = strlen(v);
		char buf[16];

		if (l == 0 || l >= sizeof(buf))
			return fail(ps, "nodes '%s': expected N (exactly) or N+ (at least)", v);
		strcpy(buf, v);
		if (buf[l - 1] == '+')
			buf[l - 1] = '\0';
		if (parse_int(buf, &n) || n < 1)
			return fail(ps, "nodes '%s': expected N (exactly) or N+ (at least)", v);
		c->min_nodes = n;
		c->max_nodes = v[l - 1] == '+' ? 0 : n;
		return 1;
	}
	if (!strcmp(k, "metric")) {
		char e[512];

		if (!set_str(ps, &c->metric, k, v))
			return 0;
		/* judged from the scaling chart and the estimate (model.c), in % */
		if (!strcmp(v, "scaling_efficiency") || !strcmp(v, "comm_fraction") ||
		    !strcmp(v, "checkpoint_stall_fraction")) {
			c->derived = v[0] == 's' ? DERIVED_SCALING : v[0] == 'c' && v[1] == 'o' ? DERIVED_COMM :
				     DERIVED_CKPT;
			c->unit = "%";
			c->higher = c->derived == DERIVED_SCALING;  /* fractions of time: lower is better */
			return 1;
		}
		/* the estimate against a measured training step (model_step.c), |signed error| in % */
		if (!strcmp(v, "estimate_error")) {
			c->derived = DERIVED_STEP;
			c->unit = "%";
			c->higher = 0;
			return 1;
		}
		/* the framework's readiness (model_step.c): checks failed of a framework step, a count */
		if (!strcmp(v, "framework_ready")) {
			c->derived = DERIVED_STEP;
			c->unit = "count";
			c->higher = 0;
			return 1;
		}
		/* the stability of a soak's series (soak.c), in % or intervals */
		if (soak_metric(v, &c->unit, &c->higher)) {
			c->derived = DERIVED_SOAK;
			return 1;
		}
		const struct metric *m = find_metric(c, e, sizeof(e));

		if (!m)
			return fail(ps, "%s", e);
		c->unit = m->unit;
		c->spread_of = m->spread_of;
		c->higher = m->better == HIGHER;
		c->fix = m->fix;
		return 1;
	}
	if (!strcmp(k, "bound")) {
		c->bound_line = ps->line;
		return set_str(ps, &c->bound_text, k, v);
	}
	if (!strcmp(k, "size")) {
		if (!strcmp(v, "plateau"))
			c->size = SIZE_PLATEAU;
		else if (!strcmp(v, "any"))
			c->size = SIZE_ANY;
		else if (rpt_parse_size(v, &c->size))
			return fail(ps, "size '%s': expected bytes (8, 64K, 4M, 1G), 'plateau' or 'any'", v);
		return 1;
	}
	if (!strcmp(k, "scope")) {
		c->scope = -1;
		for (int i = 0; i < SC_N; i++)
			if (!strcmp(v, scopes[i]))
				c->scope = i;
		if (c->scope < 0)
			return fail(ps, "scope '%s': expected gpu, gpu_pair, nic, rail_pair, link, node or cluster", v);
		return 1;
	}
	if (!strcmp(k, "severity")) {
		if (strcmp(v, "fail") && strcmp(v, "warn"))
			return fail(ps, "severity '%s': expected fail or warn", v);
		c->fail = !strcmp(v, "fail");
		return 1;
	}
	if (!strcmp(k, "repeat")) {
		if (strcmp(v, "worst") && strcmp(v, "best"))
			return fail(ps, "repeat '%s': expected worst or best", v);
		c->repeat_best = !strcmp(v, "best");
		return 1;
	}
	if (!strcmp(k, "required"))
		return parse_bool(v, &c->required) ? fail(ps, "required '%s': expected yes or no", v) : 1;
	if (!strcmp(k, "base_nodes")) {
		if (parse_int(v, &c->base_nodes) || c->base_nodes < 1)
			return fail(ps, "base_nodes '%s': expected a node count of at least 1", v);
		return 1;
	}
	if (!strcmp(k, "drop_below"))
		return parse_fraction(v, &c->drop_below) || !(c->drop_below > 0 && c->drop_below < 1) ?
			fail(ps, "drop_below '%s': expected a fraction of the median above 0 and below 1 "
			     "(0.5 or 50%%)", v) : 1;
	if (!strcmp(k, "outlier_tolerance")) {
		if (!strcmp(v, "off")) {
			c->outlier_tol = -1;
			return 1;
		}
		return parse_fraction(v, &c->outlier_tol) ?
			fail(ps, "outlier_tolerance '%s': expected a fraction (0.1 or 10%%) or off", v) : 1;
	}
	return fail(ps, "unknown key '%s' in [criterion %s]", k, c->id);
}

static int handler(void *user, const char *section, const char *k, const char *v)
{
	struct parse *ps = user;
	struct profile *p = ps->p;

	if (ps->err_line)
		return 1;        /* keep the first error only */
	if (!strcmp(section, "profile")) {
		if (!strcmp(k, "name"))
			return set_str(ps, &p->name, k, v);
		if (!strcmp(k, "description"))
			return set_str(ps, &p->description, k, v);
	} else if (!strcmp(section, "hardware")) {
		if (!strcmp(k, "gpu_model"))
			return set_str(ps, &p->gpu_model, k, v);
		if (!strcmp(k, "gpus_per_node"))
			return parse_int(v, &p->gpus_per_node) ? fail(ps, "gpus_per_node '%s': expected a count", v) : 1;
		if (!strcmp(k, "nics_per_node"))
			return parse_int(v, &p->nics_per_node) ? fail(ps, "nics_per_node '%s': expected a count", v) : 1;
		if (!strcmp(k, "gpu_memory")) {
			char *end;

			p->gpu_memory_gb = decimal(v, &end);
			while (*end == ' ')
				end++;
			if (end == v || strcmp(end, "GB") || !(p->gpu_memory_gb >= 0) ||
			    !isfinite(p->gpu_memory_gb))
				return fail(ps, "gpu_memory '%s': expected NUMBER GB (1 GB = 1e9 bytes)", v);
			return 1;
		}
		if (!strcmp(k, "nic_rate")) {
			char *end;

			p->nic_rate_gbps = decimal(v, &end);
			while (*end == ' ')
				end++;
			if (end == v || strcmp(end, "Gb/s") || !(p->nic_rate_gbps >= 0))
				return fail(ps, "nic_rate '%s': expected NUMBER Gb/s", v);
			return 1;
		}
	} else if (!strcmp(section, "defaults")) {
		if (!strcmp(k, "outlier_tolerance"))
			return parse_fraction(v, &p->outlier_tol) ?
				fail(ps, "outlier_tolerance '%s': expected a fraction (0.1 or 10%%)", v) : 1;
		if (!strcmp(k, "baseline_tolerance"))
			return parse_fraction(v, &p->baseline_tol) ?
				fail(ps, "baseline_tolerance '%s': expected a fraction (0.05 or 5%%)", v) : 1;
		if (!strcmp(k, "consistency")) {
			if (strcmp(v, "fail") && strcmp(v, "warn"))
				return fail(ps, "consistency '%s': expected fail or warn", v);
			p->consistency_fail = !strcmp(v, "fail");
			return 1;
		}
	} else if (!strcmp(section, "workload")) {
		char e[512];

		return workload_set(&p->wl, k, v, ps->line, e, sizeof(e)) ? fail(ps, "%s", e) : 1;
	} else if (!strncmp(section, "criterion", 9) && (!section[9] || section[9] == ' ')) {
		struct criterion *c = criterion_for(ps, section);

		return c ? crit_key(ps, c, k, v) : 0;
	} else if (!*section) {
		return fail(ps, "key '%s' outside a section", k);
	} else {
		return fail(ps, "unknown section [%s] (expected profile, hardware, defaults, workload, criterion ID)",
			    section);
	}
	return fail(ps, "unknown key '%s' in [%s]", k, section);
}

/* what a criterion must say, checked after its section is read */
static int check_criterion(const struct criterion *c, char *err, size_t len)
{
	const char *miss = NULL;

	if (c->derived == DERIVED_SOAK)
		miss = soak_needs(c);
	else if (c->drop_below > 0)
		miss = "a soak metric (soak_drops) for 'drop_below'";
	else if (c->derived == DERIVED_COMM && (c->probe || c->collective))
		miss = "neither 'probe' nor 'collective' (comm_fraction judges the estimate)";
	else if (c->derived == DERIVED_STEP && (c->probe || c->collective))
		miss = "neither 'probe' nor 'collective' (estimate_error and framework_ready judge the measured steps)";
	else if (c->derived == DERIVED_CKPT && (c->probe || c->collective))
		miss = "neither 'probe' nor 'collective' (checkpoint_stall_fraction judges the checkpoint estimate)";
	else if (c->derived == DERIVED_SCALING && !c->collective)
		miss = "'collective' (scaling_efficiency judges a collective's --scale records)";
	else if (c->derived && (c->size != SIZE_PLATEAU || c->min_nodes || c->repeat_best || c->test))
		miss = "no 'size', 'nodes', 'repeat' or 'test' (the metric defines them)";
	else if (c->base_nodes && c->derived != DERIVED_SCALING)
		miss = "metric scaling_efficiency for 'base_nodes'";
	else if (c->derived != DERIVED_COMM && c->derived != DERIVED_CKPT && c->derived != DERIVED_STEP &&
		 !c->probe == !c->collective)
		miss = "exactly one of 'probe' or 'collective'";
	else if (c->probe && !c->test)
		miss = "'test' (a probe's test)";
	else if (!c->metric)
		miss = "'metric'";
	else if (!c->bound_text)
		miss = "'bound'";
	else if ((c->collective || c->derived) && c->scope >= 0 && c->scope != SC_CLUSTER)
		miss = "scope cluster (a collective is judged for the whole job)";
	else if (c->scope < 0 && c->probe)
		miss = "'scope'";
	if (miss) {
		snprintf(err, len, "criterion '%s' needs %s", c->id, miss);
		return -1;
	}
	return 0;
}

static int finish(struct parse *ps, int rc, char *err, size_t len)
{
	struct profile *p = ps->p;
	char e[512];

	if (rc == -1 || rc == -2) {
		snprintf(err, len, "%s: %s", ps->name, rc == -1 ? strerror(errno) : "out of memory");
		return -1;
	}
	if (rc > 0 && (!ps->err_line || rc < ps->err_line)) {
		/* inih's own syntax errors (no '=', unclosed '[') come without a message */
		snprintf(err, len, "%s:%d: syntax error: expected [section], key = value or a comment",
			 ps->name, rc);
		return -1;
	}
	if (ps->err_line) {
		snprintf(err, len, "%s:%d: %s", ps->name, ps->err_line, ps->err);
		return -1;
	}
	if (!p->ncrit) {
		snprintf(err, len, "%s: no [criterion ID] section", ps->name);
		return -1;
	}
	for (int i = 0; i < p->ncrit; i++) {
		struct criterion *c = &p->crit[i];

		if (check_criterion(c, e, sizeof(e))) {
			snprintf(err, len, "%s:%d: %s", ps->name, c->line, e);
			return -1;
		}
		if (parse_bound(c, e, sizeof(e))) {
			snprintf(err, len, "%s:%d: %s", ps->name, c->bound_line, e);
			return -1;
		}
		if (never_fails(c)) {
			char *w, **v = realloc(p->warnings, (p->nwarnings + 1) * sizeof(*v));

			if (v)
				p->warnings = v;
			if (!v || asprintf(&w, "%s:%d: criterion %s: bound '%s' can never fail", ps->name,
					   c->bound_line, c->id, c->bound_text) < 0) {
				snprintf(err, len, "out of memory");
				return -1;
			}
			v[p->nwarnings++] = w;
		}
		if ((c->collective || c->derived) && c->scope < 0)
			c->scope = SC_CLUSTER;
		if (c->derived) {
			c->size = SIZE_ANY;           /* one value per element */
			c->outlier_tol = -1;
		}
		if (isnan(c->outlier_tol))
			c->outlier_tol = p->outlier_tol;
		if (!c->title && asprintf(&c->title, "%s %s %s", c->probe ? c->probe :
					  c->collective ? c->collective : "estimate",
					  c->test ? c->test : "", c->metric) < 0)
			c->title = NULL;
	}
	if (!p->name) {
		const char *b = strrchr(ps->name, '/');

		p->name = strdup(b ? b + 1 : ps->name);
		if (p->name && strlen(p->name) > 4 && !strcmp(p->name + strlen(p->name) - 4, ".ini"))
			p->name[strlen(p->name) - 4] = '\0';
	}
	return 0;
}

static void defaults(struct profile *p)
{
	memset(p, 0, sizeof(*p));
	p->outlier_tol = 0.10;
	p->baseline_tol = 0.05;
	p->consistency_fail = 1;
}

int profile_load(struct profile *p, const char *path, char *err, size_t len)
{
	struct parse ps = { .p = p, .name = path };
	int rc;

	defaults(p);
	ps.f = fopen(path, "r");
	if (!ps.f) {
		snprintf(err, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	rc = ini_parse_stream(reader, &ps, handler, &ps);
	fclose(ps.f);
	rc = finish(&ps, rc, err, len);
	if (!rc)
		p->path = strdup(path);
	if (rc || !p->path)
		profile_free(p);
	return rc ? -1 : 0;
}

int profile_parse_string(struct profile *p, const char *text, const char *name,
			 char *err, size_t len)
{
	struct parse ps = { .p = p, .name = name, .s = text };
	int rc;

	defaults(p);
	rc = ini_parse_stream(reader, &ps, handler, &ps);
	rc = finish(&ps, rc, err, len);
	if (rc)
		profile_free(p);
	return rc;
}

void profile_free(struct profile *p)
{
	for (int i = 0; i < p->ncrit; i++) {
		struct criterion *c = &p->crit[i];

		free(c->id);
		free(c->title);
		free(c->probe);
		free(c->collective);
		free(c->backend);
		free(c->test);
		free(c->dtype);
		free(c->op);
		free(c->metric);
		free(c->bound_text);
		for (int k = 0; k < c->npath; k++)
			free(c->path[k]);
	}
	free(p->crit);
	for (int i = 0; i < p->nwarnings; i++)
		free(p->warnings[i]);
	free(p->warnings);
	free(p->name);
	free(p->path);
	free(p->description);
	free(p->gpu_model);
	workload_free(&p->wl);
	memset(p, 0, sizeof(*p));
}

/*
 * The folders a profile NAME is looked up in, in order, into dirs (malloc'd
 * each): $CCREPORT_PROFILES, ./profiles, beside the binary (build/ccreport ->
 * profiles/, PREFIX/bin -> PREFIX/share/ccdiag/profiles), the installed share.
 * Returns how many (at most 5).
 */
static int search_dirs(const char *argv0, char *dirs[5])
{
	char exe[4096], *slash;
	const char *env = getenv("CCREPORT_PROFILES");
	ssize_t n;
	int k = 0;

	if (env && *env)
		dirs[k++] = strdup(env);
	dirs[k++] = strdup("profiles");
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0 && argv0 && strlen(argv0) < sizeof(exe))
		n = (ssize_t)strlen(strcpy(exe, argv0));
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			if (asprintf(&dirs[k], "%s/../profiles", exe) >= 0)
				k++;
			if (asprintf(&dirs[k], "%s/../share/ccdiag/profiles", exe) >= 0)
				k++;
		}
	}
	dirs[k++] = strdup(CCDIAG_SHARE "/profiles");
	return k;
}

char *profile_find(const char *arg, const char *argv0)
{
	char *dirs[5], *path = NULL;
	int n;

	if (strchr(arg, '/') || (strlen(arg) > 4 && !strcmp(arg + strlen(arg) - 4, ".ini")))
		return access(arg, R_OK) ? NULL : strdup(arg);
	n = search_dirs(argv0, dirs);
	for (int i = 0; i < n; i++) {
		if (!path && dirs[i] && asprintf(&path, "%s/%s.ini", dirs[i], arg) >= 0 && access(path, R_OK)) {
			free(path);
			path = NULL;
		}
		free(dirs[i]);
	}
	return path;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void profile_not_found(char *buf, size_t len, const char *arg, const char *argv0)
{
	char *dirs[5], *names[64];
	int n = search_dirs(argv0, dirs), nn = 0;
	size_t at;

	for (int i = 0; i < n; i++) {
		DIR *d = dirs[i] ? opendir(dirs[i]) : NULL;
		struct dirent *de;

		while (d && (de = readdir(d))) {
			size_t l = strlen(de->d_name);
			int dup = 0;

			if (l <= 4 || strcmp(de->d_name + l - 4, ".ini") || de->d_name[0] == '.' || nn == 64)
				continue;
			for (int k = 0; k < nn; k++)
				dup |= strlen(names[k]) == l - 4 && !strncmp(names[k], de->d_name, l - 4);
			if (!dup)
				names[nn++] = strndup(de->d_name, l - 4);
		}
		if (d)
			closedir(d);
		free(dirs[i]);
	}
	qsort(names, (size_t)nn, sizeof(names[0]), cmp_str);
	at = (size_t)snprintf(buf, len, "profile '%s' not found (a path, or NAME of profiles/NAME.ini); %s", arg,
			      nn ? "the profiles found:" : "no profiles found (CCREPORT_PROFILES, ./profiles)");
	for (int k = 0; k < nn; k++) {
		if (at < len)
			at += (size_t)snprintf(buf + at, len - at, "%s %s", k ? "," : "", names[k] ?: "");
		free(names[k]);
	}
}
