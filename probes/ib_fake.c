/*
 * probes/ib_fake.c: the ib probe's test transport (CCPROBE_IB_FAKE=ROOT).
 * Devices and ports come from the sysfs tree under ROOT (the fixtures of
 * tests/fixtures/sysfs); a rail's regions live in POSIX shared memory and a
 * "WRITE" is a copy into the peer's region, the last byte last, so that the
 * latency ping-pong, the bandwidth loops, the data check and every failure
 * path of the probe run between ranks of one host without RDMA hardware.
 * Nothing here measures a network: records made with it say so.
 *
 * CCPROBE_IB_FAKE_PCIE=F gives each HCA the PCIe ceiling of its fixture
 * link (current_link_speed and _width) divided by F, as the hardware has it:
 * a WRITE is read from memory through the sender HCA's link (host to NIC)
 * and written through the receiver's (NIC to host), each direction one clock
 * shared by every rank that drives the HCA. In loopback both QPs are on one
 * HCA, so each direction carries both streams and the two directions
 * together reach one link's rate, not two.
 */
#ifdef HAVE_VERBS

#include "ib_verbs.h"
#include "ib_gpu.h"
#include "../core/numa.h"
#include "../core/timer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int fake_list(const struct ib_transport *t, char (*names)[IB_NAME_LEN], int max,
		     char *why, size_t len)
{
	int n = ib_sysfs_list(t->root, names, max);

	if (!n)
		snprintf(why, len, "no RDMA devices (none under %s/class/infiniband)", t->root);
	return n;
}

static int fake_query_device(const struct ib_transport *t, const char *dev, char *fw,
			     size_t fwlen, char *err, size_t len)
{
	struct ib_dev_sysfs d;

	if (ib_sysfs_device(t->root, dev, &d)) {
		snprintf(err, len, "no RDMA device '%s'", dev);
		return -1;
	}
	snprintf(fw, fwlen, "%s", d.fw_ver);
	return d.nports ? d.ports[d.nports - 1] : 0;
}

/* verbs width code of a lane count */
static unsigned width_code(int lanes)
{
	switch (lanes) {
	case 1: return IBR_WIDTH_1X;
	case 2: return IBR_WIDTH_2X;
	case 4: return IBR_WIDTH_4X;
	case 8: return IBR_WIDTH_8X;
	case 12: return IBR_WIDTH_12X;
	default: return 0;
	}
}

static int fake_query_port(const struct ib_transport *t, const char *dev, int port,
			   struct ib_port_query *q)
{
	struct ib_port_sysfs p;

	if (ib_sysfs_port(t->root, dev, port, &p))
		return -1;
	memset(q, 0, sizeof(*q));
	q->state = p.state;
	q->ethernet = !strcmp(p.link_layer, "Ethernet");
	q->width = width_code(p.rate.lanes);
	/* as the 8-bit active_speed of rdma-core before v47: XDR does not fit */
	q->speed = p.rate.speed && p.rate.speed->code <= 0xff ? p.rate.speed->code : 0;
	q->lid = p.lid > 0 ? p.lid : 0;
	q->max_mtu = IBV_MTU_4096;
	q->active_mtu = q->ethernet ? IBV_MTU_1024 : IBV_MTU_4096;
	return 0;
}

static const char *fake_root;

/* ------------------------------------------------------------------ the PCIe ceiling */

enum { PCIE_DOWN, PCIE_UP };     /* host to NIC (the sender reads), NIC to host (the receiver writes) */

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

