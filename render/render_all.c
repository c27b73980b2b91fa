/*
 * render/render_all.c: the single run's report from its summary document:
 * the charts, then report.md, index.html and junit.xml (render_all.h).
 */
#include "render_all.h"
#include "chart.h"
#include "chart_kinds.h"
#include "render.h"
#include "render_html.h"
#include "render_junit.h"
#include "render_md.h"

#include <stdio.h>

static int junit_fn(FILE *f, const json_t *s, const struct charts *c)
{
	(void)c;
	return render_junit(f, s);
}

int render_all(const json_t *summary, const struct render_opts *o, char *err, size_t len)
{
	struct charts c;
	int rc;

	if (!json_is_object(summary) || !o || !o->outdir) {
		snprintf(err, len, "nothing to render: no summary or no output folder");
		return -1;
	}
	rc = charts_write(summary, o, &c, chart_summary, err, len) ||
	     render_write_file(o->outdir, "report.md", NULL, render_md, summary, &c, err, len) ||
	     render_write_file(o->outdir, "index.html", NULL, render_html, summary, &c, err, len) ||
	     render_write_file(o->outdir, "junit.xml", NULL, junit_fn, summary, &c, err, len) ? -1 : 0;
	charts_free(&c);
	return rc;
}
