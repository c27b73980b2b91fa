/*
 * probes/ib_verbs.c: one rail of the ib probe over libibverbs. Setup is a
 * ladder that unwinds in reverse on any failure; the measuring loops are
 * perftest-like (a window of WRITEs kept full; a ping-pong that spins on
 * the last byte of the buffer) and every busy loop gives up at the
 * watchdog's deadline instead of spinning forever.
 */
#ifdef HAVE_VERBS

#include "ib_verbs.h"
#include "ib_gpu.h"
#include "../core/numa.h"
#include "../core/timer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SPIN_CHECK 4096          /* busy-loop turns between looks at the clock */
#define CQ_POLL_EVERY 16         /* ping-pong spins between polls of the completion queue */
#define LAT_SIGNAL_EVERY 32      /* ping-pong: one signalled WRITE in this many */

int ib_mtu_bytes(int mtu)
{
	return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128 << mtu : 0;
}

static struct ibv_context *open_by_name(const char *name, char *err, size_t len)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n = 0, i;

	list = ibv_get_device_list(&n);
	if (!list) {
		snprintf(err, len, "cannot list RDMA devices: %s", strerror(errno));
		return NULL;
	}
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			break;
	if (i == n)
		snprintf(err, len, "no RDMA device '%s'", name);
	else if (!(ctx = ibv_open_device(list[i])))
		snprintf(err, len, "cannot open RDMA device '%s': %s", name, strerror(errno));
	ibv_free_device_list(list);
	return ctx;
}

/* Host memory, page aligned and zeroed, on the NIC's NUMA node (r->host_numa says). */
static void *host_alloc(struct ib_rail *r, size_t len)
{
	int bound;
	void *p = numa_alloc(len, r->cfg.numa_node, &bound);

	r->host_numa = bound;
	return p;
}

/*
 * IBV_ACCESS_RELAXED_ORDERING is an enum constant: rdma-core headers that
 * have it define IBV_ACCESS_OPTIONAL_FIRST (verbs_api.h), which #ifdef sees.
 */
#ifdef IBV_ACCESS_OPTIONAL_FIRST
#define ACCESS_RO IBV_ACCESS_RELAXED_ORDERING
#else
#define ACCESS_RO 0
#endif

/* One more registration of the rail: r->relaxed stays 1 only while every one asked for it. */
static void note_relaxed(struct ib_rail *r, int asked)
{
	r->relaxed = r->relaxed == 0 ? 0 : asked;
}

struct ibv_mr *ib_rail_reg_host(struct ib_rail *r, void *p, size_t len, int access)
{
	struct ibv_mr *mr = NULL;

	/*
	 * with relaxed ordering asked for (perftest's and NCCL's default: the NIC
	 * may reorder its PCIe writes, which all 8 rails both ways need on Hopper
	 * hosts); rdma-core drops the optional flag where the device lacks it
	 * rather than refuse, so whether the NIC uses it is its PCIe Device
	 * Control register's to say (the setup record)
	 */
	if (ACCESS_RO)
		mr = ibv_reg_mr(r->pd, p, len, access | ACCESS_RO);
	if (mr) {
		note_relaxed(r, 1);
	} else if ((mr = ibv_reg_mr(r->pd, p, len, access))) {
		note_relaxed(r, 0);
	}
	return mr;
}

int ib_rail_reg_gpu(struct ib_rail *r, int access, char *err, size_t len)
{
	char why_dmabuf[200] = "", why_peermem[200];
	int fd = ib_gpu_dmabuf_fd(r->buf, r->buf_len, why_dmabuf, sizeof(why_dmabuf));

	/* relaxed ordering asked for GPU memory too, as perftest and NCCL do; then without */
	if (fd >= 0) {
		uint64_t va = (uint64_t)(uintptr_t)r->buf;

		r->mr = ACCESS_RO ? ibv_reg_dmabuf_mr(r->pd, 0, r->buf_len, va, fd, access | ACCESS_RO) :
			NULL;
		if (r->mr)
			note_relaxed(r, 1);
		else if ((r->mr = ibv_reg_dmabuf_mr(r->pd, 0, r->buf_len, va, fd, access)))
			note_relaxed(r, 0);
		if (r->mr) {
			r->dmabuf_fd = fd;
			r->reg_path = "dmabuf";
			return 0;
		}
		snprintf(why_dmabuf, sizeof(why_dmabuf), "ibv_reg_dmabuf_mr: %s", strerror(errno));
		close(fd);
	}
	r->mr = ib_rail_reg_host(r, r->buf, r->buf_len, access);
	if (r->mr) {
		r->reg_path = "peermem";
		return 0;
	}
	snprintf(why_peermem, sizeof(why_peermem), "ibv_reg_mr of GPU memory: %s "
		 "(nvidia-peermem not loaded?)", strerror(errno));
	snprintf(err, len, "GPUDirect RDMA unavailable on '%s': dmabuf: %s; peermem: %s",
		 r->cfg.dev, why_dmabuf, why_peermem);
	return -1;
}

