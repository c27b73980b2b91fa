#include "results.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct results {
	int fd;
	char *path;
	pthread_mutex_t lock;
	off_t good;     /* bytes of complete records in the file */
	int ended;      /* end record written */
	int failed;     /* a write failed: logged, file cut back to good */
};

struct results *results_open(const char *path)
{
	struct results *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return NULL;
	r->path = strdup(path);
	r->fd = r->path ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -1;
	if (r->fd < 0) {
		err = r->path ? errno : ENOMEM;
		free(r->path);
		free(r);
		errno = err;
		return NULL;
	}
	pthread_mutex_init(&r->lock, NULL);
	return r;
}

char *results_encode(const char *type, json_t *rec)
{
	json_t *line = json_object();
	char *s;

	/* jansson keeps insertion order, so "type" leads every line */
	json_object_set_new(line, "type", json_string(type));
	json_object_update(line, rec);
	s = json_dumps(line, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	json_decref(line);
	return s;
}

/*
 * Appends one line with write(2), so that what reached the file is known to
 * the byte. A failed write (ENOSPC, EIO, a vanished mount) cuts the file back
 * to its last complete record, so it never ends in half a line, and refuses
 * every later write: the caller stops the run (a run that cannot record is
 * no pass).
 */
static int write_locked(struct results *r, const char *type, json_t *rec)
{
	char *s = r->failed ? NULL : results_encode(type, rec);
	size_t len, done = 0;
	ssize_t k;
	int err = ENOMEM;

	if (r->failed) {
		errno = r->failed;
		return -1;
	}
	if (s) {
		len = strlen(s);
		s[len++] = '\n';   /* over the terminator: s is written by length */
		while (done < len) {
			k = write(r->fd, s + done, len - done);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0) {
				err = k < 0 ? errno : EIO;
				break;
			}
			done += (size_t)k;
		}
		free(s);
		if (done == len) {
			r->good += (off_t)len;
			return 0;
		}
	}
	r->failed = err;
	if (done && ftruncate(r->fd, r->good))
		log_error("cannot cut the results file '%s' back to its last complete record: %s",
			  r->path, strerror(errno));
	log_error("cannot write the results file '%s': %s (errno %d); stopping the run",
		  r->path, strerror(err), err);
	errno = err;
	return -1;
}

int results_write(struct results *r, const char *type, json_t *rec)
{
	int rc;

	if (!r) {
		json_decref(rec);
		return 0;
	}
	pthread_mutex_lock(&r->lock);
	rc = r->ended ? 0 : write_locked(r, type, rec);
	pthread_mutex_unlock(&r->lock);
	json_decref(rec);
	return rc;
}

static json_t *end_record(const char *status, double elapsed_s, json_t *extra)
{
	json_t *rec = json_pack("{s:s, s:f}", "status", status, "elapsed_s", elapsed_s);

	if (extra) {
		json_object_update(rec, extra);
		json_decref(extra);
	}
	return rec;
}

int results_end(struct results *r, const char *status, double elapsed_s, json_t *extra)
{
	json_t *rec = end_record(status, elapsed_s, extra);
	int rc = 0;

	if (r) {
		pthread_mutex_lock(&r->lock);
		if (!r->ended) {
			rc = write_locked(r, "end", rec);
			r->ended = 1;
		}
		pthread_mutex_unlock(&r->lock);
	}
	json_decref(rec);
	return rc;
}

int results_close(struct results *r)
{
	int rc = 0;

	if (!r)
		return 0;
	/* a file server may report a lost write only now */
	if (!r->failed && fsync(r->fd) && errno != EINVAL && errno != EROFS) {
		rc = -1;
		log_error("cannot write the results file '%s': %s (errno %d)", r->path,
			  strerror(errno), errno);
	}
	if (close(r->fd) && !rc && !r->failed) {
		rc = -1;
		log_error("cannot write the results file '%s': %s (errno %d)", r->path,
			  strerror(errno), errno);
	}
	pthread_mutex_destroy(&r->lock);
	free(r->path);
	rc = rc || r->failed ? -1 : 0;
	free(r);
	return rc;
}
