/*
 * diag/provenance.c: the MANIFEST of a run, ccdiag sign and ccdiag verify
 * (provenance.h, docs/provenance.md).
 */
#include "provenance.h"
#include "../core/spawn.h"
#include "../core/version.h"
#include "../report/manifest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { V_OK = 0, V_FAIL = 1, V_USAGE = 2, V_INCOMPLETE = 4 };

void random_run_id(char buf[17])
{
	unsigned char r[8] = { 0 };
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

	if (fd < 0 || read(fd, r, sizeof(r)) != (ssize_t)sizeof(r)) {
		unsigned long long t = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 32);

		memcpy(r, &t, sizeof(r));
	}
	if (fd >= 0)
		close(fd);
	for (int i = 0; i < 8; i++)
		snprintf(buf + 2 * i, 3, "%02x", r[i]);
}

/* the first line of a results file, parsed; NULL unless a JSON object */
static json_t *header_of(const char *path)
{
	FILE *f = fopen(path, "re");
	char *l = NULL;
	size_t cap = 0;
	json_t *h = NULL;

	if (!f)
		return NULL;
	/* a header is a few KiB; one of a MiB is not ccprobe's */
	if (getline(&l, &cap, f) > 0 && strlen(l) < (1 << 20))
		h = json_loads(l, 0, NULL);
	free(l);
	fclose(f);
	if (h && !json_is_object(h)) {
		json_decref(h);
		h = NULL;
	}
	return h;
}

/* the first line a command prints, or "unknown" */
static char *version_of(const char *bin)
{
	char *argv[] = { (char *)bin, "--version", NULL }, *out = NULL, *v;

	if (spawn_capture(argv, &out, NULL, 20) != 0 || !out || !*out) {
		free(out);
		return xstrdup("unknown");
	}
	out[strcspn(out, "\r\n")] = '\0';
	v = safe_text(out);
	free(out);
	return v;
}

