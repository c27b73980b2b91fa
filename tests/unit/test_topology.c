#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../core/topology.h"

#define DIR "tests/fixtures/topology/"

/* the group name of host h in t, or NULL */
static const char *group_of(const struct topo *t, const char *h)
{
	for (int i = 0; i < t->nhosts; i++)
		if (!strcmp(t->hosts[i], h))
			return t->groups[t->group[i]];
	return NULL;
}

static const char *spine_of(const struct topo *t, const char *group)
{
	for (int g = 0; g < t->ngroups; g++)
		if (!strcmp(t->groups[g], group))
			return t->spine[g] >= 0 ? t->spines[t->spine[g]] : "-";
	return NULL;
}

static void expect_list(const char *expr, int n, const char *first, const char *last)
{
	char **v, err[160];
	int k;

	assert_int_equal(topo_hostlist(expr, &v, &k, err, sizeof(err)), 0);
	assert_int_equal(k, n);
	assert_string_equal(v[0], first);
	assert_string_equal(v[k - 1], last);
	for (int i = 0; i < k; i++)
		free(v[i]);
	free(v);
}

static void expect_bad_list(const char *expr, const char *why)
{
	char **v = NULL, err[160] = "";
	int k = -1;

	assert_int_equal(topo_hostlist(expr, &v, &k, err, sizeof(err)), -1);
	assert_null(v);
	assert_int_equal(k, 0);
	assert_non_null(strstr(err, why));
}

static void test_hostlist(void **state)
{
	(void)state;
	expect_list("node[0-3,7]", 5, "node0", "node7");
	expect_list("gpu[001-003]", 3, "gpu001", "gpu003");
	expect_list("gpu[08-10]", 3, "gpu08", "gpu10");
	expect_list("rack[1-2]-n[1-3]", 6, "rack1-n1", "rack2-n3");
	expect_list("a,b[1-2],c", 4, "a", "c");
	expect_list("login1", 1, "login1", "login1");
	expect_bad_list("node[1-", "unbalanced '['");
	expect_bad_list("node1]", "unbalanced ']'");
	expect_bad_list("node[3-1]", "bad range");
	expect_bad_list("node[a-b]", "bad range");
	expect_bad_list("node[]", "empty range");
	expect_bad_list("a,,b", "empty host name");
	expect_bad_list("a,", "empty host name");
	expect_bad_list("n[0-99999999]", "bad range");
}

static void test_slurm_tree(void **state)
{
	struct topo t;
	char err[200];

	(void)state;
	assert_int_equal(topo_read_slurm(DIR "slurm-tree.conf", &t, err, sizeof(err)), 0);
	assert_int_equal(t.nhosts, 12);
	assert_int_equal(t.ngroups, 3);
	assert_string_equal(group_of(&t, "gpu004"), "leaf0");
	assert_string_equal(group_of(&t, "login1"), "leaf1");
	assert_string_equal(group_of(&t, "rack2-n1"), "leaf2");   /* keys in any case */
	assert_string_equal(spine_of(&t, "leaf0"), "spine0");
	assert_string_equal(spine_of(&t, "leaf1"), "spine0");
	assert_string_equal(spine_of(&t, "leaf2"), "spine1");
	assert_int_equal(t.nspines, 2);                         /* core is above the spines */
	assert_non_null(strstr(t.source, "slurm topology.conf"));
	topo_free(&t);
	assert_int_equal(topo_read_slurm(DIR "slurm-block.conf", &t, err, sizeof(err)), 0);
	assert_int_equal(t.ngroups, 2);
	assert_string_equal(group_of(&t, "n5"), "b2");
	topo_free(&t);
	/* scontrol show topology (what ccdiag asks inside Slurm): the upper switch's Nodes= are its leaves' */
	assert_int_equal(topo_read(DIR "slurm-scontrol.txt", &t, err, sizeof(err)), 0);
	assert_int_equal(t.nhosts, 6);
	assert_int_equal(t.ngroups, 3);
	assert_string_equal(group_of(&t, "node3"), "s1");
	assert_string_equal(spine_of(&t, "s2"), "top");
	assert_non_null(strstr(t.source, "scontrol show topology"));
	topo_free(&t);
}

static void expect_error(int (*reader)(const char *, struct topo *, char *, size_t),
			 const char *file, const char *msg)
{
	struct topo t;
	char err[256] = "";

	assert_int_equal(reader(file, &t, err, sizeof(err)), -1);
	assert_int_equal(t.nhosts, 0);
	if (!strstr(err, msg))
		fail_msg("'%s' does not say '%s'", err, msg);
	/* one line, no newline */
	assert_null(strchr(err, '\n'));
}

static void test_bad_files(void **state)
{
	(void)state;
	expect_error(topo_read_slurm, DIR "slurm-bad-key.conf",
		     DIR "slurm-bad-key.conf:3: unknown key 'Switchs'");
	expect_error(topo_read_slurm, DIR "slurm-bad-range.conf",
		     DIR "slurm-bad-range.conf:2: Nodes=n[3-1]: bad range");
	expect_error(topo_read_slurm, DIR "slurm-twice.conf",
		     DIR "slurm-twice.conf:2: host 'n3' is under two leaf switches");
	expect_error(topo_read_slurm, DIR "slurm-undefined.conf",
		     DIR "slurm-undefined.conf:2: switch 'spine' names an undefined switch 'leaf1'");
	expect_error(topo_read_slurm, DIR "plain.txt", DIR "plain.txt:2: expected KEY=VALUE");
	expect_error(topo_read_plain, DIR "plain-bad.txt",
		     DIR "plain-bad.txt:2: expected 'HOST GROUP [SPINE]', got 4 fields");
	expect_error(topo_read_plain, DIR "plain-twice.txt",
		     DIR "plain-twice.txt:3: host 'node0' listed twice");
	expect_error(topo_read_ibnet, DIR "ibnet-bad.txt",
		     DIR "ibnet-bad.txt:6: not ibnetdiscover output");
	expect_error(topo_read, DIR "ibnet-bad.txt", DIR "ibnet-bad.txt:6:");
	expect_error(topo_read, DIR "no-such-file", DIR "no-such-file: cannot open");
	expect_error(topo_read_plain, "/dev/null", "/dev/null:0: no host in the file");
}

