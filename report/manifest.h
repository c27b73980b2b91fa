#ifndef CCDIAG_MANIFEST_H
#define CCDIAG_MANIFEST_H

/*
 * report/manifest.c: a run folder's MANIFEST (docs/provenance.md): the
 * SHA-256 of each file ccdiag wrote, as `sha256sum -c` reads them ("HEX  NAME"),
 * and "# key: value" lines that sha256sum skips (tool versions, hosts, times,
 * the customer's nonce). ccdiag writes and verifies it; the digests come from
 * OpenSSL's libcrypto, as ccreport's inputs[].sha256.
 */
#include <stddef.h>

#define MANIFEST_MAX_BYTES (1 << 20)   /* a MANIFEST longer than this is refused */
#define MANIFEST_MAX_LINE 4096         /* as is a longer line */

struct manifest {
	char **name;             /* the files, relative to the folder, in file order */
	char (*hex)[65];         /* their SHA-256, 64 lower-case hex digits */
	int *line;               /* their line in the MANIFEST */
	int n;
	char **key, **value;     /* the "# key: value" lines, in file order */
	int nmeta;
};

/*
 * The SHA-256 of the regular file at path (not a link, a FIFO or a device)
 * as 64 lower-case hex digits in hex. Returns 0, or -1 with errno set
 * (EINVAL: not a regular file).
 */
int sha256_file(const char *path, char hex[65]);

/*
 * 1 when name may stand in a MANIFEST: a relative path of letters, digits,
 * '.', '_', '-' and '/' between non-empty parts, no part "." or "..", at most
 * 255 characters (sha256sum reads it as written, no escapes).
 */
int manifest_name_ok(const char *name);

/*
 * Reads the MANIFEST at path into m: "HEX  NAME" lines (two spaces, or " *"
 * as sha256sum -b writes), "# key: value" lines, "#" comments and blank lines.
 * A name given twice, a malformed line, a line above MANIFEST_MAX_LINE or a
 * file above MANIFEST_MAX_BYTES (or not a regular file) is refused. Returns 0,
 * or -1 with "path:line: what" (or "path: what") in err; m is then empty.
 */
int manifest_read(struct manifest *m, const char *path, char *err, size_t len);

/* the value of the last "# key: value" line with this key, or NULL */
const char *manifest_meta(const struct manifest *m, const char *key);

/*
 * Checks every listed file under dir against its digest: bad(ctx, name, what)
 * is called for each that is missing, not a regular file, unreadable or
 * different. Returns how many failed.
 */
int manifest_check(const struct manifest *m, const char *dir,
		   void (*bad)(void *ctx, const char *name, const char *what), void *ctx);

/* the index of name in m, or -1 */
int manifest_find(const struct manifest *m, const char *name);

void manifest_free(struct manifest *m);

#endif
