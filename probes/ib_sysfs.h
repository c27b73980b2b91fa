#ifndef CCDIAG_IB_SYSFS_H
#define CCDIAG_IB_SYSFS_H

/*
 * RDMA devices and ports as Linux shows them under /sys/class/infiniband,
 * and the arithmetic of InfiniBand link rates. Pure: plain file reading
 * under a root folder (NULL or "" = the real /sys; tests pass a fixture tree
 * holding class/infiniband/DEV/...), no verbs, no MPI, so it builds and is
 * tested without rdma-core.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/pci.h"

/*
 * Lane speeds as the verbs (ibv_port_attr.active_speed, active_speed_ex)
 * and the kernel encode them: one bit each. XDR does not fit the 8-bit
 * active_speed; rdma-core before v47 cannot report it, so the probe falls
 * back to the sysfs rate string for it.
 */
enum ib_speed_code {
	IBR_SPEED_SDR = 1,
	IBR_SPEED_DDR = 2,
	IBR_SPEED_QDR = 4,
	IBR_SPEED_FDR10 = 8,
	IBR_SPEED_FDR = 16,
	IBR_SPEED_EDR = 32,
	IBR_SPEED_HDR = 64,
	IBR_SPEED_NDR = 128,
	IBR_SPEED_XDR = 256,
};

/* Port widths as the verbs encode them (ibv_port_attr.active_width). */
enum ib_width_code {
	IBR_WIDTH_1X = 1,
	IBR_WIDTH_4X = 2,
	IBR_WIDTH_8X = 4,
	IBR_WIDTH_12X = 8,
	IBR_WIDTH_2X = 16,
};

/* One lane speed: its name and its rates per lane in Gb/s (1e9 bits/s). */
struct ib_speed {
	unsigned code;           /* enum ib_speed_code */
	const char *name;        /* "NDR"; "SDR" (the kernel prints no name for it) */
	double lane_Gbps;        /* nominal, as ibstat and sysfs print it: 2.5 ... 200 */
	double data_Gbps;        /* after line coding (8b/10b to QDR, 64b/66b FDR10-EDR) */
};

/* The speed with this verbs code, or NULL. */
const struct ib_speed *ib_speed_find(unsigned code);

/* The speed with this name ("EDR", case-sensitive; "" = SDR), or NULL. */
const struct ib_speed *ib_speed_by_name(const char *name);

/* Lanes of a verbs width code (1, 2, 4, 8, 12), or 0 when unknown. */
int ib_width_lanes(unsigned code);

/*
 * Port rates in Gb/s from the verbs width and speed codes: nominal (what
 * ibstat prints: 4X NDR = 400) and data (after line coding: 4X QDR = 32,
 * 4X FDR = 54.5, from EDR on equal to nominal). 0 when a code is unknown.
 */
double ib_rate_Gbps(unsigned width, unsigned speed);
double ib_data_rate_Gbps(unsigned width, unsigned speed);

/* A sysfs port rate, "400 Gb/sec (4X NDR)", "2.5 Gb/sec (1X)", parsed. */
struct ib_rate {
	double Gbps;             /* the number printed (nominal) */
	int lanes;               /* 1, 2, 4, 8, 12 */
	const struct ib_speed *speed; /* NULL when the name is unknown */
};

/* Parses a sysfs rate string. Returns 0, or -1 when it is not one. */
int ib_rate_parse(const char *s, struct ib_rate *r);

#define IB_NAME_LEN 64
#define IB_MAX_PORTS 8

/* One port of an RDMA device, from DEV/ports/N/. */
struct ib_port_sysfs {
	int port;                /* 1-based */
	int state;               /* 4 from "4: ACTIVE"; -1 unknown */
	char state_name[24];     /* "ACTIVE" */
	int phys_state;          /* 5 from "5: LinkUp"; -1 unknown */
	char phys_state_name[24];/* "LinkUp" */
	char link_layer[24];     /* "InfiniBand" or "Ethernet" */
	char rate_str[48];       /* the raw rate file */
	struct ib_rate rate;     /* parsed; Gbps 0 when unparsable */
	int lid;                 /* -1 unknown */
};

/* One RDMA device, from DEV/. */
struct ib_dev_sysfs {
	char name[IB_NAME_LEN];  /* "mlx5_0" */
	char fw_ver[64];         /* "28.39.1002"; "" when absent */
	char node_guid[40];      /* "b8ce:f603:00f2:1a3c" */
	char board_id[64];
	char hca_type[64];
	char bdf[32];            /* PCI address from the device link; "" when none (Soft-RoCE) */
	int nports;
	int ports[IB_MAX_PORTS]; /* port numbers, ascending */
};

