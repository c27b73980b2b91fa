/*
 * Collectives: bandwidth factors against the nccl-tests formulas, counts,
 * and the data check. The check is tested by computing each collective's
 * output in-process for n simulated ranks: a correct output must show 0
 * wrong, and every corrupted element must be counted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../bench/coll.h"

static void test_bus_factors(void **state)
{
	(void)state;
	for (int n = 2; n <= 64; n++) {
		for (int i = 0; colls[i]; i++) {
			double want;

			switch (colls[i]->id) {
			case COLL_ALL_REDUCE: want = 2.0 * (n - 1) / n; break;
			case COLL_BROADCAST: want = 1.0; break;
			default: want = (double)(n - 1) / n; break;
			}
			assert_float_equal(colls[i]->bus_factor(n), want, 1e-15);
		}
	}
	assert_float_equal(coll_find("all_reduce")->bus_factor(8), 1.75, 1e-15);
	assert_float_equal(coll_find("all_gather")->bus_factor(8), 0.875, 1e-15);
}

static void test_counts(void **state)
{
	struct coll_counts c;
	(void)state;
	/* all_reduce: S = count x eltsize */
	coll_find("all_reduce")->counts(1 << 20, 4, 8, &c);
	assert_int_equal(c.param, 262144);
	assert_int_equal(c.bytes, 1 << 20);
	/* all_gather: the size is the gathered buffer; each rank sends 1/n */
	coll_find("all_gather")->counts(1 << 20, 4, 8, &c);
	assert_int_equal(c.send, 32768);
	assert_int_equal(c.recv, 262144);
	assert_int_equal(c.bytes, 1 << 20);
	/* reduce_scatter: the size is the input; each rank keeps 1/n */
	coll_find("reduce_scatter")->counts(1 << 20, 4, 8, &c);
	assert_int_equal(c.send, 262144);
	assert_int_equal(c.recv, 32768);
	/* alltoall: n blocks of 1/n */
	coll_find("alltoall")->counts(1 << 20, 4, 8, &c);
	assert_int_equal(c.param, 32768);
	assert_int_equal(c.send, 262144);
	/* sizes that do not divide: rounded down to whole elements per rank */
	coll_find("all_gather")->counts(100, 4, 3, &c);
	assert_int_equal(c.send, 8);
	assert_int_equal(c.bytes, 96);
	coll_find("all_gather")->counts(8, 4, 4, &c);
	assert_int_equal(c.param, 0);
}

static void test_pattern_reductions_exact(void **state)
{
	(void)state;
	for (int n = 1; n <= 40; n++) {
		for (size_t i = 0; i < 50; i++) {
			double sum = 0, prod = 1, mn = 1e9, mx = -1e9;

			for (int r = 0; r < n; r++) {
				double v = pattern_value(CC_SUM, r, n, i);

				assert_true(v >= 1 && v <= 11);
				sum += v;
				mn = v < mn ? v : mn;
				mx = v > mx ? v : mx;
				prod *= pattern_value(CC_PROD, r, n, i);
			}
			assert_float_equal(pattern_reduced(CC_SUM, n, i), sum, 0);
			assert_float_equal(pattern_reduced(CC_PROD, n, i), prod, 0);
			assert_float_equal(pattern_reduced(CC_MIN, n, i), mn, 0);
			assert_float_equal(pattern_reduced(CC_MAX, n, i), mx, 0);
		}
	}
}

static double reduce2(enum cc_redop op, double a, double b)
{
	switch (op) {
	case CC_PROD: return a * b;
	case CC_MIN: return a < b ? a : b;
	case CC_MAX: return a > b ? a : b;
	default: return a + b;
	}
}

/* Computes rank `rank`'s output of coll from every rank's filled input, as a library would. */
static void simulate(const struct coll *coll, const struct coll_counts *c, enum cc_dtype t,
		     enum cc_redop op, int n, int root, int rank, void **in, void *out)
{
	size_t k;

