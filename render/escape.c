/*
 * render/escape.c: HTML, Markdown, XML and gnuplot-string escaping, and
 * writing formatted text and summary values through them (escape.h).
 */
#include "escape.h"
#include "../fmt/fmt.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/*
 * The length of the well-formed UTF-8 character at s (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), or 0. Strings can arrive
 * cut in the middle of a character (a bounded snprintf), and every output
 * must stay valid UTF-8 (XML parsers reject anything else), so each escaper
 * drops a byte that does not start a whole character.
 */
static size_t utf8_len(const unsigned char *s)
{
	size_t n, i;
	unsigned int cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/*
 * Characters that are well-formed but change what a reader sees: the C1
 * controls (U+0080-U+009F) and the bidirectional embeddings, overrides and
 * isolates (U+202A-U+202E, U+2066-U+2069), which can make a host name read
 * backwards or hide text after it ("Trojan Source", CVE-2021-42574). They
 * are dropped like the C0 controls.
 */
static int invisible(const unsigned char *s, size_t n)
{
	if (n == 2)
		return s[0] == 0xc2 && s[1] <= 0x9f;
	return n == 3 && s[0] == 0xe2 && ((s[1] == 0x80 && s[2] >= 0xaa && s[2] <= 0xae) ||
					  (s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9));
}

/*
 * Copies the multi-byte character at *s to f (or drops its first byte when
 * it is not well-formed, or the whole character when it is invisible()) and
 * moves *s to its last byte. For c >= 0x80.
 */
static void put_utf8(FILE *f, const char **s)
{
	size_t n = utf8_len((const unsigned char *)*s);

	if (n && !invisible((const unsigned char *)*s, n))
		fwrite(*s, 1, n, f);
	*s += n ? n - 1 : 0;
}

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
			if (c >= 0x80)
				put_utf8(f, &s);
			else if (!is_ctl(c))
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

/*
 * GitHub also turns "scheme://..." and "www.x" in plain text into links; a
 * backslash before that ':' or '.' keeps them text (checked with cmark-gfm's
 * autolink extension). An e-mail address may still become a mailto: link.
 */
static int md_autolink(const char *start, const char *s)
{
	return (s[0] == ':' && s[1] == '/' && s[2] == '/') ||
	       (s[0] == '.' && s - start >= 3 && !strncasecmp(s - 3, "www", 3));
}

void esc_md(FILE *f, const char *s)
{
	const char *list_dot = NULL;   /* the '.' or ')' of a leading "12." */
	const char *start = s, *p;

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
		if (c >= 0x80) {
			put_utf8(f, &s);
			continue;
		}
		if (md_special(c) || s == list_dot || md_autolink(start, s))
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
			if (c >= 0x80)
				put_utf8(f, &s);
			else if (c >= 0x20)   /* DEL is a legal XML character */
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
		else if (c >= 0x80)
			put_utf8(f, &s);
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

void put_esc(FILE *f, void (*esc)(FILE *, const char *), const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n >= 0)
		esc(f, s);
	if (n >= 0)
		free(s);
}

void put_plain(FILE *f, void (*esc)(FILE *, const char *), const json_t *v)
{
	char *s;

	if (json_is_number(v)) {   /* our own digits: nothing to escape */
		char buf[64];

		fmt_value(buf, sizeof(buf), v);
		fputs(buf, f);
		return;
	}
	s = j_plain(v);

	esc(f, s ? s : "");
	free(s);
}