/* Device names under root/class/infiniband, sorted; at most max. Returns the count (0: none). */
int ib_sysfs_list(const char *root, char (*names)[IB_NAME_LEN], int max);

/*
 * Reads device dev: identity files, the port numbers, and the PCI address
 * of its "device" entry (a symlink to the PCI device on a real system, whose
 * last component is the address; a folder whose uevent says PCI_SLOT_NAME
 * also works). Returns 0, or -1 when the device folder is missing.
 */
int ib_sysfs_device(const char *root, const char *dev, struct ib_dev_sysfs *d);

/* Reads port port of dev. Returns 0, or -1 when the port folder is missing. */
int ib_sysfs_port(const char *root, const char *dev, int port, struct ib_port_sysfs *p);

/*
 * The GID a queue pair should use. InfiniBand: index 0 (the port GID).
 * RoCE: the lowest index of the best kind present, in this order: RoCE v2
 * with an IPv4-mapped address (routable, what NCCL uses by default), RoCE v2
 * with a global IPv6 address, RoCE v2 link-local, RoCE v1. Index 0 of a RoCE
 * port is usually v1 link-local: taking it blindly (perftest's default) is
 * the classic GID trap.
 */
struct ib_gid_choice {
	int index;               /* -1: none found */
	char gid[48];            /* "0000:0000:0000:0000:0000:ffff:c612:0001" */
	char type[16];           /* "IB", "RoCE v1", "RoCE v2" */
	char netdev[32];         /* gid_attrs/ndevs/N; "" when absent */
};

/* Chooses as above (ethernet: nonzero for RoCE). Returns 0, or -1 when no usable GID exists. */
int ib_sysfs_choose_gid(const char *root, const char *dev, int port, int ethernet,
			struct ib_gid_choice *g);

/* Reads GID idx into g (type and netdev too). Returns 0, or -1 when absent or all zero. */
int ib_sysfs_gid(const char *root, const char *dev, int port, int idx, struct ib_gid_choice *g);

/* Parses a GID as sysfs prints it (8 groups of 4 hex digits) into 16 bytes. Returns 0 or -1. */
int ib_gid_parse(const char *s, uint8_t raw[16]);

/* Port counters: the files of DEV/ports/N/counters or hw_counters. */
#define IB_MAX_COUNTERS 128
struct ib_counter {
	char name[48];
	uint64_t value;
};

struct ib_counters {
	int n;                   /* sorted by name */
	struct ib_counter c[IB_MAX_COUNTERS];
};

/* Parses a counter file's text (decimal, optional newline). Returns 0 or -1. */
int ib_counter_parse(const char *text, uint64_t *v);

/*
 * Reads every counter file of dev/port/sub ("counters" or "hw_counters");
 * unreadable or unparsable files are left out. Returns the number read, or
 * -1 when the folder is missing.
 */
int ib_counters_read(const char *root, const char *dev, int port, const char *sub,
		     struct ib_counters *out);

/* {name: value} of c. */
json_t *ib_counters_json(const struct ib_counters *c);

/*
 * {name: after - before} for every counter of either set; null where one
 * side lacks it or it went down (the counter was reset during the run).
 */
json_t *ib_counters_delta_json(const struct ib_counters *before, const struct ib_counters *after);

/*
 * How two PCI devices hang together, from their sysfs paths under
 * /sys/devices (e.g. ".../pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0"):
 * "same_switch" when they share a PCI bridge below the root port's bus,
 * "same_root" when they share only the host bridge (pciNNNN:BB), else
 * "cross_root". GPUDirect RDMA runs at full speed through a switch, often
 * at a fraction through the root complex, worse across sockets.
 */
const char *ib_pci_relation(const char *path_a, const char *path_b);

/*
 * The rate the compute rails share: the most common data rate among the
 * active ports (rate[i] Gb/s where active[i]), so that storage ports run
 * as InfiniBand too (often NDR200 beside NDR400 compute ports) do not
 * become rails. 0 when no active port has a rate, or when two rates are
 * shared by as many ports (a tie: nothing is left out then).
 */
double ib_rails_rate(const double *rate, const int *active, int n);

/*
 * GPUs of the host under root (NULL or "" = /sys): PCI devices of vendor
 * 0x10de whose class is a 3D or VGA controller (0x0302xx, 0x0300xx).
 * Returns the count, -1 when bus/pci/devices cannot be read.
 */
int ib_sysfs_gpus(const char *root);

/*
 * Whether the rail count fits one rail per GPU: "" when equal or the GPU
 * count is unknown (ngpus <= 0), else a one-line warning into msg, for more
 * rails than GPUs (storage ports as rails?) as for fewer. Returns 1 when it
 * wrote one, else 0.
 */
int ib_rails_vs_gpus(int nrails, int ngpus, char *msg, size_t len);

#endif
