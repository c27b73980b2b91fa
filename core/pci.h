#ifndef CCDIAG_PCI_H
#define CCDIAG_PCI_H

#include <jansson.h>
#include <stddef.h>

/*
 * The PCIe link of one device as Linux reports it in sysfs
 * (/sys/bus/pci/devices/BDF/{current,max}_link_{speed,width}, numa_node).
 * A device trained below its maximum (fewer lanes, lower generation) shows
 * as cur < max: the most common silent cause of half-speed GPUs and NICs.
 */
struct pci_link {
	char bdf[32];            /* "0000:17:00.0" */
	int numa_node;           /* -1 when unknown or not NUMA */
	double cur_gts, max_gts; /* GT/s per lane; 0 when unknown */
	int cur_width, max_width;/* lanes; 0 when unknown */
	int cur_gen, max_gen;    /* PCIe generation 1..6; 0 when unknown */
	double cur_GBps, max_GBps; /* theoretical data rate, one direction, GB/s; 0 when unknown */
};

/*
 * Reads the link of device bdf under root (NULL or "" = the real /sys; tests
 * pass a fixture tree holding bus/pci/devices/BDF/...). Missing files leave
 * their fields unknown. Returns 0 when the device folder exists, else -1.
 */
int pci_read_link(const char *root, const char *bdf, struct pci_link *l);

/*
 * First line of the sysfs attribute dir/name into buf, newline stripped.
 * Returns 0, or -1 with buf = "" when it cannot be read.
 */
int sysfs_read_attr(const char *dir, const char *name, char *buf, size_t len);

/* The PCIe generation of a per-lane rate in GT/s (2.5 -> 1 ... 64 -> 6), or 0. */
int pci_gen_of_gts(double gts);

/*
 * Theoretical data rate of one direction in GB/s (1e9 bytes/s) of a link of
 * the given generation and lane count, after line coding: 8b/10b for Gen1-2,
 * 128b/130b for Gen3-5, and for Gen6 the FLIT's 236 payload bytes of 256.
 * Returns 0 for an unknown generation or width.
 */
double pci_rate_GBps(int gen, int width);

/* {bdf, numa_node, current:{gen,gts,width,GBps}, max:{...}, downtrained} */
json_t *pci_link_json(const struct pci_link *l);

/*
 * The ACS Control register (ACSCtl) of device bdf from its config space
 * under root; -1 when it has no ACS capability, -2 when the extended
 * config space cannot be read (not root, no such device).
 */
int pci_acs_ctl(const char *root, const char *bdf);

/* The Device/Port Type of the PCI Express capability (PCIe base spec, 7.5.3.2). */
enum pci_port {
	PCI_PORT_UNKNOWN = -2,   /* config space unreadable (not root: 64 bytes only) */
	PCI_PORT_NONE = -1,      /* no PCI Express capability */
	PCI_PORT_ENDPOINT = 0,
	PCI_PORT_ROOT = 4,       /* root port */
	PCI_PORT_UPSTREAM = 5,   /* a switch's upstream port */
	PCI_PORT_DOWNSTREAM = 6, /* a switch's downstream port */
};

/* The port type of device bdf under root (enum pci_port; other types as the spec numbers them). */
int pci_port_type(const char *root, const char *bdf);

/*
 * The Enable Relaxed Ordering bit of device bdf's PCIe Device Control
 * register: 1 set, 0 clear (the device never marks its writes relaxed,
 * whatever a memory registration asks), -1 no PCI Express capability, -2
 * unreadable (not root: the kernel gives others the first 64 bytes only).
 */
int pci_relaxed_ordering(const char *root, const char *bdf);

/*
 * What lies on device bdf's path to the root complex (core/pcipath.c):
 * {bridges: [{bdf, port_type: "root_port" | "upstream" | "downstream" |
 *  "other" | null, acs_ctl: "0x001d" | "none" | null, p2p_redirect}],
 *  acs_redirect: true when a switch's downstream port on the path redirects
 *  peer-to-peer requests or completions (ACS RR/CR/EC: P2P and GPUDirect
 *  with a device under the same switch go through the root complex, slow or
 *  broken; the bits of root ports and upstream ports do not turn such
 *  traffic back and are not counted), null when unknown, acs_note,
 *  iommu_group_type: "identity" | "DMA" | "DMA-FQ" | null, iommu_translation}.
 *  null when the device is not in sysfs.
 */
json_t *pci_path_json(const char *root, const char *bdf);

/*
 * ACS between two devices (a GPU and its NIC): only the downstream ports
 * right below the deepest bridge both paths share, the ports their traffic
 * enters and leaves that switch by, count. {acs_redirect: true | false |
 * null (unreadable, with acs_note), acs_ports: [bridge entries as above]};
 * false with no ports when the paths meet only at a root complex or not at
 * all (the traffic crosses it whatever ACS says), or when a device sits
 * right below the shared bridge. null when sysfs does not know either.
 */
json_t *pci_pair_acs_json(const char *root, const char *bdf_a, const char *bdf_b);

#endif
