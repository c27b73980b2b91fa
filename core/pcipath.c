/*
 * core/pcipath.c: what lies on a device's PCIe path that silently breaks or
 * slows GPU peer-to-peer and GPUDirect RDMA: Access Control Services on the
 * bridges above it (ACSCtl read from config space) and the IOMMU's mode for
 * its group (core/pci.h).
 */
#include "pci.h"

#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PCI_EXT_CAP_ACS 0x000d
#define ACS_RR 0x0004            /* P2P request redirect */
#define ACS_CR 0x0008            /* P2P completion redirect */
#define ACS_EC 0x0020            /* P2P egress control */
#define ACS_REDIRECT (ACS_RR | ACS_CR | ACS_EC)
#define PCI_CAP_EXP 0x10         /* the PCI Express capability (standard list) */
#define DEVCTL_RELAX_EN 0x0010   /* Device Control: Enable Relaxed Ordering */

static const char *sys(const char *root)
{
	return root && *root ? root : "/sys";
}

/* A PCI address "0000:17:00.0" of n characters. */
static int is_bdf(const char *s, size_t n)
{
	return n == 12 && s[4] == ':' && s[7] == ':' && s[10] == '.';
}

/*
 * Device bdf's config space into cfg (4096 bytes); returns the bytes read,
 * or -1. Without root the kernel gives the first 64 bytes only: the
 * capabilities past them read as absent.
 */
static ssize_t read_config(const char *root, const char *bdf, uint8_t *cfg)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/config", sys(root), bdf);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, cfg, 4096);
	close(fd);
	return n;
}

static unsigned rd16(const uint8_t *cfg, int off)
{
	return cfg[off] | (unsigned)cfg[off + 1] << 8;
}

/*
 * The offset of the PCI Express capability in the standard list: > 0, -1
 * when the device has none, -2 when the list runs past what could be read.
 */
static int exp_cap(const uint8_t *cfg, ssize_t n)
{
	int off;

	if (n < 0x40)
		return -2;
	if (!(rd16(cfg, 0x06) & 0x0010))        /* Status: Capabilities List */
		return -1;
	off = cfg[0x34] & 0xfc;
	for (int hops = 0; off >= 0x40 && hops < 48; hops++) {
		if (off + 0x0c > n)
			return -2;
		if (cfg[off] == PCI_CAP_EXP)
			return off;
		off = cfg[off + 1] & 0xfc;
	}
	return -1;
}

int pci_acs_ctl(const char *root, const char *bdf)
{
	uint8_t cfg[4096];
	ssize_t n = read_config(root, bdf, cfg);
	int off = 0x100;

	/* the extended space (past 256 bytes) reads as absent without root */
	if (n < 0x104)
		return -2;
	for (int hops = 0; off >= 0x100 && off + 8 <= n && hops < 64; hops++) {
		uint32_t h = (uint32_t)cfg[off] | (uint32_t)cfg[off + 1] << 8 |
			     (uint32_t)cfg[off + 2] << 16 | (uint32_t)cfg[off + 3] << 24;

		if (h == 0 || h == 0xffffffffu)
			break;
		if ((h & 0xffff) == PCI_EXT_CAP_ACS)
			return (int)rd16(cfg, off + 6);
		off = (int)(h >> 20) & 0xffc;
	}
	return -1;
}

int pci_port_type(const char *root, const char *bdf)
{
	uint8_t cfg[4096];
	ssize_t n = read_config(root, bdf, cfg);
	int off;

	if (n < 0)
		return PCI_PORT_UNKNOWN;
	off = exp_cap(cfg, n);
	if (off < 0)
		return off == -1 ? PCI_PORT_NONE : PCI_PORT_UNKNOWN;
	return (int)(rd16(cfg, off + 2) >> 4) & 0xf;
}

int pci_relaxed_ordering(const char *root, const char *bdf)
{
	uint8_t cfg[4096];
	ssize_t n = read_config(root, bdf, cfg);
	int off;

	if (n < 0)
		return -2;
	off = exp_cap(cfg, n);
	if (off < 0)
		return off;
	return (rd16(cfg, off + 8) & DEVCTL_RELAX_EN) != 0;
}

static const char *port_name(int type)
{
	switch (type) {
	case PCI_PORT_ROOT: return "root_port";
	case PCI_PORT_UPSTREAM: return "upstream";
	case PCI_PORT_DOWNSTREAM: return "downstream";
	case PCI_PORT_UNKNOWN: return NULL;
	default: return "other";
	}
}

/*
 * Splits the /sys/devices path of device bdf into its components after
 * "devices/" (the host bridge "pci0000:17", then the bridges, then the
 * device). Returns how many, or -1 when sysfs does not know the device.
 */
#define PATH_MAX_COMP 32
static int path_components(const char *root, const char *bdf, char comp[][32])
{
	char link[PATH_MAX], real[PATH_MAX];
	const char *p;
	int n = 0;

	snprintf(link, sizeof(link), "%s/bus/pci/devices/%s", sys(root), bdf);
	if (!realpath(link, real) || !(p = strstr(real, "/devices/")))
		return -1;
	for (p += 9; *p && n < PATH_MAX_COMP; ) {
		size_t len = strcspn(p, "/");

		if (len && len < 32)
			snprintf(comp[n++], 32, "%.*s", (int)len, p);
		p += len + (p[len] == '/');
	}
	return n;
}

/*
 * Whether bridge number k on a path (0: the first below the host bridge)
 * counts for ACS: a switch's downstream port. Its type from config space;
 * a bridge without a PCI Express capability by its place (below the root
 * port, upstream and downstream ports alternate).
 */
