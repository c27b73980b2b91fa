/*
 * Fuzz target: ccreport's profile parser (libinih underneath). Whatever the
 * input, parsing returns 0 or -1; -1 leaves one line "fuzz.ini:LINE: what"
 * (or "fuzz.ini: what"); 0 leaves criteria that can be judged, and judging a
 * small fixed results file with them must not break.
 */
#include "../../report/eval.h"
#include "../../report/eval_state.h"
#include "../../report/profile.h"
#include "../../report/report.h"
#include "../../report/summary.h"
#include "invariant.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char results[] =
	"{\"type\":\"run\",\"schema\":1,\"hosts\":[{\"name\":\"a\",\"ranks\":[0]},{\"name\":\"b\",\"ranks\":[1]}],\"world_size\":2}\n"
	"{\"type\":\"measurement\",\"kind\":\"probe\",\"name\":\"pcie\",\"test\":\"h2d\",\"scope\":\"gpu\",\"element\":\"a/gpu0\",\"host\":\"a\",\"bytes\":1048576,\"bw_GBps\":50,\"rate_GBps\":63,\"bw_stats_GBps\":{\"cv\":0.01}}\n"
	"{\"type\":\"measurement\",\"kind\":\"probe\",\"name\":\"ib\",\"test\":\"write_lat\",\"scope\":\"rail_pair\",\"element\":\"a/m:1-b/m:1\",\"host\":\"a\",\"bytes\":8,\"lat_us\":{\"p99\":3,\"cv\":0.1}}\n"
	"{\"type\":\"measurement\",\"kind\":\"collective\",\"name\":\"all_reduce\",\"backend\":\"mpi\",\"dtype\":\"float\",\"op\":\"sum\",\"bytes\":1024,\"nodes\":2,\"busbw_GBps\":0.1,\"wrong\":0,\"time_us\":{\"cv\":0.02}}\n"
	"{\"type\":\"skip\",\"kind\":\"probe\",\"name\":\"hbm\",\"reason\":\"skipped: no GPU\"}\n"
	"{\"type\":\"end\",\"status\":\"complete\"}\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), err[1024];
	struct profile p;
	struct eval e;
	struct summary_opts so = { .profile_path = "fuzz.ini" };
	int rc;

	if (!text)
		return 0;
	fuzz_input = data;
	fuzz_input_size = size;
	memcpy(text, data, size);
	text[size] = '\0';
	err[0] = '\0';
	rc = profile_parse_string(&p, text, "fuzz.ini", err, sizeof(err));
	free(text);
	CHECK(rc == 0 || rc == -1);
	if (rc == -1) {
		CHECK(err[0] && !strchr(err, '\n') && !strncmp(err, "fuzz.ini:", 9));
		return 0;
	}
	CHECK(p.ncrit >= 1);
	for (int i = 0; i < p.ncrit; i++) {
		const struct criterion *c = &p.crit[i];

		/* derived metrics (scaling_efficiency, comm_fraction) have no field path */
		CHECK(c->metric && c->unit && (c->npath || c->derived) && c->scope >= 0 && c->scope < SC_N);
		CHECK(isfinite(c->bound) && c->relative >= 0 && (c->derived == DERIVED_COMM ?
		      !c->probe && !c->collective : !c->probe != !c->collective));
	}
	CHECK(!(eval_init(&e, &p)));
	CHECK(!(eval_read_mem(&e, results, sizeof(results) - 1, "fixed.jsonl", err, sizeof(err))));
	eval_finish(&e);
	json_t *s = summary_build(&e, &so, err, sizeof(err));

	CHECK(!(!s));
	json_decref(s);
	eval_free(&e);
	profile_free(&p);
	return 0;
}