static void utc(char *buf, size_t len, time_t t)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int manifest_write(const struct run_manifest *r, char *err, size_t len)
{
	struct strv actual = { 0 };
	char *tmp = xasprintf("%s/MANIFEST.tmp", r->dir), *dst = xasprintf("%s/MANIFEST", r->dir);
	char *v, *p, t0[32], t1[32], hex[65];
	FILE *f = NULL;
	int fd, rc = -1;

	/* the hosts the phases ran on: what their headers name */
	for (int i = 0; i < r->files->n; i++) {
		json_t *h, *e;
		size_t k;
		size_t n = strlen(r->files->v[i]);

		if (n < 6 || strcmp(r->files->v[i] + n - 6, ".jsonl"))
			continue;
		p = xasprintf("%s/%s", r->dir, r->files->v[i]);
		h = header_of(p);
		free(p);
		json_array_foreach(json_object_get(h, "hosts"), k, e) {
			const char *name = json_string_value(json_object_get(e, "name"));

			if (name && strv_find(&actual, name) < 0)
				strv_add(&actual, name);
		}
		json_decref(h);
	}
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		snprintf(err, len, "cannot write '%s': %s", tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	utc(t0, sizeof(t0), r->start);
	utc(t1, sizeof(t1), r->end);
	fprintf(f, "# ccdiag-manifest: 1\n");
	fprintf(f, "# check: sha256sum -c MANIFEST; signed: ssh-keygen -Y verify -n %s (docs/provenance.md)\n",
		MANIFEST_NAMESPACE);
	fprintf(f, "# tool: ccdiag %s\n", CCDIAG_VERSION);
	fprintf(f, "# commit: %s\n", ccdiag_commit);
	v = version_of(r->ccprobe);
	fprintf(f, "# ccprobe: %s\n", v);
	free(v);
	v = version_of(r->ccreport);
	fprintf(f, "# ccreport: %s\n", v);
	free(v);
	v = safe_text(r->profile);
	fprintf(f, "# profile: %s\n", v);
	free(v);
	if (!sha256_file(r->profile_path, hex))
		fprintf(f, "# profile_sha256: %s\n", hex);
	fprintf(f, "# run_id: %s\n", r->run_id);
	if (r->nonce)
		fprintf(f, "# nonce: %s\n", r->nonce);
	fprintf(f, "# launcher: %s\n", r->launcher);
	v = strv_join(r->planned, " ");
	p = safe_text(v);
	fprintf(f, "# hosts_planned: %s\n", *p ? p : "none");
	free(v);
	free(p);
	v = strv_join(&actual, " ");
	p = safe_text(v);
	fprintf(f, "# hosts_actual: %s\n", *p ? p : "none");
	free(v);
	free(p);
	fprintf(f, "# start: %s\n", t0);
	fprintf(f, "# end: %s\n", t1);
	for (int i = 0; i < r->files->n; i++) {
		const char *name = r->files->v[i];

		p = xasprintf("%s/%s", r->dir, name);
		if (manifest_name_ok(name) && !sha256_file(p, hex))
			fprintf(f, "%s  %s\n", hex, name);
		free(p);
	}
	if (fflush(f) || fsync(fileno(f)) || ferror(f)) {
		snprintf(err, len, "cannot write '%s': %s", tmp, strerror(errno));
		goto out;
	}
	if (fclose(f)) {
		f = NULL;
		snprintf(err, len, "cannot write '%s': %s", tmp, strerror(errno));
		goto out;
	}
	f = NULL;
	if (rename(tmp, dst)) {
		snprintf(err, len, "cannot rename '%s' to '%s': %s", tmp, dst, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (f)
		fclose(f);
	if (rc)
		unlink(tmp);
	strv_free(&actual);
	free(tmp);
	free(dst);
	return rc;
}

/* ------------------------------------------------------------------ sign and verify */

static void problem(void *ctx, const char *name, const char *what)
{
	(*(int *)ctx)++;
	sayf(stdout, "verify: FAIL %s: %s", name, what);
}

/* the options of sign and verify: DIR and -f/-I/--nonce */
struct pv_opts {
	const char *dir, *file, *identity, *nonce;
};

static int pv_parse(int argc, char **argv, struct pv_opts *o, int verify)
{
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		const char **to = NULL;

		if (!strcmp(a, "-f") || !strcmp(a, verify ? "--allowed-signers" : "--key"))
			to = &o->file;
		else if (verify && (!strcmp(a, "-I") || !strcmp(a, "--identity")))
			to = &o->identity;
		else if (verify && !strcmp(a, "--nonce"))
			to = &o->nonce;
		else if (a[0] == '-' || o->dir) {
			sayf(stderr, "%s: %s '%s' (try: ccdiag --help)", argv[1],
			     a[0] == '-' ? "unknown option" : "one folder only, not also", a);
			return -1;
		} else {
			o->dir = a;
			continue;
		}
		if (i + 1 >= argc) {
			sayf(stderr, "%s: option '%s' needs a value", argv[1], a);
			return -1;
		}
		*to = argv[++i];
	}
	if (!o->dir) {
		sayf(stderr, verify ? "usage: ccdiag verify DIR [-f ALLOWED_SIGNERS -I IDENTITY] [--nonce VALUE]" :
			       "usage: ccdiag sign DIR -f KEY");
		return -1;
	}
	return 0;
}

/* reads DIR/MANIFEST; exit code V_USAGE with one line when it cannot */
static int pv_manifest(const char *dir, struct manifest *m, char **path, const char *cmd)
{
	char err[600];
	struct stat st;

	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		sayf(stderr, "%s: '%s' is not a folder", cmd, dir);
		return V_USAGE;
	}
	*path = xasprintf("%s/MANIFEST", dir);
	if (manifest_read(m, *path, err, sizeof(err))) {
		sayf(stderr, "%s: %s", cmd, err);
		return V_USAGE;
	}
	return V_OK;
}

/* ssh-keygen's last line of out or err, for the terminal */
static char *last_words(const char *out, const char *err)
{
	const char *s = err && *err ? err : out ? out : "";
	size_t n = strlen(s);
	const char *b;

	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		n--;
	b = s + n;
	while (b > s && b[-1] != '\n')
		b--;
	return strndup(b, (size_t)(s + n - b));
}

/* what sign and verify hold: the MANIFEST, its path and its signature's, ssh-keygen's output */
struct pv {
	struct manifest m;
	char *path, *sig, *out, *errs;
};

static int pv_done(struct pv *p, int rc)
{
	manifest_free(&p->m);
	free(p->path);
	free(p->sig);
	free(p->out);
	free(p->errs);
	return rc;
}

int sign_command(int argc, char **argv)
{
	struct pv_opts o = { 0 };
	struct pv p = { 0 };
	char *w;
	int rc, bad = 0;

	if (pv_parse(argc, argv, &o, 0))
		return V_USAGE;
	if (!o.file) {
		sayf(stderr, "sign: no key (-f KEY: an OpenSSH private key, or its .pub with the key in ssh-agent)");
		return V_USAGE;
	}
	if ((rc = pv_manifest(o.dir, &p.m, &p.path, "sign")))
		return pv_done(&p, rc);
	/* never vouch for files that no longer match */
	if (manifest_check(&p.m, o.dir, problem, &bad)) {
		sayf(stdout, "sign: not signed: %d file(s) differ from %s", bad, p.path);
		rc = V_FAIL;
		goto out;
	}
	p.sig = xasprintf("%s.sig", p.path);
	/* ssh-keygen asks before it overwrites (and reads no from /dev/null): a new signature replaces the old */
	if (unlink(p.sig) && errno != ENOENT) {
		sayf(stderr, "sign: cannot remove the old '%s': %s", p.sig, strerror(errno));
		rc = V_USAGE;
		goto out;
	}
	{
		char *cmd[] = { "ssh-keygen", "-Y", "sign", "-f", (char *)o.file, "-n", MANIFEST_NAMESPACE,
				p.path, NULL };

		rc = spawn_capture(cmd, &p.out, &p.errs, 120);
	}
	if (rc == -1 || rc == 127) {
		sayf(stderr, "sign: cannot run ssh-keygen (OpenSSH's; Debian: openssh-client)");
		rc = V_USAGE;
		goto out;
	}
	if (rc != 0 || access(p.sig, R_OK)) {
		w = last_words(p.out, p.errs);
		sayf(stderr, "sign: ssh-keygen -Y sign failed (exit %d): %s", rc, w);
		free(w);
		rc = V_USAGE;
		goto out;
	}
	sayf(stdout, "signed %d file(s): %s (namespace %s); the customer checks it with: ccdiag verify %s "
	     "-f ALLOWED_SIGNERS -I IDENTITY, or ssh-keygen -Y verify (docs/provenance.md)", p.m.n, p.sig,
	     MANIFEST_NAMESPACE, o.dir);
	rc = V_OK;
out:
	return pv_done(&p, rc);
}

/* results files in dir that the manifest does not list (ccreport DIR/phase-*.jsonl would read them) */
static int unlisted(const char *dir, const struct manifest *m)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (!fnmatch("phase-*.jsonl", e->d_name, 0) && manifest_find(m, e->d_name) < 0) {
			sayf(stdout, "verify: FAIL %s: not in the MANIFEST (a results file added after it was written)",
			     e->d_name);
			n++;
		}
	closedir(d);
	return n;
}

