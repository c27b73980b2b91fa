/*
 * render/chart.c: runs gnuplot (its svg terminal) as a time-limited child in
 * a private temp dir and turns what it writes into charts for the
 * renderers. Nothing here can fail the report: a chart that cannot be drawn
 * becomes one line in charts.errors, and no gnuplot means no charts and a
 * status line that every renderer prints.
 */
#include "chart.h"
#include "escape.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void gp_quote(FILE *f, const char *s)
{
	fputc('\'', f);
	esc_gnuplot(f, s);
	fputc('\'', f);
}

/* tic labels are printf formats to gnuplot: "%" must be written "%%" */
void gp_label(FILE *f, const char *s)
{
	char buf[2 * CHART_LABEL_MAX + 8];
	size_t n = strlen(s), i, k = 0;

	if (n > CHART_LABEL_MAX) {
		n = CHART_LABEL_MAX;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)   /* not inside a UTF-8 character */
			n--;
	}
	for (i = 0; i < n; i++) {
		if (s[i] == '%')
			buf[k++] = '%';
		buf[k++] = s[i];
	}
	buf[k] = '\0';
	if (n < strlen(s))
		strcat(buf, "...");
	gp_quote(f, buf);
}

void chart_fail(struct chart_ctx *ctx, const char *fmt, ...)
{
	struct charts *c = ctx->out;
	char **v = realloc(c->errors, (c->nerr + 1) * sizeof(*v));
	va_list ap;

	if (!v)
		return;
	c->errors = v;
	va_start(ap, fmt);
	if (vasprintf(&v[c->nerr], fmt, ap) >= 0)
		c->nerr++;
	va_end(ap);
}

static void path_in(const struct chart_ctx *ctx, char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", ctx->dir, name);
}

FILE *chart_data(struct chart_ctx *ctx, const char *name)
{
	char path[PATH_MAX + 64];
	FILE *f;

	path_in(ctx, path, sizeof(path), name);
	f = fopen(path, "w");
	if (!f)
		chart_fail(ctx, "cannot write '%s': %s", path, strerror(errno));
	return f;
}

static void swap_ext(char *buf, size_t len, const char *file, const char *ext)
{
	const char *dot = strrchr(file, '.');
	int n = dot ? (int)(dot - file) : (int)strlen(file);

	snprintf(buf, len, "%.*s%s", n, file, ext);
}

FILE *chart_begin(struct chart_ctx *ctx, const char *file, int width, int height)
{
	char gp[64];
	FILE *f;

	swap_ext(gp, sizeof(gp), file, ".gp");
	f = chart_data(ctx, gp);
	if (!f)
		return NULL;
	/* noenhanced: host names are text, never gnuplot markup */
	fprintf(f, "set encoding utf8\n"
		"set terminal svg size %d,%d noenhanced font 'sans,11' background '#ffffff'\n"
		"set output '%s'\n", width, height, file);
	return f;
}

/* reads a whole file into a NUL-terminated malloc'd buffer, or NULL */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f)
		return NULL;
	do {
		if (cap - len < 4096) {
			char *nb = realloc(buf, cap + 65536);

			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
			cap += 65536;
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n > 0);
	fclose(f);
	buf[len] = '\0';
	return buf;
}

/* the child: gnuplot reads the script; both output streams go to a log */
static void run_child(const struct chart_ctx *ctx, const char *gp, const char *log)
{
	int fd;

	setpgid(0, 0);
	if (chdir(ctx->dir))
		_exit(126);
	fd = open("/dev/null", O_RDONLY);
	if (fd >= 0)
		dup2(fd, 0);
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	execlp(ctx->gnuplot, ctx->gnuplot, gp, (char *)NULL);
	_exit(127);
}

/*
 * Waits for the child at most timeout_s; past it, kills its process group
 * (gnuplot may have children of its own). Returns the wait status, or -1
 * when it was killed for time.
 */
static int wait_limited(pid_t pid, int timeout_s)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	long ticks = (long)timeout_s * 100;
	int status;
	pid_t r;

	while (ticks-- > 0) {
		r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		if (r < 0 && errno != EINTR)
			return 0x7f00;
		nanosleep(&tick, NULL);
	}
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return -1;
}

