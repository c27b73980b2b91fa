/* A node's link rate: the environment first, else the speed file of MPI's interface. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../probes/linkrate.h"

static char root[64];        /* a fake /sys */
static char route[96];       /* a fake /proc/net/route */

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void iface(const char *name, const char *speed)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/class/net/%s", root, name);
	assert_int_equal(mkdir(p, 0755), 0);
	strcat(p, "/speed");
	if (speed)
		put(p, speed);
}

static int setup(void **state)
{
	char p[128];

	(void)state;
	strcpy(root, "/tmp/ccdiag-linkrate.XXXXXX");
	assert_non_null(mkdtemp(root));
	snprintf(p, sizeof(p), "%s/class", root);
	mkdir(p, 0755);
	strcat(p, "/net");
	mkdir(p, 0755);
	iface("eth0", "25000\n");
	iface("eth1", "-1\n");       /* link down or virtual: unknown */
	iface("ib0", "100000\n");
	iface("eth0.100", "10000\n"); /* a VLAN: names may hold dots */
	iface("veth9", NULL);         /* no speed file */
	snprintf(route, sizeof(route), "%s/route", root);
	put(route, "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\tMTU\tWindow\tIRTT\n"
		   "ib0\t0000A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
		   "eth0\t00000000\t0100A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n");
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_env_wins(void **state)
{
	struct link_rate r;

	(void)state;
	assert_int_equal(linkrate_find(0, "1000", root, "ib0", route, NULL, &r), 0);
	assert_true(r.mbit == 1000);
	assert_string_equal(r.source, "CCDIAG_LINK_RATE_MBIT");
	assert_int_equal(linkrate_find(0, "2.5e3", root, NULL, route, NULL, &r), 0);
	assert_true(r.mbit == 2500);
}

/*
 * Issue 31, D6: the rate ccdiag passes (--pair-link-rate, the profile's NIC
 * rate) comes first: on an HGX node MPI runs over UCX/InfiniBand while the
 * default route is a management NIC, whose rate would pass a link at half
 * the fabric's.
 */
static void test_given_rate_wins(void **state)
{
	struct linkrate_mpi ucx_any = { "ucx", NULL, NULL };
	struct link_rate r;

	(void)state;
	assert_int_equal(linkrate_find(400000, NULL, root, NULL, route, NULL, &r), 0);
	assert_true(r.mbit == 400000);
	assert_string_equal(r.source, "--pair-link-rate");
	/* before the operator's variable and the default route's 25 GbE */
	assert_int_equal(linkrate_find(400000, "1000", root, NULL, route, NULL, &r), 0);
	assert_true(r.mbit == 400000);
	/* UCX picking its own devices: unknown without it, known with it */
	assert_int_equal(linkrate_find(0, NULL, root, NULL, route, &ucx_any, &r), 1);
	assert_true(r.mbit == 0);
	assert_int_equal(linkrate_find(400000, NULL, root, NULL, route, &ucx_any, &r), 0);
	assert_true(r.mbit == 400000);
	/* 0, negative or not finite: not given */
	assert_int_equal(linkrate_find(-1, NULL, root, NULL, route, NULL, &r), 0);
	assert_string_equal(r.source, "sysfs:eth0");
	assert_int_equal(linkrate_find(1.0 / 0.0, NULL, root, NULL, route, NULL, &r), 0);
	assert_string_equal(r.source, "sysfs:eth0");
}

static void test_bad_env_warns_and_falls_back(void **state)
{
	struct link_rate r;

	(void)state;
	for (const char **v = (const char *[]){ "fast", "0", "-100", "1000x", NULL }; *v; v++) {
		assert_int_equal(linkrate_find(0, *v, root, NULL, route, NULL, &r), 0);
		assert_true(strstr(r.warning, "CCDIAG_LINK_RATE_MBIT") != NULL);
		assert_true(r.mbit == 25000);   /* the default route's eth0 */
		assert_string_equal(r.source, "sysfs:eth0");
	}
}

static void test_sysfs(void **state)
{
	struct link_rate r;

	(void)state;
	/* Open MPI's btl_tcp_if_include names the interface: its first item */
	assert_int_equal(linkrate_find(0, NULL, root, "ib0,eth0", route, NULL, &r), 0);
	assert_true(r.mbit == 100000);
	assert_string_equal(r.source, "sysfs:ib0");
	assert_int_equal(linkrate_find(0, "", root, "eth0.100", route, NULL, &r), 0);
	assert_true(r.mbit == 10000);
	/* a subnet is no interface name: the default route decides */
	assert_int_equal(linkrate_find(0, NULL, root, "198.18.0.0/24", route, NULL, &r), 0);
	assert_string_equal(r.source, "sysfs:eth0");
	assert_int_equal(r.warning[0], '\0');
}

static void test_unknown(void **state)
{
	struct link_rate r;

	(void)state;
	assert_int_equal(linkrate_find(0, NULL, root, "eth1", route, NULL, &r), 1);      /* -1 */
	assert_true(r.mbit == 0);
	assert_int_equal(linkrate_find(0, NULL, root, "veth9", route, NULL, &r), 1);     /* no file */
	assert_int_equal(linkrate_find(0, NULL, root, "nosuch", route, NULL, &r), 1);
	assert_int_equal(linkrate_find(0, NULL, root, NULL, "/nonexistent", NULL, &r), 1); /* no route */
}

/* An HGX node: MPI over UCX/InfiniBand while the default route is a 25 GbE management NIC */
static void test_mpi_transport(void **state)
{
	struct linkrate_mpi ucx = { "ucx", "mlx5_0:1,mlx5_1:1", NULL };
	struct linkrate_mpi loaded = { NULL, NULL, "7f00-7f01 r-xp 0 08:01 1 /usr/lib/openmpi/mca_pml_ucx.so\n" };
	struct linkrate_mpi ucx_tcp = { "ucx", "ib0", NULL }, ob1 = { "ob1", NULL, NULL };
	struct link_rate r;
	char p[256];

	(void)state;
	snprintf(p, sizeof(p), "%s/class/infiniband", root);
	assert_int_equal(mkdir(p, 0755), 0);
	strcat(p, "/mlx5_0");
	mkdir(p, 0755);
	strcat(p, "/ports");
	mkdir(p, 0755);
	strcat(p, "/1");
	mkdir(p, 0755);
	strcat(p, "/rate");
	put(p, "400 Gb/sec (4X NDR)\n");
	/* UCX over the port it was given: that port's rate, never the default route's */
	assert_int_equal(linkrate_find(0, NULL, root, NULL, route, &ucx, &r), 0);
	assert_true(r.mbit == 400000);
	assert_string_equal(r.source, "ucx:mlx5_0:1");
	assert_int_equal(linkrate_find(0, NULL, root, NULL, route, &ucx_tcp, &r), 0);
	assert_true(r.mbit == 100000);
	/* UCX loaded (selected) and free to pick its devices: unknown, with the reason */
	assert_int_equal(linkrate_find(0, NULL, root, NULL, route, &loaded, &r), 1);
	assert_true(r.mbit == 0);
	assert_non_null(strstr(r.why, "UCX_NET_DEVICES unset"));
	/* RDMA devices and no interface named: the default route's eth0 is no evidence */
	assert_int_equal(linkrate_find(0, NULL, root, NULL, route, &ob1, &r), 1);
	assert_non_null(strstr(r.why, "RDMA devices present"));
	assert_int_equal(linkrate_find(0, NULL, root, NULL, route, NULL, &r), 1);
	/* an interface named for the TCP BTL still decides; the operator's rate still wins */
	assert_int_equal(linkrate_find(0, NULL, root, "ib0", route, &ob1, &r), 0);
	assert_true(r.mbit == 100000);
	assert_int_equal(linkrate_find(0, "400000", root, NULL, route, &loaded, &r), 0);
	assert_true(r.mbit == 400000);
	snprintf(p, sizeof(p), "rm -rf '%s/class/infiniband'", root);
	assert_int_equal(system(p), 0);
}

static void test_pair(void **state)
{
	(void)state;
	assert_true(linkrate_pair_GBps(1000, 1000) == 0.125);
	assert_true(linkrate_pair_GBps(1000, 100) == 0.0125);
	assert_true(linkrate_pair_GBps(400000, 200000) == 25.0);
	assert_true(linkrate_pair_GBps(0, 1000) == 0);
	assert_true(linkrate_pair_GBps(1000, -1) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_env_wins),
		cmocka_unit_test(test_given_rate_wins),
		cmocka_unit_test(test_bad_env_warns_and_falls_back),
		cmocka_unit_test(test_sysfs),
		cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_mpi_transport),
		cmocka_unit_test(test_pair),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
