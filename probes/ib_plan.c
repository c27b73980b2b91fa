/* probes/ib_plan.c: queue-pair information encoding and rail pairing for the ib probe. */
#include "ib_plan.h"
#include "schedule.h"
#include "../core/options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ encoding */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/*
 * Layout (big-endian): 0 magic, 4 version, 6 size, 8 status, 12 settings,
 * 16 lid, 18 link layer, 19 mtu, 20 gid index, 22 zero, 24 qpn, 28 psn,
 * 32 gid, 48 rkey, 52 lat_rkey, 56 addr, 64 len, 72 lat_addr, 80 lat_len,
 * 88 zero.
 */
void ib_qpinfo_encode(const struct ib_qp_info *q, uint8_t *buf)
{
	memset(buf, 0, IB_QPINFO_SIZE);
	put32(buf, IB_QPINFO_MAGIC);
	put16(buf + 4, IB_QPINFO_VERSION);
	put16(buf + 6, IB_QPINFO_SIZE);
	put32(buf + 8, q->status);
	put32(buf + 12, q->settings);
	put16(buf + 16, q->lid);
	buf[18] = q->link_layer;
	buf[19] = q->mtu;
	put16(buf + 20, (uint16_t)q->gid_index);
	put32(buf + 24, q->qpn);
	put32(buf + 28, q->psn);
	memcpy(buf + 32, q->gid, 16);
	put32(buf + 48, q->rkey);
	put32(buf + 52, q->lat_rkey);
	put64(buf + 56, q->addr);
	put64(buf + 64, q->len);
	put64(buf + 72, q->lat_addr);
	put64(buf + 80, q->lat_len);
}

int ib_qpinfo_decode(const uint8_t *buf, size_t len, struct ib_qp_info *q, char *err,
		     size_t errlen)
{
	memset(q, 0, sizeof(*q));
	if (len < 8)
		return options_fail(err, errlen, "queue-pair information too short: %zu bytes",
				    len);
	if (get32(buf) != IB_QPINFO_MAGIC)
		return options_fail(err, errlen,
				    "queue-pair information has a bad magic number 0x%08x",
				    get32(buf));
	if (get16(buf + 4) != IB_QPINFO_VERSION)
		return options_fail(err, errlen,
				    "queue-pair information version %u, expected %u "
				    "(different ccprobe builds?)",
				    get16(buf + 4), IB_QPINFO_VERSION);
	if (get16(buf + 6) != IB_QPINFO_SIZE || len != IB_QPINFO_SIZE)
		return options_fail(err, errlen,
				    "queue-pair information of %zu bytes (says %u), expected %d",
				    len, get16(buf + 6), IB_QPINFO_SIZE);
	q->status = get32(buf + 8);
	q->settings = get32(buf + 12);
	q->lid = get16(buf + 16);
	q->link_layer = buf[18];
	q->mtu = buf[19];
	q->gid_index = (int16_t)get16(buf + 20);
	q->qpn = get32(buf + 24);
	q->psn = get32(buf + 28);
	memcpy(q->gid, buf + 32, 16);
	q->rkey = get32(buf + 48);
	q->lat_rkey = get32(buf + 52);
	q->addr = get64(buf + 56);
	q->len = get64(buf + 64);
	q->lat_addr = get64(buf + 72);
	q->lat_len = get64(buf + 80);
	if (q->status)
		return 0;   /* a failed side sends only its status */
	if (q->qpn == 0 || q->qpn > 0xffffff || q->psn > 0xffffff)
		return options_fail(err, errlen, "bad queue pair number %u or PSN %u",
				    q->qpn, q->psn);
	if (q->mtu < 1 || q->mtu > 5)
		return options_fail(err, errlen, "bad MTU code %u (1-5)", q->mtu);
	if (q->link_layer != 1 && q->link_layer != 2)
		return options_fail(err, errlen, "bad link layer %u", q->link_layer);
	if (q->gid_index < -1 || q->gid_index > 255 || (q->link_layer == 2 && q->gid_index < 0))
		return options_fail(err, errlen, "bad GID index %d for a %s port", q->gid_index,
				    q->link_layer == 2 ? "RoCE" : "InfiniBand");
	if (!q->len || !q->lat_len)
		return options_fail(err, errlen, "empty memory region");
	return 0;
}

uint32_t ib_settings_hash(const uint64_t *v, int n)
{
	uint32_t h = 2166136261u;

	for (int i = 0; i < n; i++)
		for (int b = 0; b < 8; b++) {
			h ^= (uint8_t)(v[i] >> (8 * b));
			h *= 16777619u;
		}
	return h;
}

