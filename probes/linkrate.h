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
	char source[80];      /* where it came from: "--pair-link-rate", "CCDIAG_LINK_RATE_MBIT",
			       * "sysfs:eth0", "ucx:mlx5_0:1" */
	char warning[160];    /* non-empty: a value was given but unusable (one line) */
	char why[200];        /* unknown: why (MPI's transport is not an interface found here) */
};

/* What this run knows of MPI's transport (Open MPI's variables, its loaded components). */
struct linkrate_mpi {
	const char *pml;          /* OMPI_MCA_pml: "ucx", "ob1", ...; NULL unset */
	const char *ucx_devices;  /* UCX_NET_DEVICES: "mlx5_0:1,...", "eth0", "all"; NULL unset */
	const char *maps;         /* the text of /proc/self/maps (mca_pml_ucx loaded?); NULL */
};

/*
 * Finds a rate. given: --pair-link-rate in Mb/s (ccdiag passes the profile's
 * NIC rate: on HGX nodes the fabric's, which nothing on the node names when
 * UCX picks its devices); used when above 0, before anything else. env: the
 * value of CCDIAG_LINK_RATE_MBIT or NULL; used next when set (a positive
 * number of Mb/s). Otherwise the rate of what carries MPI traffic, under
 * sysroot (normally "/sys"):
 *  - MPI over UCX (mpi->pml "ucx", or mca_pml_ucx in mpi->maps): the first
 *    item of UCX_NET_DEVICES, an RDMA port "mlx5_0:1" (its ports/N/rate) or
 *    a network interface (its speed); unset or "all": unknown (UCX picks);
 *  - else the first name in iface_hint (Open MPI's btl_tcp_if_include; NULL
 *    or a subnet: ignored): its speed file;
 *  - else, on a host without RDMA devices, the interface of the default
 *    route in route_file (normally "/proc/net/route"); with RDMA devices
 *    MPI may run over them, not the default route's (often management)
 *    Ethernet: unknown.
 * A speed of -1, 0 or an unreadable file means unknown. mpi may be NULL
 * (nothing known of MPI). Returns 0 when known, 1 when unknown (out->why
 * says why when it is not a plain unreadable file).
 */
int linkrate_find(double given, const char *env, const char *sysroot, const char *iface_hint,
		  const char *route_file, const struct linkrate_mpi *mpi, struct link_rate *out);

/* linkrate_find with given, on this process's environment, /sys and /proc/net/route. */
int linkrate_local(double given, struct link_rate *out);

/* The rate of a link between nodes of rates a and b Mb/s in GB/s (1e9 B/s): min / 8000; 0 if either is unknown. */
double linkrate_pair_GBps(double mbit_a, double mbit_b);

#endif
