#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../core/options.h"
#include "../../gpu/gpu.h"

#define ROOT "tests/fixtures/sysfs"

static void test_parse_list(void **state)
{
	int out[GPU_MAX];
	char err[160];
	(void)state;

	assert_int_equal(gpu_parse_list("0,1,2,3", out, GPU_MAX, err, sizeof(err)), 4);
	assert_int_equal(out[0], 0);
	assert_int_equal(out[3], 3);
	assert_int_equal(gpu_parse_list("4-7", out, GPU_MAX, err, sizeof(err)), 4);
	assert_int_equal(out[0], 4);
	assert_int_equal(out[3], 7);
	/* order is kept: local rank 0 gets the first */
	assert_int_equal(gpu_parse_list("3,0-1,7", out, GPU_MAX, err, sizeof(err)), 4);
	assert_int_equal(out[0], 3);
	assert_int_equal(out[1], 0);
	assert_int_equal(out[2], 1);
	assert_int_equal(out[3], 7);
	assert_int_equal(gpu_parse_list("5", out, GPU_MAX, err, sizeof(err)), 1);
	assert_int_equal(out[0], 5);
}

static void expect_bad(const char *s, const char *msg)
{
	int out[GPU_MAX];
	char err[160] = "";

	assert_int_equal(gpu_parse_list(s, out, GPU_MAX, err, sizeof(err)), -1);
	assert_non_null(strstr(err, msg));
}

static void test_parse_list_bad(void **state)
{
	int out[2];
	char err[160];
	(void)state;

	expect_bad("", "empty");
	expect_bad("a", "invalid --gpus item 'a'");
	expect_bad("0,,1", "invalid --gpus item ''");
	expect_bad("1,", "ends with a comma");
	expect_bad("-1", "invalid --gpus item");
	expect_bad("3-1", "runs backwards");
	expect_bad("0,1,0", "device 0 appears twice");
	expect_bad("0-2,2", "device 2 appears twice");
	expect_bad("99999", "invalid --gpus item");
	expect_bad("1 ,2", "invalid --gpus item '1 '");
	assert_int_equal(gpu_parse_list("0-2", out, 2, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "more than 2"));
}

static void test_pick(void **state)
{
	int list[] = { 4, 5, 6, 7 };
	(void)state;

	/* no list: local rank r uses device r while it exists */
	assert_int_equal(gpu_pick(0, 8, NULL, 0), 0);
	assert_int_equal(gpu_pick(7, 8, NULL, 0), 7);
	assert_int_equal(gpu_pick(8, 8, NULL, 0), -1);
	assert_int_equal(gpu_pick(0, 0, NULL, 0), -1);
	/* a list: the r-th entry, if the rank can see that device */
	assert_int_equal(gpu_pick(0, 8, list, 4), 4);
	assert_int_equal(gpu_pick(3, 8, list, 4), 7);
	assert_int_equal(gpu_pick(4, 8, list, 4), -1);
	assert_int_equal(gpu_pick(1, 4, list, 4), -1);
	assert_int_equal(gpu_pick(-1, 8, NULL, 0), -1);
}

/* views[r][k] = bus id of GPU g[r][k] ("0000:GG:00.0"); count[r] = n[r] */
static void set_views(char *views, int *count, int nranks, const int g[][8], const int *n)
{
	memset(views, 0, (size_t)nranks * GPU_MAX * GPU_BUS_LEN);
	for (int r = 0; r < nranks; r++) {
		count[r] = n[r];
		for (int k = 0; k < n[r]; k++)
			snprintf(views + ((size_t)r * GPU_MAX + (size_t)k) * GPU_BUS_LEN, GPU_BUS_LEN,
				 "0000:%02x:00.0", g[r][k]);
	}
}

static void test_view_assign(void **state)
{
	static char views[8 * GPU_MAX * GPU_BUS_LEN];
	/* --gpu-bind=closest on an HGX node: tasks 0-3 see GPUs 0-3, tasks 4-7 see 4-7 */
	const int closest[8][8] = { { 0, 1, 2, 3 }, { 0, 1, 2, 3 }, { 0, 1, 2, 3 }, { 0, 1, 2, 3 },
				    { 4, 5, 6, 7 }, { 4, 5, 6, 7 }, { 4, 5, 6, 7 }, { 4, 5, 6, 7 } };
	const int four[8] = { 4, 4, 4, 4, 4, 4, 4, 4 };
	const int one_each[2][8] = { { 3 }, { 5 } }, ones[2] = { 1, 1 };
	const int shared[2][8] = { { 0 }, { 0 } };
	const int overlap[3][8] = { { 0, 1 }, { 1, 2 }, { 0, 1 } }, twos[3] = { 2, 2, 2 };
	int count[8], ord[8];
	(void)state;

	set_views(views, count, 8, closest, four);
	assert_int_equal(gpu_view_assign(views, count, 8, ord), 0);
	for (int r = 0; r < 8; r++)
		assert_int_equal(ord[r], r % 4);
	/* one GPU per task: each its first */
	set_views(views, count, 2, one_each, ones);
	assert_int_equal(gpu_view_assign(views, count, 2, ord), 0);
	assert_true(ord[0] == 0 && ord[1] == 0);
	/* one GPU seen by two tasks: the second has none */
	set_views(views, count, 2, shared, ones);
	assert_int_equal(gpu_view_assign(views, count, 2, ord), 0);
	assert_true(ord[0] == 0 && ord[1] == -1);
	/* views that overlap without being equal: rank 2 (2nd of {0,1}) and rank 1 meet on 1 */
	set_views(views, count, 3, overlap, twos);
	assert_int_equal(gpu_view_assign(views, count, 3, ord), -1);
}

