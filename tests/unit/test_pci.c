#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../core/pci.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ROOT "tests/fixtures/sysfs"

static void test_rate_arithmetic(void **state)
{
	(void)state;
	/* Gen1 x1: 2.5 GT/s * 8/10 / 8 bits = 0.25 GB/s */
	assert_float_equal(pci_rate_GBps(1, 1), 0.25, 1e-12);
	/* Gen2 x4: 5 * 0.8 * 4 / 8 = 2.0 */
	assert_float_equal(pci_rate_GBps(2, 4), 2.0, 1e-12);
	/* Gen3 x16: 8 * 128/130 * 16 / 8 = 15.754 */
	assert_float_equal(pci_rate_GBps(3, 16), 15.753846153846154, 1e-9);
	/* Gen4 x16: 31.508; Gen5 x16: 63.015 (the "~63" of the reference) */
	assert_float_equal(pci_rate_GBps(4, 16), 31.50769230769231, 1e-9);
	assert_float_equal(pci_rate_GBps(5, 16), 63.01538461538462, 1e-9);
	/* Gen6 x16: 64 * 236/256 * 16 / 8 = 118.0 */
	assert_float_equal(pci_rate_GBps(6, 16), 118.0, 1e-9);
	assert_float_equal(pci_rate_GBps(0, 16), 0, 0);
	assert_float_equal(pci_rate_GBps(7, 16), 0, 0);
	assert_float_equal(pci_rate_GBps(5, 0), 0, 0);
}

static void test_gen_of_gts(void **state)
{
	(void)state;
	assert_int_equal(pci_gen_of_gts(2.5), 1);
	assert_int_equal(pci_gen_of_gts(5), 2);
	assert_int_equal(pci_gen_of_gts(8), 3);
	assert_int_equal(pci_gen_of_gts(16), 4);
	assert_int_equal(pci_gen_of_gts(32), 5);
	assert_int_equal(pci_gen_of_gts(64), 6);
	assert_int_equal(pci_gen_of_gts(0), 0);
	assert_int_equal(pci_gen_of_gts(10), 0);
}

static void expect(const char *bdf, int cg, int cw, int mg, int mw, int numa)
{
	struct pci_link l;

	assert_int_equal(pci_read_link(ROOT, bdf, &l), 0);
	assert_string_equal(l.bdf, bdf);
	assert_int_equal(l.cur_gen, cg);
	assert_int_equal(l.cur_width, cw);
	assert_int_equal(l.max_gen, mg);
	assert_int_equal(l.max_width, mw);
	assert_int_equal(l.numa_node, numa);
	assert_float_equal(l.cur_GBps, pci_rate_GBps(cg, cw), 1e-12);
	assert_float_equal(l.max_GBps, pci_rate_GBps(mg, mw), 1e-12);
}

static void test_sysfs_generations(void **state)
{
	(void)state;
	expect("0000:01:00.0", 1, 1, 1, 1, -1);   /* "2.5 GT/s" */
	expect("0000:02:00.0", 2, 4, 2, 4, 0);    /* "5 GT/s" */
	expect("0000:03:00.0", 3, 16, 3, 16, 0);  /* old kernels: "8 GT/s" */
	expect("0000:04:00.0", 4, 16, 4, 16, 1);  /* new kernels: "16.0 GT/s PCIe" */
	expect("0000:19:00.0", 5, 16, 5, 16, 0);
	expect("0000:2a:00.0", 6, 16, 6, 16, 3);
}

static void test_sysfs_downtrained(void **state)
{
	struct pci_link l;
	json_t *j;
	(void)state;
	/* Gen5 x16 card trained at x8: half the rate, and flagged */
	expect("0000:1a:00.0", 5, 8, 5, 16, 0);
	assert_int_equal(pci_read_link(ROOT, "0000:1a:00.0", &l), 0);
	assert_float_equal(l.cur_GBps * 2, l.max_GBps, 1e-9);
	j = pci_link_json(&l);
	assert_true(json_is_true(json_object_get(j, "downtrained")));
	json_decref(j);
	/* Gen5 card at Gen4 speed, full width */
	expect("0000:1b:00.0", 4, 16, 5, 16, 1);
	/* a healthy one is not flagged */
	assert_int_equal(pci_read_link(ROOT, "0000:19:00.0", &l), 0);
	j = pci_link_json(&l);
	assert_true(json_is_false(json_object_get(j, "downtrained")));
	json_decref(j);
}

