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

static const char *sys(const char *root)
{
	return root && *root ? root : "/sys";
}

/* A PCI address "0000:17:00.0" of n characters. */
static int is_bdf(const char *s, size_t n)
{
	return n == 12 && s[4] == ':' && s[7] == ':' && s[10] == '.';
}

int pci_acs_ctl(const char *root, const char *bdf)
{
	char path[PATH_MAX];
	uint8_t cfg[4096];
	ssize_t n;
	int fd, off = 0x100;

	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/config", sys(root), bdf);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -2;
	n = read(fd, cfg, sizeof(cfg));
	close(fd);
	/* the extended space (past 256 bytes) reads as absent without root */
	if (n < 0x104)
		return -2;
	for (int hops = 0; off >= 0x100 && off + 8 <= n && hops < 64; hops++) {
		uint32_t h = (uint32_t)cfg[off] | (uint32_t)cfg[off + 1] << 8 |
			     (uint32_t)cfg[off + 2] << 16 | (uint32_t)cfg[off + 3] << 24;

		if (h == 0 || h == 0xffffffffu)
			break;
		if ((h & 0xffff) == PCI_EXT_CAP_ACS)
			return cfg[off + 6] | cfg[off + 7] << 8;
		off = (int)(h >> 20) & 0xffc;
	}
	return -1;
}

json_t *pci_path_json(const char *root, const char *bdf)
{
	char link[PATH_MAX], real[PATH_MAX], buf[64], group[PATH_MAX];
	json_t *bridges = json_array(), *out;
	const char *p;
	int redirect = 0, known = 0, unreadable = 0;
	ssize_t n;

	snprintf(link, sizeof(link), "%s/bus/pci/devices/%s", sys(root), bdf);
	if (!realpath(link, real) || !(p = strstr(real, "/devices/"))) {
		json_decref(bridges);
		return json_null();
	}
	/* every PCI address on the path but the last (the device itself) is a bridge */
	for (p += 9; *p; ) {
		const char *end = strchr(p, '/');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (end && is_bdf(p, len)) {
			char b[32];
			int ctl;

			snprintf(b, sizeof(b), "%.*s", (int)len, p);
			ctl = pci_acs_ctl(root, b);
			if (ctl >= 0) {
				known = 1;
				redirect |= (ctl & (ACS_RR | ACS_CR | ACS_EC)) != 0;
			}
			unreadable |= ctl == -2;
			json_array_append_new(bridges, json_pack("{s:s, s:o, s:o}", "bdf", b,
				"acs_ctl", ctl >= 0 ? json_sprintf("0x%04x", ctl) : ctl == -1 ?
					   json_string("none") : json_null(),
				"p2p_redirect", ctl >= 0 ? json_boolean((ctl & (ACS_RR | ACS_CR |
									ACS_EC)) != 0) :
					   ctl == -1 ? json_false() : json_null()));
		}
		p += len + (end ? 1 : 0);
		if (!end)
			break;
	}
	out = json_pack("{s:o, s:o}", "bridges", bridges, "acs_redirect",
			known || !unreadable ? json_boolean(redirect) : json_null());
	if (unreadable)
		json_object_set_new(out, "acs_note", json_string(
			"a bridge's extended config space is unreadable (ccprobe not root): ACS unknown"));
	/* the IOMMU's mode for the device's group: "identity" passes DMA through */
	snprintf(link, sizeof(link), "%s/bus/pci/devices/%s/iommu_group", sys(root), bdf);
	n = readlink(link, group, sizeof(group) - 1);
	if (n > 0) {
		char dir[PATH_MAX + 64];

		group[n] = '\0';
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