/*
 * The line of gnuplot's log that says what went wrong: its messages read
 * '"x.gp" line 3: undefined function: foo'; warnings are passed over. Else
 * the last line with text.
 */
static void log_line(const char *log, char *buf, size_t len)
{
	char *text = slurp(log), *p, *nl;
	int found = 0;

	snprintf(buf, len, "no message");
	if (!text)
		return;
	for (p = text; *p; p = *nl ? nl + 1 : nl) {
		int n;

		nl = strchrnul(p, '\n');
		n = (int)(nl - p);
		if (!n || memmem(p, n, "warning:", 8))
			continue;
		if (memmem(p, n, "\" line ", 7)) {
			snprintf(buf, len, "%.*s", n, p);
			found = 1;
		} else if (!found) {
			snprintf(buf, len, "%.*s", n, p);
		}
	}
	free(text);
}

/*
 * Runs gnuplot on script gp; returns its SVG (malloc'd) or NULL with one
 * line in the chart errors.
 */
static char *gp_run(struct chart_ctx *ctx, const char *gp, const char *file)
{
	char log[64], path[PATH_MAX + 64], why[200];
	int status;
	pid_t pid;

	if (ctx->stopped) {   /* a gnuplot that hung once would hang every chart: one wait is enough */
		chart_fail(ctx, "chart '%s' not drawn: gnuplot was stopped on an earlier chart", file);
		return NULL;
	}
	swap_ext(log, sizeof(log), file, ".log");
	pid = fork();
	if (pid < 0) {
		chart_fail(ctx, "chart '%s' not drawn: cannot start gnuplot: %s", file, strerror(errno));
		return NULL;
	}
	if (pid == 0)
		run_child(ctx, gp, log);
	status = wait_limited(pid, ctx->timeout_s);
	path_in(ctx, path, sizeof(path), log);
	log_line(path, why, sizeof(why));
	if (status == -1) {
		ctx->stopped = 1;
		chart_fail(ctx, "chart '%s' not drawn: gnuplot ran past %d s and was stopped",
			   file, ctx->timeout_s);
		return NULL;
	}
	if (WIFSIGNALED(status)) {
		chart_fail(ctx, "chart '%s' not drawn: gnuplot died of signal %d",
			   file, WTERMSIG(status));
		return NULL;
	}
	if (WEXITSTATUS(status) == 127) {
		chart_fail(ctx, "chart '%s' not drawn: cannot run '%s'", file, ctx->gnuplot);
		return NULL;
	}
	if (WEXITSTATUS(status)) {
		chart_fail(ctx, "chart '%s' not drawn: gnuplot exited %d: %s",
			   file, WEXITSTATUS(status), why);
		return NULL;
	}
	path_in(ctx, path, sizeof(path), file);
	{
		char *svg = slurp(path);

		if (!svg || !strstr(svg, "<svg")) {
			chart_fail(ctx, "chart '%s' not drawn: gnuplot wrote no SVG: %s", file, why);
			free(svg);
			return NULL;
		}
		return svg;
	}
}

static int starts(const char *p, const char *s)
{
	return !strncmp(p, s, strlen(s));
}

/*
 * gnuplot escapes '<' and '&' in the text it draws but not '>', so a host
 * named "a]]>b" would make its SVG ill-formed XML: outside tags, '>' is
 * written as "&gt;" in both forms.
 *
 * With seq > 0, the form for use inside index.html: from "<svg" on (no XML
 * prolog), without the two namespace declarations (the HTML parser puts
 * <svg> and xlink:href in their namespaces itself, so the page holds no URI
 * at all), and with every id and reference to one prefixed "c<seq>-", so
 * that several charts in one page share no id. The rewriting happens only
 * inside tags; text (where host names are) is copied as gnuplot escaped it.
 */
