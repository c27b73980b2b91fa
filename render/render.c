/*
 * render/render.c: render_all (render.h) and the file writing the renderers
 * share. What they read of the summary goes through the lenient readers of
 * fmt/fmt.h: a missing or mistyped field reads as empty and never crashes a
 * renderer.
 */
#include "render.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* writes one output file through fn; 0, or -1 with err set */
int render_write_file(const char *dir, const char *name, const char *what,
		      int (*fn)(FILE *, const json_t *, const struct charts *),
		      const json_t *s, const struct charts *c, char *err, size_t len)
{
	char path[4096];
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f) {
		snprintf(err, len, "cannot write '%s': %s", path, strerror(errno));
		return -1;
	}
	errno = 0;
	rc = what ? fputs(what, f) < 0 : fn(f, s, c);
	if (ferror(f))
		rc = -1;
	if (fclose(f))
		rc = -1;
	if (rc)
		snprintf(err, len, "cannot write '%s': %s", path,
			 errno ? strerror(errno) : "write error");
	return rc ? -1 : 0;
}

/*
 * Charts of an earlier report in the same folder would sit beside report.md
 * as if they were this one's: every chart-*.svg there goes first (the names
 * are ccreport's own, never a result string).
 */
void render_remove_old_charts(const char *dir)
{
	char path[4096];
	struct dirent *e;
	DIR *d = opendir(dir);
	size_t n;

	if (!d)
		return;
	while ((e = readdir(d))) {
		n = strlen(e->d_name);
		if (!strncmp(e->d_name, "chart-", 6) && n > 10 && !strcmp(e->d_name + n - 4, ".svg")) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
	}
	closedir(d);
}

int render_mkdirs(const char *path)
{
	char buf[4096];

	if (strlen(path) >= sizeof(buf))
		return -1;
	strcpy(buf, path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, 0755) && errno != EEXIST ? -1 : 0;
}

time_t render_report_time(void)
{
	const char *s = getenv("SOURCE_DATE_EPOCH");
	char *end;
	long long t;

	if (s && *s) {
		t = strtoll(s, &end, 10);
		if (!*end && t >= 0)
			return (time_t)t;
	}
	return time(NULL);
}
