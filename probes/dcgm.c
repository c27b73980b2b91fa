/*
 * dcgm: NVIDIA DCGM's active diagnostics on every node at once. The first
 * rank of each host runs `dcgmi diag -r LEVEL -j` (posix_spawn, an argument
 * vector; its own process group, killed at its deadline), parses its JSON
 * with core/dcgm_parse.c, the reader ccreport's importer uses too, and rank 0
 * writes per GPU one record per DCGM test and one dcgm_diag record that the
 * profiles' dcgm_* criteria judge (docs/compute.md). DCGM is a program and a
 * service on the node, not a library ccprobe links: without `dcgmi`, or with
 * its host engine unreachable, the host's part is a skip record with the
 * reason (dcgmi's own message), never a pass. Its own probe, not a gpuhealth
 * option: it needs no CUDA, runs once (gpuhealth runs before and after the
 * others) and lasts from seconds to 90 minutes by level.
 */
#include "probe.h"
#include "../core/dcgm_parse.h"
#include "../core/log.h"
#include "../core/spawn.h"
#include "../core/watchdog.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int p_level = 1;
static double p_timeout;
static const char *p_dcgmi = "dcgmi";

static const struct cc_param dcgm_params[] = {
	{ "dcgm-level", CC_PARAM_INT, &p_level,
	  "dcgm: dcgmi diag run level 1-4 (about seconds, 2 min, 15 min, 90 min) [1]" },
	{ "dcgm-timeout", CC_PARAM_DOUBLE, &p_timeout,
	  "dcgm: seconds before dcgmi is killed; 0 = twice the level's duration + 2 min [0]" },
	{ "dcgmi", CC_PARAM_STRING, &p_dcgmi, "dcgm: the dcgmi program, looked up in PATH [dcgmi]" },
	{ NULL, 0, NULL, NULL },
};

/*
 * How long a level takes: dcgmi's own help (level 1 seconds, 2 about 2
 * minutes, 3 about 15 minutes) and NVIDIA's Cluster Readiness Engine (level
 * 4 about 90 minutes); docs/sources.md.
 */
static double level_seconds(int level)
{
	static const double s[] = { 0, 30, 120, 900, 5400 };

	return level >= 1 && level <= 4 ? s[level] : 0;
}

static double deadline_s(void)
{
	return p_timeout > 0 ? p_timeout : 2 * level_seconds(p_level) + 120;
}

static int dcgm_check(char *err, size_t len)
{
	if (p_level < 1 || p_level > 4)
		return options_fail(err, len, "invalid --dcgm-level %d (1, 2, 3 or 4)", p_level);
	if (p_timeout < 0 || p_timeout > 7 * 86400.0)
		return options_fail(err, len, "invalid --dcgm-timeout %g (seconds, 0 for the level's default)",
				    p_timeout);
	if (!p_dcgmi || !*p_dcgmi)
		return options_fail(err, len, "empty --dcgmi");
	return 0;
}

/* every node at once: the level's duration, whatever the node count */
static double dcgm_estimate(const struct cc_options *o)
{
	(void)o;
	return level_seconds(p_level);
}

/* what dcgmi said, on one line: its lines joined by "; " */
static void one_line(const char *s, char *out, size_t len)
{
	size_t k = 0;

	for (; *s && k + 3 < len; s++) {
		if (*s == '\n' || *s == '\r') {
			if (k && out[k - 1] != ' ' && s[1] && s[1] != '\n') {
				out[k++] = ';';
				out[k++] = ' ';
			}
			continue;
		}
		out[k++] = (unsigned char)*s < ' ' ? ' ' : *s;
	}
	out[k] = '\0';
}

/*
 * This host's part, run by its first rank: {status "ok", records, version,
 * driver} or {status "skip"|"error", reason}.
 */
static json_t *run_host(const char *host)
{
	char level[8], msg[600], line[400], err[512];
	char *argv[] = { (char *)p_dcgmi, "diag", "-r", level, "-j", NULL };
	char *out = NULL, *errout = NULL;
	double d = deadline_s();
	int rc, timed_out = 0;
	struct dcgm_diag dd;
	json_t *doc, *res;

	snprintf(level, sizeof(level), "%d", p_level);
	rc = spawn_capture_group(argv, &out, &errout, d, &timed_out);
	if (rc < 0) {
		int e = errno;

		snprintf(msg, sizeof(msg), e == ENOENT ? "skipped: no '%s' on %s (install DCGM, "
			 "datacenter-gpu-manager, and start nv-hostengine)" : "skipped: cannot run '%s' on %s: %s",
			 p_dcgmi, host, strerror(e));
		return json_pack("{s:s, s:s}", "status", "skip", "reason", msg);
	}
	if (timed_out) {
		snprintf(msg, sizeof(msg), "%s: '%s diag -r %d -j' did not finish within its deadline of %.0f s "
			 "(--dcgm-timeout); killed", host, p_dcgmi, p_level, d);
		res = json_pack("{s:s, s:s}", "status", "error", "reason", msg);
		goto out;
	}
	doc = out ? json_loads(out, JSON_DISABLE_EOF_CHECK, NULL) : NULL;
	if (!json_is_object(doc)) {
		/* no JSON: dcgmi says why (no host engine: "Unable to connect to host engine...") */
		one_line(out && *out ? out : errout ? errout : "", line, sizeof(line));
		snprintf(msg, sizeof(msg), "skipped: '%s diag -r %d -j' on %s exited %d without a result: %s",
			 p_dcgmi, p_level, host, rc, line[0] ? line : "(no output)");
		res = json_pack("{s:s, s:s}", "status", "skip", "reason", msg);
		json_decref(doc);
		goto out;
	}
	if (dcgm_diag_parse(doc, &dd, err, sizeof(err))) {
		snprintf(msg, sizeof(msg), "skipped: '%s diag -r %d -j' on %s: %s", p_dcgmi, p_level, host, err);
		res = json_pack("{s:s, s:s}", "status", "skip", "reason", msg);
		json_decref(doc);
		goto out;
	}
	res = json_pack("{s:s, s:O, s:s, s:s, s:i, s:b}", "status", "ok", "records", dd.records, "version",
			dd.version, "driver", dd.driver, "exit", rc, "fake", dd.test_double);
	dcgm_diag_free(&dd);
	json_decref(doc);
out:
	free(out);
	free(errout);
	return res;
}

