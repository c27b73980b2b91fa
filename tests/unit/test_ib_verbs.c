/*
 * Unit tests of the verbs rail without a device: the ping-pong's failure
 * handling (the completion queue and the send queue are a struct
 * ibv_context whose ops this file supplies: ibv_poll_cq and ibv_post_send
 * call through them), and the access flags of memory registrations (this
 * file defines libibverbs' registration calls, which the probe's objects
 * then call, and the CUDA driver's dmabuf export, which the probe finds in
 * the process: the Makefile links this test with -rdynamic).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#ifdef HAVE_VERBS
#include "../../core/timer.h"
#include "../../probes/ib_verbs.h"

static int posted;

static int post_ok(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	(void)qp, (void)wr, (void)bad;
	posted++;
	return 0;
}

/* Every WRITE posted completes with "retry count exceeded": a bad cable. */
static int poll_retry_exceeded(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	(void)cq;
	if (!posted || n < 1)
		return 0;
	posted--;
	memset(wc, 0, sizeof(*wc));
	wc->status = IBV_WC_RETRY_EXC_ERR;
	wc->opcode = IBV_WC_RDMA_WRITE;
	return 1;
}

/*
 * D4 of issue 11: the side waiting for the peer's byte reaps the CQ while it
 * spins, so its own failed WRITE is an error at once naming the completion
 * status, not "had not arrived when the deadline passed".
 */
static void test_pingpong_error_completion(void **state)
{
	struct ibv_context ctx;
	struct ibv_cq cq;
	struct ibv_qp qp;
	struct ibv_mr mr;
	struct ib_rail r;
	uint8_t lat[2 * 64];
	double us[4];
	struct ib_wait w = { .deadline = timer_now() + 5.0 };
	char err[300] = "";

	(void)state;
	memset(&ctx, 0, sizeof(ctx));
	memset(&cq, 0, sizeof(cq));
	memset(&qp, 0, sizeof(qp));
	memset(&r, 0, sizeof(r));
	memset(lat, 0, sizeof(lat));
	memset(&mr, 0, sizeof(mr));
	ctx.ops.poll_cq = poll_retry_exceeded;
	ctx.ops.post_send = post_ok;
	cq.context = &ctx;
	qp.context = &ctx;
	r.cq = &cq;
	r.qp = &qp;
	r.lat_buf = lat;
	r.lat_mr = &mr;
	r.cfg.lat_bytes = 64;
	r.cfg.dev = "mlx5_0";
	assert_int_equal(ib_rail_pingpong(&r, 8, 0, 4, 1, us, &w, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "transport retry counter exceeded"));
	assert_null(strstr(err, "deadline"));
}

/* ------------------------------------------------------------------ registrations */

static int reg_access[8], nreg, refuse_ro;
static struct ibv_mr the_mr;
static int dmabuf_fd = -1;            /* what the driver's export answers; -1: no dmabuf */

static struct ibv_mr *reg(int access)
{
	if (nreg < 8)
		reg_access[nreg++] = access;
	if (refuse_ro && (access & IBV_ACCESS_RELAXED_ORDERING)) {
		errno = EINVAL;
		return NULL;
	}
	return &the_mr;
}

#undef ibv_reg_mr
struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	(void)pd, (void)addr, (void)length;
	return reg(access);
}

/* ibv_reg_mr with an optional flag (relaxed ordering) comes here (verbs.h) */
struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				unsigned int access)
{
	(void)pd, (void)addr, (void)length, (void)iova;
	return reg((int)access);
}

struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova,
				 int fd, int access)
{
	(void)pd, (void)offset, (void)length, (void)iova, (void)fd;
	return reg(access | 0x40000000);   /* marked: a dmabuf registration */
}

