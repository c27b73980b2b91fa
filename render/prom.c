/*
 * render/prom.c: --prom FILE, the run as a Prometheus textfile-collector
 * exposition (prom.h, docs/history.md). Reads only the summary document,
 * like the renderers. Every label value comes from results or profiles and
 * goes through esc_prom; metric and label names are ours.
 */
#include "prom.h"
#include "../fmt/fmt.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void esc_prom(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\\')
			fputs("\\\\", f);
		else if (c == '"')
			fputs("\\\"", f);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c >= 0x20 && c != 0x7f)
			fputc(c, f);
	}
}

/* the verdict as a number: worst highest, as the overall verdict is the maximum */
static int verdict_code(const char *v)
{
	static const char *const order[] = { "pass", "warn", "incomplete", "fail" };

	for (int i = 0; i < 4; i++)
		if (!strcmp(v, order[i]))
			return i;
	return 3;   /* unknown reads as the worst: never a silent pass */
}

static time_t utc_seconds(const char *iso)
{
	struct tm tm = { 0 };
	const char *end = strptime(iso, "%Y-%m-%dT%H:%M:%SZ", &tm);

	return end && !*end ? timegm(&tm) : (time_t)-1;
}

static void head(FILE *f, const char *name, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

static void label(FILE *f, const char *key, const char *value, int first)
{
	fprintf(f, "%s%s=\"", first ? "" : ",", key);
	esc_prom(f, value);
	fputc('"', f);
}

static void sample(FILE *f, double v)
{
	fprintf(f, "} %.10g\n", v);
}

int prom_render(FILE *f, const json_t *s)
{
	const json_t *crits = j_arr(s, "criteria"), *c, *v, *prof = json_object_get(s, "profile");
	const char *pname = j_str(prof, "name");
	time_t t;
	size_t i, j;
	double x;

	head(f, "ccdiag_verdict", "overall verdict of the run: 0 pass, 1 warn, 2 incomplete, 3 fail");
	fputs("ccdiag_verdict{", f);
	label(f, "profile", pname, 1);
	label(f, "verdict", j_str(s, "verdict"), 0);
	sample(f, verdict_code(j_str(s, "verdict")));
	head(f, "ccdiag_exit_code", "ccreport's exit code for the run");
	fputs("ccdiag_exit_code{", f);
	label(f, "profile", pname, 1);
	sample(f, j_num(s, "exit_code", &x) ? x : 2);
	t = utc_seconds(j_str(s, "generated_utc"));
	if (t != (time_t)-1) {
		head(f, "ccdiag_report_timestamp_seconds", "when ccreport judged the run, Unix time");
		fputs("ccdiag_report_timestamp_seconds{", f);
		label(f, "profile", pname, 1);
		sample(f, (double)t);
	}
	head(f, "ccdiag_run_start_timestamp_seconds", "when each input run started, Unix time");
	json_array_foreach(j_arr(s, "inputs"), i, v) {
		t = utc_seconds(j_str(v, "start_utc"));
		if (t == (time_t)-1)
			continue;
		fputs("ccdiag_run_start_timestamp_seconds{", f);
		label(f, "run_id", j_str(v, "run_id"), 1);
		sample(f, (double)t);
	}
	head(f, "ccdiag_criterion_verdict", "verdict per criterion: 0 pass, 1 warn, 2 incomplete, 3 fail");
	json_array_foreach(crits, i, c) {
		fputs("ccdiag_criterion_verdict{", f);
		label(f, "criterion", j_str(c, "id"), 1);
		label(f, "unit", j_str(c, "unit"), 0);
		label(f, "required", json_is_true(json_object_get(c, "required")) ? "true" : "false", 0);
		sample(f, verdict_code(j_str(c, "verdict")));
	}
	head(f, "ccdiag_criterion_bound", "the bound of each criterion with an absolute bound, in its unit");
	json_array_foreach(crits, i, c) {
		const json_t *b = json_object_get(c, "bound");

		if (!j_num(b, "value", &x) || json_is_number(json_object_get(b, "relative")))
			continue;
		fputs("ccdiag_criterion_bound{", f);
		label(f, "criterion", j_str(c, "id"), 1);
		label(f, "unit", j_str(c, "unit"), 0);
		label(f, "op", j_str(b, "op"), 0);
		sample(f, x);
	}
	head(f, "ccdiag_criterion_worst", "the worst element's value of each criterion, in its unit");
	json_array_foreach(crits, i, c) {
		const json_t *w = json_object_get(c, "worst");

		if (!j_num(w, "value", &x))
			continue;
		fputs("ccdiag_criterion_worst{", f);
		label(f, "criterion", j_str(c, "id"), 1);
		label(f, "element", j_str(w, "element"), 0);
		label(f, "host", j_str(w, "host"), 0);
		label(f, "unit", j_str(c, "unit"), 0);
		sample(f, x);
	}
	head(f, "ccdiag_element_value", "the value judged per element (GPU, NIC, link), in the criterion's unit");
	json_array_foreach(crits, i, c)
		json_array_foreach(j_arr(c, "values"), j, v) {
			if (!j_num(v, "value", &x))
				continue;
			fputs("ccdiag_element_value{", f);
			label(f, "criterion", j_str(c, "id"), 1);
			label(f, "element", j_str(v, "element"), 0);
			label(f, "host", j_str(v, "host"), 0);
			label(f, "unit", j_str(c, "unit"), 0);
			sample(f, x);
		}
	head(f, "ccdiag_criterion_failures", "elements outside the bound per criterion");
	json_array_foreach(crits, i, c) {
		fputs("ccdiag_criterion_failures{", f);
		label(f, "criterion", j_str(c, "id"), 1);
		sample(f, (double)json_array_size(j_arr(c, "failures")));
	}
	return ferror(f) ? -1 : 0;
}

/*
 * The temporary file is created, never opened: O_EXCL fails on any name that
 * exists (a symlink planted there to make ccreport write elsewhere among
 * them) and O_NOFOLLOW refuses a symlink even so. A name taken moves on to
 * the next one, up to TMP_TRIES. rename() replaces the target itself, a
 * link there included, without following it.
 */
#define TMP_TRIES 100
static FILE *create_tmp(const char *path, char *tmp, size_t n, char *err, size_t len)
{
	for (int i = 0; i < TMP_TRIES; i++) {
		int fd;
		FILE *f;

		/* beside the target, so the rename stays on one filesystem; not *.prom, so never collected */
		if ((size_t)(i ? snprintf(tmp, n, "%s.tmp-%ld-%d", path, (long)getpid(), i) :
			     snprintf(tmp, n, "%s.tmp-%ld", path, (long)getpid())) >= n) {
			snprintf(err, len, "cannot write '%s': path too long", path);
			return NULL;
		}
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd < 0) {
			snprintf(err, len, "cannot write '%s': %s", tmp, strerror(errno));
			return NULL;
		}
		f = fdopen(fd, "w");
		if (!f) {
			snprintf(err, len, "cannot write '%s': %s", tmp, strerror(errno));
			close(fd);
			unlink(tmp);
		}
		return f;
	}
	snprintf(err, len, "cannot write '%s': %d temporary names beside it are taken (%s...)", path,
		 TMP_TRIES, tmp);
	return NULL;
}

int prom_write(const json_t *s, const char *path, char *err, size_t len)
{
	char tmp[4200];
	FILE *f;
	int rc;

	f = create_tmp(path, tmp, sizeof(tmp), err, len);
	if (!f)
		return -1;
	errno = 0;
	rc = prom_render(f, s);
	if (fflush(f) || fsync(fileno(f)))
		rc = -1;
	if (fclose(f))
		rc = -1;
	if (!rc && rename(tmp, path))
		rc = -1;
	if (rc) {
		snprintf(err, len, "cannot write '%s': %s", path, errno ? strerror(errno) : "write error");
		unlink(tmp);
		return -1;
	}
	return 0;
}