static void test_sysfs_unknown_and_missing(void **state)
{
	struct pci_link l;
	json_t *j;
	(void)state;
	/* link down: "Unknown" speed, width 0 */
	expect("0000:3c:00.0", 0, 0, 5, 16, 0);
	/* only numa_node present */
	expect("0000:4d:00.0", 0, 0, 0, 0, 0);
	assert_int_equal(pci_read_link(ROOT, "0000:4d:00.0", &l), 0);
	j = pci_link_json(&l);
	assert_true(json_is_null(json_object_get(j, "downtrained")));
	assert_true(json_is_null(json_object_get(json_object_get(j, "current"), "GBps")));
	json_decref(j);
	/* no such device */
	assert_int_equal(pci_read_link(ROOT, "0000:ff:00.0", &l), -1);
	assert_int_equal(l.numa_node, -1);
	assert_int_equal(l.cur_gen, 0);
}

/*
 * Writes a config space of len bytes to dir/config: a PCI Express
 * capability at 0x40 of port type type (-1: none) with Device Control
 * devctl, and an ACS capability when ctl >= 0.
 */
static void write_config_full(const char *dir, size_t len, int ctl, int type, int devctl)
{
	unsigned char cfg[4096] = { 0 };
	char path[512];
	FILE *f;

	if (type >= 0) {
		cfg[0x06] = 0x10;                        /* Status: Capabilities List */
		cfg[0x34] = 0x40;
		cfg[0x40] = 0x10, cfg[0x41] = 0x00;      /* PCI Express, last in the list */
		cfg[0x42] = (unsigned char)(0x02 | type << 4);
		cfg[0x48] = (unsigned char)(devctl & 0xff), cfg[0x49] = (unsigned char)(devctl >> 8);
	}
	if (ctl >= 0) {
		/* a first extended capability (AER, id 1) pointing at ACS at 0x148 */
		cfg[0x100] = 0x01, cfg[0x102] = 0x81, cfg[0x103] = 0x14;
		cfg[0x148] = 0x0d, cfg[0x14a] = 0x01;
		cfg[0x14c] = 0x5f;
		cfg[0x14e] = (unsigned char)(ctl & 0xff), cfg[0x14f] = (unsigned char)(ctl >> 8);
	}
	snprintf(path, sizeof(path), "%s/config", dir);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(cfg, 1, len, f), len);
	fclose(f);
}

#define RP "devices/pci0000:15/0000:15:01.0"
#define USP RP "/0000:16:00.0"
#define DSP_A USP "/0000:17:00.0"
#define DSP_B USP "/0000:17:01.0"

/* the ports of the tree below: root port, upstream port, the GPU's and the NIC's downstream ports */
static void set_acs(const char *root, int rp, int usp, int dsp_a, int dsp_b)
{
	const char *dir[4] = { RP, USP, DSP_A, DSP_B };
	int ctl[4] = { rp, usp, dsp_a, dsp_b }, type[4] = { 4, 5, 6, 6 };
	char d[512];

	for (int i = 0; i < 4; i++) {
		snprintf(d, sizeof(d), "%s/%s", root, dir[i]);
		write_config_full(d, 4096, ctl[i], type[i], 0x2810);
	}
}

/* acs_redirect of j (taken): 1 true, 0 false, -1 null */
static int redirect_of(json_t *j)
{
	json_t *v = json_object_get(j, "acs_redirect");
	int r = json_is_true(v) ? 1 : json_is_false(v) ? 0 : -1;

	json_decref(j);
	return r;
}

/* a path's acs_redirect, and the GPU 18:00.0 - NIC 19:00.0 pair's */
static int acs_of(const char *root, const char *bdf)
{
	return redirect_of(pci_path_json(root, bdf));
}

static int pair_of(const char *root)
{
	return redirect_of(pci_pair_acs_json(root, "0000:18:00.0", "0000:19:00.0"));
}

