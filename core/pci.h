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

/*
 * What lies on device bdf's path to the root complex (core/pcipath.c):
 * {bridges: [{bdf, acs_ctl: "0x001d" | "none" | null, p2p_redirect}],
 *  acs_redirect: true when any bridge redirects peer-to-peer requests or
 *  completions (ACS RR/CR/EC: P2P and GPUDirect go through the root complex,
 *  slow or broken), null when unknown, acs_note, iommu_group_type:
 *  "identity" | "DMA" | "DMA-FQ" | null, iommu_translation}. null when the
 *  device is not in sysfs.
 */
json_t *pci_path_json(const char *root, const char *bdf);

#endif
