/* probes/ib_sysfs.c: RDMA devices, ports, GIDs and counters from sysfs; link rate arithmetic. */
#include "ib_sysfs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Per-lane rates. Nominal is what the kernel's rate file and ibstat print;
 * data is what remains for packets after line coding: 8b/10b for SDR-QDR,
 * 64b/66b for FDR10 (10.3125 Gbaud) and FDR (14.0625 Gbaud). From EDR on the
 * nominal figure is already the data rate (EDR signals 25.78125 Gbaud with
 * 64b/66b; HDR, NDR, XDR are PAM4 with FEC, quoted as 50, 100, 200).
 */
static const struct ib_speed speeds[] = {
	{ IBR_SPEED_SDR, "SDR", 2.5, 2.0 },
	{ IBR_SPEED_DDR, "DDR", 5.0, 4.0 },
	{ IBR_SPEED_QDR, "QDR", 10.0, 8.0 },
	{ IBR_SPEED_FDR10, "FDR10", 10.0, 10.3125 * 64.0 / 66.0 },
	{ IBR_SPEED_FDR, "FDR", 14.0, 14.0625 * 64.0 / 66.0 },
	{ IBR_SPEED_EDR, "EDR", 25.0, 25.0 },
	{ IBR_SPEED_HDR, "HDR", 50.0, 50.0 },
	{ IBR_SPEED_NDR, "NDR", 100.0, 100.0 },
	{ IBR_SPEED_XDR, "XDR", 200.0, 200.0 },
};
#define NSPEEDS (sizeof(speeds) / sizeof(speeds[0]))

const struct ib_speed *ib_speed_find(unsigned code)
{
	for (size_t i = 0; i < NSPEEDS; i++)
		if (speeds[i].code == code)
			return &speeds[i];
	return NULL;
}

const struct ib_speed *ib_speed_by_name(const char *name)
{
	if (!name[0])
		return &speeds[0];   /* the kernel prints SDR as "(4X)" */
	for (size_t i = 0; i < NSPEEDS; i++)
		if (!strcmp(speeds[i].name, name))
			return &speeds[i];
	return NULL;
}

int ib_width_lanes(unsigned code)
{
	switch (code) {
	case IBR_WIDTH_1X: return 1;
	case IBR_WIDTH_2X: return 2;
	case IBR_WIDTH_4X: return 4;
	case IBR_WIDTH_8X: return 8;
	case IBR_WIDTH_12X: return 12;
	default: return 0;
	}
}

double ib_rate_Gbps(unsigned width, unsigned speed)
{
	const struct ib_speed *s = ib_speed_find(speed);

	return s ? ib_width_lanes(width) * s->lane_Gbps : 0.0;
}

double ib_data_rate_Gbps(unsigned width, unsigned speed)
{
	const struct ib_speed *s = ib_speed_find(speed);

	return s ? ib_width_lanes(width) * s->data_Gbps : 0.0;
}

int ib_rate_parse(const char *s, struct ib_rate *r)
{
	char name[16] = "";
	double v;
	int lanes, n = 0;

	memset(r, 0, sizeof(*r));
	/* "%lf Gb/sec (%dX%15[A-Z0-9])": the name is absent for SDR */
	if (sscanf(s, "%lf Gb/sec (%dX%n", &v, &lanes, &n) != 2 || !n)
		return -1;
	s += n;
	if (*s == ' ')
		s++;
	if (sscanf(s, "%15[A-Z0-9])", name) != 1)
		name[0] = '\0';
	if (!strchr(s, ')') || v <= 0 || (lanes != 1 && lanes != 2 && lanes != 4 && lanes != 8 &&
					   lanes != 12))
		return -1;
	r->Gbps = v;
	r->lanes = lanes;
	r->speed = ib_speed_by_name(name);
	return 0;
}

