/* Unit tests of core/numa.c: host memory bound to a device's NUMA node (issue 11, D10). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../core/numa.h"

#include <unistd.h>

/* Node 0 exists on every Linux machine: memory asked for there is bound and lands there. */
static void test_bound_to_node0(void **state)
{
	size_t len = (size_t)4 << 20;
	int bound = -2;
	unsigned char *p = numa_alloc(len, 0, &bound);

	(void)state;
	assert_non_null(p);
	if (access("/sys/devices/system/node/node0", F_OK) != 0) {
		/* a kernel without NUMA: not bound, and says so */
		assert_int_equal(bound, -1);
	} else {
		assert_int_equal(bound, 0);
		assert_int_equal(numa_node_of(p), 0);
		assert_int_equal(numa_node_of(p + len - 1), 0);
	}
	assert_int_equal(p[0] | p[len - 1], 0);
	numa_free(p, len);
}

/* No node asked for, or one the machine lacks: not bound, memory still there. */
static void test_not_bound(void **state)
{
	int bound = -2;
	unsigned char *p = numa_alloc(4096, -1, &bound);

	(void)state;
	assert_non_null(p);
	assert_int_equal(bound, -1);
	numa_free(p, 4096);
	p = numa_alloc(4096, 1000, &bound);
	assert_non_null(p);
	assert_int_equal(bound, -1);
	numa_free(p, 4096);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bound_to_node0),
		cmocka_unit_test(test_not_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