/* every listed results file's header carries nonce; -1 when one does not */
static int nonce_everywhere(const char *dir, const struct manifest *m, const char *nonce)
{
	int bad = 0;

	for (int i = 0; i < m->n; i++) {
		size_t n = strlen(m->name[i]);
		char *p;
		json_t *h;
		const char *got;

		if (n < 6 || strcmp(m->name[i] + n - 6, ".jsonl"))
			continue;
		p = xasprintf("%s/%s", dir, m->name[i]);
		h = header_of(p);
		got = json_string_value(json_object_get(h, "nonce"));
		if (!got || strcmp(got, nonce)) {
			sayf(stdout, "verify: FAIL %s: its header's nonce is %s%s%s, not the one given", m->name[i],
			     got ? "'" : "", got ? got : "missing", got ? "'" : "");
			bad++;
		}
		json_decref(h);
		free(p);
	}
	return bad;
}

int verify_command(int argc, char **argv)
{
	struct pv_opts o = { 0 };
	struct pv p = { 0 };
	char *w;
	const char *mn;
	int rc, bad = 0, sig_checked = 0;

	if (pv_parse(argc, argv, &o, 1))
		return V_USAGE;
	if ((o.file != NULL) != (o.identity != NULL)) {
		sayf(stderr, "verify: give both -f ALLOWED_SIGNERS and -I IDENTITY (the signer the customer expects), or neither");
		return V_USAGE;
	}
	if ((rc = pv_manifest(o.dir, &p.m, &p.path, "verify")))
		return pv_done(&p, rc);
	p.sig = xasprintf("%s.sig", p.path);
	/* the signature first: which bytes of MANIFEST someone vouched for */
	if (o.file) {
		char *cmd[] = { "ssh-keygen", "-Y", "verify", "-f", (char *)o.file, "-I", (char *)o.identity,
				"-n", MANIFEST_NAMESPACE, "-s", p.sig, NULL };

		if (access(p.sig, R_OK)) {
			sayf(stdout, "verify: FAIL signature: %s: %s (the MANIFEST is not signed)", p.sig, strerror(errno));
			bad++;
		} else {
			rc = spawn_capture_in(cmd, p.path, &p.out, &p.errs, 60);
			if (rc == -1 || rc == 127) {
				sayf(stderr, "verify: cannot run ssh-keygen (OpenSSH's; Debian: openssh-client)");
				rc = V_USAGE;
				goto out;
			}
			w = last_words(rc ? p.errs : p.out, rc ? NULL : p.errs);
			if (rc == 0) {
				sayf(stdout, "verify: signature: %s", w);
				sig_checked = 1;
			} else {
				sayf(stdout, "verify: FAIL signature: ssh-keygen -Y verify: %s (the MANIFEST was changed "
				     "after it was signed, or another key signed it)", *w ? w : "failed");
				bad++;
			}
			free(w);
		}
	}
	/* then the files it lists, and any results file it does not */
	manifest_check(&p.m, o.dir, problem, &bad);
	bad += unlisted(o.dir, &p.m);
	if (o.nonce) {
		mn = manifest_meta(&p.m, "nonce");
		if (!mn || strcmp(mn, o.nonce)) {
			sayf(stdout, "verify: FAIL nonce: the MANIFEST's is %s%s%s, not the one given", mn ? "'" : "",
			     mn ? mn : "missing", mn ? "'" : "");
			bad++;
		}
		bad += nonce_everywhere(o.dir, &p.m, o.nonce);
	}
	sayf(stdout, "verify: %s: %d file(s) listed, run %s from %s to %s on %s; nonce %s", p.path, p.m.n,
	     manifest_meta(&p.m, "run_id") ?: "?", manifest_meta(&p.m, "start") ?: "?", manifest_meta(&p.m, "end") ?: "?",
	     manifest_meta(&p.m, "hosts_actual") ?: "?", manifest_meta(&p.m, "nonce") ?: "none");
	if (bad) {
		sayf(stdout, "verify: FAILED: %d check(s) failed", bad);
		rc = V_FAIL;
	} else if (!sig_checked) {
		sayf(stdout, "verify: the files match the MANIFEST; its signature was not checked (give -f "
		     "ALLOWED_SIGNERS -I IDENTITY): anyone could have written it");
		rc = V_INCOMPLETE;
	} else {
		sayf(stdout, "verify: OK: the signature and every file match (this says who vouched for "
		     "these bytes, not that they were measured: docs/provenance.md)");
		rc = V_OK;
	}
out:
	return pv_done(&p, rc);
}
