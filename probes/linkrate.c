/*
 * The link rate of a node: what the operator says (CCDIAG_LINK_RATE_MBIT,
 * which the emulated cluster sets to its shaped rate) or what the kernel
 * reports for the interface MPI uses. Only a rate that is known is used;
 * a guess would turn into a false pct_of_rate.
 */
#include "linkrate.h"

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

int linkrate_find(const char *env, const char *sysroot, const char *iface_hint,
		  const char *route_file, struct link_rate *out)
{
	char iface[64], path[512], buf[64];
	FILE *f;
	double v;

	memset(out, 0, sizeof(*out));
	if (env && *env) {
		if (!parse_positive(env, &v)) {
			out->mbit = v;
			snprintf(out->source, sizeof(out->source), "CCDIAG_LINK_RATE_MBIT");
			return 0;
		}
		snprintf(out->warning, sizeof(out->warning),
			 "CCDIAG_LINK_RATE_MBIT='%.40s' is not a positive number of Mb/s; ignored", env);
	}
	if (hint_iface(iface_hint, iface, sizeof(iface)) && route_iface(route_file, iface, sizeof(iface)))
		return 1;
	snprintf(path, sizeof(path), "%s/class/net/%s/speed", sysroot, iface);
	f = fopen(path, "r");
	if (!f)
		return 1;
	/* reading fails with EINVAL when the link is down: unknown */
	if (fgets(buf, sizeof(buf), f) && !parse_positive(buf, &v)) {
		out->mbit = v;
		snprintf(out->source, sizeof(out->source), "sysfs:%s", iface);
	}
	fclose(f);
	return out->mbit > 0 ? 0 : 1;
}

int linkrate_local(struct link_rate *out)
{
	return linkrate_find(getenv("CCDIAG_LINK_RATE_MBIT"), "/sys",
			     getenv("OMPI_MCA_btl_tcp_if_include"), "/proc/net/route", out);
}

double linkrate_pair_GBps(double mbit_a, double mbit_b)
{
	if (!(mbit_a > 0) || !(mbit_b > 0))
		return 0;
	return (mbit_a < mbit_b ? mbit_a : mbit_b) / 8000.0;
}
