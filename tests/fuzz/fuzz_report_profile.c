/*
 * Fuzz target: ccreport's profile parser (libinih underneath). Whatever the
 * input, parsing returns 0 or -1; -1 leaves one line "fuzz.ini:LINE: what"
 * (or "fuzz.ini: what"); 0 leaves criteria that can be judged, and judging a
 * small fixed results file with them must not break.
 */
#include "../../report/report.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char results[] =
	"{\"type\":\"run\",\"schema\":1,\"hosts\":[{\"name\":\"a\",\"ranks\":[0]},{\"name\":\"b\",\"ranks\":[1]}],\"world_size\":2}\n"
	"{\"type\":\"measurement\",\"kind\":\"probe\",\"name\":\"pcie\",\"test\":\"h2d\",\"scope\":\"gpu\",\"element\":\"a/gpu0\",\"host\":\"a\",\"bytes\":1048576,\"bw_GBps\":50,\"rate_GBps\":63,\"bw_stats_GBps\":{\"cv\":0.01}}\n"
	"{\"type\":\"measurement\",\"kind\":\"probe\",\"name\":\"ib\",\"test\":\"write_lat\",\"scope\":\"rail_pair\",\"element\":\"a/m:1-b/m:1\",\"host\":\"a\",\"bytes\":8,\"lat_us\":{\"p99\":3,\"cv\":0.1}}\n"
	"{\"type\":\"measurement\",\"kind\":\"collective\",\"name\":\"all_reduce\",\"backend\":\"mpi\",\"dtype\":\"float\",\"op\":\"sum\",\"bytes\":1024,\"nodes\":2,\"busbw_GBps\":0.1,\"wrong\":0,\"time_us\":{\"cv\":0.02}}\n"
	"{\"type\":\"skip\",\"kind\":\"probe\",\"name\":\"hbm\",\"reason\":\"skipped: no GPU\"}\n"
	"{\"type\":\"end\",\"status\":\"complete\"}\n";

static int feed(json_t *rec, long line, void *ctx)
{
	char err[200];

	return eval_record(ctx, rec, line, err, sizeof(err));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), err[1024];
	struct profile p;
	struct eval e;
	struct summary_opts so = { .profile_path = "fuzz.ini" };
	int rc;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	err[0] = '\0';
	rc = profile_parse_string(&p, text, "fuzz.ini", err, sizeof(err));
	free(text);
	if (rc != 0 && rc != -1)
		abort();
	if (rc == -1) {
		if (!err[0] || strchr(err, '\n') || strncmp(err, "fuzz.ini:", 9))
			abort();
		return 0;
	}
	if (p.ncrit < 1)
		abort();
	for (int i = 0; i < p.ncrit; i++) {
		const struct criterion *c = &p.crit[i];

		if (!c->metric || !c->unit || !c->npath || c->scope < 0 || c->scope >= SC_N ||
		    !isfinite(c->bound) || !(c->relative >= 0) || !c->probe == !c->collective)
			abort();
	}
	if (eval_init(&e, &p))
		abort();
	e.in = calloc(1, sizeof(*e.in));
	if (!e.in)
		abort();
	e.nin = 1;
	if (results_read_mem(results, sizeof(results) - 1, "fixed.jsonl", &e.in[0], feed, &e, err, sizeof(err)))
		abort();
	eval_finish(&e);
	json_t *s = summary_build(&e, &so, err, sizeof(err));

	if (!s)
		abort();
	json_decref(s);
	eval_free(&e);
	profile_free(&p);
	return 0;
}
