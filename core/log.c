#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static char log_prefix[300] = "ccprobe";
static enum log_level log_level = LOG_INFO;

void log_init(const char *host, int rank)
{
	snprintf(log_prefix, sizeof(log_prefix), "%s:%d", host, rank);
}

void log_set_level(enum log_level level)
{
	log_level = level;
}

enum log_level log_get_level(void)
{
	return log_level;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	static const char *const tags[] = { "error: ", "warning: ", "", "debug: " };
	char line[2048];
	va_list ap;
	int len;

	if (level > log_level)
		return;
	len = snprintf(line, sizeof(line), "%s: %s", log_prefix, tags[level]);
	va_start(ap, fmt);
	if (len >= 0 && (size_t)len < sizeof(line))
		vsnprintf(line + len, sizeof(line) - len, fmt, ap);
	va_end(ap);
	/* one fputs per line so lines of different ranks do not interleave */
	len = (int)strlen(line);
	if (len < (int)sizeof(line) - 1) {
		line[len] = '\n';
		line[len + 1] = '\0';
	}
	fputs(line, stderr);
}
