#include "numa.h"
#include "log.h"

#include <errno.h>
#include <linux/mempolicy.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NUMA_MAX 1024

int numa_bind(void *p, size_t len, int node)
{
	unsigned long mask[NUMA_MAX / (8 * sizeof(unsigned long))] = { 0 };

	if (node < 0 || node >= NUMA_MAX)
		return -1;
	mask[node / (8 * sizeof(unsigned long))] |= 1UL << (node % (8 * sizeof(unsigned long)));
	/* maxnode counts one more than the bits the kernel reads */
	if (syscall(SYS_mbind, p, len, MPOL_BIND, mask, 8 * sizeof(mask) + 1, 0) == 0)
		return node;
	log_debug("mbind to NUMA node %d: %s", node, strerror(errno));
	return -1;
}

void *numa_alloc(size_t len, int node, int *bound)
{
	void *p;

	*bound = -1;
	len = len ? len : 1;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	*bound = numa_bind(p, len, node);
	/* first touch: the pages come from the bound node now */
	memset(p, 0, len);
	return p;
}

void numa_free(void *p, size_t len)
{
	if (p)
		munmap(p, len ? len : 1);
}

int numa_node_of(const void *p)
{
	int node = -1;

	if (syscall(SYS_get_mempolicy, &node, NULL, 0, p, MPOL_F_NODE | MPOL_F_ADDR) != 0)
		return -1;
	return node;
}