static int alloc_regions(struct ib_rail *r, char *err, size_t len)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

	r->lat_len = 2 * r->cfg.lat_bytes;
	r->lat_buf = host_alloc(r, r->lat_len);
	if (!r->lat_buf) {
		snprintf(err, len, "cannot allocate %zu bytes for latency on '%s'", r->lat_len,
			 r->cfg.dev);
		return -1;
	}
	r->lat_mr = ib_rail_reg_host(r, r->lat_buf, r->lat_len, access);
	if (!r->lat_mr) {
		snprintf(err, len, "cannot register %zu bytes on '%s': %s", r->lat_len, r->cfg.dev,
			 strerror(errno));
		return -1;
	}
	if (r->cfg.mem == IB_MEM_GPU) {
		void *p;

		if (ib_gpu_alloc(r->cfg.gpu, 2 * r->cfg.bytes, &p, &r->buf_len, err, len))
			return -1;
		r->buf = p;
		if (ib_gpu_memset(r->cfg.gpu, r->buf, 0, r->buf_len)) {
			snprintf(err, len, "cannot clear GPU memory on CUDA device %d", r->cfg.gpu);
			return -1;
		}
		return ib_rail_reg_gpu(r, access, err, len);
	}
	r->buf_len = 2 * r->cfg.bytes;
	r->buf = host_alloc(r, r->buf_len);
	if (!r->buf) {
		snprintf(err, len, "cannot allocate %zu bytes on the host for '%s'", r->buf_len,
			 r->cfg.dev);
		return -1;
	}
	r->mr = ib_rail_reg_host(r, r->buf, r->buf_len, access);
	if (!r->mr) {
		snprintf(err, len, "cannot register %zu bytes on '%s': %s", r->buf_len, r->cfg.dev,
			 strerror(errno));
		return -1;
	}
	r->reg_path = "host";
	return 0;
}

int ib_rail_open(struct ib_rail *r, const struct ib_rail_cfg *cfg, char *err, size_t len)
{
	memset(r, 0, sizeof(*r));
	r->cfg = *cfg;
	r->dmabuf_fd = -1;
	r->host_numa = -1;
	r->relaxed = -1;
	r->ctx = open_by_name(cfg->dev, err, len);
	if (!r->ctx)
		return -1;
	if (ibv_query_port(r->ctx, (uint8_t)cfg->port, &r->pattr)) {
		snprintf(err, len, "cannot query port %d of '%s'", cfg->port, cfg->dev);
		goto fail;
	}
	if (r->pattr.state != IBV_PORT_ACTIVE) {
		snprintf(err, len, "port %d of '%s' is not active (state %s)", cfg->port, cfg->dev,
			 ibv_port_state_str(r->pattr.state));
		goto fail;
	}
	if (r->pattr.link_layer == IBV_LINK_LAYER_ETHERNET && cfg->gid_index < 0) {
		snprintf(err, len, "port %d of '%s' is RoCE and has no usable GID", cfg->port,
			 cfg->dev);
		goto fail;
	}
	if (cfg->gid_index >= 0 &&
	    ibv_query_gid(r->ctx, (uint8_t)cfg->port, cfg->gid_index, &r->gid)) {
		snprintf(err, len, "cannot read GID %d of '%s' port %d", cfg->gid_index, cfg->dev,
			 cfg->port);
		goto fail;
	}
	r->pd = ibv_alloc_pd(r->ctx);
	if (!r->pd) {
		snprintf(err, len, "cannot allocate a protection domain on '%s'", cfg->dev);
		goto fail;
	}
	r->cq = ibv_create_cq(r->ctx, cfg->depth + LAT_SIGNAL_EVERY + 16, NULL, NULL, 0);
	if (!r->cq) {
		snprintf(err, len, "cannot create a completion queue of %d entries on '%s': %s",
			 cfg->depth + LAT_SIGNAL_EVERY + 16, cfg->dev, strerror(errno));
		goto fail;
	}
	if (alloc_regions(r, err, len))
		goto fail;
	return 0;
fail:
	ib_rail_close(r);
	return -1;
}