static char *svg_fix(const char *svg, int seq)
{
	static const char *const drop[] = {
		" xmlns=\"http://www.w3.org/2000/svg\"",
		" xmlns:xlink=\"http://www.w3.org/1999/xlink\"",
	};
	static const char *const refs[] = { "id='", "id=\"", "href='#", "href=\"#", "url(#" };
	const size_t nrefs = sizeof(refs) / sizeof(refs[0]);
	const char *p = seq > 0 ? strstr(svg, "<svg") : svg;
	char *buf = NULL, quote = 0;
	size_t len = 0, i;
	int in_tag = 0;
	FILE *f;

	if (!p)
		return NULL;
	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	while (*p) {
		if (seq > 0 && in_tag && !quote) {
			for (i = 0; i < 2 && !starts(p, drop[i]); i++)
				;
			if (i < 2) {
				p += strlen(drop[i]);
				continue;
			}
			for (i = 0; i < nrefs && !starts(p, refs[i]); i++)
				;
			if (i < nrefs) {
				const char *q = strpbrk(refs[i], "'\"");

				fprintf(f, "%sc%d-", refs[i], seq);
				p += strlen(refs[i]);
				if (q)   /* the value's opening quote was copied above */
					quote = *q;
				continue;
			}
		}
		if (!in_tag && *p == '>') {
			fputs("&gt;", f);
			p++;
			continue;
		}
		if (*p == '<' && !in_tag)
			in_tag = 1;
		else if (in_tag && !quote && (*p == '\'' || *p == '"'))
			quote = *p;
		else if (in_tag && quote == *p)
			quote = 0;
		else if (in_tag && !quote && *p == '>')
			in_tag = 0;
		fputc(*p++, f);
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* needle (lower case) in the n bytes at p, ignoring case */
static int has_ci(const char *p, size_t n, const char *needle)
{
	size_t k = strlen(needle), i, j;

	for (i = 0; i + k <= n; i++) {
		for (j = 0; j < k && tolower((unsigned char)p[i + j]) == needle[j]; j++)
			;
		if (j == k)
			return 1;
	}
	return 0;
}

/* why the n bytes at p must not be embedded, or NULL */
static const char *bad_in(const char *p, size_t n)
{
	static const char *const bad[][2] = {
		{ "<script", "a <script> element" }, { "<foreignobject", "a <foreignObject> element" },
		{ "http:", "a URI" }, { "https:", "a URI" }, { "javascript:", "a URI" },
		{ "data:", "a URI" }, { " on", "an event handler" },
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (has_ci(p, n, bad[i][0]))
			return bad[i][1];
	return NULL;
}

/*
 * A chart whose tags hold a script, foreign HTML, an event handler or a URI
 * is not embedded. Only tags are looked at: text is what gnuplot drew (host
 * names, escaped), and may mention anything. The one URI allowed is a large
 * heatmap's own PNG, "<image ... xlink:href='data:image/png;base64,...'":
 * inline data that fetches nothing (the page's CSP allows img-src data:).
 */
static const char *svg_unsafe(const char *s)
{
	static const char png_href[] = "xlink:href='data:image/png;base64,";
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=";
	const char *p, *end, *h, *data_end, *why;

	for (p = strchr(s, '<'); p; p = strchr(end, '<')) {
		end = strchr(p, '>');
		if (!end)
			return "an unterminated tag";
		h = strncmp(p, "<image ", 7) ? NULL : strstr(p, png_href);
		if (h && h < end) {
			data_end = h + strlen(png_href);
			data_end += strspn(data_end, b64);
			if (*data_end != '\'')
				return "a malformed image";
			why = bad_in(p, (size_t)(h - p));
			if (!why)
				why = bad_in(data_end, (size_t)(end - data_end));
		} else {
			why = bad_in(p, (size_t)(end - p));
		}
		if (why)
			return why;
	}
	return NULL;
}

void chart_finish(struct chart_ctx *ctx, FILE *script, const char *file,
		  const char *title, const char *note, int crit)
{
	struct charts *c = ctx->out;
	struct chart *ch, *v;
	char gp[64];
	char *raw, *svg, *in;
	const char *bad;

	if (!script)
		return;
	if (fclose(script)) {
		chart_fail(ctx, "chart '%s' not drawn: cannot write its script", file);
		return;
	}
	swap_ext(gp, sizeof(gp), file, ".gp");
	raw = gp_run(ctx, gp, file);
	if (!raw)
		return;
	svg = svg_fix(raw, 0);
	free(raw);
	in = svg ? svg_fix(svg, c->n + 1) : NULL;
	bad = in ? svg_unsafe(in) : "nothing usable";
	if (bad) {
		chart_fail(ctx, "chart '%s' not embedded: gnuplot's SVG holds %s", file, bad);
		free(in);
		free(svg);
		return;
	}
	v = realloc(c->v, (c->n + 1) * sizeof(*v));
	if (!v) {
		free(in);
		free(svg);
		return;
	}
	c->v = v;
	ch = &v[c->n++];
	memset(ch, 0, sizeof(*ch));
	snprintf(ch->file, sizeof(ch->file), "%s", file);
	ch->title = strdup(title);
	ch->note = note ? strdup(note) : NULL;
	ch->svg = svg;
	ch->inline_svg = in;
	ch->crit = crit;
}

/* the gnuplot to run: a path as given, else the first match on PATH */
static int find_gnuplot(const char *cmd)
{
	const char *p = getenv("PATH"), *end;
	char buf[PATH_MAX];

	if (strchr(cmd, '/'))
		return access(cmd, X_OK) == 0;
	for (p = p ? p : "/usr/bin:/bin"; ; p = end + 1) {
		end = strchrnul(p, ':');
		if (end == p)   /* an empty entry is the current dir */
			snprintf(buf, sizeof(buf), "./%s", cmd);
		else
			snprintf(buf, sizeof(buf), "%.*s/%s", (int)(end - p), p, cmd);
		if (access(buf, X_OK) == 0)
			return 1;
		if (!*end)
			return 0;
	}
}

/* the temp dir holds only flat files this module created */
static void remove_dir(const char *dir)
{
	char path[PATH_MAX + 300];
	struct dirent *e;
	DIR *d = opendir(dir);

	if (d) {
		while ((e = readdir(d)))
			if (e->d_name[0] != '.') {
				snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
				unlink(path);
			}
		closedir(d);
	}
	rmdir(dir);
}

void charts_draw_with(const json_t *doc, const struct render_opts *o, struct charts *c,
		      void (*draw)(struct chart_ctx *, const json_t *))
{
	struct chart_ctx ctx = { .out = c };
	const char *tmp = getenv("TMPDIR");

	memset(c, 0, sizeof(*c));
	if (!o->charts) {
		c->status = strdup("charts not drawn: turned off");
		return;
	}
	ctx.gnuplot = o->gnuplot && *o->gnuplot ? o->gnuplot : "gnuplot";
	if (!find_gnuplot(ctx.gnuplot)) {
		c->status = strdup("charts not drawn: gnuplot not found");
		return;
	}
	ctx.timeout_s = o->chart_timeout_s > 0 ? o->chart_timeout_s : CHART_TIMEOUT_S;
	snprintf(ctx.dir, sizeof(ctx.dir), "%s/ccreport-charts.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(ctx.dir)) {
		if (asprintf(&c->status, "charts not drawn: cannot make a temp dir: %s",
			     strerror(errno)) < 0)
			c->status = NULL;
		return;
	}
	draw(&ctx, doc);
	remove_dir(ctx.dir);
}

int charts_write(const json_t *doc, const struct render_opts *o, struct charts *c,
		 void (*draw)(struct chart_ctx *, const json_t *), char *err, size_t len)
{
	render_remove_old_charts(o->outdir);
	charts_draw_with(doc, o, c, draw);
	for (int i = 0; i < c->n; i++)
		if (render_write_file(o->outdir, c->v[i].file, c->v[i].svg, NULL, NULL, NULL, err, len))
			return -1;
	return 0;
}

void charts_free(struct charts *c)
{
	int i;

	for (i = 0; i < c->n; i++) {
		free(c->v[i].title);
		free(c->v[i].note);
		free(c->v[i].svg);
		free(c->v[i].inline_svg);
	}
	for (i = 0; i < c->nerr; i++)
		free(c->errors[i]);
	free(c->v);
	free(c->errors);
	free(c->status);
	memset(c, 0, sizeof(*c));
}