static int counts_for_acs(const char *root, const char *bdf, int k)
{
	int t = pci_port_type(root, bdf);

	if (t == PCI_PORT_NONE || t == PCI_PORT_UNKNOWN)
		return k >= 2 && k % 2 == 0;
	return t == PCI_PORT_DOWNSTREAM;
}

/* A bridge's entry: {bdf, port_type, acs_ctl, p2p_redirect}; *ctl its ACSCtl as pci_acs_ctl. */
static json_t *bridge_json(const char *root, const char *bdf, int *ctl)
{
	const char *type = port_name(pci_port_type(root, bdf));

	*ctl = pci_acs_ctl(root, bdf);
	return json_pack("{s:s, s:o, s:o, s:o}", "bdf", bdf,
		"port_type", type ? json_string(type) : json_null(),
		"acs_ctl", *ctl >= 0 ? json_sprintf("0x%04x", *ctl) : *ctl == -1 ?
			   json_string("none") : json_null(),
		"p2p_redirect", *ctl >= 0 ? json_boolean((*ctl & ACS_REDIRECT) != 0) :
			   *ctl == -1 ? json_false() : json_null());
}

json_t *pci_path_json(const char *root, const char *bdf)
{
	char comp[PATH_MAX_COMP][32], link[PATH_MAX], buf[64], group[PATH_MAX];
	json_t *bridges = json_array(), *out;
	int redirect = 0, known = 0, unreadable = 0, n = path_components(root, bdf, comp);
	ssize_t len;

	if (n < 0) {
		json_decref(bridges);
		return json_null();
	}
	/*
	 * every PCI address on the path but the last (the device itself) is a
	 * bridge; only a switch's downstream ports decide where P2P goes: a root
	 * port's or an upstream port's redirect bits do not turn back traffic
	 * between two devices below one switch
	 */
	for (int i = 1, k = 0; i < n - 1; i++) {
		int ctl, counts;

		if (!is_bdf(comp[i], strlen(comp[i])))
			continue;
		json_array_append_new(bridges, bridge_json(root, comp[i], &ctl));
		counts = counts_for_acs(root, comp[i], k++);
		if (ctl >= 0 && counts) {
			known = 1;
			redirect |= (ctl & ACS_REDIRECT) != 0;
		}
		unreadable |= ctl == -2 && counts;
	}
	out = json_pack("{s:o, s:o}", "bridges", bridges, "acs_redirect",
			redirect ? json_true() : known || !unreadable ? json_false() : json_null());
	if (unreadable && !redirect)
		json_object_set_new(out, "acs_note", json_string(
			"a bridge's extended config space is unreadable (ccprobe not root): ACS unknown"));
	/* the IOMMU's mode for the device's group: "identity" passes DMA through */
	snprintf(link, sizeof(link), "%s/bus/pci/devices/%s/iommu_group", sys(root), bdf);
	len = readlink(link, group, sizeof(group) - 1);
	if (len > 0) {
		char dir[PATH_MAX + 64];

		group[len] = '\0';
		snprintf(dir, sizeof(dir), "%s/kernel/iommu_groups/%s", sys(root),
			 strrchr(group, '/') ? strrchr(group, '/') + 1 : group);
		if (sysfs_read_attr(dir, "type", buf, sizeof(buf)) == 0) {
			json_object_set_new(out, "iommu_group_type", json_string(buf));
			json_object_set_new(out, "iommu_translation", json_boolean(
				strcmp(buf, "identity") != 0));
		} else {
			json_object_set_new(out, "iommu_group_type", json_null());
		}
	} else {
		/* no group: no IOMMU, or one off (iommu=off, or not enabled in firmware) */
		json_object_set_new(out, "iommu_group_type", json_null());
		json_object_set_new(out, "iommu_translation", json_false());
	}
	return out;
}

json_t *pci_pair_acs_json(const char *root, const char *bdf_a, const char *bdf_b)
{
	char a[PATH_MAX_COMP][32], b[PATH_MAX_COMP][32];
	int na = path_components(root, bdf_a, a), nb = path_components(root, bdf_b, b), common = 0;
	int redirect = 0, unreadable = 0;
	json_t *ports = json_array(), *out;

	if (na < 0 || nb < 0) {
		json_decref(ports);
		return json_null();
	}
	while (common < na - 1 && common < nb - 1 && !strcmp(a[common], b[common]))
		common++;
	/*
	 * below the deepest bridge both paths share (the switch where they meet),
	 * the first bridge of each path is the port the traffic enters and leaves
	 * that switch by; across root ports or root complexes the traffic goes
	 * through the root complex whatever ACS says
	 */
	for (int s = 0; common >= 2 && s < 2; s++) {
		char (*c)[32] = s ? b : a;
		int n = s ? nb : na, ctl;

		/* the device itself right below the shared bridge: no port between */
		if (common >= n - 1 || !is_bdf(c[common], strlen(c[common])) ||
		    !counts_for_acs(root, c[common], common - 1))
			continue;
		json_array_append_new(ports, bridge_json(root, c[common], &ctl));
		redirect |= ctl >= 0 && (ctl & ACS_REDIRECT);
		unreadable |= ctl == -2;
	}
	out = json_pack("{s:o, s:o}", "acs_redirect", redirect ? json_true() : unreadable ?
			json_null() : json_false(), "acs_ports", ports);
	if (unreadable && !redirect)
		json_object_set_new(out, "acs_note", json_string(
			"a switch port's extended config space is unreadable (ccprobe not root): ACS unknown"));
	return out;
}