static void test_bus_norm(void **state)
{
	char out[GPU_BUS_LEN];
	struct pci_link l;
	(void)state;

	/* NVML's 8-digit domain, CUDA's 4-digit upper case, both give the sysfs name */
	gpu_bus_norm("00000000:1A:00.0", out, sizeof(out));
	assert_string_equal(out, "0000:1a:00.0");
	gpu_bus_norm("0000:1A:00.0", out, sizeof(out));
	assert_string_equal(out, "0000:1a:00.0");
	/* a real non-zero upper domain stays */
	gpu_bus_norm("00010000:01:00.0", out, sizeof(out));
	assert_string_equal(out, "00010000:01:00.0");
	/* the normalised id finds the fixture device: the Gen5 x16 card trained at x8 */
	gpu_bus_norm("00000000:1A:00.0", out, sizeof(out));
	assert_int_equal(pci_read_link(ROOT, out, &l), 0);
	assert_int_equal(l.cur_width, 8);
	assert_int_equal(l.max_width, 16);
	assert_float_equal(l.cur_GBps, pci_rate_GBps(5, 8), 1e-12);
}

static void test_bus_table(void **state)
{
	char bus[4][GPU_BUS_LEN];
	int n = 0;
	(void)state;

	/* added in any order, kept in PCI order and once each: gpuN matches nvidia-smi */
	assert_int_equal(gpu_bus_add(bus, &n, 4, "0000:9a:00.0"), 0);
	assert_int_equal(gpu_bus_add(bus, &n, 4, "0000:18:00.0"), 0);
	assert_int_equal(gpu_bus_add(bus, &n, 4, "0000:5d:00.0"), 0);
	assert_int_equal(gpu_bus_add(bus, &n, 4, "0000:18:00.0"), 0);
	assert_int_equal(n, 3);
	assert_int_equal(gpu_bus_index(bus, n, "0000:18:00.0"), 0);
	assert_int_equal(gpu_bus_index(bus, n, "0000:5d:00.0"), 1);
	assert_int_equal(gpu_bus_index(bus, n, "0000:9a:00.0"), 2);
	assert_int_equal(gpu_bus_index(bus, n, "0000:ab:00.0"), -1);
	assert_int_equal(gpu_bus_add(bus, &n, 4, "0000:01:00.0"), 0);
	assert_int_equal(gpu_bus_index(bus, n, "0000:9a:00.0"), 3);
	assert_int_equal(gpu_bus_add(bus, &n, 4, "0000:02:00.0"), -1);
	assert_int_equal(n, 4);
}

static void test_copy_sizes(void **state)
{
	struct cc_options o;
	size_t s[64];
	(void)state;

	options_defaults(&o);
	/* neither -b nor -e: the probe's own range, by factors of 2 */
	assert_int_equal(gpu_copy_sizes(&o, 64 << 10, 256 << 20, s, 64), 13);
	assert_int_equal(s[0], 64 << 10);
	assert_int_equal(s[12], 256 << 20);
	assert_int_equal(gpu_copy_sizes(&o, 256 << 20, 256 << 20, s, 64), 1);
	/* given: the command line's sweep, factor and step included */
	o.sizes_set = 1;
	o.min_bytes = 1 << 20;
	o.max_bytes = 16 << 20;
	o.factor = 4;
	assert_int_equal(gpu_copy_sizes(&o, 64 << 10, 256 << 20, s, 64), 3);
	assert_int_equal(s[2], 16 << 20);
	o.step = 1 << 20;
	assert_int_equal(gpu_copy_sizes(&o, 64 << 10, 256 << 20, s, 64), 16);
	assert_int_equal(s[15], 16 << 20);
	assert_int_equal(gpu_copy_sizes(&o, 64 << 10, 256 << 20, s, 5), 5);
}

static void test_mem_rate(void **state)
{
	(void)state;
	/* H100 SXM as CUDA reports it: 2619 MHz, 5120 bits: 2 x 2.619e9 x 640 B = 3352 GB/s */
	assert_float_equal(gpu_mem_rate_GBps(2619000, 5120), 3352.32, 1e-6);
	/* A100 40GB: 1215 MHz, 5120 bits: 1555.2 GB/s */
	assert_float_equal(gpu_mem_rate_GBps(1215000, 5120), 1555.2, 1e-6);
	assert_float_equal(gpu_mem_rate_GBps(0, 5120), 0.0, 0);
	assert_float_equal(gpu_mem_rate_GBps(1215000, 0), 0.0, 0);
}

