#ifndef CCDIAG_IB_PLAN_H
#define CCDIAG_IB_PLAN_H

/*
 * The pure parts of the ib probe: the queue-pair information two ranks
 * exchange over MPI, and which rank measures which rail against whom.
 * No verbs, no MPI: unit-tested in tests/unit/test_ib.c.
 */
#include <stddef.h>
#include <stdint.h>

/*
 * What one side of a rail pair tells the other before connecting: enough to
 * bring an RC queue pair to RTR (lid, qpn, psn, gid, mtu) and to write into
 * the peer's buffers (rkey and address of the bandwidth and latency
 * regions), plus a fingerprint of the settings so that two ranks that
 * somehow disagree on them (different binaries or command lines) refuse to
 * measure instead of measuring different things.
 */
struct ib_qp_info {
	uint32_t status;         /* 0 ready; else the sender failed its setup (the pair is off) */
	uint32_t settings;       /* ib_settings_hash of the sender's parameters */
	uint16_t lid;            /* InfiniBand LID; 0 on RoCE */
	uint8_t link_layer;      /* 1 InfiniBand, 2 Ethernet (the verbs' values) */
	uint8_t mtu;             /* active MTU as the verbs enum: 1 = 256 ... 5 = 4096 */
	int16_t gid_index;       /* -1: no GRH (InfiniBand within a subnet) */
	uint32_t qpn;            /* 24 bits */
	uint32_t psn;            /* 24 bits */
	uint8_t gid[16];
	uint32_t rkey;           /* bandwidth region */
	uint64_t addr;
	uint64_t len;
	uint32_t lat_rkey;       /* latency region (host memory) */
	uint64_t lat_addr;
	uint64_t lat_len;
};

#define IB_QPINFO_MAGIC 0x43434942u  /* "CCIB" */
#define IB_QPINFO_VERSION 1
#define IB_QPINFO_SIZE 96            /* encoded bytes, fixed */

/* Encodes q into buf (IB_QPINFO_SIZE bytes, big-endian, magic and version first). */
void ib_qpinfo_encode(const struct ib_qp_info *q, uint8_t *buf);

/*
 * Decodes len bytes into q, checking magic, version, size and the ranges
 * of qpn, psn, mtu, link layer and GID index. Returns 0, or -1 with a
 * one-line reason in err.
 */
int ib_qpinfo_decode(const uint8_t *buf, size_t len, struct ib_qp_info *q, char *err,
		     size_t errlen);

/* FNV-1a over n 64-bit settings: both sides must compute the same value. */
uint32_t ib_settings_hash(const uint64_t *v, int n);

/*
 * Rails. On each node the RDMA ports measured are numbered 0..nrails-1
 * (sorted by device, then port): rail r of node A pairs with rail r of its
 * partner node, as rail-optimised fabrics wire them. Rail r is driven by
 * local rank r % L in turn r / L, where L is the smallest number of ranks
 * on any node, so that both ends of a rail take the same turn even when
 * nodes run different numbers of ranks. With L >= rails (a rank per GPU)
 * every rail is measured at once; with one rank per node they take turns.
 * A rail that only one of the two nodes has is not measured (the caller
 * reports it); ranks beyond the rails stay idle.
 */
struct ib_layout {
	int nnodes;
	int ranks_min;           /* L */
	int rails_max;           /* most rails on any node */
	const int *nrails;       /* [nnodes] rails of each node */
	int *first;              /* [nnodes + 1] offsets into rank */
	int *rank;               /* world ranks of node n by local rank: rank[first[n] + local] */
	int nrounds;             /* rounds of node pairs: schedule_rounds(nnodes), or a plan's */
	int *partner;            /* NULL: the tournament; else [nrounds * nnodes]: the partner
				  * node of node n in round r at partner[r * nnodes + n], -1 idle */
};

/*
 * Builds the layout from each rank's node (rank_node[size], nodes 0..nnodes-1,
 * local ranks in order of world rank) and the rails of each node. Returns 0,
 * or -1 for a bad argument or no memory.
 */
int ib_layout_init(struct ib_layout *l, int nnodes, const int *rank_node, int size,
		   const int *nrails);

void ib_layout_free(struct ib_layout *l);

/*
 * Replaces the tournament with a plan of node pairs (the grouped schedule,
 * probes/schedule.h): pairs[2k], pairs[2k+1] meet in round round_of[k] <
 * nrounds, no node twice in a round. Returns 0, or -1 for a bad pair or no
 * memory (the layout keeps the tournament).
 */
int ib_layout_rounds(struct ib_layout *l, const int *pairs, const int *round_of, int npairs,
		     int nrounds);

/* The partner node of node in round (of l->nrounds), or -1 (a bye, out of range). */
int ib_partner(const struct ib_layout *l, int round, int node);

/* Turns needed so that every rail gets measured: ceil(rails_max / L); 0 without rails. */
int ib_layout_turns(const struct ib_layout *l);

/* The rail the rank of (node, local rank) drives in turn t, or -1. */
int ib_rail_of(const struct ib_layout *l, int node, int local, int turn);

/* The world rank driving rail r of node n, or -1 when the node lacks it. */
int ib_rail_rank(const struct ib_layout *l, int node, int rail);

/*
 * The work of the rank at (node, local) in round round (of l->nrounds) and
 * turn turn: returns the partner's world rank
 * and sets *rail and *partner_node, or returns -1 when the rank is idle
 * (no rail this turn, a bye, or the partner node lacks the rail).
 */
int ib_pair_of(const struct ib_layout *l, int round, int turn, int node, int local, int *rail,
	       int *partner_node);

#endif
