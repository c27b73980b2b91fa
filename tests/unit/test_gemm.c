/*
 * Unit tests: the plain-C halves of the gemm and gpuhealth probes
 * (probes/gemm_util.c, probes/gpuhealth.c, gpu/nvml_health.c's reason names).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../../gpu/nvml_health.h"
#include "../../probes/gemm.h"
#include "../../probes/gpuhealth.h"

static void test_dtypes(void **unused)
{
	int o[GEMM_NDTYPES];
	char err[200];

	(void)unused;
	assert_int_equal(gemm_parse_dtypes("bf16", o, err, sizeof(err)), 1);
	assert_int_equal(o[0], GEMM_BF16);
	assert_int_equal(gemm_parse_dtypes("fp8,bf16", o, err, sizeof(err)), 2);
	assert_int_equal(o[0], GEMM_FP8);
	assert_int_equal(gemm_parse_dtypes("all", o, err, sizeof(err)), GEMM_NDTYPES);
	assert_int_equal(gemm_parse_dtypes("bf16,int8", o, err, sizeof(err)), -1);
	assert_string_equal(err, "invalid --gemm-dtypes item 'int8' (bf16, fp16, tf32, fp8 or all)");
	assert_int_equal(gemm_parse_dtypes("bf16,bf16", o, err, sizeof(err)), -1);
	assert_string_equal(err, "dtype bf16 appears twice in --gemm-dtypes");
	assert_int_equal(gemm_parse_dtypes("bf16,", o, err, sizeof(err)), -1);
	assert_int_equal(gemm_parse_dtypes("", o, err, sizeof(err)), -1);
}

static void test_shapes(void **unused)
{
	struct gemm_shape s[GEMM_MAX_SHAPES];
	char err[200], name[64];

	(void)unused;
	assert_int_equal(gemm_parse_shapes("8192,4096x2048x1024", s, GEMM_MAX_SHAPES, err, sizeof(err)), 2);
	assert_true(s[0].m == 8192 && s[0].n == 8192 && s[0].k == 8192);
	assert_true(s[1].m == 4096 && s[1].n == 2048 && s[1].k == 1024);
	gemm_shape_name(&s[1], name, sizeof(name));
	assert_string_equal(name, "4096x2048x1024");
	/* 2 m n k: 2 x 8192^3 = 1.099511627776e12 */
	assert_true(gemm_flops(&s[0]) == 1099511627776.0);
	assert_int_equal(gemm_parse_shapes("100", s, GEMM_MAX_SHAPES, err, sizeof(err)), -1);
	assert_string_equal(err, "invalid --gemm-shapes item '100' (N or MxNxK, each a multiple of 16 "
			    "from 16 to 65536)");
	assert_int_equal(gemm_parse_shapes("16x16", s, GEMM_MAX_SHAPES, err, sizeof(err)), -1);
	assert_int_equal(gemm_parse_shapes("16x16x16x16", s, GEMM_MAX_SHAPES, err, sizeof(err)), -1);
	assert_int_equal(gemm_parse_shapes("131072", s, GEMM_MAX_SHAPES, err, sizeof(err)), -1);
	assert_int_equal(gemm_parse_shapes("64,", s, GEMM_MAX_SHAPES, err, sizeof(err)), -1);
	assert_int_equal(gemm_parse_shapes("16,32,48", s, 2, err, sizeof(err)), -1);
	assert_string_equal(err, "more than 2 shapes in --gemm-shapes");
}

static void test_peaks(void **unused)
{
	(void)unused;
	assert_true(gemm_peak_tflops("NVIDIA H100 80GB HBM3", GEMM_BF16) == 989.4);
	assert_true(gemm_peak_tflops("NVIDIA H100 80GB HBM3", GEMM_FP8) == 1978.9);
	assert_true(gemm_peak_tflops("NVIDIA H200", GEMM_TF32) == 494.7);
	assert_true(gemm_peak_tflops("NVIDIA H100 PCIe", GEMM_BF16) == 756.5);
	assert_true(gemm_peak_tflops("NVIDIA A100-SXM4-80GB", GEMM_BF16) == 312);
	/* unknown: no peak, never a guess (the GH200 contains "H200", the NVL "H100") */
	assert_true(gemm_peak_tflops("NVIDIA A100-SXM4-80GB", GEMM_FP8) == 0);
	assert_true(gemm_peak_tflops("NVIDIA GH200 480GB", GEMM_BF16) == 0);
	assert_true(gemm_peak_tflops("NVIDIA H100 NVL", GEMM_BF16) == 0);
	assert_true(gemm_peak_tflops("Tesla V100-SXM2-32GB", GEMM_BF16) == 0);
	assert_true(gemm_dtype_supported(GEMM_FP8, 8, 9) && gemm_dtype_supported(GEMM_FP8, 9, 0));
	assert_false(gemm_dtype_supported(GEMM_FP8, 8, 0));
	assert_true(gemm_dtype_supported(GEMM_BF16, 8, 0));
	assert_false(gemm_dtype_supported(GEMM_BF16, 7, 0));
}