void ib_rail_close(struct ib_rail *r)
{
	ib_rail_qp_destroy(r);
	if (r->mr)
		ibv_dereg_mr(r->mr);
	r->mr = NULL;
	if (r->dmabuf_fd >= 0)
		close(r->dmabuf_fd);
	r->dmabuf_fd = -1;
	if (r->buf && r->cfg.mem == IB_MEM_GPU)
		ib_gpu_free(r->buf);
	else
		numa_free(r->buf, r->buf_len);
	r->buf = NULL;
	if (r->lat_mr)
		ibv_dereg_mr(r->lat_mr);
	r->lat_mr = NULL;
	numa_free(r->lat_buf, r->lat_len);
	r->lat_buf = NULL;
	if (r->cq)
		ibv_destroy_cq(r->cq);
	r->cq = NULL;
	if (r->pd)
		ibv_dealloc_pd(r->pd);
	r->pd = NULL;
	if (r->ctx)
		ibv_close_device(r->ctx);
	r->ctx = NULL;
}

int ib_rail_qp_create(struct ib_rail *r, uint32_t settings, char *err, size_t len)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = r->cq,
		.recv_cq = r->cq,
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = (uint32_t)(r->cfg.depth > 2 * LAT_SIGNAL_EVERY ?
						  r->cfg.depth : 2 * LAT_SIGNAL_EVERY),
			.max_recv_wr = 1,
			.max_send_sge = 1,
			.max_recv_sge = 1,
			.max_inline_data = 64,
		},
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = (uint8_t)r->cfg.port,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
	};

	r->qp = ibv_create_qp(r->pd, &ia);
	if (!r->qp) {
		/* some devices take no inline data: ask again without */
		ia.cap.max_inline_data = 0;
		r->qp = ibv_create_qp(r->pd, &ia);
	}
	if (!r->qp) {
		snprintf(err, len, "cannot create an RC queue pair of %u WRs on '%s': %s",
			 ia.cap.max_send_wr, r->cfg.dev, strerror(errno));
		return -1;
	}
	r->max_inline = ia.cap.max_inline_data;
	if (ibv_modify_qp(r->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS)) {
		snprintf(err, len, "cannot move the queue pair on '%s' to INIT: %s", r->cfg.dev,
			 strerror(errno));
		ib_rail_qp_destroy(r);
		return -1;
	}
	memset(&r->local, 0, sizeof(r->local));
	r->local.settings = settings;
	r->local.lid = r->pattr.lid;
	r->local.link_layer = r->pattr.link_layer == IBV_LINK_LAYER_ETHERNET ? 2 : 1;
	r->local.mtu = (uint8_t)r->pattr.active_mtu;
	r->local.gid_index = (int16_t)r->cfg.gid_index;
	r->local.qpn = r->qp->qp_num;
	r->local.psn = (uint32_t)lrand48() & 0xffffff;
	memcpy(r->local.gid, r->gid.raw, 16);
	r->local.rkey = r->mr->rkey;
	r->local.addr = (uint64_t)(uintptr_t)r->buf;
	r->local.len = r->buf_len;
	r->local.lat_rkey = r->lat_mr->rkey;
	r->local.lat_addr = (uint64_t)(uintptr_t)r->lat_buf;
	r->local.lat_len = r->lat_len;
	return 0;
}

