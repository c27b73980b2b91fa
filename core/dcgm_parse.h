#ifndef CCDIAG_DCGM_PARSE_H
#define CCDIAG_DCGM_PARSE_H

/*
 * core/dcgm_parse.c: `dcgmi diag -j` JSON to the dcgm probe's records, the one
 * reader of dcgmi diag JSON: beneath ccreport's importer (report/import_dcgm.c)
 * and ccprobe's dcgm probe (probes/dcgm.c). Plain C over jansson: no MPI, CUDA
 * or DCGM library.
 */
#include <jansson.h>
#include <stddef.h>

struct dcgm_diag {
	json_t *records;         /* measurements without host and element (dcgm_record_name) */
	char version[64];        /* DCGM's version, "" when the output does not say */
	char driver[64];         /* "Driver Version Detected", "" when absent */
	int level;               /* the run level the tests imply: 1..4 (docs/import.md) */
	int gpus;                /* GPUs with a result */
	int test_double;         /* the output says "ccdiag_test_double": true (tests/fakes/dcgmi) */
};

/*
 * Reads doc (the whole dcgmi diag -j output). Per GPU: one record per test
 * (test "dcgm_NAME", status pass/fail/warn/skip, DCGM's warnings and info)
 * and one "dcgm_diag" record (dcgm {level, tests, failed, warned, skipped},
 * failed_tests, messages). Returns 0, or -1 with what is wrong in err (no
 * diagnostic object, a runtime error dcgmi reports, no GPU result).
 */
int dcgm_diag_parse(const json_t *doc, struct dcgm_diag *d, char *err, size_t len);
void dcgm_diag_free(struct dcgm_diag *d);
/* sets rec's host and element HOST/gpuN from its "gpu"; -1 out of memory */
int dcgm_record_name(json_t *rec, const char *host);

#endif
