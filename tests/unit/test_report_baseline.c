/* Unit tests: ccreport's baseline comparison (report/baseline.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../report/baseline.h"
#include "../../report/eval.h"
#include "../../report/eval_state.h"
#include "../../report/profile.h"

static char err[512];

#define HDR "{\"type\":\"run\",\"schema\":1,\"hosts\":[{\"name\":\"a\"}],\"world_size\":1}\n"
#define BW(el, v, cv) "{\"type\":\"measurement\",\"kind\":\"probe\",\"name\":\"pcie\",\"test\":\"h2d\",\"scope\":\"gpu\"," \
	"\"element\":\"" el "\",\"host\":\"a\",\"bytes\":64,\"bw_GBps\":" #v ",\"bw_stats_GBps\":{\"cv\":" #cv "}}\n"
#define LAT(el, v) "{\"type\":\"measurement\",\"kind\":\"probe\",\"name\":\"ib\",\"test\":\"write_lat\",\"scope\":\"rail_pair\"," \
	"\"element\":\"" el "\",\"host\":\"a\",\"bytes\":8,\"lat_us\":{\"p99\":" #v ",\"cv\":0.001}}\n"
static const char profile[] =
	"[criterion bw]\nprobe = pcie\ntest = h2d\nmetric = bw_GBps\nscope = gpu\nbound = >= 1 GB/s\n"
	"[criterion lat]\nprobe = ib\ntest = write_lat\nmetric = lat_us.p99\nscope = rail_pair\nsize = any\nbound = <= 10 us\n";

/* judges results text; writes the old run to a file and compares with it */
static json_t *compare(const char *old_text, const char *new_text, double tol)
{
	struct profile p;
	struct eval e;
	char path[] = "/tmp/ccreport-baseline-XXXXXX.jsonl";
	int fd = mkstemps(path, 6);
	json_t *b;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, old_text, strlen(old_text)), (ssize_t)strlen(old_text));
	close(fd);
	if (profile_parse_string(&p, profile, "p.ini", err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(eval_init(&e, &p), 0);
	if (eval_read_mem(&e, new_text, strlen(new_text), "new.jsonl", err, sizeof(err)))
		fail_msg("%s", err);
	eval_finish(&e);
	b = baseline_compare(&e, path, tol, err, sizeof(err));
	if (!b)
		fail_msg("%s", err);
	unlink(path);
	eval_free(&e);
	profile_free(&p);
	return b;
}

static const char *names(json_t *b, const char *list)
{
	static char buf[256];
	json_t *v;
	size_t i;

	buf[0] = '\0';
	json_array_foreach(json_object_get(b, list), i, v) {
		strcat(buf, json_string_value(json_object_get(v, "element")));
		strcat(buf, " ");
	}
	return buf;
}

static void test_regressions_and_improvements(void **state)
{
	json_t *b;

	(void)state;
	b = compare(HDR BW("a/g0", 50, 0.01) BW("a/g1", 50, 0.01) BW("a/g2", 50, 0.01) BW("a/g3", 50, 0.01) LAT("a/m0", 2.0),
		    HDR BW("a/g0", 46, 0.01) BW("a/g1", 48, 0.01) BW("a/g2", 56, 0.01) BW("a/g3", 46, 0.12) LAT("a/m0", 2.5),
		    0.05);
	/* g0 -8 %: a regression; g1 -4 %: within 5 %; g2 +12 %: an improvement;
	 * g3 -8 % but its spread is 12 %: noise; latency +25 %: worse, a regression */
	assert_string_equal(names(b, "regressions"), "a/g0 a/m0 ");
	assert_string_equal(names(b, "improvements"), "a/g2 ");
	assert_int_equal(json_integer_value(json_object_get(b, "compared")), 5);
	assert_true(fabs(json_number_value(json_object_get(json_array_get(json_object_get(b, "regressions"), 0),
							     "change_pct")) + 8) < 1e-9);
	json_decref(b);
	/* a wider tolerance lets the 8 % through */
	b = compare(HDR BW("a/g0", 50, 0.01), HDR BW("a/g0", 46, 0.01), 0.10);
	assert_string_equal(names(b, "regressions"), "");
	json_decref(b);
}

/* elements only one run has are not compared */
static void test_new_elements(void **state)
{
	json_t *b;

	(void)state;
	b = compare(HDR BW("a/g0", 50, 0.01), HDR BW("a/g0", 50, 0.01) BW("a/g9", 10, 0.01), 0.05);
	assert_int_equal(json_integer_value(json_object_get(b, "compared")), 1);
	json_decref(b);
}

/* a broken baseline is an input error naming its line */
static void test_bad_baseline(void **state)
{
	struct profile p;
	struct eval e;

	(void)state;
	assert_int_equal(profile_parse_string(&p, profile, "p.ini", err, sizeof(err)), 0);
	assert_int_equal(eval_init(&e, &p), 0);
	eval_finish(&e);
	FILE *f = fopen("/tmp/ccreport-bad-baseline.jsonl", "w");

	fputs(HDR "{\"type\":\n", f);
	fclose(f);
	assert_null(baseline_compare(&e, "/tmp/ccreport-bad-baseline.jsonl", 0.05, err, sizeof(err)));
	assert_int_equal(strncmp(err, "/tmp/ccreport-bad-baseline.jsonl:2: ", 36), 0);
	unlink("/tmp/ccreport-bad-baseline.jsonl");
	eval_free(&e);
	profile_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_regressions_and_improvements),
		cmocka_unit_test(test_new_elements),
		cmocka_unit_test(test_bad_baseline),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
