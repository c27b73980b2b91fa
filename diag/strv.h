#ifndef CCDIAG_DIAG_STRV_H
#define CCDIAG_DIAG_STRV_H

/*
 * diag/strv.c: growable NULL-terminated string vectors (an argument vector
 * for posix_spawn, a list of names) and the text helpers ccdiag prints with.
 * Allocation failure aborts: ccdiag is a short-lived command.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

struct strv {
	char **v;                /* NULL-terminated; NULL while empty */
	int n, cap;
};

void strv_add(struct strv *s, const char *str);
void strv_addf(struct strv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strv_addv(struct strv *s, const struct strv *from);
void strv_insert(struct strv *s, int at, const char *str);
void strv_remove(struct strv *s, int at);
int strv_find(const struct strv *s, const char *str);   /* index or -1 */
void strv_free(struct strv *s);
/* the items joined by sep, malloc'd ("" when empty) */
char *strv_join(const struct strv *s, const char *sep);
/* splits str at sep into s (empty pieces kept) */
void strv_split(struct strv *s, const char *str, char sep);

/* malloc'd printf; aborts on failure */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void *xmalloc(size_t n);
char *xstrdup(const char *s);

/*
 * Text for a terminal or a log: control characters (C0, DEL, C1), invalid
 * UTF-8 and the bidi controls (U+202A..U+202E, U+2066..U+2069) replaced by
 * '?'. Returns a malloc'd copy.
 */
char *safe_text(const char *s);
/* "ccdiag: " and the line, made safe_text, to f (flushed): every line ccdiag prints */
void vsay(FILE *f, const char *fmt, va_list ap);
void sayf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* arg quoted for a shell when it needs it ('...'), then made safe_text; malloc'd */
char *shell_quote(const char *arg);
/* every item shell_quote'd, each followed by one space (the plan's words); malloc'd */
char *strv_quoted(const struct strv *s);

/* 90, 90s, 10m, 1h30m -> seconds; -1 for anything else */
long duration_parse(const char *s);
/* 75 -> "1m15s", 3700 -> "1h01m", 42.9 -> "42s" into buf */
char *human(double seconds, char *buf, size_t len);
/* tc-style rate (1gbit, 100mbit, 2.5gbit) -> Gb/s; -1 when not one */
double rate_gbit(const char *r);

#endif
