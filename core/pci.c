/* core/pci.c: PCIe link speed, width and NUMA node from sysfs. */
#include "pci.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* GT/s per lane of each generation, index = generation */
static const double gen_gts[] = { 0, 2.5, 5.0, 8.0, 16.0, 32.0, 64.0 };
#define NGEN ((int)(sizeof(gen_gts) / sizeof(gen_gts[0])))

int pci_gen_of_gts(double gts)
{
	for (int g = 1; g < NGEN; g++)
		if (gts > gen_gts[g] * 0.99 && gts < gen_gts[g] * 1.01)
			return g;
	return 0;
}

double pci_rate_GBps(int gen, int width)
{
	double eff;

	if (gen < 1 || gen >= NGEN || width <= 0)
		return 0;
	if (gen <= 2)
		eff = 8.0 / 10.0;
	else if (gen <= 5)
		eff = 128.0 / 130.0;
	else
		eff = 236.0 / 256.0; /* Gen6 FLIT: 236 B of TLP data per 256 B (FEC, CRC, header) */
	/* GT/s is Gbit/s per lane on the wire */
	return gen_gts[gen] * eff * width / 8.0;
}

int sysfs_read_attr(const char *dir, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	ok = f && fgets(buf, (int)len, f) != NULL;
	if (f)
		fclose(f);
	if (!ok) {
		buf[0] = '\0';
		return -1;
	}
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* "32.0 GT/s PCIe", "8 GT/s", "2.5 GT/s": GT/s; "Unknown" or junk: 0 */
static double parse_speed(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || v <= 0 || strncmp(end, " GT/s", 5) != 0)
		return 0;
	return v;
}

static int parse_int(const char *s, int dflt)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (end == s || (*end && *end != ' ') || v < -1 || v > 1024)
		return dflt;
	return (int)v;
}

int pci_read_link(const char *root, const char *bdf, struct pci_link *l)
{
	char dir[400], buf[64];
	struct stat st;

	memset(l, 0, sizeof(*l));
	l->numa_node = -1;
	snprintf(l->bdf, sizeof(l->bdf), "%s", bdf);
	snprintf(dir, sizeof(dir), "%s/bus/pci/devices/%s", root && *root ? root : "/sys", bdf);
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return -1;
	if (sysfs_read_attr(dir, "numa_node", buf, sizeof(buf)) == 0)
		l->numa_node = parse_int(buf, -1);
	if (sysfs_read_attr(dir, "current_link_speed", buf, sizeof(buf)) == 0)
		l->cur_gts = parse_speed(buf);
	if (sysfs_read_attr(dir, "max_link_speed", buf, sizeof(buf)) == 0)
		l->max_gts = parse_speed(buf);
	if (sysfs_read_attr(dir, "current_link_width", buf, sizeof(buf)) == 0)
		l->cur_width = parse_int(buf, 0) > 0 ? parse_int(buf, 0) : 0;
	if (sysfs_read_attr(dir, "max_link_width", buf, sizeof(buf)) == 0)
		l->max_width = parse_int(buf, 0) > 0 ? parse_int(buf, 0) : 0;
	l->cur_gen = pci_gen_of_gts(l->cur_gts);
	l->max_gen = pci_gen_of_gts(l->max_gts);
	l->cur_GBps = pci_rate_GBps(l->cur_gen, l->cur_width);
	l->max_GBps = pci_rate_GBps(l->max_gen, l->max_width);
	return 0;
}

static json_t *side_json(int gen, double gts, int width, double GBps)
{
	return json_pack("{s:o, s:o, s:o, s:o}",
			 "gen", gen ? json_integer(gen) : json_null(),
			 "gts", gts > 0 ? json_real(gts) : json_null(),
			 "width", width ? json_integer(width) : json_null(),
			 "GBps", GBps > 0 ? json_real(GBps) : json_null());
}

json_t *pci_link_json(const struct pci_link *l)
{
	int known = l->cur_gen && l->max_gen && l->cur_width && l->max_width;
	int down = known && (l->cur_gen < l->max_gen || l->cur_width < l->max_width);

	return json_pack("{s:s, s:i, s:o, s:o, s:o}", "bdf", l->bdf, "numa_node", l->numa_node,
			 "current", side_json(l->cur_gen, l->cur_gts, l->cur_width, l->cur_GBps),
			 "max", side_json(l->max_gen, l->max_gts, l->max_width, l->max_GBps),
			 "downtrained", known ? json_boolean(down) : json_null());
}
