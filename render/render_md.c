/*
 * render/render_md.c: report.md, the summary document as GitHub-flavoured
 * Markdown: the markup render_doc.c writes it with. Literal Markdown is
 * written with fputs; everything that came from the summary goes through
 * esc_md (put_esc, put_plain).
 */
#include "render_md.h"
#include "escape.h"
#include "render.h"
#include "render_doc.h"
#include "../fmt/fmt.h"

#define E(f, ...) put_esc(f, esc_md, __VA_ARGS__)

static void md_header(FILE *f, const json_t *s, size_t n, const int count[5])
{
	const char *v = verdict_word(j_str(s, "verdict"));
	char buf[64];

	fprintf(f, "# Cluster acceptance: %s\n\n", v);
	fprintf(f, "**Verdict: %s** (exit code ", v);
	E(f, "%s", j_text(json_object_get(s, "exit_code"), buf, sizeof(buf)));
	fprintf(f, "): %zu criteria, %d failed, %d warned, %d incomplete", n, count[0], count[1], count[2]);
	if (count[4])
		fprintf(f, " (%d of them optional)", count[4]);
	fprintf(f, ", %d passed.\n\n", count[3]);
	fputs("Profile ", f);
	E(f, "%s", j_str(json_object_get(s, "profile"), "name"));
}

/* text is ours, never a result string; Markdown headings have no id */
static void md_heading(FILE *f, int level, const char *id, const char *text)
{
	(void)id;
	fprintf(f, "%.*s %s\n\n", level, "######", text);
}

static void md_nothing(FILE *f, const char *cls)
{
	(void)f;
	(void)cls;
}

static void md_table_open(FILE *f, const char *const *heads, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		fprintf(f, "| %s ", heads[k]);
	fputs("|\n", f);
	for (k = 0; k < n; k++)
		fputs("|---", f);
	fputs("|\n", f);
}

static void md_td_open(FILE *f, size_t k, const char *cls)
{
	(void)cls;
	fputs(k ? " | " : "| ", f);
}

/* one escaped string, as the id and title always were */
static void md_crit_name(FILE *f, const json_t *crit)
{
	E(f, "%s: %s", j_str(crit, "id"), j_str(crit, "title"));
}

static void md_verdict_cell(FILE *f, size_t k, const char *v)
{
	md_td_open(f, k, NULL);
	fprintf(f, "**%s**", verdict_word(v));
}

static void md_verdict_inline(FILE *f, const char *v)
{
	fprintf(f, " (%s)", verdict_word(v));
}

static void md_failures_open(FILE *f, size_t n)
{
	(void)f;
	(void)n;
}

static void md_chart(FILE *f, const struct chart *c)
{
	fputs("![", f);
	E(f, "%s", c->title);
	fprintf(f, "](%s)\n\n", c->file);    /* our own name, never a result string */
	if (c->note) {
		fputs("*", f);
		E(f, "%s", c->note);
		fputs("*\n\n", f);
	}
}

static const struct markup md = {
	.esc = esc_md,
	.max_failures = 100,
	.header = md_header,
	.heading = md_heading,
	.p_open = md_nothing, .p_close = "\n\n",
	.b_open = "**", .b_close = "**",
	.list_open = md_nothing, .list_close = "\n", .li_open = "- ", .li_close = "\n",
	.table_open = md_table_open, .tr_open = "", .tr_close = " |\n", .table_close = "\n",
	.td_open = md_td_open, .td_close = "",
	.cell_br = " ", .fail_sep = "; ",
	.crit_name = md_crit_name,
	.verdict_cell = md_verdict_cell,
	.verdict_inline = md_verdict_inline,
	.failures_open = md_failures_open, .failures_close = "",
	.box_open = "", .box_close = "",
	.dl_open = "", .dt_open = "- ", .dt_close = ": ", .dd_close = "\n", .dl_close = "\n",
	.chart = md_chart,
};

const struct markup *markup_md(void)
{
	return &md;
}

int render_md(FILE *f, const json_t *s, const struct charts *c)
{
	render_doc(f, &md, s, c);
	return ferror(f) ? -1 : 0;
}
