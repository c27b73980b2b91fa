/* Unit tests of the ib probe's pure parts: link rates, sysfs, counters, QP information, rails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../probes/ib_plan.h"
#include "../../probes/ib_sysfs.h"
#include "../../probes/schedule.h"

#define ROOT "tests/fixtures/sysfs"
#define AFTER "tests/fixtures/sysfs-after"

static const unsigned widths[] = { IBR_WIDTH_1X, IBR_WIDTH_2X, IBR_WIDTH_4X, IBR_WIDTH_8X,
				   IBR_WIDTH_12X };
static const int lanes[] = { 1, 2, 4, 8, 12 };

static void test_rate_codes(void **state)
{
	/* nominal Gb/s per lane, SDR to XDR, as ibstat prints them */
	static const struct { unsigned code; double lane, data; } sp[] = {
		{ IBR_SPEED_SDR, 2.5, 2.0 }, { IBR_SPEED_DDR, 5, 4 }, { IBR_SPEED_QDR, 10, 8 },
		{ IBR_SPEED_FDR10, 10, 10.0 }, { IBR_SPEED_FDR, 14, 13.636363636363637 },
		{ IBR_SPEED_EDR, 25, 25 }, { IBR_SPEED_HDR, 50, 50 }, { IBR_SPEED_NDR, 100, 100 },
		{ IBR_SPEED_XDR, 200, 200 },
	};

	(void)state;
	for (size_t s = 0; s < sizeof(sp) / sizeof(sp[0]); s++)
		for (size_t w = 0; w < 5; w++) {
			assert_float_equal(ib_rate_Gbps(widths[w], sp[s].code), lanes[w] * sp[s].lane,
					   1e-9);
			assert_float_equal(ib_data_rate_Gbps(widths[w], sp[s].code),
					   lanes[w] * sp[s].data, 1e-9);
		}
	/* the figures people quote */
	assert_float_equal(ib_rate_Gbps(IBR_WIDTH_4X, IBR_SPEED_NDR), 400, 0);
	assert_float_equal(ib_rate_Gbps(IBR_WIDTH_4X, IBR_SPEED_HDR), 200, 0);
	assert_float_equal(ib_rate_Gbps(IBR_WIDTH_4X, IBR_SPEED_FDR), 56, 0);
	assert_float_equal(ib_rate_Gbps(IBR_WIDTH_12X, IBR_SPEED_QDR), 120, 0);
	assert_float_equal(ib_rate_Gbps(IBR_WIDTH_4X, IBR_SPEED_XDR), 800, 0);
	assert_float_equal(ib_data_rate_Gbps(IBR_WIDTH_4X, IBR_SPEED_QDR), 32, 1e-12);
	/* unknown codes: no rate rather than a wrong one */
	assert_float_equal(ib_rate_Gbps(3, IBR_SPEED_NDR), 0, 0);
	assert_float_equal(ib_rate_Gbps(IBR_WIDTH_4X, 3), 0, 0);
	assert_float_equal(ib_rate_Gbps(IBR_WIDTH_4X, 512), 0, 0);
	assert_int_equal(ib_width_lanes(0), 0);
	assert_int_equal(ib_width_lanes(32), 0);
	assert_string_equal(ib_speed_find(IBR_SPEED_NDR)->name, "NDR");
	assert_null(ib_speed_find(0));
	assert_int_equal(ib_speed_by_name("XDR")->code, IBR_SPEED_XDR);
	assert_int_equal(ib_speed_by_name("")->code, IBR_SPEED_SDR);
	assert_null(ib_speed_by_name("ndr"));
}

