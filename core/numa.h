#ifndef CCDIAG_NUMA_H
#define CCDIAG_NUMA_H

#include <stddef.h>

/*
 * Host memory for a device's DMA, placed on the device's NUMA node: the
 * GPU probes' pinned buffers and the ib probe's registered regions. A far
 * socket's DRAM bandwidth is below what 8 NICs or GPUs move at once.
 */

/*
 * Maps len bytes (page aligned), binds them to NUMA node node (node >= 0)
 * and touches every page, so they come from that node. *bound is the node
 * they are bound to, or -1 when node < 0 or the kernel refused (no NUMA,
 * no such node): they then land where the kernel chooses. Returns the
 * memory, zeroed, or NULL. Free with numa_free.
 */
void *numa_alloc(size_t len, int node, int *bound);
void numa_free(void *p, size_t len);

/* Binds the mapping [p, p + len) (not yet touched) to node; returns node, or -1 refused. */
int numa_bind(void *p, size_t len, int node);

/* The NUMA node the page at p is on, or -1 when the kernel cannot say. */
int numa_node_of(const void *p);

#endif
