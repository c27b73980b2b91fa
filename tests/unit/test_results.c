/* The results stream: records encode and decode back, "type" leads, end is written once, a failed write cuts the file back to its last record. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../core/results.h"

static void test_encode_round_trip(void **state)
{
	json_t *rec = json_pack("{s:s, s:I, s:f, s:{s:f, s:f}, s:n, s:[i,i]}", "name",
				"all_reduce", "bytes", (json_int_t)8589934592LL, "busbw_GBps",
				123.456789, "time_us", "min", 1.5, "p99", 2.25, "root", "ranks",
				0, 1);
	json_error_t e;
	char *s = results_encode("measurement", rec);
	json_t *back = json_loads(s, 0, &e);
	(void)state;
	assert_non_null(back);
	assert_null(strchr(s, '\n'));
	assert_int_equal(strncmp(s, "{\"type\":\"measurement\"", 21), 0);
	json_object_del(back, "type");
	assert_true(json_equal(back, rec));
	assert_float_equal(json_real_value(json_object_get(back, "busbw_GBps")), 123.456789,
			   1e-9);
	free(s);
	json_decref(back);
	json_decref(rec);
	/* reals keep 10 significant digits: ample for timings, short lines */
	rec = json_pack("{s:f}", "v", 1.23456789012345e-7);
	s = results_encode("m", rec);
	back = json_loads(s, 0, &e);
	assert_float_equal(json_real_value(json_object_get(back, "v")) / 1.23456789012345e-7, 1.0,
			   1e-9);
	free(s);
	json_decref(back);
	json_decref(rec);
}

static void test_stream_file(void **state)
{
	char path[] = "/tmp/ccdiag-results-XXXXXX";
	int fd = mkstemp(path);
	struct results *r;
	char line[4096];
	FILE *f;
	int n = 0;
	(void)state;
	assert_true(fd >= 0);
	close(fd);
	r = results_open(path);
	assert_non_null(r);
	assert_int_equal(results_write(r, "run", json_pack("{s:i}", "schema", 1)), 0);
	assert_int_equal(results_write(r, "measurement", json_pack("{s:s}", "name", "x\n\"y")), 0);
	/* flushed as written: readable before close */
	f = fopen(path, "r");
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	assert_int_equal(n, 2);
	assert_int_equal(results_end(r, "complete", 1.5, json_pack("{s:i}", "failures", 0)), 0);
	assert_int_equal(results_end(r, "interrupted", 2.0, NULL), 0);  /* ignored */
	results_close(r);
	f = fopen(path, "r");
	n = 0;
	while (fgets(line, sizeof(line), f)) {
		json_error_t e;
		json_t *j = json_loads(line, 0, &e);

		assert_non_null(j);
		if (++n == 3) {
			assert_string_equal(json_string_value(json_object_get(j, "type")), "end");
			assert_string_equal(json_string_value(json_object_get(j, "status")), "complete");
		}
		json_decref(j);
	}
	fclose(f);
	assert_int_equal(n, 3);
	unlink(path);
}

static void test_open_failure(void **state)
{
	(void)state;
	assert_null(results_open("/nonexistent-dir/r.jsonl"));
}

/*
 * A write that fails half-way (here: the file size limit, EFBIG, as ENOSPC or
 * EIO would) leaves the file at its last complete record, and every later
 * write is refused. The end record cannot sneak in after the cut either.
 */
static void test_write_error_cuts_back(void **state)
{
	char path[] = "/tmp/ccdiag-results-XXXXXX", *big = calloc(1, 3001);
	int fd = mkstemp(path);
	struct rlimit old, lim;
	struct results *r;
	struct stat st;
	long first;
	(void)state;
	assert_true(fd >= 0 && big);
	close(fd);
	memset(big, 'x', 3000);
	signal(SIGXFSZ, SIG_IGN);
	r = results_open(path);
	assert_non_null(r);
	assert_int_equal(results_write(r, "run", json_pack("{s:i}", "schema", 1)), 0);
	assert_int_equal(stat(path, &st), 0);
	first = (long)st.st_size;
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = (rlim_t)first + 1000;    /* the next record fits only in part */
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	assert_int_equal(results_write(r, "measurement", json_pack("{s:s}", "pad", big)), -1);
	assert_int_equal(errno, EFBIG);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal((long)st.st_size, first);
	/* refused from now on, even a record that would fit */
	assert_int_equal(results_write(r, "measurement", json_pack("{s:i}", "n", 1)), -1);
	assert_int_equal(results_end(r, "complete", 1.0, NULL), -1);
	assert_int_equal(results_close(r), -1);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal((long)st.st_size, first);
	free(big);
	unlink(path);
}

/* A device that is always full: the first write fails with ENOSPC. */
static void test_write_enospc(void **state)
{
	struct results *r = results_open("/dev/full");
	(void)state;
	if (!r)
		skip();
	assert_int_equal(results_write(r, "run", json_pack("{s:i}", "schema", 1)), -1);
	assert_int_equal(errno, ENOSPC);
	assert_int_equal(results_close(r), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode_round_trip),
		cmocka_unit_test(test_stream_file),
		cmocka_unit_test(test_open_failure),
		cmocka_unit_test(test_write_error_cuts_back),
		cmocka_unit_test(test_write_enospc),
	};
	return cmocka_run_group_tests_name("results", tests, NULL, NULL);
}