static const char *sysroot(const char *root)
{
	return root && *root ? root : "/sys";
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

int ib_sysfs_list(const char *root, char (*names)[IB_NAME_LEN], int max)
{
	char dir[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(dir, sizeof(dir), "%s/class/infiniband", sysroot(root));
	d = opendir(dir);
	if (!d)
		return 0;
	while ((e = readdir(d)) && n < max) {
		if (e->d_name[0] == '.' || strlen(e->d_name) >= IB_NAME_LEN)
			continue;
		snprintf(names[n++], IB_NAME_LEN, "%s", e->d_name);
	}
	closedir(d);
	qsort(names, (size_t)n, IB_NAME_LEN, cmp_name);
	return n;
}

/* Copies src into dst[len], cut to fit (snprintf without the truncation warnings). */
static void set_str(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* A PCI address: "0000:17:00.0". */
static int is_bdf(const char *s)
{
	unsigned dom, bus, dev, fn;
	int n = 0;

	return sscanf(s, "%4x:%2x:%2x.%1u%n", &dom, &bus, &dev, &fn, &n) == 4 && !s[n];
}

/* The PCI address of dev's "device" entry, symlink or folder; "" when none. */
static void device_bdf(const char *devdir, char *bdf, size_t len)
{
	char path[PATH_MAX + 32], target[PATH_MAX], line[128];
	ssize_t n;
	FILE *f;

	bdf[0] = '\0';
	snprintf(path, sizeof(path), "%s/device", devdir);
	n = readlink(path, target, sizeof(target) - 1);
	if (n > 0) {
		const char *base;

		target[n] = '\0';
		base = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
		if (is_bdf(base))
			set_str(bdf, len, base);
		return;
	}
	snprintf(path, sizeof(path), "%s/device/uevent", devdir);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "PCI_SLOT_NAME=", 14) && is_bdf(line + 14)) {
			set_str(bdf, len, line + 14);
			break;
		}
	}
	fclose(f);
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int ib_sysfs_device(const char *root, const char *dev, struct ib_dev_sysfs *d)
{
	char dir[PATH_MAX], ports[PATH_MAX + 8];
	struct stat st;
	struct dirent *e;
	DIR *pd;

	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", dev);
	snprintf(dir, sizeof(dir), "%s/class/infiniband/%s", sysroot(root), dev);
	if (stat(dir, &st) || !S_ISDIR(st.st_mode))
		return -1;
	sysfs_read_attr(dir, "fw_ver", d->fw_ver, sizeof(d->fw_ver));
	sysfs_read_attr(dir, "node_guid", d->node_guid, sizeof(d->node_guid));
	sysfs_read_attr(dir, "board_id", d->board_id, sizeof(d->board_id));
	sysfs_read_attr(dir, "hca_type", d->hca_type, sizeof(d->hca_type));
	device_bdf(dir, d->bdf, sizeof(d->bdf));
	snprintf(ports, sizeof(ports), "%s/ports", dir);
	pd = opendir(ports);
	if (!pd)
		return 0;
	while ((e = readdir(pd)) && d->nports < IB_MAX_PORTS) {
		char *end;
		long p = strtol(e->d_name, &end, 10);

		if (e->d_name[0] != '.' && !*end && p > 0 && p < 256)
			d->ports[d->nports++] = (int)p;
	}
	closedir(pd);
	qsort(d->ports, (size_t)d->nports, sizeof(int), cmp_int);
	return 0;
}

/* "4: ACTIVE" -> 4 and "ACTIVE" */
static void parse_state(const char *s, int *num, char *name, size_t len)
{
	char *end;
	long v = strtol(s, &end, 10);

	*num = end != s && *end == ':' ? (int)v : -1;
	if (*num >= 0) {
		end++;
		while (*end == ' ')
			end++;
		snprintf(name, len, "%s", end);
	} else {
		snprintf(name, len, "%s", s);
	}
}

int ib_sysfs_port(const char *root, const char *dev, int port, struct ib_port_sysfs *p)
{
	char dir[PATH_MAX], buf[64];
	struct stat st;

	memset(p, 0, sizeof(*p));
	p->port = port;
	p->state = p->phys_state = p->lid = -1;
	snprintf(dir, sizeof(dir), "%s/class/infiniband/%s/ports/%d", sysroot(root), dev, port);
	if (stat(dir, &st) || !S_ISDIR(st.st_mode))
		return -1;
	if (!sysfs_read_attr(dir, "state", buf, sizeof(buf)))
		parse_state(buf, &p->state, p->state_name, sizeof(p->state_name));
	if (!sysfs_read_attr(dir, "phys_state", buf, sizeof(buf)))
		parse_state(buf, &p->phys_state, p->phys_state_name, sizeof(p->phys_state_name));
	sysfs_read_attr(dir, "link_layer", p->link_layer, sizeof(p->link_layer));
	if (!sysfs_read_attr(dir, "rate", p->rate_str, sizeof(p->rate_str)))
		ib_rate_parse(p->rate_str, &p->rate);
	if (!sysfs_read_attr(dir, "lid", buf, sizeof(buf))) {
		char *end;
		long v = strtol(buf, &end, 0);

		p->lid = end != buf && v >= 0 && v <= 0xffff ? (int)v : -1;
	}
	return 0;
}

int ib_gid_parse(const char *s, uint8_t raw[16])
{
	for (int g = 0; g < 8; g++) {
		unsigned v = 0;

		for (int k = 0; k < 4; k++, s++) {
			if (!isxdigit((unsigned char)*s))
				return -1;
			v = v * 16 + (unsigned)(isdigit((unsigned char)*s) ? *s - '0' :
						tolower((unsigned char)*s) - 'a' + 10);
		}
		if (*s != (g < 7 ? ':' : '\0'))
			return -1;
		if (g < 7)
			s++;
		raw[2 * g] = (uint8_t)(v >> 8);
		raw[2 * g + 1] = (uint8_t)v;
	}
	return 0;
}

int ib_sysfs_gid(const char *root, const char *dev, int port, int idx, struct ib_gid_choice *g)
{
	char dir[PATH_MAX], name[64];
	uint8_t raw[16];
	int zero = 1;

	memset(g, 0, sizeof(*g));
	g->index = -1;
	snprintf(dir, sizeof(dir), "%s/class/infiniband/%s/ports/%d", sysroot(root), dev, port);
	snprintf(name, sizeof(name), "gids/%d", idx);
	if (sysfs_read_attr(dir, name, g->gid, sizeof(g->gid)) || ib_gid_parse(g->gid, raw))
		return -1;
	for (int i = 0; i < 16; i++)
		zero &= raw[i] == 0;
	if (zero)
		return -1;
	snprintf(name, sizeof(name), "gid_attrs/types/%d", idx);
	sysfs_read_attr(dir, name, g->type, sizeof(g->type));
	/* the kernel prints "IB/RoCE v1" for both IB and RoCE v1 GIDs */
	if (!strcmp(g->type, "IB/RoCE v1"))
		snprintf(g->type, sizeof(g->type), "RoCE v1");
	snprintf(name, sizeof(name), "gid_attrs/ndevs/%d", idx);
	sysfs_read_attr(dir, name, g->netdev, sizeof(g->netdev));
	g->index = idx;
	return 0;
}

/* Rank of a RoCE GID: 4 v2 IPv4-mapped, 3 v2 global, 2 v2 link-local, 1 v1, 0 unusable. */
static int gid_rank(const struct ib_gid_choice *g)
{
	uint8_t raw[16];
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (ib_gid_parse(g->gid, raw))
		return 0;
	if (strcmp(g->type, "RoCE v2"))
		return 1;
	if (!memcmp(raw, v4mapped, sizeof(v4mapped)))
		return 4;
	if (raw[0] == 0xfe && (raw[1] & 0xc0) == 0x80)
		return 2;
	return 3;
}

int ib_sysfs_choose_gid(const char *root, const char *dev, int port, int ethernet,
			struct ib_gid_choice *g)
{
	struct ib_gid_choice c;
	int best = 0;

	memset(g, 0, sizeof(*g));
	g->index = -1;
	if (!ethernet) {
		if (ib_sysfs_gid(root, dev, port, 0, g))
			return -1;
		snprintf(g->type, sizeof(g->type), "IB");
		return 0;
	}
	/* the table is short (16-256 entries); empty entries read as all zero */
	for (int i = 0; i < 1024; i++) {
		int r;

		if (ib_sysfs_gid(root, dev, port, i, &c)) {
			char path[PATH_MAX];

			snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports/%d/gids/%d",
				 sysroot(root), dev, port, i);
			if (access(path, F_OK))
				break;   /* past the end of the table */
			continue;
		}
		r = gid_rank(&c);
		if (r > best) {
			best = r;
			*g = c;
		}
	}
	return best ? 0 : -1;
}