static void test_rate_parse(void **state)
{
	struct ib_rate r;

	(void)state;
	assert_int_equal(ib_rate_parse("400 Gb/sec (4X NDR)", &r), 0);
	assert_float_equal(r.Gbps, 400, 0);
	assert_int_equal(r.lanes, 4);
	assert_string_equal(r.speed->name, "NDR");
	assert_int_equal(ib_rate_parse("2.5 Gb/sec (1X)", &r), 0);
	assert_float_equal(r.Gbps, 2.5, 0);
	assert_int_equal(r.lanes, 1);
	assert_string_equal(r.speed->name, "SDR");
	assert_int_equal(ib_rate_parse("40 Gb/sec (4X FDR10)", &r), 0);
	assert_int_equal(r.speed->code, IBR_SPEED_FDR10);
	assert_int_equal(ib_rate_parse("800 Gb/sec (4X XDR)", &r), 0);
	assert_int_equal(r.speed->code, IBR_SPEED_XDR);
	assert_int_equal(ib_rate_parse("600 Gb/sec (12X HDR)", &r), 0);
	assert_int_equal(r.lanes, 12);
	/* a speed this code does not know: the rate stands, the name does not */
	assert_int_equal(ib_rate_parse("1600 Gb/sec (4X GDR)", &r), 0);
	assert_null(r.speed);
	assert_int_equal(ib_rate_parse("", &r), -1);
	assert_int_equal(ib_rate_parse("400 Gb/sec", &r), -1);
	assert_int_equal(ib_rate_parse("400 Gb/sec (3X NDR)", &r), -1);
	assert_int_equal(ib_rate_parse("0 Gb/sec (4X NDR)", &r), -1);
	assert_int_equal(ib_rate_parse("fast", &r), -1);
}

static void test_sysfs_devices(void **state)
{
	char names[8][IB_NAME_LEN];
	struct ib_dev_sysfs d;
	struct pci_link pl;

	(void)state;
	assert_int_equal(ib_sysfs_list(ROOT, names, 8), 5);
	assert_string_equal(names[0], "mlx5_0");
	assert_string_equal(names[1], "mlx5_1");
	assert_string_equal(names[2], "mlx5_2");
	assert_string_equal(names[3], "mlx5_3");
	assert_string_equal(names[4], "rxe0");
	assert_int_equal(ib_sysfs_list(ROOT, names, 2), 2);
	assert_int_equal(ib_sysfs_list("tests/fixtures/none", names, 8), 0);

	/* device as a symlink to the PCI device: its last component is the address */
	assert_int_equal(ib_sysfs_device(ROOT, "mlx5_0", &d), 0);
	assert_string_equal(d.fw_ver, "28.39.1002");
	assert_string_equal(d.node_guid, "b8ce:f603:00f2:1a3c");
	assert_string_equal(d.board_id, "MT_0000000838");
	assert_string_equal(d.hca_type, "MT4129");
	assert_string_equal(d.bdf, "0000:19:00.0");
	assert_int_equal(d.nports, 1);
	assert_int_equal(d.ports[0], 1);
	assert_int_equal(pci_read_link(ROOT, d.bdf, &pl), 0);
	assert_int_equal(pl.cur_gen, 5);
	assert_int_equal(pl.cur_width, 16);
	assert_int_equal(pl.numa_node, 0);
	/* device as a folder whose uevent names the slot */
	assert_int_equal(ib_sysfs_device(ROOT, "mlx5_1", &d), 0);
	assert_string_equal(d.bdf, "0000:1a:00.0");
	assert_int_equal(pci_read_link(ROOT, d.bdf, &pl), 0);
	assert_int_equal(pl.cur_width, 8);   /* a downtrained NIC shows */
	assert_int_equal(pl.max_width, 16);
	/* Soft-RoCE: no PCI device */
	assert_int_equal(ib_sysfs_device(ROOT, "rxe0", &d), 0);
	assert_string_equal(d.bdf, "");
	assert_string_equal(d.fw_ver, "");
	assert_int_equal(ib_sysfs_device(ROOT, "mlx5_2", &d), 0);
	assert_int_equal(d.nports, 2);
	assert_int_equal(d.ports[1], 2);
	assert_int_equal(ib_sysfs_device(ROOT, "mlx5_9", &d), -1);
}

