#include "results.h"
#include "log.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct results {
	FILE *f;
	pthread_mutex_t lock;
	int ended;      /* end record written */
	int failed;     /* an I/O error was already logged */
};

struct results *results_open(const char *path)
{
	struct results *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return NULL;
	r->f = fopen(path, "w");
	if (!r->f) {
		err = errno;
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

static int write_locked(struct results *r, const char *type, json_t *rec)
{
	char *s = results_encode(type, rec);
	int rc = 0;

	if (!s || fprintf(r->f, "%s\n", s) < 0 || fflush(r->f)) {
		if (!r->failed)
			log_error("cannot write the results file: %s", strerror(errno));
		r->failed = 1;
		rc = -1;
	}
	free(s);
	return rc;
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

void results_close(struct results *r)
{
	if (!r)
		return;
	fflush(r->f);
	fsync(fileno(r->f));
	fclose(r->f);
	pthread_mutex_destroy(&r->lock);
	free(r);
}
