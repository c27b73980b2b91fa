/*
 * tests/integration/render_summary.c: renders a summary document (a fixture,
 * docs/report.md) with render_all, for test_report_html.sh; built by the
 * test itself against build/libccreport.a.
 *
 * usage: render_summary SUMMARY.json OUTDIR [charts: 1|0]
 * Exit: 0 rendered, 1 render_all failed, 2 usage or unreadable summary.
 */
#include <stdio.h>
#include <stdlib.h>

#include "render.h"
#include "render_all.h"

int main(int argc, char **argv)
{
	struct render_opts o = { .charts = 1 };
	json_error_t je;
	char err[512];
	json_t *s;
	int rc;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: render_summary SUMMARY.json OUTDIR [1|0]\n");
		return 2;
	}
	s = json_load_file(argv[1], 0, &je);
	if (!s) {
		fprintf(stderr, "render_summary: %s:%d: %s\n", argv[1], je.line, je.text);
		return 2;
	}
	o.outdir = argv[2];
	if (argc == 4)
		o.charts = atoi(argv[3]);
	rc = render_all(s, &o, err, sizeof(err));
	if (rc)
		fprintf(stderr, "render_summary: %s\n", err);
	json_decref(s);
	return rc ? 1 : 0;
}