/* The two clocks of dev's link, shared by the ranks of one job (PMIX_NAMESPACE). */
static void pcie_attach(struct ib_rail *r, const char *dev)
{
	const char *f = getenv("CCPROBE_IB_FAKE_PCIE"), *job = getenv("PMIX_NAMESPACE");
	struct ib_dev_sysfs d;
	struct pci_link l;
	unsigned h = 5381;
	char name[128];
	void *m;
	int fd;

	if (!f || atof(f) <= 0 || ib_sysfs_device(fake_root, dev, &d) || !d.bdf[0] ||
	    pci_read_link(fake_root, d.bdf, &l) || l.cur_GBps <= 0)
		return;
	for (const char *c = job ? job : ""; *c; c++)
		h = h * 33 + (unsigned char)*c;
	snprintf(name, sizeof(name), "/ccdiag-ibfake-pcie-%u-%x-%s", (unsigned)getuid(), h, dev);
	fd = shm_open(name, O_RDWR | O_CREAT, 0600);
	if (fd < 0)
		return;
	if (ftruncate(fd, 2 * sizeof(uint64_t))) {
		close(fd);
		return;
	}
	m = mmap(NULL, 2 * sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return;
	r->pcie = m;
	r->pcie_Bps = l.cur_GBps * 1e9 / atof(f);
	snprintf(r->pcie_name, sizeof(r->pcie_name), "%s", name);
}

/* Books bytes on one direction of a link: the time the transfer ends there. */
static uint64_t pcie_book(uint64_t *clock, double Bps, size_t bytes)
{
	uint64_t t = now_ns(), old = __atomic_load_n(clock, __ATOMIC_ACQUIRE), start, end;

	do {
		start = old > t ? old : t;
		end = start + (uint64_t)((double)bytes / Bps * 1e9);
	} while (!__atomic_compare_exchange_n(clock, &old, end, 0, __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	return end;
}

/*
 * A WRITE of bytes from r's HCA to the peer's: the peer drives the same
 * device of the fixture (rail r pairs the same NIC on both sides), so the
 * receiving direction is the same link's other clock. Waits until both
 * directions have carried it.
 */
static void pcie_wait(struct ib_rail *r, size_t bytes)
{
	uint64_t a, b, end;

	if (!r->pcie)
		return;
	a = pcie_book(&r->pcie[PCIE_DOWN], r->pcie_Bps, bytes);
	b = pcie_book(&r->pcie[PCIE_UP], r->pcie_Bps, bytes);
	end = a > b ? a : b;
	for (uint64_t t = now_ns(); t < end; t = now_ns()) {
		struct timespec d = { 0, (long)(end - t) };

		if (end - t > 50000)
			nanosleep(&d, NULL);
	}
}

static void fake_close(struct ib_rail *r)
{
	if (r->peer_shm)
		munmap(r->peer_shm, r->peer_len);
	r->peer_shm = NULL;
	if (r->shm) {
		munmap(r->shm, r->shm_len);
		shm_unlink(r->shm_name);
	}
	r->shm = NULL;
	if (r->pcie) {
		munmap(r->pcie, 2 * sizeof(uint64_t));
		/* the last to close leaves nothing behind; a later opener starts a new clock */
		shm_unlink(r->pcie_name);
	}
	r->pcie = NULL;
}

static int fake_open(struct ib_rail *r, const struct ib_rail_cfg *cfg, char *err, size_t len)
{
	static unsigned seq;
	struct ib_port_sysfs p;
	int fd;

	memset(r, 0, sizeof(*r));
	r->cfg = *cfg;
	r->host_numa = -1;
	/* its regions stand for registrations asking for relaxed ordering, which
	 * libibverbs never refuses (probes/ib_verbs.c); the fixture's NIC says the rest */
	r->relaxed = 1;
	r->dmabuf_fd = -1;
	if (ib_sysfs_port(fake_root, cfg->dev, cfg->port, &p)) {
		snprintf(err, len, "no RDMA device '%s' port %d", cfg->dev, cfg->port);
		return -1;
	}
	if (p.state != IBV_PORT_ACTIVE) {
		snprintf(err, len, "port %d of '%s' is not active (state %s)", cfg->port, cfg->dev,
			 p.state_name);
		return -1;
	}
	if (!strcmp(p.link_layer, "Ethernet") && cfg->gid_index < 0) {
		snprintf(err, len, "port %d of '%s' is RoCE and has no usable GID", cfg->port,
			 cfg->dev);
		return -1;
	}
	if (cfg->mem != IB_MEM_HOST) {
		snprintf(err, len, "the fake transport has host memory only");
		return -1;
	}
	r->buf_len = 2 * cfg->bytes;
	r->lat_len = 2 * cfg->lat_bytes;
	r->shm_len = r->buf_len + r->lat_len;
	r->local.rkey = ++seq;
	snprintf(r->shm_name, sizeof(r->shm_name), "/ccdiag-ibfake-%d-%u", (int)getpid(), seq);
	fd = shm_open(r->shm_name, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)r->shm_len)) {
		snprintf(err, len, "cannot create shared memory '%s': %s", r->shm_name,
			 strerror(errno));
		if (fd >= 0) {
			close(fd);
			shm_unlink(r->shm_name);
		}
		return -1;
	}
	r->shm = mmap(NULL, r->shm_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (r->shm == MAP_FAILED) {
		r->shm = NULL;
		shm_unlink(r->shm_name);
		snprintf(err, len, "cannot map shared memory: %s", strerror(errno));
		return -1;
	}
	/* as the verbs regions: on the NIC's NUMA node, before the pages are touched */
	r->host_numa = numa_bind(r->shm, r->shm_len, cfg->numa_node);
	r->buf = r->shm;
	r->lat_buf = r->shm + r->buf_len;
	r->reg_path = "host";
	r->pattr.link_layer = strcmp(p.link_layer, "Ethernet") ? IBV_LINK_LAYER_INFINIBAND :
			      IBV_LINK_LAYER_ETHERNET;
	r->pattr.lid = (uint16_t)(p.lid > 0 ? p.lid : 0);
	r->pattr.active_mtu = IBV_MTU_1024;
	pcie_attach(r, cfg->dev);
	return 0;
}

/* The peer's region is named by its process id (addr) and rail number (rkey). */
static int fake_qp_create(struct ib_rail *r, uint32_t settings, char *err, size_t len)
{
	uint32_t seq = r->local.rkey;

	(void)err;
	(void)len;
	memset(&r->local, 0, sizeof(r->local));
	r->local.settings = settings;
	r->local.lid = r->pattr.lid;
	r->local.link_layer = r->pattr.link_layer == IBV_LINK_LAYER_ETHERNET ? 2 : 1;
	r->local.mtu = IBV_MTU_1024;
	r->local.gid_index = (int16_t)r->cfg.gid_index;
	r->local.qpn = (uint32_t)(getpid() & 0xffff) << 8 | (seq & 0xff);
	if (!r->local.qpn)
		r->local.qpn = 1;
	r->local.psn = (uint32_t)lrand48() & 0xffffff;
	r->local.rkey = seq;
	r->local.lat_rkey = seq;
	r->local.addr = (uint64_t)getpid();
	r->local.len = r->buf_len;
	r->local.lat_addr = (uint64_t)getpid();
	r->local.lat_len = r->lat_len;
	r->qp = (struct ibv_qp *)r;   /* "created": only tested against NULL */
	return 0;
}

static int fake_qp_connect(struct ib_rail *r, const struct ib_qp_info *remote, char *err,
			   size_t len)
{
	char name[64];
	int fd;

	if (ib_rail_peer_fits(r, remote, err, len))
		return -1;
	r->remote = *remote;
	snprintf(name, sizeof(name), "/ccdiag-ibfake-%d-%u", (int)remote->addr, remote->rkey);
	fd = shm_open(name, O_RDWR, 0);
	if (fd < 0) {
		snprintf(err, len, "cannot open the peer's shared memory '%s' (not on this host?): %s",
			 name, strerror(errno));
		return -1;
	}
	r->peer_len = (size_t)(remote->len + remote->lat_len);
	r->peer_shm = mmap(NULL, r->peer_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (r->peer_shm == MAP_FAILED) {
		r->peer_shm = NULL;
		snprintf(err, len, "cannot map the peer's shared memory: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void fake_qp_destroy(struct ib_rail *r)
{
	if (r->peer_shm)
		munmap(r->peer_shm, r->peer_len);
	r->peer_shm = NULL;
	r->qp = NULL;
}

static int stopped(const struct ib_wait *w, const char *dev, char *err, size_t len)
{
	if (w->stop && w->stop(w->arg)) {
		snprintf(err, len, "WRITEs on '%s' stopped: the peer gave up", dev);
		return 1;
	}
	if (w->deadline > 0 && timer_now() > w->deadline) {
		snprintf(err, len, "WRITEs on '%s' not completed when the deadline passed", dev);
		return 1;
	}
	return 0;
}

/* A WRITE: the bytes before the last, then the last one, as the HCA would place them. */
static void put(uint8_t *dst, const uint8_t *src, size_t bytes)
{
	memcpy(dst, src, bytes - 1);
	__atomic_store_n(dst + bytes - 1, src[bytes - 1], __ATOMIC_RELEASE);
}

/*
 * CCPROBE_IB_FAKE_FAIL=RANK:lat or RANK:bw makes that rank's ping-pongs or
 * WRITE bursts fail at once, as a broken port would, so that tests see the
 * peer stop (not spin to the deadline), the error record and the pairs after;
 * RANK:data makes its WRITEs land with one byte wrong, for the data check.
 */
static int injected(const char *what, const char *dev, char *err, size_t len)
{
	const char *f = getenv("CCPROBE_IB_FAKE_FAIL");
	const char *r = getenv("OMPI_COMM_WORLD_RANK");
	char kind[8] = "";
	int rank = -1;

	if (!f || !r || sscanf(f, "%d:%7s", &rank, kind) != 2 || rank != atoi(r) ||
	    strcmp(kind, what))
		return 0;
	snprintf(err, len, "injected failure on '%s' (CCPROBE_IB_FAKE_FAIL)", dev);
	return 1;
}

static int fake_write_burst(struct ib_rail *r, size_t bytes, int count, int depth,
			    const struct ib_wait *w, char *err, size_t len)
{
	(void)depth;
	if (injected("bw", r->cfg.dev, err, len))
		return -1;
	for (int i = 0; i < count; i++) {
		if ((i % 64 == 0) && stopped(w, r->cfg.dev, err, len))
			return -1;
		put(r->peer_shm + r->cfg.bytes, r->buf, bytes);
		pcie_wait(r, bytes);
	}
	if (injected("data", r->cfg.dev, err, len))
		r->peer_shm[r->cfg.bytes] ^= 0xff;
	return 0;
}

static int fake_pingpong(struct ib_rail *r, size_t bytes, int warmup, int iters, int initiator,
			 double *one_way_us, const struct ib_wait *w, char *err, size_t len)
{
	uint8_t *target = r->peer_shm + r->remote.len + r->cfg.lat_bytes;
	const uint8_t *flag = r->lat_buf + r->cfg.lat_bytes + bytes - 1;

	if (injected("lat", r->cfg.dev, err, len))
		return -1;
	for (int i = 0; i < warmup + iters; i++) {
		uint8_t v = (uint8_t)(i % 255 + 1);
		unsigned long spins = 0;
		double t0 = 0;

		if (!initiator)
			while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != v)
				if (++spins % 4096 == 0 && stopped(w, r->cfg.dev, err, len))
					return -1;
		r->lat_buf[bytes - 1] = v;
		if (initiator)
			t0 = timer_now();
		put(target, r->lat_buf, bytes);
		if (!initiator)
			continue;
		while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != v)
			if (++spins % 4096 == 0 && stopped(w, r->cfg.dev, err, len))
				return -1;
		if (i >= warmup)
			one_way_us[i - warmup] = (timer_now() - t0) * 1e6 / 2.0;
	}
	return 0;
}

/* Allocates on the rank's GPU as the verbs check does, but registers nothing. */
static int fake_gdr_check(struct ib_rail *r, int gpu, const char **path, char *why, size_t len)
{
	void *p = NULL;
	size_t n = 0;

	(void)r;
	*path = NULL;
	if (ib_gpu_alloc(gpu, (size_t)2 << 20, &p, &n, why, len))
		return -1;
	ib_gpu_free(p);
	snprintf(why, len, "the fake transport registers no GPU memory");
	return -1;
}

void ib_transport_fake(struct ib_transport *t, const char *root)
{
	fake_root = root;
	*t = (struct ib_transport){
		.name = "fake",
		.root = root,
		.list = fake_list,
		.query_device = fake_query_device,
		.query_port = fake_query_port,
		.open = fake_open,
		.close = fake_close,
		.qp_create = fake_qp_create,
		.qp_connect = fake_qp_connect,
		.qp_destroy = fake_qp_destroy,
		.write_burst = fake_write_burst,
		.pingpong = fake_pingpong,
		.gdr_check = fake_gdr_check,
	};
}

#endif /* HAVE_VERBS */
