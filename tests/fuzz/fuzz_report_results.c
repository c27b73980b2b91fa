/*
 * Fuzz target: ccreport's results reader and everything behind it (criteria,
 * outliers, consistency, the summary document). Whatever the input, reading
 * returns 0 or -1; -1 leaves one line "fuzz.jsonl:LINE: what"; 0 leads to a
 * summary with a known verdict. Built with driver.c for make check (corpus,
 * random and mutated inputs) or with clang -fsanitize=fuzzer (make fuzz).
 */
#include "../../report/report.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* one criterion of each shape: absolute, relative, plateau, node scope, counters */
static const char profile_text[] =
	"[hardware]\ngpus_per_node = 2\nnics_per_node = 1\n"
	"[criterion h2d]\nprobe = pcie\ntest = h2d\nmetric = bw_GBps\nscope = gpu\nbound = >= 48 GB/s\n"
	"[criterion h2d_rate]\nprobe = pcie\ntest = h2d\nmetric = bw_GBps\nscope = node\nbound = >= 0.7 of rate\n"
	"[criterion lat]\nprobe = ib\ntest = write_lat\nmetric = lat_us.p99\nscope = rail_pair\nsize = any\nbound = <= 4.2 us\n"
	"[criterion sym]\nprobe = ib\ntest = counters\nmetric = counter_delta.symbol_error\nscope = nic\nsize = any\nbound = <= 0\n"
	"[criterion ar]\ncollective = all_reduce\nmetric = busbw_GBps\nbound = >= 1 GB/s\nrequired = no\n"
	"[criterion np]\nprobe = netpair\ntest = bw_uni\nmetric = bw_Gbps\nscope = link\nsize = 4M\nbound = >= 0.5 Gb/s\n";

static struct profile prof;

static int feed(json_t *rec, long line, void *ctx)
{
	char err[200];

	return eval_record(ctx, rec, line, err, sizeof(err));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	struct eval e;
	struct input_info in;
	struct summary_opts so = { .profile_path = "fuzz.ini", .now = 0 };
	char err[1024];
	json_t *s;
	int rc;

	if (!ready) {
		if (profile_parse_string(&prof, profile_text, "fuzz.ini", err, sizeof(err)))
			abort();
		ready = 1;
	}
	if (eval_init(&e, &prof))
		abort();
	err[0] = '\0';
	rc = results_read_mem((const char *)data, size, "fuzz.jsonl", &in, feed, &e, err, sizeof(err));
	if (rc != 0 && rc != -1)
		abort();
	if (rc == -1 && (!err[0] || strchr(err, '\n') || strncmp(err, "fuzz.jsonl:", 11)))
		abort();
	/* the eval keeps the inputs it judged; this one is freed here */
	if (rc == 0) {
		e.in = calloc(1, sizeof(*e.in));
		if (!e.in)
			abort();
		e.in[0] = in;
		e.nin = 1;
		eval_finish(&e);
		s = summary_build(&e, &so, err, sizeof(err));
		if (!s)
			abort();
		const char *v = json_string_value(json_object_get(s, "verdict"));

		if (!v || (strcmp(v, "pass") && strcmp(v, "warn") && strcmp(v, "fail") && strcmp(v, "incomplete")))
			abort();
		char *dump = json_dumps(s, 0);

		if (!dump)
			abort();
		free(dump);
		json_decref(s);
	} else {
		input_info_free(&in);
	}
	eval_free(&e);
	return 0;
}