	switch (coll->id) {
	case COLL_ALL_REDUCE:
	case COLL_REDUCE_SCATTER: {
		size_t base = coll->id == COLL_REDUCE_SCATTER ? (size_t)rank * c->recv : 0;

		for (k = 0; k < c->recv; k++) {
			double acc = dtype_load(in[0], t, base + k);

			for (int r = 1; r < n; r++)
				acc = reduce2(op, acc, dtype_load(in[r], t, base + k));
			dtype_store(out, t, k, acc);
		}
		break;
	}
	case COLL_ALL_GATHER:
		for (k = 0; k < c->recv; k++)
			dtype_store(out, t, k, dtype_load(in[k / c->send], t, k % c->send));
		break;
	case COLL_ALLTOALL:
		for (k = 0; k < c->recv; k++)
			dtype_store(out, t, k, dtype_load(in[k / c->param], t,
							  (size_t)rank * c->param + k % c->param));
		break;
	case COLL_BROADCAST:
		for (k = 0; k < c->recv; k++)
			dtype_store(out, t, k, dtype_load(in[root], t, k));
		break;
	}
}

static void check_one(const struct coll *coll, enum cc_dtype t, enum cc_redop op, int n,
		      size_t bytes)
{
	struct coll_counts c;
	void *in[16], *out;
	int root = n - 1;

	coll->counts(bytes, dtype_size(t), n, &c);
	assert_true(c.param > 0);
	for (int r = 0; r < n; r++) {
		in[r] = calloc(c.send, dtype_size(t));
		coll->fill(in[r], &c, t, op, r, n, root);
	}
	out = calloc(c.recv, dtype_size(t));
	for (int rank = 0; rank < n; rank++) {
		simulate(coll, &c, t, op, n, root, rank, in, out);
		assert_int_equal(coll->check(out, &c, t, op, rank, n, root), 0);
		if (coll->id == COLL_BROADCAST && rank == root)
			continue;  /* the root's output is its own input */
		/* corrupt 3 elements: exactly 3 wrong */
		dtype_store(out, t, 0, dtype_load(out, t, 0) + 1);
		dtype_store(out, t, c.recv / 2, -1);
		dtype_store(out, t, c.recv - 1, 1000);
		assert_int_equal(coll->check(out, &c, t, op, rank, n, root), c.recv >= 3 ? 3 : 1);
		/* an output never written (all zero) is wrong everywhere */
		memset(out, 0, c.recv * dtype_size(t));
		assert_int_equal(coll->check(out, &c, t, op, rank, n, root), c.recv);
	}
	for (int r = 0; r < n; r++)
		free(in[r]);
	free(out);
}

static void test_check_counts_mismatches(void **state)
{
	static const int ns[] = { 2, 3, 4, 7, 12, 16 };
	(void)state;
	for (int i = 0; colls[i]; i++)
		for (size_t j = 0; j < sizeof(ns) / sizeof(ns[0]); j++)
			for (int t = 0; t < CC_NDTYPES; t++)
				for (int op = 0; op < (colls[i]->reduces ? CC_NOPS : 1); op++)
					check_one(colls[i], (enum cc_dtype)t, (enum cc_redop)op,
						  ns[j], 4096);
}

static void test_names(void **state)
{
	enum cc_dtype t;
	enum cc_redop op;
	(void)state;
	assert_int_equal(dtype_parse("int32", &t), 0);
	assert_int_equal(t, CC_INT32);
	assert_int_equal(dtype_parse("half", &t), -1);
	assert_int_equal(redop_parse("max", &op), 0);
	assert_int_equal(op, CC_MAX);
	assert_int_equal(redop_parse("avg", &op), -1);
	assert_null(coll_find("allreduce"));
	assert_non_null(coll_find("alltoall"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bus_factors),
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_pattern_reductions_exact),
		cmocka_unit_test(test_check_counts_mismatches),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests_name("colls", tests, NULL, NULL);
}