static void dcgm_print(json_t *all, const char *const *hosts)
{
	json_t *h;
	size_t i;

	printf("# dcgm: dcgmi diag -r %d per host (failed tests per GPU)\n", p_level);
	json_array_foreach(all, i, h) {
		const char *st = json_string_value(json_object_get(h, "status"));
		json_t *r;
		size_t k;
		int gpus = 0, failed = 0;

		if (!st)
			continue;
		if (strcmp(st, "ok")) {
			printf(" %-24s %s\n", hosts[i], json_string_value(json_object_get(h, "reason")));
			continue;
		}
		json_array_foreach(json_object_get(h, "records"), k, r)
			if (!strcmp(json_string_value(json_object_get(r, "test")) ?: "", "dcgm_diag")) {
				gpus++;
				failed += json_integer_value(json_object_get(json_object_get(r, "dcgm"), "failed")) > 0;
			}
		printf(" %-24s %d GPU(s), %d with a failed test\n", hosts[i], gpus, failed);
	}
	fflush(stdout);
}

static int dcgm_run(struct cc_run *run)
{
	struct mpictx *m = run->mpi;
	json_t *mine = NULL, *all, *h;
	const char **hosts;
	size_t i;
	int rc = CC_EXIT_OK;

	/* the backstop: a dcgmi that survives its kill (a GPU driver in D state) ends the job by name */
	watchdog_arm_for("dcgm diag", json_pack("{s:s, s:s, s:i}", "kind", "probe", "probe", "dcgm", "level",
						 p_level), deadline_s() + 60);
	if (m->local_rank == 0)
		mine = run_host(m->host);
	watchdog_disarm();
	/* one part per host, in node order: the leaders' */
	all = run_gather_json(m->world, mine);
	if (m->rank != 0)
		return CC_EXIT_OK;
	hosts = calloc(json_array_size(all) + 1, sizeof(*hosts));
	json_array_foreach(all, i, h) {
		const char *host = m->hosts[m->rank_node[i]], *st = json_string_value(json_object_get(h, "status"));
		json_t *r;
		size_t k;

		if (hosts)
			hosts[i] = host;
		if (!st)
			continue;
		if (!strcmp(st, "skip")) {
			run_record(run, "skip", json_pack("{s:s, s:s, s:s, s:s, s:O}", "kind", "probe", "name", "dcgm",
							  "test", "dcgm_diag", "host", host, "reason",
							  json_object_get(h, "reason")));
			log_info("%s", json_string_value(json_object_get(h, "reason")));
			continue;
		}
		if (!strcmp(st, "error")) {
			json_t *e = json_pack("{s:s, s:s, s:s, s:s, s:O}", "kind", "probe", "name", "dcgm", "test",
					      "dcgm_diag", "host", host, "message", json_object_get(h, "reason"));

			log_error("%s", json_string_value(json_object_get(h, "reason")));
			run_record(run, "error", e);
			run->failures++;
			rc = CC_EXIT_FAIL;
			continue;
		}
		run_record(run, "inventory", json_pack("{s:s, s:s, s:{s:s, s:s}}", "kind", "dcgm", "host", host,
						       "versions", "dcgm", json_string_value(json_object_get(h, "version")),
						       "driver", json_string_value(json_object_get(h, "driver"))));
		json_array_foreach(json_object_get(h, "records"), k, r) {
			json_t *rec = json_deep_copy(r);

			json_object_del(rec, "type");
			dcgm_record_name(rec, host);
			json_object_set_new(rec, "dcgm_exit", json_copy(json_object_get(h, "exit")));
			/* a test double's output is no evidence (tests/fakes/dcgmi) */
			if (json_is_true(json_object_get(h, "fake")))
				json_object_set_new(rec, "transport", json_string("fake"));
			run_record(run, "measurement", rec);
		}
	}
	if (!run->opt->quiet && hosts)
		dcgm_print(all, hosts);
	free(hosts);
	json_decref(all);
	return rc;
}

const struct probe probe_dcgm = {
	.name = "dcgm",
	.summary = "NVIDIA DCGM diagnostics (dcgmi diag -r LEVEL -j) on every node at once, per GPU and test",
	.phase = PHASE_NODE,
	.params = dcgm_params,
	.check = dcgm_check,
	.estimate = dcgm_estimate,
	.run = dcgm_run,
};
