/*
 * report/manifest.c: reading and checking a MANIFEST (manifest.h,
 * docs/provenance.md). No MPI: ccdiag links it through libccreport.
 */
#include "manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* opens path for reading when it is a regular file (a FIFO never blocks the open); -1 else */
static int open_regular(const char *path, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, st) || !S_ISREG(st->st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

int sha256_file(const char *path, char hex[65])
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned char buf[65536], d[EVP_MAX_MD_SIZE];
	unsigned int dn = 0;
	struct stat st;
	ssize_t got;
	int fd, rc = -1, saved = 0;

	if (!md)
		return -1;
	fd = open_regular(path, &st);
	if (fd < 0 || !EVP_DigestInit_ex(md, EVP_sha256(), NULL)) {
		saved = errno;
		goto out;
	}
	while ((got = read(fd, buf, sizeof(buf))) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 || !EVP_DigestUpdate(md, buf, (size_t)got)) {
			saved = got < 0 ? errno : EIO;
			goto out;
		}
	}
	if (!EVP_DigestFinal_ex(md, d, &dn) || dn != 32) {
		saved = EIO;
		goto out;
	}
	for (unsigned i = 0; i < dn; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	EVP_MD_CTX_free(md);
	if (rc)
		errno = saved ? saved : EIO;
	return rc;
}

