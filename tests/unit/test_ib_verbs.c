/*
 * Unit tests of the verbs ping-pong's failure handling without a device:
 * the completion queue and the send queue are a struct ibv_context whose
 * ops this file supplies (ibv_poll_cq and ibv_post_send call through them).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

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
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
#ifdef HAVE_VERBS
		cmocka_unit_test(test_pingpong_error_completion),
#endif
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
