/*
 * report/import_dcgm.c: `dcgmi diag -r LEVEL -j` (DCGM's JSON: "DCGM
 * Diagnostic" of DCGM 3.2 and later, "DCGM GPU Diagnostic" before): per GPU
 * one gpuhealth record per test with its status and DCGM's messages, and one
 * `dcgm_diag` record per GPU that a profile judges (failed tests, the level
 * the tests imply). dcgmi prints no host name: the host is named after the
 * file (docs/import.md).
 */
#include "import.h"
#include "../core/dcgm_parse.h"

#include <stdio.h>
#include <string.h>

/* what people append to a node's dcgmi output file ("node07.dcgm.json") */
static const char *const suffixes[] = { ".dcgm", "-dcgm", "_dcgm", ".diag", "-diag", "_diag", NULL };

static int dcgm_parse(struct imp *im, const json_t *doc)
{
	struct dcgm_diag d;
	char host[256], err[512];
	int h;

	if (!doc)
		return -1;      /* import.c says where the JSON stops */
	imp_file_host(im->file, suffixes, host, sizeof(host));
	if (dcgm_diag_parse(doc, &d, err, sizeof(err)))
		return imp_fail(im, 1, "%s", err);
	h = imp_host(im, host);
	if (h < 0 || imp_host_rank(im, h, 0)) {
		dcgm_diag_free(&d);
		return imp_fail(im, 0, "out of memory");
	}
	im->world_size = 1;
	for (size_t i = 0; i < json_array_size(d.records); i++) {
		json_t *r = json_deep_copy(json_array_get(d.records, i));

		if (dcgm_record_name(r, host) || imp_record(im, r, 1)) {
			dcgm_diag_free(&d);
			return imp_fail(im, 0, "out of memory");
		}
	}
	json_object_set_new(im->extra, "version", json_string(d.version[0] ? d.version : "unknown"));
	if (d.driver[0])
		json_object_set_new(im->extra, "versions", json_pack("{s:s}", "driver", d.driver));
	json_object_set_new(im->extra, "options", json_pack("{s:i}", "dcgm_level", d.level));
	dcgm_diag_free(&d);
	return 0;
}

static int dcgm_detect(const char *buf, size_t n, const json_t *doc)
{
	size_t m = n < 65536 ? n : 65536;

	if (doc)
		return json_object_get(doc, "DCGM Diagnostic") || json_object_get(doc, "DCGM GPU Diagnostic");
	/* a document cut short: its opening still names the tool */
	return memmem(buf, m, "\"DCGM Diagnostic\"", 17) || memmem(buf, m, "\"DCGM GPU Diagnostic\"", 21);
}

const struct importer import_dcgm = {
	.name = "dcgm",
	.what = "dcgmi diag -r 1..4 -j JSON (DCGM 2.x to 4.x)",
	.detect = dcgm_detect,
	.parse = dcgm_parse,
};
