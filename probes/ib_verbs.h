#ifndef CCDIAG_IB_VERBS_H
#define CCDIAG_IB_VERBS_H

/*
 * One rail of the ib probe over libibverbs: a device port with its
 * protection domain, completion queue and registered buffers, and an RC
 * queue pair to one peer at a time. Every verbs call is checked; a failed
 * setup releases what it acquired in reverse order and says what failed in
 * err, naming the device. Built only with HAVE_VERBS.
 */
#ifdef HAVE_VERBS

#include "ib_plan.h"
#include "ib_sysfs.h"

#include <infiniband/verbs.h>
#include <stddef.h>
#include <stdint.h>

/* Memory the bandwidth region lives in. */
enum ib_mem_kind { IB_MEM_HOST, IB_MEM_GPU };

struct ib_rail_cfg {
	const char *dev;         /* device name */
	int port;
	int gid_index;           /* -1: InfiniBand without GRH; RoCE needs one */
	size_t bytes;            /* bandwidth message size; the region is twice it */
	size_t lat_bytes;        /* largest latency message; the region is twice it */
	int depth;               /* WRITEs in flight */
	enum ib_mem_kind mem;
	int gpu;                 /* CUDA device for IB_MEM_GPU */
	int numa_node;           /* the NIC's NUMA node, for host regions; -1 unknown */
	int sl, tclass;          /* service level, traffic class (RoCE DSCP << 2) */
	int qp_timeout, retry;   /* ack timeout exponent, retry count */
};

struct ib_rail {
	struct ib_rail_cfg cfg;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr, *lat_mr;
	uint8_t *buf;            /* bandwidth region: [0, bytes) source, [bytes, 2 bytes) target */
	size_t buf_len;
	const char *reg_path;    /* "host", "dmabuf" or "peermem" */
	int dmabuf_fd;
	uint8_t *lat_buf;        /* host memory, same split */
	size_t lat_len;
	int host_numa;           /* NUMA node the host regions are bound to; -1 not bound */
	int relaxed;             /* every registration asked for relaxed ordering: 1; 0 one did
				  * not (refused, or rdma-core without it); -1 none made */
	struct ibv_port_attr pattr;
	union ibv_gid gid;
	struct ibv_qp *qp;       /* to the current peer; NULL between pairs */
	uint32_t max_inline;
	struct ib_qp_info local, remote;
	/* the fake transport: shared memory instead of a device */
	uint8_t *shm, *peer_shm;
	size_t shm_len, peer_len;
	char shm_name[64];
	uint64_t *pcie;          /* the HCA's PCIe link clocks (ns), shared by its ranks; NULL: none */
	double pcie_Bps;         /* bytes/s a direction of that link carries */
	char pcie_name[128];     /* its shared-memory name */
};

/*
 * Opens cfg->dev, queries the port, allocates the PD, the CQ and both
 * regions and registers them (GPU memory: dmabuf first, then plain
 * registration through nvidia-peermem). Returns 0, or -1 with err set and
 * nothing left allocated.
 */
int ib_rail_open(struct ib_rail *r, const struct ib_rail_cfg *cfg, char *err, size_t len);

/*
 * Registers len bytes at p (host memory, or GPU memory through
 * nvidia-peermem) on r's PD, asking for IBV_ACCESS_RELAXED_ORDERING on top
 * of access, then without it when refused; r->relaxed says which. Returns
 * the region, or NULL (errno from libibverbs).
 */
struct ibv_mr *ib_rail_reg_host(struct ib_rail *r, void *p, size_t len, int access);

/*
 * Registers the GPU region r->buf (r->buf_len bytes): dmabuf first (needs
 * no kernel module beyond the GPU driver and rdma-core >= 34), then plain
 * registration of the device pointer, which works only with nvidia-peermem
 * loaded; each asks for relaxed ordering first, as for host memory. Sets
 * r->mr, r->reg_path and r->dmabuf_fd. Returns 0, or -1 with err naming
 * both paths' failures.
 */
int ib_rail_reg_gpu(struct ib_rail *r, int access, char *err, size_t len);

/* Releases everything in reverse order; safe on a partly opened or closed rail. */
void ib_rail_close(struct ib_rail *r);

/*
 * Creates an RC queue pair, brings it to INIT and fills r->local for the
 * peer (settings = the parameters' fingerprint). Returns 0 or -1 with err.
 */
int ib_rail_qp_create(struct ib_rail *r, uint32_t settings, char *err, size_t len);

/*
 * The peer's port speaks the same link layer and its regions hold what these
 * settings write (both transports check this before connecting). 0 or -1 with err.
 */
int ib_rail_peer_fits(const struct ib_rail *r, const struct ib_qp_info *remote, char *err,
		      size_t len);