/* random inputs: the same numbers for any chunking, finite, nonzero, |x| < 1, both signs */
static void test_fill(void **unused)
{
	uint16_t a[1000], b[1000];
	uint8_t f8[1000];
	int neg = 0;

	(void)unused;
	gemm_fill(GEMM_BF16, a, 1000, 7, 0, 0);
	gemm_fill(GEMM_BF16, b, 400, 7, 0, 0);
	gemm_fill(GEMM_BF16, b + 400, 600, 7, 0, 400);
	assert_memory_equal(a, b, sizeof(a));
	gemm_fill(GEMM_BF16, b, 1000, 7, 1, 0);     /* matrix B differs from A */
	assert_memory_not_equal(a, b, sizeof(a));
	for (int i = 0; i < 1000; i++) {
		int exp = (a[i] >> 7) & 0xff;

		assert_true(exp >= 120 && exp <= 126);  /* 2^-7 <= |x| < 1, never 0, inf or NaN */
		neg += a[i] >> 15;
	}
	assert_true(neg > 400 && neg < 600);
	gemm_fill(GEMM_FP8, f8, 1000, 7, 0, 0);
	for (int i = 0; i < 1000; i++)
		assert_true(((f8[i] >> 3) & 0xf) >= 1 && ((f8[i] >> 3) & 0xf) <= 6);
}

static void test_checksum_and_sdc(void **unused)
{
	/* FNV-1a 64 of "a": 0xaf63dc4c8601ec8c (the published test vector) */
	unsigned long long sum[6] = { 5, 5, 9, 5, 7, 7 }, exp[6];
	int group[6] = { 0, 0, 0, 0, 1, -1 }, wrong[6];

	(void)unused;
	assert_true(gemm_fnv("a", 1, GEMM_FNV_START) == 0xaf63dc4c8601ec8cULL);
	assert_int_equal(gemm_sdc_judge(sum, group, 6, exp, wrong), 1);
	assert_int_equal(wrong[2], 1);
	assert_true(exp[2] == 5);
	assert_int_equal(wrong[0] + wrong[1] + wrong[3], 0);
	/* a group of one has nothing to compare with; no checksum, no verdict */
	assert_int_equal(wrong[4], 0);
	assert_int_equal(wrong[5], 0);
	/* two GPUs that disagree: neither is the majority, both are named (the higher index too) */
	{
		unsigned long long two[3] = { 5, 9, 4 }, e[3];
		int g2[3] = { 0, 0, 1 }, w[3];

		assert_int_equal(gemm_sdc_judge(two, g2, 3, e, w), 2);
		assert_true(w[0] == 2 && w[1] == 2 && w[2] == 0);
		assert_true(e[0] == 5 && e[1] == 9);
	}
	/* a 2-2 split: all four disagree; 3-1: the one is wrong */
	{
		unsigned long long four[4] = { 5, 9, 9, 5 }, e[4];
		int g4[4] = { 0, 0, 0, 0 }, w[4];

		assert_int_equal(gemm_sdc_judge(four, g4, 4, e, w), 4);
		assert_true(w[0] == 2 && w[1] == 2 && w[2] == 2 && w[3] == 2);
		four[3] = 9;
		assert_int_equal(gemm_sdc_judge(four, g4, 4, e, w), 1);
		assert_true(w[0] == 1 && e[0] == 9 && w[1] == 0);
	}
}

