/*
 * tests/fuzz/import_target.h: the body of every importer's fuzz target
 * (fuzz_report_import_TOOL.c defines FUZZ_FROM and includes this). Whatever
 * the input, import_buffer returns 1, 0 or -1; -1 leaves one line
 * "fuzz.log:..." (never empty, no newline); 1 leaves results JSON Lines whose
 * first record is a run header with "imported", whose last is a complete end
 * record, and that ccreport's own results reader accepts whole: an importer
 * never writes a record the reader would refuse (a negative count, a host the
 * header does not list). The same input is also imported with the tool
 * recognised from the content. Built with driver.c for make check (corpus,
 * random and mutated inputs) or with clang -fsanitize=fuzzer (make fuzz).
 */
#include "../../report/eval.h"
#include "../../report/import.h"
#include "../../report/profile.h"
#include "invariant.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct profile prof;

static void check_import(const uint8_t *data, size_t size, const char *from)
{
	char err[1024], rerr[1024], *out = NULL;
	size_t outlen = 0;
	int rc = import_buffer((const char *)data, size, "fuzz.log", from, &out, &outlen, err, sizeof(err));

	CHECK(rc == 1 || rc == 0 || rc == -1);
	CHECK(rc != -1 || (err[0] && !strchr(err, '\n') && !strncmp(err, "fuzz.log", 8)));
	CHECK(rc == 1 || !out);
	if (rc == 1) {
		struct eval e;
		const char *last, *nl;
		json_t *h;

		CHECK(out && outlen && out[outlen - 1] == '\n');
		nl = memchr(out, '\n', outlen);
		h = json_loadb(out, (size_t)(nl - out), 0, NULL);
		CHECK(json_is_object(json_object_get(h, "imported")));
		json_decref(h);
		for (last = out + outlen - 1; last > out && last[-1] != '\n'; last--)
			;
		CHECK(!strncmp(last, "{\"type\":\"end\",\"status\":\"complete\"}", 34));
		CHECK(!eval_init(&e, &prof));
		rerr[0] = '\0';
		if (eval_read_mem(&e, out, outlen, "fuzz.jsonl", rerr, sizeof(rerr)))
			fprintf(stderr, "the results reader refused an import: %s\n", rerr);
		CHECK(!rerr[0]);
		eval_finish(&e);
		eval_free(&e);
	}
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	char err[1024];

	fuzz_input = data;
	fuzz_input_size = size;
	if (!ready) {
		/* criteria over what the importers write: collectives, storage, GPU, RDMA, DCGM */
		static const char text[] =
			"[criterion ar]\ncollective = all_reduce\nmetric = busbw_GBps\nbound = >= 1 GB/s\n"
			"[criterion w]\nprobe = storage\ntest = write\nmetric = bw_GBps\nscope = node\nsize = any\n"
			"bound = >= 1 GB/s\nrequired = no\n"
			"[criterion h2d]\nprobe = pcie\ntest = h2d\nmetric = bw_GBps\nscope = gpu\nbound = >= 48 GB/s\n"
			"[criterion ib]\nprobe = ib\ntest = write_bw_uni\nmetric = bw_Gbps\nscope = rail_pair\n"
			"size = any\nbound = >= 380 Gb/s\n"
			"[criterion dcgm]\nprobe = gpuhealth\ntest = dcgm_diag\nmetric = dcgm.failed\nscope = gpu\n"
			"size = any\nbound = <= 0\n";

		if (profile_parse_string(&prof, text, "fuzz.ini", err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			abort();
		}
		ready = 1;
	}
	check_import(data, size, FUZZ_FROM);
	check_import(data, size, NULL);
	return 0;
}
