/*
 * The link rate of a node: what ccdiag says (--pair-link-rate, the
 * profile's NIC rate), what the operator says (CCDIAG_LINK_RATE_MBIT,
 * which the emulated cluster sets to its shaped rate) or what the kernel
 * reports for the interface or RDMA port MPI's transport uses. Only a rate
 * that is known is used; a guess (the management NIC of an HGX node whose
 * MPI runs over UCX/InfiniBand) would turn into a false pct_of_rate.
 */
#include "linkrate.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_positive(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	while (*end == ' ' || *end == '\n')
		end++;
	if (errno || end == s || *end || !(v > 0) || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

/* The first item of a comma list when it names an interface (not a subnet). */
static int hint_iface(const char *hint, char *iface, size_t len)
{
	size_t n;

	if (!hint || !*hint)
		return -1;
	n = strcspn(hint, ",");
	if (n == 0 || n >= len || memchr(hint, '/', n))
		return -1;
	memcpy(iface, hint, n);
	iface[n] = '\0';
	return 0;
}

/* The interface of the first default route (destination and mask 0). */
static int route_iface(const char *route_file, char *iface, size_t len)
{
	char line[512], name[64];
	unsigned long dst, mask;
	FILE *f = fopen(route_file, "r");
	int rc = -1;

	if (!f)
		return -1;
	while (rc && fgets(line, sizeof(line), f)) {
		/* Iface Destination Gateway Flags RefCnt Use Metric Mask ... (hex) */
		if (sscanf(line, "%63s %lx %*x %*x %*d %*d %*d %lx", name, &dst, &mask) == 3 &&
		    dst == 0 && mask == 0 && strlen(name) < len) {
			strcpy(iface, name);
			rc = 0;
		}
	}
	fclose(f);
	return rc;
}

/* The speed file of a network interface, Mb/s; 0 unknown. */
static double iface_speed(const char *sysroot, const char *iface)
{
	char path[512], buf[64];
	FILE *f;
	double v = 0;

	snprintf(path, sizeof(path), "%s/class/net/%s/speed", sysroot, iface);
	f = fopen(path, "r");
	if (!f)
		return 0;
	/* reading fails with EINVAL when the link is down: unknown */
	if (!fgets(buf, sizeof(buf), f) || parse_positive(buf, &v))
		v = 0;
	fclose(f);
	return v;
}

/* An RDMA port's rate ("400 Gb/sec (4X NDR)"), Mb/s; 0 unknown. */
static double rdma_rate(const char *sysroot, const char *dev, int port)
{
	char path[512], buf[96];
	FILE *f;
	double v = 0;

	snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports/%d/rate", sysroot, dev, port);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f) || sscanf(buf, "%lf Gb/sec", &v) != 1 || !(v > 0))
		v = 0;
	fclose(f);
	return v * 1000;
}

static int rdma_present(const char *sysroot)
{
	char path[512];
	struct dirent *e;
	DIR *d;
	int any = 0;

	snprintf(path, sizeof(path), "%s/class/infiniband", sysroot);
	if (!(d = opendir(path)))
		return 0;
	while (!any && (e = readdir(d)))
		any = e->d_name[0] != '.';
	closedir(d);
	return any;
}

/* UCX's device: the first item of UCX_NET_DEVICES. 0 known, 1 unknown (why set). */
static int ucx_rate(const char *sysroot, const char *devices, struct link_rate *out)
{
	char item[64], dev[64];
	size_t n = devices ? strcspn(devices, ",") : 0;
	int port;

	if (!n || n >= sizeof(item) || !strncmp(devices, "all", n)) {
		snprintf(out->why, sizeof(out->why), "MPI runs over UCX on devices it picks itself "
			 "(UCX_NET_DEVICES %s): set UCX_NET_DEVICES or CCDIAG_LINK_RATE_MBIT",
			 n ? "all" : "unset");
		return 1;
	}
	memcpy(item, devices, n);
	item[n] = '\0';
	if (sscanf(item, "%63[^:]:%d", dev, &port) == 2)
		out->mbit = rdma_rate(sysroot, dev, port);
	else
		out->mbit = iface_speed(sysroot, item);
	if (out->mbit > 0) {
		snprintf(out->source, sizeof(out->source), "ucx:%s", item);
		return 0;
	}
	snprintf(out->why, sizeof(out->why), "MPI runs over UCX on '%s', whose rate is unknown", item);
	return 1;
}

int linkrate_find(double given, const char *env, const char *sysroot, const char *iface_hint,
		  const char *route_file, const struct linkrate_mpi *mpi, struct link_rate *out)
{
	char iface[64];
	double v;
	int ucx;

	memset(out, 0, sizeof(*out));
	if (given > 0 && isfinite(given)) {
		out->mbit = given;
		snprintf(out->source, sizeof(out->source), "--pair-link-rate");
		return 0;
	}
	if (env && *env) {
		if (!parse_positive(env, &v)) {
			out->mbit = v;
			snprintf(out->source, sizeof(out->source), "CCDIAG_LINK_RATE_MBIT");
			return 0;
		}
		snprintf(out->warning, sizeof(out->warning),
			 "CCDIAG_LINK_RATE_MBIT='%.40s' is not a positive number of Mb/s; ignored", env);
	}
	/* the PML Open MPI selected: asked for, or the one left loaded after MPI_Init */
	ucx = mpi && ((mpi->pml && !strncmp(mpi->pml, "ucx", 3)) ||
		      (!mpi->pml && mpi->maps && strstr(mpi->maps, "mca_pml_ucx")));
	if (ucx)
		return ucx_rate(sysroot, mpi->ucx_devices, out);
	if (hint_iface(iface_hint, iface, sizeof(iface))) {
		if (rdma_present(sysroot)) {
			snprintf(out->why, sizeof(out->why), "RDMA devices present: MPI may not run over "
				 "the default route's interface; set btl_tcp_if_include, UCX_NET_DEVICES "
				 "or CCDIAG_LINK_RATE_MBIT");
			return 1;
		}
		if (route_iface(route_file, iface, sizeof(iface)))
			return 1;
	}
	out->mbit = iface_speed(sysroot, iface);
	if (out->mbit > 0)
		snprintf(out->source, sizeof(out->source), "sysfs:%s", iface);
	return out->mbit > 0 ? 0 : 1;
}

/* /proc/self/maps, NUL-terminated (malloc'd), or NULL */
static char *read_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f)
		return NULL;
	do {
		if (len + 4096 + 1 > cap) {
			char *b = realloc(buf, cap = cap ? 2 * cap : 65536);

			if (!b) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = b;
		}
		n = fread(buf + len, 1, 4096, f);
		len += n;
	} while (n > 0);
	fclose(f);
	buf[len] = '\0';
	return buf;
}

int linkrate_local(double given, struct link_rate *out)
{
	char *maps = read_maps();
	struct linkrate_mpi m = { getenv("OMPI_MCA_pml"), getenv("UCX_NET_DEVICES"), maps };
	int rc = linkrate_find(given, getenv("CCDIAG_LINK_RATE_MBIT"), "/sys",
			       getenv("OMPI_MCA_btl_tcp_if_include"), "/proc/net/route", &m, out);

	free(maps);
	return rc;
}

double linkrate_pair_GBps(double mbit_a, double mbit_b)
{
	if (!(mbit_a > 0) || !(mbit_b > 0))
		return 0;
	return (mbit_a < mbit_b ? mbit_a : mbit_b) / 8000.0;
}