/* Takes the peer's information and brings the queue pair to RTR, then RTS. Returns 0 or -1. */
int ib_rail_qp_connect(struct ib_rail *r, const struct ib_qp_info *remote, char *err, size_t len);

/* Destroys the queue pair (reaping nothing: call between measurements). */
void ib_rail_qp_destroy(struct ib_rail *r);

/*
 * How long a busy loop may spin: until deadline (timer_now() seconds; 0 =
 * no limit) or until stop(arg) returns nonzero (the peer gave up and said
 * so over MPI). Both are looked at every few thousand turns.
 */
struct ib_wait {
	double deadline;
	int (*stop)(void *arg);
	void *arg;
};

/*
 * Posts count RDMA WRITEs of bytes from the source half of the region to
 * the target half of the peer's, keeping depth in flight, and waits for
 * every completion, giving up as w says. Returns 0, or -1 with err naming
 * the failed call or completion status.
 */
int ib_rail_write_burst(struct ib_rail *r, size_t bytes, int count, int depth,
			const struct ib_wait *w, char *err, size_t len);

/*
 * RDMA WRITE ping-pong of bytes (1 .. cfg.lat_bytes): the initiator writes,
 * the other side spins on the last byte of its target half and writes back.
 * warmup untimed exchanges, then iters timed ones; the initiator stores
 * each round trip / 2 in us in one_way_us[iters]. Returns 0 or -1 with err.
 */
int ib_rail_pingpong(struct ib_rail *r, size_t bytes, int warmup, int iters, int initiator,
		     double *one_way_us, const struct ib_wait *w, char *err, size_t len);

/*
 * GPUDirect RDMA check on an open rail: registers 2 MiB of memory of CUDA
 * device gpu, dmabuf first, then peermem, and releases it. Returns 0 with
 * *path "dmabuf" or "peermem", or -1 with the reasons of both in why.
 */
int ib_rail_gdr_check(struct ib_rail *r, int gpu, const char **path, char *why, size_t len);

/* A port as discovery sees it (the verbs' codes and enums). */
struct ib_port_query {
	int state;               /* enum ibv_port_state: IBV_PORT_ACTIVE = 4 */
	int ethernet;            /* RoCE */
	unsigned width, speed;   /* active width and speed codes; 0 unknown */
	int lid;
	int active_mtu, max_mtu; /* enum ibv_mtu */
};

/*
 * Where rails come from. "verbs" is the real thing. "fake" (selected by
 * CCPROBE_IB_FAKE=ROOT, for tests only) lists the devices of a sysfs tree
 * under ROOT and moves data with memcpy through POSIX shared memory between
 * ranks of one host: one-sided writes into the peer's buffer, like RDMA
 * WRITE, so that the probe's pairing, protocol, records and failure paths
 * run without RDMA hardware. Its figures are memory copies, and its records
 * say transport "fake".
 */
struct ib_transport {
	const char *name;
	const char *root;        /* sysfs root of the inventory; NULL = /sys */
	/* Sorted device names; 0 with the reason in why when there are none. */
	int (*list)(const struct ib_transport *t, char (*names)[IB_NAME_LEN], int max, char *why,
		    size_t len);
	/* Number of ports of dev and its firmware; -1 with err. */
	int (*query_device)(const struct ib_transport *t, const char *dev, char *fw, size_t fwlen,
			    char *err, size_t len);
	/* One port; 0 or -1. */
	int (*query_port)(const struct ib_transport *t, const char *dev, int port,
			  struct ib_port_query *q);
	int (*open)(struct ib_rail *r, const struct ib_rail_cfg *cfg, char *err, size_t len);
	void (*close)(struct ib_rail *r);
	int (*qp_create)(struct ib_rail *r, uint32_t settings, char *err, size_t len);
	int (*qp_connect)(struct ib_rail *r, const struct ib_qp_info *remote, char *err, size_t len);
	void (*qp_destroy)(struct ib_rail *r);
	int (*write_burst)(struct ib_rail *r, size_t bytes, int count, int depth,
			   const struct ib_wait *w, char *err, size_t len);
	int (*pingpong)(struct ib_rail *r, size_t bytes, int warmup, int iters, int initiator,
			double *one_way_us, const struct ib_wait *w, char *err, size_t len);
	int (*gdr_check)(struct ib_rail *r, int gpu, const char **path, char *why, size_t len);
};

extern const struct ib_transport ib_transport_verbs;

/* The fake transport over the sysfs tree at root (see above). */
void ib_transport_fake(struct ib_transport *t, const char *root);

/* Bytes as the verbs MTU enum stands for (IBV_MTU_4096 -> 4096); 0 when unknown. */
int ib_mtu_bytes(int mtu);

#endif /* HAVE_VERBS */
#endif