int ib_rail_peer_fits(const struct ib_rail *r, const struct ib_qp_info *remote, char *err,
		      size_t len)
{
	int ll = r->pattr.link_layer == IBV_LINK_LAYER_ETHERNET ? 2 : 1;

	if (remote->link_layer != ll) {
		snprintf(err, len, "the peer's port is %s, this one %s",
			 remote->link_layer == 2 ? "RoCE" : "InfiniBand", ll == 2 ? "RoCE" : "InfiniBand");
		return -1;
	}
	if (remote->len < 2 * r->cfg.bytes || remote->lat_len < 2 * r->cfg.lat_bytes) {
		snprintf(err, len, "the peer's regions are smaller than these settings need");
		return -1;
	}
	return 0;
}

int ib_rail_qp_connect(struct ib_rail *r, const struct ib_qp_info *remote, char *err,
		       size_t len)
{
	struct ibv_qp_attr a;

	if (ib_rail_peer_fits(r, remote, err, len))
		return -1;
	r->remote = *remote;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = remote->mtu < r->pattr.active_mtu ? (enum ibv_mtu)remote->mtu :
		     r->pattr.active_mtu;
	a.dest_qp_num = remote->qpn;
	a.rq_psn = remote->psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.dlid = remote->lid;
	a.ah_attr.sl = (uint8_t)r->cfg.sl;
	a.ah_attr.port_num = (uint8_t)r->cfg.port;
	if (r->cfg.gid_index >= 0 && remote->gid_index >= 0) {
		a.ah_attr.is_global = 1;
		memcpy(a.ah_attr.grh.dgid.raw, remote->gid, 16);
		a.ah_attr.grh.sgid_index = (uint8_t)r->cfg.gid_index;
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.grh.traffic_class = (uint8_t)r->cfg.tclass;
	}
	if (ibv_modify_qp(r->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER)) {
		snprintf(err, len, "cannot move the queue pair on '%s' to RTR (peer qpn %u): %s",
			 r->cfg.dev, remote->qpn, strerror(errno));
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = (uint8_t)r->cfg.qp_timeout;
	a.retry_cnt = (uint8_t)r->cfg.retry;
	a.rnr_retry = 7;
	a.sq_psn = r->local.psn;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(r->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC)) {
		snprintf(err, len, "cannot move the queue pair on '%s' to RTS: %s", r->cfg.dev,
			 strerror(errno));
		return -1;
	}
	return 0;
}

void ib_rail_qp_destroy(struct ib_rail *r)
{
	struct ibv_wc wc[16];

	if (!r->qp)
		return;
	ibv_destroy_qp(r->qp);
	r->qp = NULL;
	/* completions of the destroyed queue pair must not count for the next one */
	while (r->cq && ibv_poll_cq(r->cq, 16, wc) > 0)
		;
}

/* Polls up to n completions; -1 on a poll error or a failed completion (err says which). */
static int reap(struct ib_rail *r, int n, char *err, size_t len)
{
	struct ibv_wc wc[16];
	int got = ibv_poll_cq(r->cq, n < 16 ? n : 16, wc);

	if (got < 0) {
		snprintf(err, len, "polling the completion queue of '%s' failed", r->cfg.dev);
		return -1;
	}
	for (int i = 0; i < got; i++)
		if (wc[i].status != IBV_WC_SUCCESS) {
			snprintf(err, len, "RDMA WRITE on '%s' completed with '%s' (vendor error 0x%x)",
				 r->cfg.dev, ibv_wc_status_str(wc[i].status), wc[i].vendor_err);
			return -1;
		}
	return got;
}

/* Whether a busy loop must give up: 1 past the deadline, 2 the peer stopped. */
static int past(const struct ib_wait *w, unsigned long *spins)
{
	if (++*spins % SPIN_CHECK)
		return 0;
	if (w->stop && w->stop(w->arg))
		return 2;
	return w->deadline > 0 && timer_now() > w->deadline;
}

static const char *why_stopped(int p)
{
	return p == 2 ? "the peer gave up" : "the deadline passed";
}

