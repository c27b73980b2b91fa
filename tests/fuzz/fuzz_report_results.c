/*
 * Fuzz target: ccreport's results reader and everything behind it (criteria,
 * outliers, consistency, the summary document). Whatever the input, reading
 * returns 0 or -1; -1 leaves one line "fuzz.jsonl:LINE: what"; 0 leads to a
 * summary with a known verdict. Every line the fast scanner (report/record.c)
 * accepts, jansson must accept too, with the same top-level strings. Built with driver.c for make check (corpus,
 * random and mutated inputs) or with clang -fsanitize=fuzzer (make fuzz).
 */
#include "../../report/eval.h"
#include "../../report/eval_state.h"
#include "../../report/profile.h"
#include "../../report/record.h"
#include "../../report/summary.h"
#include "invariant.h"

#include <stdint.h>
#include <stdio.h>
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

/* the scanner is never more lenient than jansson, and reads the same strings */
static void check_scanner(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	static struct rv r;

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		char *copy = malloc(n + 1);
		json_t *j;

		CHECK(copy);
		memcpy(copy, p, n);
		copy[n] = '\0';
		j = json_loadb(p, n, JSON_REJECT_DUPLICATES, NULL);
		if (!rv_scan(copy, n, &r)) {
			CHECK(json_is_object(j));
			for (int i = 0; i < r.n; i++) {
				const struct rv_field *f = &r.f[i];
				json_t *v = f->parent ? json_object_get(json_object_get(j, f->parent), f->key) :
					    json_object_get(j, f->key);

				CHECK(v);
				CHECK(f->type != 's' || !strcmp(json_string_value(v) ?: "\1", f->str));
				double num;

				CHECK((f->type != 'i' && f->type != 'r') ||
				      (!rv_num(&r, f->parent, f->key, &num) && json_number_value(v) == num));
			}
		}
		json_decref(j);
		free(copy);
		p += n;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	struct eval e;
	struct summary_opts so = { .profile_path = "fuzz.ini", .now = 0 };
	char err[1024];
	json_t *s;
	int rc;

	fuzz_input = data;
	fuzz_input_size = size;
	if (!ready) {
		if (profile_parse_string(&prof, profile_text, "fuzz.ini", err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			abort();
		}
		ready = 1;
	}
	CHECK(!(eval_init(&e, &prof)));

	check_scanner(data, size);
	err[0] = '\0';
	rc = eval_read_mem(&e, (const char *)data, size, "fuzz.jsonl", err, sizeof(err));
	CHECK(!(rc != 0 && rc != -1));
	CHECK(!(rc == -1 && (!err[0] || strchr(err, '\n') || strncmp(err, "fuzz.jsonl:", 11))));
	if (rc == 0) {
		eval_finish(&e);
		s = summary_build(&e, &so, err, sizeof(err));
		CHECK(!(!s));
		const char *v = json_string_value(json_object_get(s, "verdict"));

		CHECK(!(!v || (strcmp(v, "pass") && strcmp(v, "warn") && strcmp(v, "fail") && strcmp(v, "incomplete"))));
		char *dump = json_dumps(s, 0);

		CHECK(!(!dump));
		free(dump);
		json_decref(s);
	}
	eval_free(&e);
	return 0;
}