int manifest_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (!n || n > 255 || strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/") != n)
		return 0;
	for (const char *p = name; *p;) {
		size_t k = strcspn(p, "/");

		if (!k || (k == 1 && p[0] == '.') || (k == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		p += k;
		if (*p == '/' && !*++p)
			return 0;   /* a trailing slash names no file */
	}
	return 1;
}

void manifest_free(struct manifest *m)
{
	for (int i = 0; i < m->n; i++)
		free(m->name[i]);
	for (int i = 0; i < m->nmeta; i++) {
		free(m->key[i]);
		free(m->value[i]);
	}
	free(m->name);
	free(m->hex);
	free(m->line);
	free(m->key);
	free(m->value);
	memset(m, 0, sizeof(*m));
}

int manifest_find(const struct manifest *m, const char *name)
{
	for (int i = 0; i < m->n; i++)
		if (!strcmp(m->name[i], name))
			return i;
	return -1;
}

const char *manifest_meta(const struct manifest *m, const char *key)
{
	for (int i = m->nmeta - 1; i >= 0; i--)
		if (!strcmp(m->key[i], key))
			return m->value[i];
	return NULL;
}

static int is_hex64(const char *s)
{
	return strspn(s, "0123456789abcdefABCDEF") == 64;
}

/* one line (NUL-terminated, no newline) into m; 0, or -1 with what is wrong in why */
static int manifest_line(struct manifest *m, char *s, int lineno, char *why, size_t len)
{
	if (!*s)
		return 0;
	if (*s == '#') {
		char *k = s + 1, *colon, *v;
		size_t kn;

		k += strspn(k, " ");
		colon = strstr(k, ": ");
		kn = colon ? (size_t)(colon - k) : 0;
		/* "# key: value": a key of lower-case letters, digits and '_'; other '#' lines are comments */
		if (!colon || !kn || strspn(k, "abcdefghijklmnopqrstuvwxyz0123456789_") != kn)
			return 0;
		*colon = '\0';
		v = colon + 2;
		m->key = realloc(m->key, (m->nmeta + 1) * sizeof(*m->key));
		m->value = realloc(m->value, (m->nmeta + 1) * sizeof(*m->value));
		if (!m->key || !m->value)
			return snprintf(why, len, "out of memory"), -1;
		m->key[m->nmeta] = strdup(k);
		m->value[m->nmeta] = strdup(v);
		if (!m->key[m->nmeta] || !m->value[m->nmeta])
			return snprintf(why, len, "out of memory"), -1;
		m->nmeta++;
		return 0;
	}
	if (strlen(s) < 67 || !is_hex64(s) || s[64] != ' ' || (s[65] != ' ' && s[65] != '*')) {
		snprintf(why, len, "not a 'SHA256  NAME' line (64 hex digits, two spaces, a file name)");
		return -1;
	}
	if (!manifest_name_ok(s + 66)) {
		snprintf(why, len, "file name '%.80s' is not one a manifest may hold (a relative path of "
			 "letters, digits, '.', '_', '-', '/'; no '..')", s + 66);
		return -1;
	}
	if (manifest_find(m, s + 66) >= 0) {
		snprintf(why, len, "'%s' is listed twice", s + 66);
		return -1;
	}
	m->name = realloc(m->name, (m->n + 1) * sizeof(*m->name));
	m->hex = realloc(m->hex, (m->n + 1) * sizeof(*m->hex));
	m->line = realloc(m->line, (m->n + 1) * sizeof(*m->line));
	if (!m->name || !m->hex || !m->line || !(m->name[m->n] = strdup(s + 66)))
		return snprintf(why, len, "out of memory"), -1;
	for (int i = 0; i < 64; i++)
		m->hex[m->n][i] = (char)(s[i] >= 'A' && s[i] <= 'F' ? s[i] - 'A' + 'a' : s[i]);
	m->hex[m->n][64] = '\0';
	m->line[m->n] = lineno;
	m->n++;
	return 0;
}

int manifest_read(struct manifest *m, const char *path, char *err, size_t len)
{
	struct stat st;
	char *buf = NULL, why[400];
	size_t have = 0;
	int fd, lineno = 0, rc = -1;
	ssize_t got;

	memset(m, 0, sizeof(*m));
	fd = open_regular(path, &st);
	if (fd < 0) {
		snprintf(err, len, "%s: %s", path, errno == EINVAL ? "not a regular file" : strerror(errno));
		return -1;
	}
	if (st.st_size > MANIFEST_MAX_BYTES) {
		snprintf(err, len, "%s: longer than %d bytes: not a MANIFEST ccdiag writes", path, MANIFEST_MAX_BYTES);
		goto out;
	}
	buf = malloc((size_t)st.st_size + 2);
	if (!buf) {
		snprintf(err, len, "%s: out of memory", path);
		goto out;
	}
	while (have <= (size_t)st.st_size && (got = read(fd, buf + have, (size_t)st.st_size + 1 - have)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			snprintf(err, len, "%s: %s", path, strerror(errno));
			goto out;
		}
		have += (size_t)got;
	}
	if (have > (size_t)st.st_size) {
		snprintf(err, len, "%s: the file grew while it was read", path);
		goto out;
	}
	buf[have] = '\0';
	if (memchr(buf, '\0', have)) {
		snprintf(err, len, "%s: holds a NUL byte: not a MANIFEST", path);
		goto out;
	}
	for (char *s = buf; *s;) {
		char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);

		lineno++;
		if (n > MANIFEST_MAX_LINE) {
			snprintf(err, len, "%s:%d: line longer than %d characters", path, lineno, MANIFEST_MAX_LINE);
			goto out;
		}
		s[n] = '\0';
		if (n && s[n - 1] == '\r')
			s[n - 1] = '\0';
		if (manifest_line(m, s, lineno, why, sizeof(why))) {
			snprintf(err, len, "%s:%d: %s", path, lineno, why);
			goto out;
		}
		s += n + (nl ? 1 : 0);
	}
	if (!m->n) {
		snprintf(err, len, "%s: lists no file", path);
		goto out;
	}
	rc = 0;
out:
	close(fd);
	free(buf);
	if (rc)
		manifest_free(m);
	return rc;
}

int manifest_check(const struct manifest *m, const char *dir,
		   void (*bad)(void *ctx, const char *name, const char *what), void *ctx)
{
	int nbad = 0;

	for (int i = 0; i < m->n; i++) {
		char *p, hex[65], what[300];

		if (asprintf(&p, "%s/%s", dir, m->name[i]) < 0)
			return nbad + m->n - i;
		if (sha256_file(p, hex)) {
			snprintf(what, sizeof(what), "%s", errno == ENOENT ? "missing" :
				 errno == EINVAL || errno == ELOOP ? "not a regular file" : strerror(errno));
			bad(ctx, m->name[i], what);
			nbad++;
		} else if (strcmp(hex, m->hex[i])) {
			snprintf(what, sizeof(what), "SHA-256 %.16s... differs from the manifest's %.16s... "
				 "(line %d): the file changed after the manifest was written", hex, m->hex[i],
				 m->line[i]);
			bad(ctx, m->name[i], what);
			nbad++;
		}
		free(p);
	}
	return nbad;
}
