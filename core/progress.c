#include "progress.h"
#include "timer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct {
	int on, tty, n;
	double t0, last, every;
	char what[96];
} pg;

void progress_begin(int rank, int quiet, const char *what, int n)
{
	const char *e = getenv("CCPROBE_PROGRESS_EVERY");

	memset(&pg, 0, sizeof(pg));
	pg.on = rank == 0 && !quiet && n > 0;
	/* under mpirun stderr is a pipe (plain lines); stdout is always a pseudo-terminal there */
	pg.tty = isatty(STDERR_FILENO);
	pg.n = n;
	pg.t0 = pg.last = timer_now();
	pg.every = e && atof(e) > 0 ? atof(e) : 30.0;
	snprintf(pg.what, sizeof(pg.what), "%s", what);
}

void progress_step(int k, const char *detail)
{
	double now = timer_now(), el = now - pg.t0;

	if (!pg.on || (!pg.tty && now - pg.last < pg.every && k < pg.n))
		return;
	pg.last = now;
	/* the remaining steps at the pace so far: sizes grow, so it is a floor */
	fprintf(stderr, "%sccprobe: %s %s (%d/%d), %.0f s elapsed, >= %.0f s left%s", pg.tty ? "\r\033[K" : "",
		pg.what, detail, k, pg.n, el, k ? el / k * (pg.n - k) : 0.0, pg.tty ? "" : "\n");
	fflush(stderr);
}

void progress_clear(void)
{
	if (pg.on && pg.tty) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
}

void progress_end(void)
{
	progress_clear();
	pg.on = 0;
}
