#ifndef CCDIAG_LINKRATE_H
#define CCDIAG_LINKRATE_H

#include <stddef.h>

/*
 * A node's network link rate as this run can know it, for the netpair
 * probe's rate_GBps (docs/netpair.md, "Link rate"). Pure apart from the
 * files and environment named; tested on a fake tree in tests/unit.
 */
struct link_rate {
	double mbit;          /* Mb/s (1e6 bits/s); 0 = unknown */
	char source[80];      /* where it came from: "CCDIAG_LINK_RATE_MBIT", "sysfs:eth0" */
	char warning[160];    /* non-empty: a value was given but unusable (one line) */
};

/*
 * Finds a rate. env: the value of CCDIAG_LINK_RATE_MBIT or NULL; used when
 * set (a positive number of Mb/s). Otherwise the speed file under sysroot
 * (normally "/sys") of the interface that carries MPI traffic: the first
 * name in iface_hint (Open MPI's btl_tcp_if_include, NULL or a subnet:
 * ignored), else the interface of the default route in route_file
 * (normally "/proc/net/route"). A speed of -1, 0 or an unreadable file
 * means unknown. Returns 0 when known, 1 when unknown.
 */
int linkrate_find(const char *env, const char *sysroot, const char *iface_hint,
		  const char *route_file, struct link_rate *out);

/* linkrate_find on this process's environment, /sys and /proc/net/route. */
int linkrate_local(struct link_rate *out);

/* The rate of a link between nodes of rates a and b Mb/s in GB/s (1e9 B/s): min / 8000; 0 if either is unknown. */
double linkrate_pair_GBps(double mbit_a, double mbit_b);

#endif