static void test_sysfs_ports(void **state)
{
	struct ib_port_sysfs p;

	(void)state;
	assert_int_equal(ib_sysfs_port(ROOT, "mlx5_0", 1, &p), 0);
	assert_int_equal(p.state, 4);
	assert_string_equal(p.state_name, "ACTIVE");
	assert_int_equal(p.phys_state, 5);
	assert_string_equal(p.phys_state_name, "LinkUp");
	assert_string_equal(p.link_layer, "InfiniBand");
	assert_float_equal(p.rate.Gbps, 400, 0);
	assert_string_equal(p.rate.speed->name, "NDR");
	assert_int_equal(p.lid, 0x1f);
	assert_int_equal(ib_sysfs_port(ROOT, "mlx5_1", 1, &p), 0);
	assert_string_equal(p.link_layer, "Ethernet");
	assert_int_equal(p.rate.lanes, 4);
	assert_string_equal(p.rate.speed->name, "HDR");
	assert_int_equal(ib_sysfs_port(ROOT, "mlx5_2", 2, &p), 0);
	assert_int_equal(p.state, 1);
	assert_string_equal(p.state_name, "DOWN");
	assert_string_equal(p.phys_state_name, "Polling");
	assert_float_equal(p.rate.Gbps, 2.5, 0);
	assert_int_equal(p.lid, -1);
	assert_int_equal(ib_sysfs_port(ROOT, "mlx5_0", 2, &p), -1);
	/* XDR: beyond the 8-bit verbs speed of rdma-core before v47; sysfs has it */
	assert_int_equal(ib_sysfs_port(ROOT, "mlx5_3", 1, &p), 0);
	assert_float_equal(p.rate.Gbps, 800, 0);
	assert_int_equal(p.rate.speed->code, IBR_SPEED_XDR);
	assert_float_equal(p.rate.lanes * p.rate.speed->data_Gbps, 800, 0);
}

static void test_gid_choice(void **state)
{
	struct ib_gid_choice g;
	uint8_t raw[16];

	(void)state;
	/* InfiniBand: the port GID, index 0 */
	assert_int_equal(ib_sysfs_choose_gid(ROOT, "mlx5_0", 1, 0, &g), 0);
	assert_int_equal(g.index, 0);
	assert_string_equal(g.type, "IB");
	/* RoCE: v2 with an IPv4-mapped address beats index 0 (v1 link-local) */
	assert_int_equal(ib_sysfs_choose_gid(ROOT, "mlx5_1", 1, 1, &g), 0);
	assert_int_equal(g.index, 3);
	assert_string_equal(g.type, "RoCE v2");
	assert_string_equal(g.netdev, "eth2");
	assert_string_equal(g.gid, "0000:0000:0000:0000:0000:ffff:c612:0001");
	/* no IPv4: v2 global IPv6 beats v2 link-local */
	assert_int_equal(ib_sysfs_choose_gid(ROOT, "rxe0", 1, 1, &g), 0);
	assert_int_equal(g.index, 2);
	/* no GID table */
	assert_int_equal(ib_sysfs_choose_gid(ROOT, "mlx5_2", 1, 1, &g), -1);
	assert_int_equal(g.index, -1);
	/* one entry: types normalised, empty entries refused */
	assert_int_equal(ib_sysfs_gid(ROOT, "mlx5_1", 1, 0, &g), 0);
	assert_string_equal(g.type, "RoCE v1");
	assert_int_equal(ib_sysfs_gid(ROOT, "mlx5_1", 1, 4, &g), -1);
	assert_int_equal(ib_sysfs_gid(ROOT, "mlx5_1", 1, 9, &g), -1);

	assert_int_equal(ib_gid_parse("fe80:0000:0000:0000:b8ce:f603:00f2:1a3c", raw), 0);
	assert_int_equal(raw[0], 0xfe);
	assert_int_equal(raw[1], 0x80);
	assert_int_equal(raw[15], 0x3c);
	assert_int_equal(ib_gid_parse("FE80:0000:0000:0000:B8CE:F603:00F2:1A3C", raw), 0);
	assert_int_equal(raw[8], 0xb8);
	assert_int_equal(ib_gid_parse("fe80::1", raw), -1);
	assert_int_equal(ib_gid_parse("fe80:0000:0000:0000:b8ce:f603:00f2:1a3", raw), -1);
	assert_int_equal(ib_gid_parse("fe80:0000:0000:0000:b8ce:f603:00f2:1a3c:", raw), -1);
	assert_int_equal(ib_gid_parse("ge80:0000:0000:0000:b8ce:f603:00f2:1a3c", raw), -1);
}