int ib_counter_parse(const char *text, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (!isdigit((unsigned char)text[0]))
		return -1;
	errno = 0;
	x = strtoull(text, &end, 10);
	if (errno || (*end && *end != '\n') || (*end == '\n' && end[1]))
		return -1;
	*v = x;
	return 0;
}

static int cmp_counter(const void *a, const void *b)
{
	return strcmp(((const struct ib_counter *)a)->name, ((const struct ib_counter *)b)->name);
}

int ib_counters_read(const char *root, const char *dev, int port, const char *sub,
		     struct ib_counters *out)
{
	char dir[PATH_MAX], buf[64];
	struct dirent *e;
	DIR *d;

	out->n = 0;
	snprintf(dir, sizeof(dir), "%s/class/infiniband/%s/ports/%d/%s", sysroot(root), dev, port,
		 sub);
	d = opendir(dir);
	if (!d)
		return -1;
	while ((e = readdir(d)) && out->n < IB_MAX_COUNTERS) {
		struct ib_counter *c = &out->c[out->n];

		if (e->d_name[0] == '.' || strlen(e->d_name) >= sizeof(c->name))
			continue;
		/* some counters cannot be read (EINVAL on ports without them): leave out */
		if (sysfs_read_attr(dir, e->d_name, buf, sizeof(buf)) ||
		    ib_counter_parse(buf, &c->value))
			continue;
		snprintf(c->name, sizeof(c->name), "%s", e->d_name);
		out->n++;
	}
	closedir(d);
	qsort(out->c, (size_t)out->n, sizeof(out->c[0]), cmp_counter);
	return out->n;
}

