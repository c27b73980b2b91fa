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
	int i, rc = -1;

	if (!json_is_object(summary) || !o || !o->outdir) {
		snprintf(err, len, "nothing to render: no summary or no output folder");
		return -1;
	}
	render_remove_old_charts(o->outdir);
	charts_draw(summary, o, &c);
	for (i = 0; i < c.n; i++)
		if (render_write_file(o->outdir, c.v[i].file, c.v[i].svg, NULL, NULL, NULL, err, len))
			goto out;
	if (render_write_file(o->outdir, "report.md", NULL, render_md, summary, &c, err, len) ||
	    render_write_file(o->outdir, "index.html", NULL, render_html, summary, &c, err, len) ||
	    render_write_file(o->outdir, "junit.xml", NULL, junit_fn, summary, &c, err, len))
		goto out;
	rc = 0;
out:
	charts_free(&c);
	return rc;
}