static uint64_t value_of(const struct ib_counters *c, const char *name)
{
	for (int i = 0; i < c->n; i++)
		if (!strcmp(c->c[i].name, name))
			return c->c[i].value;
	fail_msg("counter %s missing", name);
	return 0;
}

static void test_counters(void **state)
{
	static struct ib_counters c;
	uint64_t v;

	(void)state;
	/* 17 counters; the unparsable one is left out */
	assert_int_equal(ib_counters_read(ROOT, "mlx5_0", 1, "counters", &c), 17);
	assert_int_equal(value_of(&c, "link_downed"), 1);
	assert_int_equal(value_of(&c, "port_rcv_errors"), 3);
	assert_true(value_of(&c, "port_xmit_data") == 123456789012ULL);
	for (int i = 1; i < c.n; i++)
		assert_true(strcmp(c.c[i - 1].name, c.c[i].name) < 0);
	assert_int_equal(ib_counters_read(ROOT, "mlx5_0", 1, "hw_counters", &c), 2);
	assert_int_equal(value_of(&c, "rnr_nak_retry_err"), 2);
	assert_int_equal(ib_counters_read(ROOT, "mlx5_2", 1, "counters", &c), -1);

	assert_int_equal(ib_counter_parse("12", &v), 0);
	assert_int_equal(v, 12);
	assert_int_equal(ib_counter_parse("18446744073709551615", &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(ib_counter_parse("18446744073709551616", &v), -1);
	assert_int_equal(ib_counter_parse("-1", &v), -1);
	assert_int_equal(ib_counter_parse("", &v), -1);
	assert_int_equal(ib_counter_parse("1x", &v), -1);
	assert_int_equal(ib_counter_parse("N/A", &v), -1);
}

static void test_counter_delta(void **state)
{
	static struct ib_counters before, after, hb, ha;
	json_t *d, *j;

	(void)state;
	assert_int_equal(ib_counters_read(ROOT, "mlx5_0", 1, "counters", &before), 17);
	assert_int_equal(ib_counters_read(AFTER, "mlx5_0", 1, "counters", &after), 17);
	d = ib_counters_delta_json(&before, &after);
	assert_int_equal(json_integer_value(json_object_get(d, "symbol_error")), 12);
	assert_int_equal(json_integer_value(json_object_get(d, "link_downed")), 0);
	assert_int_equal(json_integer_value(json_object_get(d, "port_xmit_discards")), 4);
	assert_int_equal(json_integer_value(json_object_get(d, "port_xmit_wait")), 600);
	assert_true(json_integer_value(json_object_get(d, "port_xmit_data")) == 10000000000LL);
	/* went down (reset during the run), missing after, new after: null, not a number */
	assert_true(json_is_null(json_object_get(d, "port_rcv_errors")));
	assert_true(json_is_null(json_object_get(d, "port_rcv_packets")));
	assert_true(json_is_null(json_object_get(d, "link_new_counter")));
	assert_null(json_object_get(d, "unicast_rcv_packets"));
	assert_int_equal(json_object_size(d), 18);
	json_decref(d);
	j = ib_counters_json(&before);
	assert_int_equal(json_integer_value(json_object_get(j, "port_rcv_errors")), 3);
	assert_int_equal(json_object_size(j), 17);
	json_decref(j);

	assert_int_equal(ib_counters_read(ROOT, "mlx5_0", 1, "hw_counters", &hb), 2);
	assert_int_equal(ib_counters_read(AFTER, "mlx5_0", 1, "hw_counters", &ha), 2);
	d = ib_counters_delta_json(&hb, &ha);
	assert_int_equal(json_integer_value(json_object_get(d, "out_of_buffer")), 3);
	assert_int_equal(json_integer_value(json_object_get(d, "rnr_nak_retry_err")), 0);
	json_decref(d);
}

static struct ib_qp_info sample_info(void)
{
	struct ib_qp_info q = {
		.settings = 0xdeadbeef, .lid = 0x1f, .link_layer = 2, .mtu = 5, .gid_index = 3,
		.qpn = 0xabcdef, .psn = 0x123456, .rkey = 0x89abcdef,
		.addr = 0x00007f0012345000ULL, .len = 16 << 20, .lat_rkey = 0x11223344,
		.lat_addr = 0x00007f00aaaa0000ULL, .lat_len = 8,
	};

	for (int i = 0; i < 16; i++)
		q.gid[i] = (uint8_t)(0xf0 + i);
	return q;
}

static void test_qpinfo(void **state)
{
	struct ib_qp_info q = sample_info(), d, bad;
	uint8_t buf[IB_QPINFO_SIZE];
	char err[128];

	(void)state;
	ib_qpinfo_encode(&q, buf);
	/* big-endian, magic first, fields where the layout says */
	assert_memory_equal(buf, "CCIB", 4);
	assert_int_equal(buf[4] << 8 | buf[5], IB_QPINFO_VERSION);
	assert_int_equal(buf[6] << 8 | buf[7], IB_QPINFO_SIZE);
	assert_int_equal(buf[24], 0x00);
	assert_int_equal(buf[25], 0xab);
	assert_int_equal(buf[27], 0xef);
	assert_int_equal(ib_qpinfo_decode(buf, sizeof(buf), &d, err, sizeof(err)), 0);
	assert_memory_equal(&d, &q, sizeof(q));

	/* a failed side sends its status only; the rest is not checked */
	bad = (struct ib_qp_info){ .status = 1 };
	ib_qpinfo_encode(&bad, buf);
	assert_int_equal(ib_qpinfo_decode(buf, sizeof(buf), &d, err, sizeof(err)), 0);
	assert_int_equal(d.status, 1);

	ib_qpinfo_encode(&q, buf);
	assert_int_equal(ib_qpinfo_decode(buf, sizeof(buf) - 1, &d, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "95 bytes"));
	assert_int_equal(ib_qpinfo_decode(buf, 4, &d, err, sizeof(err)), -1);
	buf[0] = 'X';
	assert_int_equal(ib_qpinfo_decode(buf, sizeof(buf), &d, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "magic"));
	ib_qpinfo_encode(&q, buf);
	buf[5] = 2;
	assert_int_equal(ib_qpinfo_decode(buf, sizeof(buf), &d, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "version 2"));

	bad = q;
	bad.qpn = 0;
	ib_qpinfo_encode(&bad, buf);
	assert_int_equal(ib_qpinfo_decode(buf, sizeof(buf), &d, err, sizeof(err)), -1);
	bad = q;
	bad.qpn = 0x1000000;
	ib_qpinfo_encode(&bad, buf);
	assert_int_equal(ib_qpinfo_decode(buf, sizeof(buf), &d, err, sizeof(err)), -1);
	bad = q;
	bad.psn = 0x1000000;
	ib_qpinfo_encode(&bad, buf);
	assert_int_equal(ib_qpinfo_decode(buf, sizeof(buf), &d, err, sizeof(err)), -1);
	bad = q;
	bad.mtu = 6;
	ib_qpinfo_encode(&bad, buf);
	assert_int_equal(ib_qpinfo_decode(buf, sizeof(buf), &d, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "MTU"));
	bad = q;
	bad.link_layer = 3;
	ib_qpinfo_encode(&bad, buf);
	assert_int_equal(ib_qpinfo_decode(buf, sizeof(buf), &d, err, sizeof(err)), -1);
	bad = q;
	bad.gid_index = -1;   /* RoCE needs a GID */
	ib_qpinfo_encode(&bad, buf);
	assert_int_equal(ib_qpinfo_decode(buf, sizeof(buf), &d, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "RoCE"));
	bad.link_layer = 1;   /* InfiniBand without GRH is fine */
	ib_qpinfo_encode(&bad, buf);
	assert_int_equal(ib_qpinfo_decode(buf, sizeof(buf), &d, err, sizeof(err)), 0);
	assert_int_equal(d.gid_index, -1);
	bad = q;
	bad.lat_len = 0;
	ib_qpinfo_encode(&bad, buf);
	assert_int_equal(ib_qpinfo_decode(buf, sizeof(buf), &d, err, sizeof(err)), -1);
}

static void test_settings_hash(void **state)
{
	uint64_t a[3] = { 8 << 20, 32, 100 }, b[3] = { 8 << 20, 32, 101 };

	(void)state;
	assert_int_equal(ib_settings_hash(a, 0), 2166136261u);   /* FNV-1a offset basis */
	assert_int_equal(ib_settings_hash(a, 3), ib_settings_hash(a, 3));
	assert_int_not_equal(ib_settings_hash(a, 3), ib_settings_hash(b, 3));
	assert_int_not_equal(ib_settings_hash(a, 2), ib_settings_hash(a, 3));
}

/* rank_node for nodes of the given rank counts, ranks grouped by node */
static int grouped(const int *ranks, int nnodes, int *rank_node)
{
	int size = 0;

	for (int n = 0; n < nnodes; n++)
		for (int i = 0; i < ranks[n]; i++)
			rank_node[size++] = n;
	return size;
}

static void test_rails_uniform(void **state)
{
	int ranks[2] = { 8, 8 }, rails[2] = { 8, 8 }, rank_node[16], size, rail, pn;
	struct ib_layout l;

	(void)state;
	size = grouped(ranks, 2, rank_node);
	assert_int_equal(ib_layout_init(&l, 2, rank_node, size, rails), 0);
	assert_int_equal(ib_layout_turns(&l), 1);
	/* local rank i drives HCA i and meets rail i of the other node */
	for (int i = 0; i < 8; i++) {
		assert_int_equal(ib_pair_of(&l, 0, 0, 0, i, &rail, &pn), 8 + i);
		assert_int_equal(rail, i);
		assert_int_equal(pn, 1);
		assert_int_equal(ib_pair_of(&l, 0, 0, 1, i, &rail, &pn), i);
		assert_int_equal(ib_rail_rank(&l, 1, i), 8 + i);
	}
	assert_int_equal(ib_pair_of(&l, 0, 1, 0, 0, &rail, &pn), -1);   /* no second turn */
	ib_layout_free(&l);
}

static void test_rails_uneven(void **state)
{
	/* node 2 has 4 HCAs: its ranks 4-7 have none; rails 4-7 of nodes 0, 1 skip it */
	int ranks[3] = { 8, 8, 8 }, rails[3] = { 8, 8, 4 }, rank_node[24], size, rail, pn;
	struct ib_layout l;

	(void)state;
	size = grouped(ranks, 3, rank_node);
	assert_int_equal(ib_layout_init(&l, 3, rank_node, size, rails), 0);
	assert_int_equal(ib_layout_turns(&l), 1);
	assert_int_equal(ib_rail_of(&l, 2, 5, 0), -1);
	assert_int_equal(ib_rail_rank(&l, 2, 5), -1);
	for (int round = 0; round < schedule_rounds(3); round++) {
		int p0 = schedule_pair(3, round, 0);

		for (int i = 0; i < 8; i++) {
			int peer = ib_pair_of(&l, round, 0, 0, i, &rail, &pn);

			if (p0 < 0 || (p0 == 2 && i >= 4)) {
				assert_int_equal(peer, -1);
				assert_int_equal(rail, -1);
			} else {
				assert_int_equal(peer, 8 * p0 + i);
				assert_int_equal(pn, p0);
			}
			/* a rank of node 2 without an HCA is idle in every round */
			assert_int_equal(ib_pair_of(&l, round, 0, 2, 4 + i % 4, &rail, &pn), -1);
		}
	}
	ib_layout_free(&l);
}

static void test_rails_turns(void **state)
{
	/* one rank per node, 4 HCAs: the rank drives rail t in turn t */
	int ranks[2] = { 1, 1 }, rails[2] = { 4, 4 }, rank_node[2], size, rail, pn;
	/* node 0 runs 2 ranks, node 1 runs 4: L = 2 on both, so both ends take the same turn */
	int ranks2[2] = { 2, 4 }, rank_node2[6];
	struct ib_layout l;

	(void)state;
	size = grouped(ranks, 2, rank_node);
	assert_int_equal(ib_layout_init(&l, 2, rank_node, size, rails), 0);
	assert_int_equal(ib_layout_turns(&l), 4);
	for (int t = 0; t < 4; t++) {
		assert_int_equal(ib_pair_of(&l, 0, t, 0, 0, &rail, &pn), 1);
		assert_int_equal(rail, t);
	}
	ib_layout_free(&l);

	size = grouped(ranks2, 2, rank_node2);
	assert_int_equal(ib_layout_init(&l, 2, rank_node2, size, rails), 0);
	assert_int_equal(l.ranks_min, 2);
	assert_int_equal(ib_layout_turns(&l), 2);
	assert_int_equal(ib_rail_rank(&l, 1, 3), 3);    /* node 1's local rank 1 = world rank 3 */
	assert_int_equal(ib_pair_of(&l, 0, 1, 0, 1, &rail, &pn), 3);
	assert_int_equal(rail, 3);
	assert_int_equal(ib_pair_of(&l, 0, 1, 1, 1, &rail, &pn), 1);
	assert_int_equal(ib_rail_of(&l, 1, 2, 0), -1);   /* beyond L: idle */
	ib_layout_free(&l);
}

static void test_rails_interleaved(void **state)
{
	/* ranks placed round-robin over nodes: local rank = order of world rank on the node */
	int rank_node[6] = { 0, 1, 2, 0, 1, 2 }, rails[3] = { 2, 2, 2 }, rail, pn;
	int met[3][3][2] = { { { 0 } } };
	struct ib_layout l;

	(void)state;
	assert_int_equal(ib_layout_init(&l, 3, rank_node, 6, rails), 0);
	assert_int_equal(ib_rail_rank(&l, 0, 1), 3);
	assert_int_equal(ib_rail_rank(&l, 2, 0), 2);
	/* every pair of nodes meets once per rail over the rounds, never a node twice a round */
	for (int round = 0; round < schedule_rounds(3); round++)
		for (int n = 0; n < 3; n++)
			for (int i = 0; i < 2; i++) {
				int peer = ib_pair_of(&l, round, 0, n, i, &rail, &pn);

				if (peer < 0)
					continue;
				assert_int_equal(rank_node[peer], pn);
				assert_int_equal(rail, i);
				met[n][pn][rail]++;
			}
	for (int a = 0; a < 3; a++)
		for (int b = 0; b < 3; b++)
			for (int r = 0; r < 2; r++)
				assert_int_equal(met[a][b][r], a != b);
	ib_layout_free(&l);
}

/*
 * The grouped schedule in place of the tournament (1,000 nodes: docs/rdma.md):
 * 8 nodes of one rank and one rail, in groups of 3: every pair inside a group
 * meets, every node crosses, no node twice a round, and the
 * rounds are the plan's. A bad plan (a node twice in a round) is refused.
 */
static void test_rails_grouped(void **state)
{
	int rank_node[8] = { 0, 1, 2, 3, 4, 5, 6, 7 }, rails[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
	int group_of[8], *pairs, *round_of, np, within, rounds, rail, pn, met[8][8] = { { 0 } };
	int twice[4] = { 0, 1, 1, 2 }, r0[2] = { 0, 0 };
	struct ib_layout l;

	(void)state;
	for (int x = 0; x < 8; x++)
		group_of[x] = x / 3;
	rounds = schedule_grouped(8, group_of, 3, &pairs, &round_of, &np, &within);
	assert_true(rounds > 0 && rounds < schedule_rounds(8) + 3);
	assert_int_equal(ib_layout_init(&l, 8, rank_node, 8, rails), 0);
	assert_int_equal(l.nrounds, schedule_rounds(8));
	assert_int_equal(ib_layout_rounds(&l, twice, r0, 2, 1), -1);   /* node 1 twice */
	assert_null(l.partner);
	assert_int_equal(ib_layout_rounds(&l, pairs, round_of, np, rounds), 0);
	assert_int_equal(l.nrounds, rounds);
	for (int round = 0; round < l.nrounds; round++) {
		int busy[8] = { 0 };

		for (int n = 0; n < 8; n++) {
			int peer = ib_pair_of(&l, round, 0, n, 0, &rail, &pn);

			if (peer < 0)
				continue;
			assert_int_equal(ib_partner(&l, round, pn), n);
			assert_int_equal(busy[n]++, 0);
			met[n][pn]++;
		}
	}
	for (int a = 0; a < 8; a++) {
		int crossed = 0;

		for (int b = 0; b < 8; b++) {
			if (a != b && group_of[a] == group_of[b])
				assert_int_equal(met[a][b], 1);
			crossed += group_of[a] != group_of[b] && met[a][b];
		}
		assert_true(crossed >= 1);
	}
	assert_int_equal(ib_partner(&l, rounds, 0), -1);
	free(pairs);
	free(round_of);
	ib_layout_free(&l);
}

static void test_rails_bad(void **state)
{
	int rank_node[3] = { 0, 1, 3 }, rails[3] = { 1, 1, 1 }, none[2] = { 0, 0 }, rn[2] = { 0, 0 };
	struct ib_layout l;

	(void)state;
	assert_int_equal(ib_layout_init(&l, 3, rank_node, 3, rails), -1);   /* node 3 of 3 */
	assert_int_equal(ib_layout_init(&l, 2, rn, 2, rails), -1);          /* node 1 has no rank */
	rn[1] = 1;
	assert_int_equal(ib_layout_init(&l, 2, rn, 2, none), 0);
	assert_int_equal(ib_layout_turns(&l), 0);                            /* no rails: nothing to do */
	ib_layout_free(&l);
}

static void test_pci_relation(void **state)
{
	const char *nic = "/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:02.0/0000:19:00.0";
	const char *gpu_sw = "/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0/0000:18:00.0";
	const char *gpu_rc = "/sys/devices/pci0000:15/0000:15:03.0/0000:1b:00.0";
	const char *gpu_x = "/sys/devices/pci0000:97/0000:97:01.0/0000:98:00.0";

	(void)state;
	assert_string_equal(ib_pci_relation(nic, gpu_sw), "same_switch");
	assert_string_equal(ib_pci_relation(nic, gpu_rc), "same_root");
	assert_string_equal(ib_pci_relation(nic, gpu_x), "cross_root");
	assert_string_equal(ib_pci_relation("", gpu_x), "cross_root");
}

/* storage ports run as InfiniBand (NDR200) beside the compute rails (NDR400) */
static void test_rails_rate(void **state)
{
	const double hgx[] = { 400, 400, 400, 0, 200, 200, 400, 400, 400, 400 };
	const int up[] = { 1, 1, 1, 0, 1, 1, 1, 1, 1, 1 };
	const double tie[] = { 200, 400 };
	const int both[] = { 1, 1 }, none[] = { 0, 0 };
	char msg[200];
	(void)state;

	assert_true(ib_rails_rate(hgx, up, 10) == 400);
	/* a tie names no rate (nothing left out); a down port's rate counts for nothing */
	assert_true(ib_rails_rate(tie, both, 2) == 0);
	assert_true(ib_rails_rate(tie, none, 2) == 0);
	assert_true(ib_rails_rate((const double[]){ 800, 400, 200, 400 }, (const int[]){ 1, 1, 1, 1 },
				  4) == 400);
	/* one rail per GPU: more is flagged as well as fewer; unknown GPUs flag nothing */
	assert_int_equal(ib_rails_vs_gpus(8, 8, msg, sizeof(msg)), 0);
	assert_string_equal(msg, "");
	assert_int_equal(ib_rails_vs_gpus(10, 8, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "10 InfiniBand rail(s) for 8 GPU(s): more ports than GPUs"));
	assert_int_equal(ib_rails_vs_gpus(6, 8, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "fewer ports than GPUs"));
	assert_int_equal(ib_rails_vs_gpus(8, 0, msg, sizeof(msg)), 0);
	assert_int_equal(ib_rails_vs_gpus(8, -1, msg, sizeof(msg)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rails_rate),
		cmocka_unit_test(test_rate_codes),
		cmocka_unit_test(test_rate_parse),
		cmocka_unit_test(test_sysfs_devices),
		cmocka_unit_test(test_sysfs_ports),
		cmocka_unit_test(test_gid_choice),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_counter_delta),
		cmocka_unit_test(test_qpinfo),
		cmocka_unit_test(test_settings_hash),
		cmocka_unit_test(test_rails_uniform),
		cmocka_unit_test(test_rails_uneven),
		cmocka_unit_test(test_rails_turns),
		cmocka_unit_test(test_rails_interleaved),
		cmocka_unit_test(test_rails_bad),
		cmocka_unit_test(test_rails_grouped),
		cmocka_unit_test(test_pci_relation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
