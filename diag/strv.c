/*
 * diag/strv.c: string vectors and the text helpers of ccdiag (strv.h).
 */
#include "strv.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		fputs("ccdiag: out of memory\n", stderr);
		abort();
	}
	return p;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(xmalloc(n), s, n);
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0) {
		fputs("ccdiag: out of memory\n", stderr);
		abort();
	}
	va_end(ap);
	return s;
}

static void grow(struct strv *s)
{
	if (s->n + 2 <= s->cap)
		return;
	s->cap = s->cap ? 2 * s->cap : 8;
	s->v = realloc(s->v, s->cap * sizeof(*s->v));
	if (!s->v) {
		fputs("ccdiag: out of memory\n", stderr);
		abort();
	}
}

void strv_insert(struct strv *s, int at, const char *str)
{
	grow(s);
	memmove(s->v + at + 1, s->v + at, (s->n - at) * sizeof(*s->v));
	s->v[at] = xstrdup(str);
	s->v[++s->n] = NULL;
}

void strv_add(struct strv *s, const char *str)
{
	strv_insert(s, s->n, str);
}

void strv_addf(struct strv *s, const char *fmt, ...)
{
	va_list ap;
	char *str;

	va_start(ap, fmt);
	if (vasprintf(&str, fmt, ap) < 0)
		abort();
	va_end(ap);
	strv_add(s, str);
	free(str);
}

void strv_addv(struct strv *s, const struct strv *from)
{
	for (int i = 0; i < from->n; i++)
		strv_add(s, from->v[i]);
}

void strv_remove(struct strv *s, int at)
{
	free(s->v[at]);
	memmove(s->v + at, s->v + at + 1, (s->n - at) * sizeof(*s->v));
	s->n--;
}

int strv_find(const struct strv *s, const char *str)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], str))
			return i;
	return -1;
}

void strv_free(struct strv *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

char *strv_join(const struct strv *s, const char *sep)
{
	size_t len = 1, k = 0;
	char *out;

	for (int i = 0; i < s->n; i++)
		len += strlen(s->v[i]) + strlen(sep);
	out = xmalloc(len);
	out[0] = '\0';
	for (int i = 0; i < s->n; i++) {
		size_t a = strlen(s->v[i]);

		if (i) {
			memcpy(out + k, sep, strlen(sep));
			k += strlen(sep);
		}
		memcpy(out + k, s->v[i], a);
		k += a;
	}
	out[k] = '\0';
	return out;
}

void strv_split(struct strv *s, const char *str, char sep)
{
	const char *p = str, *q;

	for (;;) {
		char *piece;

		q = strchr(p, sep);
		piece = q ? strndup(p, q - p) : strdup(p);
		if (!piece)
			abort();
		strv_add(s, piece);
		free(piece);
		if (!q)
			break;
		p = q + 1;
	}
}

/* the length of the valid UTF-8 sequence at s, its code point in *cp; 0 when invalid */
static int utf8_seq(const unsigned char *s, unsigned *cp)
{
	int n;
	unsigned c = s[0], min;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if ((c & 0xe0) == 0xc0)
		n = 2, c &= 0x1f, min = 0x80;
	else if ((c & 0xf0) == 0xe0)
		n = 3, c &= 0x0f, min = 0x800;
	else if ((c & 0xf8) == 0xf0)
		n = 4, c &= 0x07, min = 0x10000;
	else
		return 0;
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

void vsay(FILE *f, const char *fmt, va_list ap)
{
	char *s, *t;

	if (vasprintf(&s, fmt, ap) < 0)
		return;
	t = safe_text(s);
	fprintf(f, "ccdiag: %s\n", t);
	fflush(f);
	free(s);
	free(t);
}

void sayf(FILE *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(f, fmt, ap);
	va_end(ap);
}

char *safe_text(const char *s)
{
	size_t len = strlen(s), k = 0;
	char *out = xmalloc(len + 1);
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		unsigned cp;
		int n = utf8_seq(p, &cp);

		if (!n || cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0) ||
		    (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
		    cp == 0x200e || cp == 0x200f || cp == 0x061c) {
			out[k++] = '?';
			p += n ? n : 1;
			continue;
		}
		memcpy(out + k, p, n);
		k += n;
		p += n;
	}
	out[k] = '\0';
	return out;
}

char *shell_quote(const char *arg)
{
	size_t len = strlen(arg), k = 0;
	int plain = len > 0;
	char *q, *out;

	for (const char *p = arg; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_@%+=:,./-", *p))
			plain = 0;
	if (plain)
		return safe_text(arg);
	q = xmalloc(4 * len + 3);
	q[k++] = '\'';
	for (const char *p = arg; *p; p++) {
		if (*p == '\'') {
			memcpy(q + k, "'\\''", 4);
			k += 4;
		} else {
			q[k++] = *p;
		}
	}
	q[k++] = '\'';
	q[k] = '\0';
	out = safe_text(q);
	free(q);
	return out;
}

char *strv_quoted(const struct strv *s)
{
	struct strv w = { 0 };
	char *out;

	for (int i = 0; i < s->n; i++) {
		char *q = shell_quote(s->v[i]);

		strv_addf(&w, "%s ", q);
		free(q);
	}
	out = strv_join(&w, "");
	strv_free(&w);
	return out;
}

long duration_parse(const char *s)
{
	long t = 0;
	const char *p = s;

	if (!*s)
		return -1;
	if (strspn(s, "0123456789") == strlen(s))
		return strlen(s) > 9 ? -1 : atol(s);
	while (*p) {
		long n = 0;
		int digits = 0;

		while (isdigit((unsigned char)*p) && digits < 9)
			n = n * 10 + (*p++ - '0'), digits++;
		if (!digits || isdigit((unsigned char)*p))
			return -1;
		switch (*p++) {
		case 'h': t += n * 3600; break;
		case 'm': t += n * 60; break;
		case 's': t += n; break;
		default: return -1;
		}
	}
	return t;
}

char *human(double seconds, char *buf, size_t len)
{
	long s = (long)seconds;  /* whole seconds, as the plan shows them */

	if (s >= 3600)
		snprintf(buf, len, "%ldh%02ldm", s / 3600, s % 3600 / 60);
	else if (s >= 60)
		snprintf(buf, len, "%ldm%02lds", s / 60, s % 60);
	else
		snprintf(buf, len, "%lds", s);
	return buf;
}

double rate_gbit(const char *r)
{
	size_t n = strspn(r, "0123456789.");
	char num[64];
	double v, m;
	char *end;

	if (!n || n >= sizeof(num))
		return -1;
	memcpy(num, r, n);
	num[n] = '\0';
	v = strtod(num, &end);
	if (*end || !isfinite(v))
		return -1;
	r += n;
	if (!strcmp(r, "gbit"))
		m = 1;
	else if (!strcmp(r, "mbit"))
		m = 1e-3;
	else if (!strcmp(r, "kbit"))
		m = 1e-6;
	else if (!strcmp(r, "bit"))
		m = 1e-9;
	else
		return -1;
	return v * m;
}