/* the CUDA driver's dmabuf export (probes/ib_gpu.c finds it in the process) */
int cuMemGetHandleForAddressRange(void *handle, unsigned long long dptr, size_t size, int type,
				  unsigned long long flags)
{
	(void)dptr, (void)size, (void)type, (void)flags;
	if (dmabuf_fd < 0)
		return 1;                    /* CUDA_ERROR_INVALID_VALUE */
	*(int *)handle = dup(dmabuf_fd);
	return 0;
}

#define RW (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)

static void rail(struct ib_rail *r, uint8_t *buf, size_t len)
{
	memset(r, 0, sizeof(*r));
	r->cfg.dev = "mlx5_0";
	r->relaxed = -1;
	r->dmabuf_fd = -1;
	r->buf = buf;
	r->buf_len = len;
	nreg = 0;
	refuse_ro = 0;
}

/*
 * Issue 31, D10: host and GPU memory (dmabuf, then nvidia-peermem) are
 * registered asking for IBV_ACCESS_RELAXED_ORDERING, as perftest and NCCL
 * do; a registration refused with it is made without, and the rail says so.
 */
static void test_registration_relaxed_ordering(void **state)
{
	static uint8_t buf[4096];
	struct ib_rail r;
	char err[400] = "";

	(void)state;
	/* host memory: asked for, accepted */
	rail(&r, buf, sizeof(buf));
	assert_ptr_equal(ib_rail_reg_host(&r, buf, sizeof(buf), RW), &the_mr);
	assert_int_equal(nreg, 1);
	assert_int_equal(reg_access[0], RW | IBV_ACCESS_RELAXED_ORDERING);
	assert_int_equal(r.relaxed, 1);
	/* refused with it: made without, and the rail no longer says "asked for" */
	refuse_ro = 1;
	assert_ptr_equal(ib_rail_reg_host(&r, buf, sizeof(buf), RW), &the_mr);
	assert_int_equal(nreg, 3);
	assert_int_equal(reg_access[2], RW);
	assert_int_equal(r.relaxed, 0);

	/* GPU memory through nvidia-peermem (no dmabuf from the driver) */
	rail(&r, buf, sizeof(buf));
	dmabuf_fd = -1;
	assert_int_equal(ib_rail_reg_gpu(&r, RW, err, sizeof(err)), 0);
	assert_string_equal(r.reg_path, "peermem");
	assert_int_equal(nreg, 1);
	assert_int_equal(reg_access[0], RW | IBV_ACCESS_RELAXED_ORDERING);
	assert_int_equal(r.relaxed, 1);
#ifdef HAVE_CUDA
	/* GPU memory through dmabuf */
	rail(&r, buf, sizeof(buf));
	dmabuf_fd = open("/dev/null", O_RDONLY);  /* any descriptor: the export dups it */
	assert_int_equal(ib_rail_reg_gpu(&r, RW, err, sizeof(err)), 0);
	assert_string_equal(r.reg_path, "dmabuf");
	assert_int_equal(nreg, 1);
	assert_int_equal(reg_access[0], 0x40000000 | RW | IBV_ACCESS_RELAXED_ORDERING);
	assert_int_equal(r.relaxed, 1);
	assert_true(r.dmabuf_fd >= 0);
	close(r.dmabuf_fd);
	/* dmabuf refused with relaxed ordering: made without */
	rail(&r, buf, sizeof(buf));
	refuse_ro = 1;
	assert_int_equal(ib_rail_reg_gpu(&r, RW, err, sizeof(err)), 0);
	assert_string_equal(r.reg_path, "dmabuf");
	assert_int_equal(nreg, 2);
	assert_int_equal(reg_access[1], 0x40000000 | RW);
	assert_int_equal(r.relaxed, 0);
	close(r.dmabuf_fd);
	close(dmabuf_fd);
	dmabuf_fd = -1;
#endif
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
#ifdef HAVE_VERBS
		cmocka_unit_test(test_pingpong_error_completion),
		cmocka_unit_test(test_registration_relaxed_ordering),
#endif
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
