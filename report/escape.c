/* report/escape.c: HTML, Markdown, XML and gnuplot-string escaping (escape.h). */
#include "escape.h"

#include <stdlib.h>
#include <string.h>

/* C0 controls and DEL; tab and new line are handled by each caller */
static int is_ctl(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

void esc_html(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		case '\n': fputs("&#10;", f); break;
		case '\t': fputs("&#9;", f); break;
		default:
			if (!is_ctl(c))
				fputc(c, f);
		}
	}
}

/*
 * Markdown: a backslash before each ASCII punctuation character that
 * CommonMark or GitHub gives a meaning inside a line: emphasis, code spans,
 * links and images ('[' and ']': no link or image can form, so '(' and '!'
 * stay plain), raw HTML, entities, strike-through and table cell borders.
 * Block markers ('#', '>', '-', '+', '=', "1." and "1)") only mean something
 * at the start of a line, where a list item's text starts, so they are
 * escaped there only. New lines become spaces: a string never ends a
 * paragraph or a table row.
 */
static int md_special(unsigned char c)
{
	return c && strchr("\\`*_[]<|&~", c) != NULL;
}

void esc_md(FILE *f, const char *s)
{
	const char *list_dot = NULL;   /* the '.' or ')' of a leading "12." */
	const char *p;

	if (!s)
		return;
	if (*s && strchr("#>-+=", *s))
		fputc('\\', f);
	for (p = s; *p >= '0' && *p <= '9'; p++)
		;
	if (p > s && (*p == '.' || *p == ')'))
		list_dot = p;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\n' || c == '\r' || c == '\t') {
			fputc(' ', f);
			continue;
		}
		if (is_ctl(c))
			continue;
		if (md_special(c) || s == list_dot)
			fputc('\\', f);
		fputc(c, f);
	}
}

/*
 * XML 1.0: the five predefined entities, tab and new line as character
 * references so that they survive attribute normalisation, every other C0
 * control dropped (XML 1.0 cannot carry them even as references), and the
 * two non-characters U+FFFE and U+FFFF dropped. "]]>" cannot form: '>' is
 * always escaped.
 */
void esc_xml(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == 0xef && (unsigned char)s[1] == 0xbf &&
		    ((unsigned char)s[2] == 0xbe || (unsigned char)s[2] == 0xbf)) {
			s += 2;
			continue;
		}
		switch (c) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		case '\n': fputs("&#10;", f); break;
		case '\t': fputs("&#9;", f); break;
		default:
			if (c >= 0x20)   /* DEL is a legal XML character */
				fputc(c, f);
		}
	}
}

/*
 * gnuplot single-quoted strings know one escape, '' for a quote; a
 * backslash is literal there. A new line would end the command, so it
 * becomes a space. Enhanced-text markup ({ } ^ _ @ & ~) is not escaped
 * here: every chart sets "noenhanced", which turns it off.
 */
void esc_gnuplot(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\'')
			fputs("''", f);
		else if (c == '\n' || c == '\r' || c == '\t')
			fputc(' ', f);
		else if (!is_ctl(c))
			fputc(c, f);
	}
}

char *esc_str(void (*fn)(FILE *, const char *), const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fn(f, s);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}