int ib_rail_write_burst(struct ib_rail *r, size_t bytes, int count, int depth,
			const struct ib_wait *w, char *err, size_t len)
{
	struct ibv_sge sge = {
		.addr = (uint64_t)(uintptr_t)r->buf,
		.length = (uint32_t)bytes,
		.lkey = r->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int posted = 0, done = 0, stop;
	unsigned long spins = 0;

	wr.wr.rdma.remote_addr = r->remote.addr + r->cfg.bytes;
	wr.wr.rdma.rkey = r->remote.rkey;
	while (done < count) {
		int got;

		while (posted < count && posted - done < depth) {
			int e;

			wr.wr_id = (uint64_t)posted;
			e = ibv_post_send(r->qp, &wr, &bad);
			if (e) {
				snprintf(err, len, "cannot post an RDMA WRITE of %zu bytes on '%s': %s",
					 bytes, r->cfg.dev, strerror(e));
				return -1;
			}
			posted++;
		}
		got = reap(r, posted - done, err, len);
		if (got < 0)
			return -1;
		done += got;
		if (!got && (stop = past(w, &spins))) {
			snprintf(err, len, "%d of %d RDMA WRITEs on '%s' not completed when %s",
				 count - done, count, r->cfg.dev, why_stopped(stop));
			return -1;
		}
	}
	return 0;
}

/*
 * Spins until the last byte of the target half holds v, reaping the
 * completion queue as it spins: a WRITE of ours that failed (retry count
 * exceeded on a bad cable) completes with an error at once, and waiting
 * for the peer's byte would last until the deadline. A signalled success
 * reaped here counts down *signalled.
 */
static int wait_byte(struct ib_rail *r, size_t bytes, uint8_t v, int *signalled,
		     const struct ib_wait *w, char *err, size_t len)
{
	const uint8_t *flag = r->lat_buf + r->cfg.lat_bytes + bytes - 1;
	unsigned long spins = 0;
	int stop;

	while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != v) {
		if (spins % CQ_POLL_EVERY == 0) {
			int got = reap(r, 1, err, len);

			if (got < 0)
				return -1;
			*signalled -= *signalled > 0 ? got : 0;
		}
		if ((stop = past(w, &spins))) {
			snprintf(err, len, "the peer's RDMA WRITE had not arrived on '%s' when %s",
				 r->cfg.dev, why_stopped(stop));
			return -1;
		}
	}
	return 0;
}

/* Waits for the one signalled latency WRITE still in flight, if any. */
static int drain_signalled(struct ib_rail *r, int *signalled, const struct ib_wait *w,
			   char *err, size_t len)
{
	unsigned long spins = 0;
	int stop;

	while (*signalled) {
		int got = reap(r, 1, err, len);

		if (got < 0)
			return -1;
		*signalled -= got;
		if (!got && (stop = past(w, &spins))) {
			snprintf(err, len, "a latency WRITE on '%s' was not completed when %s",
				 r->cfg.dev, why_stopped(stop));
			return -1;
		}
	}
	return 0;
}

int ib_rail_pingpong(struct ib_rail *r, size_t bytes, int warmup, int iters, int initiator,
		     double *one_way_us, const struct ib_wait *w, char *err, size_t len)
{
	struct ibv_sge sge = {
		.addr = (uint64_t)(uintptr_t)r->lat_buf,
		.length = (uint32_t)bytes,
		.lkey = r->lat_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
	}, *bad;
	int signalled = 0;       /* a signalled WRITE not yet reaped */

	wr.wr.rdma.remote_addr = r->remote.lat_addr + r->cfg.lat_bytes;
	wr.wr.rdma.rkey = r->remote.lat_rkey;
	for (int i = 0; i < warmup + iters; i++) {
		uint8_t v = (uint8_t)(i % 255 + 1);
		double t0 = 0;
		int e;

		wr.send_flags = bytes <= r->max_inline ? IBV_SEND_INLINE : 0;
		/* unsignalled WRITEs hold send slots until a later signalled one completes */
		if (i % LAT_SIGNAL_EVERY == 0) {
			if (drain_signalled(r, &signalled, w, err, len))
				return -1;
			wr.send_flags |= IBV_SEND_SIGNALED;
			signalled = 1;
		}
		if (!initiator && wait_byte(r, bytes, v, &signalled, w, err, len))
			return -1;
		r->lat_buf[bytes - 1] = v;
		if (initiator)
			t0 = timer_now();
		e = ibv_post_send(r->qp, &wr, &bad);
		if (e) {
			snprintf(err, len, "cannot post an RDMA WRITE of %zu bytes on '%s': %s", bytes,
				 r->cfg.dev, strerror(e));
			return -1;
		}
		if (initiator) {
			if (wait_byte(r, bytes, v, &signalled, w, err, len))
				return -1;
			if (i >= warmup)
				one_way_us[i - warmup] = (timer_now() - t0) * 1e6 / 2.0;
		}
		if (signalled) {
			int got = reap(r, 1, err, len);

			if (got < 0)
				return -1;
			signalled -= got;
		}
	}
	/* leave nothing in flight: the next measurement starts clean */
	return drain_signalled(r, &signalled, w, err, len);
}