/*
 * ACS and IOMMU on a PCIe path, as on an HGX board: root port 15:01.0,
 * switch upstream port 16:00.0, downstream ports 17:00.0 (the GPU 18:00.0
 * below it) and 17:01.0 (the NIC 19:00.0). Only a switch's downstream port
 * redirecting P2P (ReqRedir+ CmpltRedir+) is blamed (issue 31, D11: a root
 * port's or upstream port's bits turned every GPU "redirected"); for the
 * GPU-NIC pair only the downstream ports below their common ancestor count.
 * A bridge without ACS is not blamed, a config space cut at 256 bytes (not
 * root) is unknown, the IOMMU group's type is read.
 */
static void test_pci_path_acs(void **state)
{
	char root[] = "/tmp/ccdiag-pcipath.XXXXXX", d[512], cmd[1600];
	json_t *j, *b;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(cmd, sizeof(cmd), "cd %s && mkdir -p %s/0000:18:00.0 %s/0000:19:00.0 bus/pci/devices "
		 "kernel/iommu_groups/7 && cd bus/pci/devices && "
		 "ln -s ../../../" RP " 0000:15:01.0 && ln -s ../../../" USP " 0000:16:00.0 && "
		 "ln -s ../../../" DSP_A " 0000:17:00.0 && ln -s ../../../" DSP_B " 0000:17:01.0 && "
		 "ln -s ../../../" DSP_A "/0000:18:00.0 0000:18:00.0 && "
		 "ln -s ../../../" DSP_B "/0000:19:00.0 0000:19:00.0 && "
		 "echo DMA-FQ > ../../../kernel/iommu_groups/7/type && "
		 "ln -s ../../../kernel/iommu_groups/7 ../../../" DSP_A "/0000:18:00.0/iommu_group",
		 root, DSP_A, DSP_B);
	assert_int_equal(system(cmd), 0);

	/* the GPU's downstream port redirects: its path and the pair are flagged */
	set_acs(root, -1, 0x0001, 0x001d, 0x0001);
	j = pci_path_json(root, "0000:18:00.0");
	assert_non_null(j);
	b = json_object_get(j, "bridges");
	assert_int_equal(json_array_size(b), 3);
	assert_string_equal(json_string_value(json_object_get(json_array_get(b, 0), "acs_ctl")), "none");
	assert_string_equal(json_string_value(json_object_get(json_array_get(b, 0), "port_type")),
			    "root_port");
	assert_true(json_is_false(json_object_get(json_array_get(b, 0), "p2p_redirect")));
	assert_string_equal(json_string_value(json_object_get(json_array_get(b, 2), "acs_ctl")), "0x001d");
	assert_string_equal(json_string_value(json_object_get(json_array_get(b, 2), "port_type")),
			    "downstream");
	assert_true(json_is_true(json_object_get(j, "acs_redirect")));
	assert_string_equal(json_string_value(json_object_get(j, "iommu_group_type")), "DMA-FQ");
	assert_true(json_is_true(json_object_get(j, "iommu_translation")));
	json_decref(j);
	j = pci_pair_acs_json(root, "0000:18:00.0", "0000:19:00.0");
	assert_true(json_is_true(json_object_get(j, "acs_redirect")));
	assert_int_equal(json_array_size(json_object_get(j, "acs_ports")), 2);
	json_decref(j);

	/* only the root port has the redirect bits: neither the GPU nor the pair is flagged */
	set_acs(root, 0x001d, 0x0001, 0x0001, 0x0001);
	j = pci_path_json(root, "0000:18:00.0");
	assert_true(json_is_false(json_object_get(j, "acs_redirect")));
	assert_true(json_is_true(json_object_get(json_array_get(json_object_get(j, "bridges"), 0),
						 "p2p_redirect")));
	json_decref(j);
	assert_int_equal(pair_of(root), 0);

	/* only the upstream port: not flagged either */
	set_acs(root, -1, 0x001d, 0x0001, 0x0001);
	assert_int_equal(pair_of(root), 0);
	assert_int_equal(acs_of(root, "0000:18:00.0"), 0);

	/* the NIC's downstream port below the common ancestor: the pair is flagged, the GPU's path not */
	set_acs(root, -1, 0x0001, 0x0001, 0x000d);
	assert_int_equal(pair_of(root), 1);
	assert_int_equal(acs_of(root, "0000:18:00.0"), 0);
	assert_int_equal(acs_of(root, "0000:19:00.0"), 1);

	/* ACS off everywhere: no redirect */
	set_acs(root, 0x0000, 0x0000, 0x0000, 0x0000);
	assert_int_equal(acs_of(root, "0000:18:00.0"), 0);
	/* a device right below the switch the paths share: only the other side's port counts */
	j = pci_pair_acs_json(root, "0000:18:00.0", "0000:17:01.0");
	assert_true(json_is_false(json_object_get(j, "acs_redirect")));
	assert_int_equal(json_array_size(json_object_get(j, "acs_ports")), 1);
	json_decref(j);

	/* not root: 64 bytes of config, unknown and said so, for the path and the pair */
	for (const char *const *p = (const char *const[]){ RP, USP, DSP_A, DSP_B, NULL }; *p; p++) {
		snprintf(d, sizeof(d), "%s/%s", root, *p);
		write_config_full(d, 64, -1, 6, 0);
	}
	j = pci_path_json(root, "0000:18:00.0");
	assert_true(json_is_null(json_object_get(j, "acs_redirect")));
	assert_non_null(json_object_get(j, "acs_note"));
	assert_true(json_is_null(json_object_get(json_array_get(json_object_get(j, "bridges"), 0),
						 "port_type")));
	json_decref(j);
	j = pci_pair_acs_json(root, "0000:18:00.0", "0000:19:00.0");
	assert_true(json_is_null(json_object_get(j, "acs_redirect")));
	assert_non_null(json_object_get(j, "acs_note"));
	json_decref(j);

	/* unknown devices */
	assert_true(json_is_null(pci_path_json(root, "0000:99:00.0")));
	assert_true(json_is_null(pci_pair_acs_json(root, "0000:18:00.0", "0000:99:00.0")));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

/*
 * The Relaxed Ordering enable bit of Device Control (issue 31, D10): set,
 * clear, no PCIe capability, unreadable without root.
 */
static void test_relaxed_ordering_bit(void **state)
{
	char root[] = "/tmp/ccdiag-pciro.XXXXXX", d[512], cmd[700];

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(cmd, sizeof(cmd), "cd %s && mkdir -p devices/pci0000:15/0000:15:01.0/0000:16:00.0 "
		 "bus/pci/devices && ln -s ../../../devices/pci0000:15/0000:15:01.0/0000:16:00.0 "
		 "bus/pci/devices/0000:16:00.0", root);
	assert_int_equal(system(cmd), 0);
	snprintf(d, sizeof(d), "%s/devices/pci0000:15/0000:15:01.0/0000:16:00.0", root);
	write_config_full(d, 4096, -1, 0, 0x2810);               /* endpoint, RlxdOrd+ */
	assert_int_equal(pci_relaxed_ordering(root, "0000:16:00.0"), 1);
	assert_int_equal(pci_port_type(root, "0000:16:00.0"), PCI_PORT_ENDPOINT);
	write_config_full(d, 4096, -1, 0, 0x2800);               /* RlxdOrd- */
	assert_int_equal(pci_relaxed_ordering(root, "0000:16:00.0"), 0);
	write_config_full(d, 256, -1, -1, 0);                    /* no PCIe capability */
	assert_int_equal(pci_relaxed_ordering(root, "0000:16:00.0"), -1);
	write_config_full(d, 64, -1, 0, 0x2810);                 /* not root: 64 bytes */
	assert_int_equal(pci_relaxed_ordering(root, "0000:16:00.0"), -2);
	assert_int_equal(pci_port_type(root, "0000:16:00.0"), PCI_PORT_UNKNOWN);
	assert_int_equal(pci_relaxed_ordering(root, "0000:99:00.0"), -2);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate_arithmetic),
		cmocka_unit_test(test_pci_path_acs),
		cmocka_unit_test(test_relaxed_ordering_bit),
		cmocka_unit_test(test_gen_of_gts),
		cmocka_unit_test(test_sysfs_generations),
		cmocka_unit_test(test_sysfs_downtrained),
		cmocka_unit_test(test_sysfs_unknown_and_missing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