/* ------------------------------------------------------------------ rails */

int ib_layout_init(struct ib_layout *l, int nnodes, const int *rank_node, int size,
		   const int *nrails)
{
	int *count;

	memset(l, 0, sizeof(*l));
	if (nnodes < 1 || size < nnodes)
		return -1;
	l->nnodes = nnodes;
	l->nrounds = schedule_rounds(nnodes);
	l->nrails = nrails;
	l->first = calloc((size_t)nnodes + 1, sizeof(int));
	l->rank = malloc((size_t)size * sizeof(int));
	count = calloc((size_t)nnodes, sizeof(int));
	if (!l->first || !l->rank || !count)
		goto fail;
	for (int r = 0; r < size; r++) {
		if (rank_node[r] < 0 || rank_node[r] >= nnodes)
			goto fail;
		count[rank_node[r]]++;
	}
	l->ranks_min = size;
	for (int n = 0; n < nnodes; n++) {
		if (!count[n] || nrails[n] < 0)
			goto fail;
		l->first[n + 1] = l->first[n] + count[n];
		if (count[n] < l->ranks_min)
			l->ranks_min = count[n];
		if (nrails[n] > l->rails_max)
			l->rails_max = nrails[n];
		count[n] = 0;
	}
	for (int r = 0; r < size; r++) {
		int n = rank_node[r];

		l->rank[l->first[n] + count[n]++] = r;
	}
	free(count);
	return 0;
fail:
	free(count);
	ib_layout_free(l);
	return -1;
}

void ib_layout_free(struct ib_layout *l)
{
	free(l->first);
	free(l->rank);
	free(l->partner);
	l->first = l->rank = l->partner = NULL;
}

int ib_layout_rounds(struct ib_layout *l, const int *pairs, const int *round_of, int npairs,
		     int nrounds)
{
	int n = l->nnodes, *t;

	if (nrounds < 0 || npairs < 0)
		return -1;
	t = malloc((size_t)(nrounds ? nrounds : 1) * (size_t)n * sizeof(int));
	if (!t)
		return -1;
	for (size_t i = 0; i < (size_t)nrounds * (size_t)n; i++)
		t[i] = -1;
	for (int k = 0; k < npairs; k++) {
		int a = pairs[2 * k], b = pairs[2 * k + 1], r = round_of[k];

		if (a < 0 || b < 0 || a >= n || b >= n || a == b || r < 0 || r >= nrounds ||
		    t[(size_t)r * n + a] >= 0 || t[(size_t)r * n + b] >= 0) {
			free(t);
			return -1;
		}
		t[(size_t)r * n + a] = b;
		t[(size_t)r * n + b] = a;
	}
	free(l->partner);
	l->partner = t;
	l->nrounds = nrounds;
	return 0;
}

int ib_partner(const struct ib_layout *l, int round, int node)
{
	if (!l->partner)
		return schedule_pair(l->nnodes, round, node);
	if (round < 0 || round >= l->nrounds || node < 0 || node >= l->nnodes)
		return -1;
	return l->partner[(size_t)round * l->nnodes + node];
}

int ib_layout_turns(const struct ib_layout *l)
{
	if (!l->ranks_min || !l->rails_max)
		return 0;
	return (l->rails_max + l->ranks_min - 1) / l->ranks_min;
}

int ib_rail_of(const struct ib_layout *l, int node, int local, int turn)
{
	int r;

	if (node < 0 || node >= l->nnodes || local < 0 || local >= l->ranks_min || turn < 0)
		return -1;
	r = turn * l->ranks_min + local;
	return r < l->nrails[node] ? r : -1;
}

int ib_rail_rank(const struct ib_layout *l, int node, int rail)
{
	if (node < 0 || node >= l->nnodes || rail < 0 || rail >= l->nrails[node] ||
	    !l->ranks_min)
		return -1;
	return l->rank[l->first[node] + rail % l->ranks_min];
}

int ib_pair_of(const struct ib_layout *l, int round, int turn, int node, int local, int *rail,
	       int *partner_node)
{
	int r = ib_rail_of(l, node, local, turn), p;

	*rail = -1;
	*partner_node = -1;
	if (r < 0)
		return -1;
	p = ib_partner(l, round, node);
	if (p < 0 || r >= l->nrails[p])
		return -1;
	*rail = r;
	*partner_node = p;
	return ib_rail_rank(l, p, r);
}