int ib_rail_gdr_check(struct ib_rail *r, int gpu, const char **path, char *why, size_t len)
{
	struct ib_rail t = *r;   /* borrows the PD; its own buffer and MR */
	int rc;

	*path = NULL;
	t.buf = NULL;
	t.mr = NULL;
	t.dmabuf_fd = -1;
	{
		void *p;

		if (ib_gpu_alloc(gpu, (size_t)2 << 20, &p, &t.buf_len, why, len))
			return -1;
		t.buf = p;
	}
	rc = ib_rail_reg_gpu(&t, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, why, len);
	if (!rc)
		*path = t.reg_path;
	if (t.mr)
		ibv_dereg_mr(t.mr);
	if (t.dmabuf_fd >= 0)
		close(t.dmabuf_fd);
	ib_gpu_free(t.buf);
	return rc;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(a, b);
}

static int verbs_list(const struct ib_transport *t, char (*names)[IB_NAME_LEN], int max,
		      char *why, size_t len)
{
	struct ibv_device **list;
	int n = 0, k = 0, e;

	(void)t;
	errno = 0;
	list = ibv_get_device_list(&n);
	e = errno;
	for (int i = 0; list && i < n && k < max; i++)
		snprintf(names[k++], IB_NAME_LEN, "%s", ibv_get_device_name(list[i]));
	if (list)
		ibv_free_device_list(list);
	if (k > 0) {
		qsort(names, (size_t)k, IB_NAME_LEN, cmp_names);
		return k;
	}
	/* a kernel without RDMA fails with ENOSYS: say so, it is the whole story */
	snprintf(why, len, "no RDMA devices%s%s%s", e ? " (ibv_get_device_list: " : "",
		 e ? strerror(e) : "", e == ENOSYS ? "; the kernel has no RDMA support)" :
		 e ? ")" : "");
	return 0;
}

static int verbs_query_device(const struct ib_transport *t, const char *dev, char *fw,
			      size_t fwlen, char *err, size_t len)
{
	struct ibv_context *ctx = open_by_name(dev, err, len);
	struct ibv_device_attr da;
	int n = -1;

	(void)t;
	if (!ctx)
		return -1;
	if (ibv_query_device(ctx, &da)) {
		snprintf(err, len, "cannot query RDMA device '%s': %s", dev, strerror(errno));
	} else {
		snprintf(fw, fwlen, "%s", da.fw_ver);
		n = da.phys_port_cnt;
	}
	ibv_close_device(ctx);
	return n;
}

static int verbs_query_port(const struct ib_transport *t, const char *dev, int port,
			    struct ib_port_query *q)
{
	char err[160];
	struct ibv_context *ctx = open_by_name(dev, err, sizeof(err));
	struct ibv_port_attr a;
	int rc = -1;

	(void)t;
	if (!ctx)
		return -1;
	if (!ibv_query_port(ctx, (uint8_t)port, &a)) {
		q->state = a.state;
		q->ethernet = a.link_layer == IBV_LINK_LAYER_ETHERNET;
		q->width = a.active_width;
		q->speed = a.active_speed;
		q->lid = a.lid;
		q->active_mtu = a.active_mtu;
		q->max_mtu = a.max_mtu;
		rc = 0;
	}
	ibv_close_device(ctx);
	return rc;
}

const struct ib_transport ib_transport_verbs = {
	.name = "verbs",
	.list = verbs_list,
	.query_device = verbs_query_device,
	.query_port = verbs_query_port,
	.open = ib_rail_open,
	.close = ib_rail_close,
	.qp_create = ib_rail_qp_create,
	.qp_connect = ib_rail_qp_connect,
	.qp_destroy = ib_rail_qp_destroy,
	.write_burst = ib_rail_write_burst,
	.pingpong = ib_rail_pingpong,
	.gdr_check = ib_rail_gdr_check,
};

#endif /* HAVE_VERBS */