static void test_ibnetdiscover(void **state)
{
	struct topo t;
	char err[200];

	(void)state;
	assert_int_equal(topo_read(DIR "ibnetdiscover.txt", &t, err, sizeof(err)), 0);
	assert_non_null(strstr(t.source, "ibnetdiscover"));
	assert_int_equal(t.nhosts, 4);            /* node04's second adapter adds no host */
	assert_int_equal(t.ngroups, 2);
	assert_string_equal(group_of(&t, "node01"), "S-0002c90200b00001");
	assert_string_equal(group_of(&t, "node02"), "S-0002c90200b00001");
	assert_string_equal(group_of(&t, "node04"), "S-0002c90200c00001");
	assert_string_equal(spine_of(&t, "S-0002c90200b00001"), "S-0002c90200a00001");
	assert_string_equal(spine_of(&t, "S-0002c90200c00001"), "S-0002c90200a00001");
	topo_free(&t);
	/* adapters only: each host from its Ca line, its group from its port */
	assert_int_equal(topo_read(DIR "ibnet-ca-only.txt", &t, err, sizeof(err)), 0);
	assert_int_equal(t.nhosts, 2);
	assert_string_equal(group_of(&t, "hostA"), "S-0002c90200b00001");
	assert_string_equal(group_of(&t, "hostB"), "S-0002c90200c00001");
	assert_string_equal(spine_of(&t, "S-0002c90200c00001"), "-");
	topo_free(&t);
}

static void test_plain_and_detect(void **state)
{
	struct topo t;
	char err[200];

	(void)state;
	assert_int_equal(topo_read(DIR "plain.txt", &t, err, sizeof(err)), 0);
	assert_non_null(strstr(t.source, "plain"));
	assert_int_equal(t.nhosts, 7);
	assert_int_equal(t.ngroups, 3);
	assert_string_equal(group_of(&t, "node4"), "leaf1");
	assert_string_equal(spine_of(&t, "leaf1"), "spine0");
	assert_string_equal(spine_of(&t, "leaf2"), "-");
	topo_free(&t);
	assert_int_equal(topo_read(DIR "slurm-tree.conf", &t, err, sizeof(err)), 0);
	assert_non_null(strstr(t.source, "slurm"));
	topo_free(&t);
}

static void test_fallback_and_assign(void **state)
{
	char *hosts[10] = { "h0", "h1", "h2", "h3", "h4", "h5", "h6", "h7", "h8", "h9" };
	char *job[4] = { "node6", "node0", "node3", "node1" }, *stranger[2] = { "node0", "x" };
	const char *names[4];
	int g[10], ng;
	struct topo t;
	char err[200];

	(void)state;
	assert_int_equal(topo_sqrt_size(1), 1);
	assert_int_equal(topo_sqrt_size(10), 4);
	assert_int_equal(topo_sqrt_size(1024), 32);
	assert_int_equal(topo_sqrt_size(1025), 33);
	assert_int_equal(topo_fallback(hosts, 10, 0, &t), 0);
	assert_int_equal(t.ngroups, 3);               /* 4 + 4 + 2 */
	assert_string_equal(t.source, "none: groups of 4 hosts in host order");
	assert_int_equal(topo_assign(&t, hosts, 10, g, &ng, NULL, err, sizeof(err)), 0);
	assert_int_equal(ng, 3);
	assert_int_equal(g[3], 0);
	assert_int_equal(g[4], 1);
	assert_int_equal(g[9], 2);
	topo_free(&t);
	assert_int_equal(topo_fallback(hosts, 10, 3, &t), 0);
	assert_int_equal(t.ngroups, 4);               /* 3 + 3 + 3 + 1 */
	assert_string_equal(t.source, "none: groups of 3 hosts in host order");
	topo_free(&t);
	/* the job's hosts: groups numbered in the order they first appear */
	assert_int_equal(topo_read(DIR "plain.txt", &t, err, sizeof(err)), 0);
	assert_int_equal(topo_assign(&t, job, 4, g, &ng, names, err, sizeof(err)), 0);
	assert_int_equal(ng, 3);
	assert_int_equal(g[0], 0);
	assert_string_equal(names[0], "leaf2");
	assert_int_equal(g[1], 1);
	assert_int_equal(g[3], 1);
	assert_int_equal(g[2], 2);
	assert_int_equal(topo_assign(&t, stranger, 2, g, &ng, NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "host 'x' is not in the topology (plain " DIR "plain.txt)"));
	topo_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostlist),
		cmocka_unit_test(test_slurm_tree),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_ibnetdiscover),
		cmocka_unit_test(test_plain_and_detect),
		cmocka_unit_test(test_fallback_and_assign),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