json_t *ib_counters_json(const struct ib_counters *c)
{
	json_t *o = json_object();

	for (int i = 0; i < c->n; i++)
		json_object_set_new(o, c->c[i].name, json_integer((json_int_t)c->c[i].value));
	return o;
}

static const struct ib_counter *find_counter(const struct ib_counters *c, const char *name)
{
	struct ib_counter key;

	snprintf(key.name, sizeof(key.name), "%s", name);
	return bsearch(&key, c->c, (size_t)c->n, sizeof(c->c[0]), cmp_counter);
}

json_t *ib_counters_delta_json(const struct ib_counters *before, const struct ib_counters *after)
{
	json_t *o = json_object();

	for (int i = 0; i < before->n; i++) {
		const struct ib_counter *a = find_counter(after, before->c[i].name);
		uint64_t b = before->c[i].value;

		json_object_set_new(o, before->c[i].name, a && a->value >= b ?
				    json_integer((json_int_t)(a->value - b)) : json_null());
	}
	for (int i = 0; i < after->n; i++)
		if (!find_counter(before, after->c[i].name))
			json_object_set_new(o, after->c[i].name, json_null());
	return o;
}

/* Splits a /sys/devices path into its components after "devices/". */
static int components(const char *path, char comp[][32], int max)
{
	const char *p = strstr(path, "/devices/");
	int n = 0;

	p = p ? p + 9 : path;
	while (*p && n < max) {
		size_t len = strcspn(p, "/");

		if (len) {
			snprintf(comp[n], 32, "%.*s", (int)(len < 31 ? len : 31), p);
			n++;
		}
		p += len;
		if (*p == '/')
			p++;
	}
	return n;
}

const char *ib_pci_relation(const char *path_a, const char *path_b)
{
	char a[24][32], b[24][32];
	int na = components(path_a, a, 24), nb = components(path_b, b, 24), common = 0;

	/* the last component is the device itself: compare the bridges above it */
	while (common < na - 1 && common < nb - 1 && !strcmp(a[common], b[common]))
		common++;
	if (common == 0 || strncmp(a[0], "pci", 3))
		return "cross_root";
	return common == 1 ? "same_root" : "same_switch";
}

double ib_rails_rate(const double *rate, const int *active, int n)
{
	double best = 0;
	int best_n = 0, tie = 0;

	for (int i = 0; i < n; i++) {
		int k = 0;

		if (!active[i] || !(rate[i] > 0) || rate[i] == best)
			continue;
		for (int j = 0; j < n; j++)
			k += active[j] && rate[j] == rate[i];
		if (k > best_n) {
			best = rate[i];
			best_n = k;
			tie = 0;
		} else if (k == best_n) {
			tie = 1;
		}
	}
	/* as many ports at another rate: which are the rails is not known, keep them all */
	return tie ? 0 : best;
}

int ib_sysfs_gpus(const char *root)
{
	char dir[512], path[800], v[32], c[32];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(dir, sizeof(dir), "%s/bus/pci/devices", root && *root ? root : "/sys");
	if (!(d = opendir(dir)))
		return -1;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (sysfs_read_attr(path, "vendor", v, sizeof(v)) ||
		    sysfs_read_attr(path, "class", c, sizeof(c)))
			continue;
		n += !strcmp(v, "0x10de") && (!strncmp(c, "0x0302", 6) || !strncmp(c, "0x0300", 6));
	}
	closedir(d);
	return n;
}

int ib_rails_vs_gpus(int nrails, int ngpus, char *msg, size_t len)
{
	if (len)
		msg[0] = '\0';
	if (ngpus <= 0 || nrails == ngpus)
		return 0;
	snprintf(msg, len, "%d InfiniBand rail(s) for %d GPU(s): %s", nrails, ngpus,
		 nrails > ngpus ? "more ports than GPUs (storage ports taken as rails? name the "
		 "compute ports with --ib-devices)" : "fewer ports than GPUs (a port missing or "
		 "left out?)");
	return 1;
}
