#include "size.h"

#include <ctype.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <strings.h>

int size_parse(const char *s, size_t *out)
{
	size_t v = 0, mult = 1;
	const char *p = s;

	if (!s || !isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (SIZE_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	switch (toupper((unsigned char)*p)) {
	case '\0':
		break;
	case 'K': mult = (size_t)1 << 10; p++; break;
	case 'M': mult = (size_t)1 << 20; p++; break;
	case 'G': mult = (size_t)1 << 30; p++; break;
	case 'T': mult = (size_t)1 << 40; p++; break;
	case 'B': break;
	default:
		return -1;
	}
	if (*p && strcasecmp(p, "B") && (mult == 1 || strcasecmp(p, "iB")))
		return -1;
	if (v > SIZE_MAX / mult)
		return -1;
	*out = v * mult;
	return 0;
}

char *size_format(size_t bytes, char *buf, size_t len)
{
	static const char units[] = "KMGT";
	int u = -1;

	while (u < 3 && bytes >= 1024 && bytes % 1024 == 0) {
		bytes /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%zu", bytes);
	else
		snprintf(buf, len, "%zu%c", bytes, units[u]);
	return buf;
}

char *size_human(double bytes, char *buf, size_t len)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = bytes;
	int u = -1;

	if (!(bytes >= 0) || bytes != floor(bytes) || bytes >= 1e18) {
		snprintf(buf, len, "%g B", bytes);
		return buf;
	}
	while (u < 4 && v >= 1024 && fmod(v, 1024) == 0) {
		v /= 1024;
		u++;
	}
	if (u >= 0) {
		snprintf(buf, len, "%.0f %s", v, units[u]);
	} else if (bytes >= 1e4) {
		/* not a power of two: decimal units (1 MB = 1e6 B), 6 digits */
		static const char *const si[] = { "kB", "MB", "GB", "TB", "PB" };

		for (u = 0, v = bytes / 1e3; u < 4 && v >= 1e3; u++)
			v /= 1e3;
		snprintf(buf, len, "%.6g %s", v, si[u]);
	} else {
		snprintf(buf, len, "%.0f B", v);
	}
	return buf;
}