static void test_matrix_print(void **state)
{
	double m[9] = { NAN, 370.25, NAN, 369.5, NAN, 20.125, NAN, 21.0, NAN };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	const char *want =
		"# node1: unidirectional (GB/s)\n"
		"   D\\D         0         1         2\n"
		"     0         -     370.2       n/a\n"
		"     1     369.5         -      20.1\n"
		"     2       n/a      21.0         -\n";
	(void)state;

	assert_non_null(f);
	gpu_matrix_print(f, "node1: unidirectional (GB/s)", 3, m, 1);
	fclose(f);
	assert_string_equal(buf, want);
	free(buf);
}

static void test_matrix_decimals_and_diagonal(void **state)
{
	double m[4] = { 5.0, 1.23456, 2.5, 7.0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	(void)state;

	/* the diagonal prints "-" whatever it holds; decimals as asked */
	gpu_matrix_print(f, "lat (us)", 2, m, 3);
	fclose(f);
	assert_non_null(strstr(buf, "     0         -     1.235\n"));
	assert_non_null(strstr(buf, "     1     2.500         -\n"));
	free(buf);
}

static void test_bw_fields(void **state)
{
	double bw[5] = { 50.0, 52.0, 51.0, 53.0, 10.0 };
	json_t *rec = json_object(), *st;
	(void)state;

	assert_float_equal(gpu_bw_fields(rec, bw, 5), 51.0, 1e-12);
	assert_float_equal(json_real_value(json_object_get(rec, "bw_GBps")), 51.0, 1e-12);
	st = json_object_get(rec, "bw_stats_GBps");
	assert_int_equal(json_integer_value(json_object_get(st, "n")), 5);
	assert_float_equal(json_real_value(json_object_get(st, "min")), 10.0, 1e-12);
	assert_float_equal(json_real_value(json_object_get(st, "max")), 53.0, 1e-12);
	json_decref(rec);
}

static void test_rates(void **state)
{
	/* two streams' seconds per sample, interleaved as gpu_sample writes them */
	double each[6] = { 0.5, 0.25, 1.0, 0.0, 2.0, 0.5 }, out[3];
	(void)state;

	gpu_rates_GBps(each, 3, 2, 1e9, out);
	assert_float_equal(out[0], 2.0, 1e-12);
	assert_float_equal(out[1], 1.0, 1e-12);
	assert_float_equal(out[2], 0.5, 1e-12);
	gpu_rates_GBps(each + 1, 3, 2, 1e9, out);
	assert_float_equal(out[0], 4.0, 1e-12);
	assert_float_equal(out[1], 0.0, 0);  /* no time: no rate, not infinity */
	assert_float_equal(out[2], 2.0, 1e-12);
}

/*
 * The embedded PTX (gpu/kernels_ptx.c, scripts/gen-ptx.sh): both kernels of
 * the hbm probe, an ISA old drivers load (7.0, sm_70), and, where the CUDA
 * toolkit's ptxas is installed, PTX it assembles for Hopper.
 */
static void test_kernels_ptx(void **state)
{
	char dir[] = "/tmp/ccdiag-ptx.XXXXXX", cmd[512];
	FILE *f;

	(void)state;
	assert_non_null(strstr(gpu_kernels_ptx, "\n.version 7.0\n"));
	assert_non_null(strstr(gpu_kernels_ptx, "\n.target sm_70\n"));
	assert_non_null(strstr(gpu_kernels_ptx, ".entry ccdiag_copy("));
	assert_non_null(strstr(gpu_kernels_ptx, ".entry ccdiag_triad("));
	/* 16-byte vectors: the copy's load and store */
	assert_non_null(strstr(gpu_kernels_ptx, "ld.global.nc.v4.u32"));
	assert_non_null(strstr(gpu_kernels_ptx, "st.global.v4.u32"));
	if (system("test -x /usr/local/cuda/bin/ptxas") != 0)
		return;
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "%s/k.ptx", dir);
	f = fopen(cmd, "w");
	assert_non_null(f);
	fputs(gpu_kernels_ptx, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "/usr/local/cuda/bin/ptxas -arch=sm_90 -o %s/k.cubin %s/k.ptx && "
		 "rm -rf %s", dir, dir, dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_list),
		cmocka_unit_test(test_parse_list_bad),
		cmocka_unit_test(test_pick),
		cmocka_unit_test(test_view_assign),
		cmocka_unit_test(test_bus_norm),
		cmocka_unit_test(test_bus_table),
		cmocka_unit_test(test_copy_sizes),
		cmocka_unit_test(test_mem_rate),
		cmocka_unit_test(test_matrix_print),
		cmocka_unit_test(test_matrix_decimals_and_diagonal),
		cmocka_unit_test(test_bw_fields),
		cmocka_unit_test(test_rates),
		cmocka_unit_test(test_kernels_ptx),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