static void test_window(void **unused)
{
	double v[20], first, last;

	(void)unused;
	for (int i = 0; i < 20; i++)
		v[i] = 100 - i;
	/* 10 % of 20 = 2 values: (100 + 99) / 2 and (82 + 81) / 2 */
	assert_int_equal(gemm_window(v, 20, 0.1, &first, &last), 0);
	assert_true(first == 99.5 && last == 81.5);
	assert_int_equal(gemm_window(v, 3, 0.1, &first, &last), 0);   /* at least one each */
	assert_true(first == 100 && last == 98);
	assert_int_equal(gemm_window(v, 0, 0.1, &first, &last), -1);
}

static void test_reasons(void **unused)
{
	(void)unused;
	assert_false(gnv_reasons_bad(0));
	assert_false(gnv_reasons_bad(GNV_REASON_GPU_IDLE | GNV_REASON_APP_CLOCKS));
	/* a healthy GPU at its power limit, or following another's clock, is not slowed down */
	assert_false(gnv_reasons_bad(GNV_REASON_SW_POWER_CAP));
	assert_false(gnv_reasons_bad(GNV_REASON_SYNC_BOOST | GNV_REASON_SW_POWER_CAP));
	assert_true(gnv_reasons_bad(GNV_REASON_HW_SLOWDOWN));
	assert_true(gnv_reasons_bad(GNV_REASON_SW_THERMAL | GNV_REASON_SW_POWER_CAP));
	assert_true(gnv_reasons_bad(GNV_REASON_HW_POWER_BRAKE));
	assert_true(gnv_reasons_bad(GNV_REASON_HW_THERMAL | GNV_REASON_GPU_IDLE));
	assert_string_equal(gnv_reason_name(6), "hw_thermal");
	assert_string_equal(gnv_reason_name(7), "hw_power_brake");
}

static void test_xid(void **unused)
{
	int code;
	char pci[32], err[200];
	double t, s;

	(void)unused;
	assert_int_equal(xid_parse_line("4,1234,5678901234,-;NVRM: Xid (PCI:0000:17:00): 79, pid=123, "
					"GPU has fallen off the bus.", &code, pci, sizeof(pci), &t), 0);
	assert_int_equal(code, 79);
	assert_string_equal(pci, "0000:17:00");
	assert_true(fabs(t - 5678.901234) < 1e-9);
	assert_true(xid_pci_match(pci, "0000:17:00.0"));
	assert_false(xid_pci_match(pci, "0000:18:00.0"));
	assert_int_equal(xid_parse_line("[ 812.5] NVRM: Xid (PCI:0000:3B:00): 13, Graphics SM Warp",
					&code, pci, sizeof(pci), &t), 0);
	assert_int_equal(code, 13);
	assert_true(t == 812.5 && xid_pci_match(pci, "0000:3b:00.0"));
	assert_int_equal(xid_parse_line("NVRM: Xid (PCI:0000:3b:00): 48", &code, pci, sizeof(pci), &t), 0);
	assert_true(t == -1);
	assert_int_equal(xid_parse_line("6,1,2,-;usb 1-1: new device", &code, pci, sizeof(pci), &t), -1);
	assert_int_equal(xid_parse_line("NVRM: Xid (PCI:0000:3b:00) 48", &code, pci, sizeof(pci), &t), -1);
	assert_true(xid_critical(79) && xid_critical(48) && xid_critical(119) && xid_critical(63));
	assert_false(xid_critical(13) || xid_critical(31) || xid_critical(43));
	assert_int_equal(xid_parse_since("2h", &s, err, sizeof(err)), 0);
	assert_true(s == 7200);
	assert_int_equal(xid_parse_since("90m", &s, err, sizeof(err)), 0);
	assert_true(s == 5400);
	assert_int_equal(xid_parse_since("1d", &s, err, sizeof(err)), 0);
	assert_true(s == 86400);
	assert_int_equal(xid_parse_since("2", &s, err, sizeof(err)), -1);
	assert_string_equal(err, "invalid --xid-since '2' (a number with s, m, h or d, e.g. 2h)");
	assert_int_equal(xid_parse_since("-1h", &s, err, sizeof(err)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dtypes),
		cmocka_unit_test(test_shapes),
		cmocka_unit_test(test_peaks),
		cmocka_unit_test(test_fill),
		cmocka_unit_test(test_checksum_and_sdc),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_reasons),
		cmocka_unit_test(test_xid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
