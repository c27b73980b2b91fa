#include "watchdog.h"
#include "log.h"
#include "options.h"
#include "timer.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WD_TICK_NS 50000000L  /* 50 ms between checks */
#define WD_RING 64            /* outstanding done messages per rank */
#define WD_GRACE_S 10.0       /* a non-root rank waits this long for rank 0 to abort */

static struct {
	struct mpictx *mpi;
	struct results *res;
	double timeout_s, t_start;
	pthread_t thread;
	pthread_mutex_t lock;
	int running, stop;
	int tracking;            /* done messages in use (MPI_THREAD_MULTIPLE) */
	MPI_Comm comm;           /* private communicator for done messages */
	/* the armed measurement */
	int armed, seq;
	int done_seq;            /* the last measurement this rank said it finished (watchdog_done) */
	double deadline;
	double armed_s;          /* the armed measurement's own deadline in seconds (watchdog_arm_for) */
	char what[256];
	json_t *detail;
	/* rank 0: last measurement each rank started and finished; posted receives */
	int *last_armed, *last_done, *rbuf;
	char *member;            /* [size] takes part in the current measurements */
	MPI_Request *rreq;
	/* other ranks: ring of sends (2 seq when starting, 2 seq + 1 when done) */
	int sbuf[WD_RING];
	MPI_Request sreq[WD_RING];
	unsigned nsent;
	void (*on_abort)(void);  /* see watchdog_on_abort */
} wd = { .lock = PTHREAD_MUTEX_INITIALIZER };

void watchdog_block_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

/* Runs the abort hook once; the caller aborts the job right after. */
static void run_abort_hook(void)
{
	void (*fn)(void) = __atomic_exchange_n(&wd.on_abort, NULL, __ATOMIC_ACQ_REL);

	if (fn)
		fn();
}

void watchdog_abort(int code)
{
	run_abort_hook();
	MPI_Abort(MPI_COMM_WORLD, code);
	_exit(code);
}

static void poll_done(void)
{
	int n = wd.mpi->size - 1, outcount = 0;
	int idx[n > 0 ? n : 1];

	if (!wd.tracking || wd.mpi->rank != 0 || n == 0)
		return;
	for (;;) {
		if (MPI_Testsome(n, wd.rreq, &outcount, idx, MPI_STATUSES_IGNORE) != MPI_SUCCESS ||
		    outcount == MPI_UNDEFINED || outcount == 0)
			return;
		for (int i = 0; i < outcount; i++) {
			int r = idx[i] + 1, seq = wd.rbuf[r] / 2;

			if (seq > wd.last_armed[r])
				wd.last_armed[r] = seq;
			if (wd.rbuf[r] % 2 && seq > wd.last_done[r])
				wd.last_done[r] = seq;
			MPI_Irecv(&wd.rbuf[r], 1, MPI_INT, r, 0, wd.comm, &wd.rreq[idx[i]]);
		}
	}
}

/* Rank 0: the timeout record, the end record, then abort. Called with wd.lock held. */
static void fire_timeout(void)
{
	json_t *rec = json_object(), *nd = json_array(), *ns = json_array();
	double now = timer_now();

	poll_done();
	json_object_set_new(rec, "name", json_string(wd.what));
	if (wd.detail)
		json_object_update(rec, wd.detail);
	json_object_set_new(rec, "deadline_s", json_real(wd.armed_s));
	json_object_set_new(rec, "ranks_known", json_boolean(wd.tracking));
	for (int r = 0; wd.tracking && r < wd.mpi->size; r++) {
		json_t *who;

		if (!wd.member[r] || wd.last_done[r] >= wd.seq)
			continue;
		who = json_pack("{s:i, s:s}", "rank", r, "host", wd.mpi->hosts[wd.mpi->rank_node[r]]);
		if (wd.last_armed[r] < wd.seq)
			json_array_append(ns, who);
		json_array_append_new(nd, who);
	}
	json_object_set_new(rec, "not_done", nd);
	json_object_set_new(rec, "not_started", ns);
	log_error("'%s' did not finish within its deadline of %.0f s; %zu rank(s) not done, "
		  "%zu of them never started it; aborting", wd.what, wd.armed_s,
		  json_array_size(nd), json_array_size(ns));
	/* the ranks that never arrived are the likely culprits: name them first */
	for (size_t i = 0; i < json_array_size(ns) && i < 16; i++) {
		json_t *e = json_array_get(ns, i);

		log_error("never started: rank %d on %s",
			  (int)json_integer_value(json_object_get(e, "rank")),
			  json_string_value(json_object_get(e, "host")));
	}
	for (size_t i = 0; !json_array_size(ns) && i < json_array_size(nd) && i < 16; i++) {
		json_t *e = json_array_get(nd, i);

		log_error("not done: rank %d on %s", (int)json_integer_value(json_object_get(e, "rank")),
			  json_string_value(json_object_get(e, "host")));
	}
	results_write(wd.res, "timeout", rec);
	results_end(wd.res, "timeout", now - wd.t_start, NULL);
	results_close(wd.res);
	wd.res = NULL;
	run_abort_hook();
	MPI_Abort(MPI_COMM_WORLD, CC_EXIT_TIMEOUT);
	_exit(CC_EXIT_TIMEOUT);
}

static void fire_signal(int sig)
{
	if (wd.mpi->rank == 0) {
		log_error("received %s; stopping", sig == SIGINT ? "SIGINT" : "SIGTERM");
		pthread_mutex_lock(&wd.lock);
		results_end(wd.res, "interrupted", timer_now() - wd.t_start,
			    json_pack("{s:s, s:s}", "signal", sig == SIGINT ? "SIGINT" : "SIGTERM",
				      "during", wd.armed ? wd.what : ""));
		results_close(wd.res);
		wd.res = NULL;
		pthread_mutex_unlock(&wd.lock);
	} else {
		log_debug("received %s; stopping", sig == SIGINT ? "SIGINT" : "SIGTERM");
		/* give rank 0 a moment to write its end record before the job dies */
		usleep(500000);
	}
	run_abort_hook();
	MPI_Abort(MPI_COMM_WORLD, CC_EXIT_INTERRUPTED);
	_exit(CC_EXIT_INTERRUPTED);
}

static void *watchdog_main(void *arg)
{
	struct timespec tick = { 0, WD_TICK_NS };
	sigset_t set;
	int warned = 0;

	(void)arg;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	for (;;) {
		int sig = sigtimedwait(&set, NULL, &tick);
		double now;

		if (sig == SIGINT || sig == SIGTERM)
			fire_signal(sig);
		pthread_mutex_lock(&wd.lock);
		if (wd.stop) {
			pthread_mutex_unlock(&wd.lock);
			break;
		}
		poll_done();
		now = timer_now();
		if (wd.armed && wd.timeout_s > 0 && now > wd.deadline) {
			if (wd.mpi->rank == 0)
				fire_timeout();
			if (!warned) {
				log_error("'%s' did not finish within its deadline of %.0f s",
					  wd.what, wd.armed_s);
				warned = 1;
			}
			if (now > wd.deadline + WD_GRACE_S) {
				log_error("rank 0 did not end the run; aborting");
				run_abort_hook();
				MPI_Abort(MPI_COMM_WORLD, CC_EXIT_TIMEOUT);
				_exit(CC_EXIT_TIMEOUT);
			}
		}
		pthread_mutex_unlock(&wd.lock);
	}
	return NULL;
}

int watchdog_start(struct mpictx *mpi, struct results *res, double timeout_s, double t_start)
{
	int n = mpi->size;

	wd.mpi = mpi;
	wd.res = res;
	wd.timeout_s = timeout_s;
	wd.t_start = t_start;
	wd.tracking = mpi->thread_level >= MPI_THREAD_MULTIPLE;
	if (!wd.tracking)
		log_debug("MPI has no MPI_THREAD_MULTIPLE: timeouts cannot name the ranks not done");
	if (MPI_Comm_dup(MPI_COMM_WORLD, &wd.comm) != MPI_SUCCESS)
		return -1;
	if (wd.tracking && mpi->rank == 0) {
		wd.last_armed = calloc((size_t)n, sizeof(int));
		wd.last_done = calloc((size_t)n, sizeof(int));
		wd.rbuf = calloc((size_t)n, sizeof(int));
		wd.rreq = calloc((size_t)n, sizeof(MPI_Request));
		wd.member = malloc((size_t)n);
		if (!wd.last_armed || !wd.last_done || !wd.rbuf || !wd.rreq || !wd.member)
			return -1;
		memset(wd.member, 1, (size_t)n);
		for (int r = 1; r < n; r++)
			MPI_Irecv(&wd.rbuf[r], 1, MPI_INT, r, 0, wd.comm, &wd.rreq[r - 1]);
	}
	for (int i = 0; i < WD_RING; i++)
		wd.sreq[i] = MPI_REQUEST_NULL;
	if (pthread_create(&wd.thread, NULL, watchdog_main, NULL))
		return -1;
	wd.running = 1;
	return 0;
}

/* Tells rank 0 (from another rank) how far this rank got. */
static void report_progress(int value)
{
	unsigned slot = wd.nsent++ % WD_RING;

	if (wd.sreq[slot] != MPI_REQUEST_NULL)
		MPI_Wait(&wd.sreq[slot], MPI_STATUS_IGNORE);
	wd.sbuf[slot] = value;
	MPI_Isend(&wd.sbuf[slot], 1, MPI_INT, 0, 0, wd.comm, &wd.sreq[slot]);
}

void watchdog_arm(const char *what, json_t *detail)
{
	watchdog_arm_for(what, detail, 0);
}

void watchdog_arm_for(const char *what, json_t *detail, double seconds)
{
	int seq;

	pthread_mutex_lock(&wd.lock);
	seq = ++wd.seq;
	wd.armed = 1;
	wd.armed_s = seconds > 0 ? seconds : wd.timeout_s;
	wd.deadline = timer_now() + wd.armed_s;
	snprintf(wd.what, sizeof(wd.what), "%s", what);
	json_decref(wd.detail);
	wd.detail = detail;
	if (wd.tracking && wd.mpi->rank == 0)
		wd.last_armed[0] = seq;
	pthread_mutex_unlock(&wd.lock);
	if (wd.tracking && wd.mpi->rank != 0)
		report_progress(2 * seq);
}

/* this rank finished the armed measurement: rank 0 learns it (once per measurement) */
static void say_done(void)
{
	int seq, told;

	pthread_mutex_lock(&wd.lock);
	seq = wd.seq;
	told = wd.done_seq == seq;
	wd.done_seq = seq;
	if (wd.tracking && wd.mpi->rank == 0)
		wd.last_done[0] = seq;
	pthread_mutex_unlock(&wd.lock);
	if (wd.tracking && wd.mpi->rank != 0 && !told)
		report_progress(2 * seq + 1);
}

void watchdog_done(void)
{
	say_done();
}

void watchdog_disarm(void)
{
	say_done();
	pthread_mutex_lock(&wd.lock);
	wd.armed = 0;
	pthread_mutex_unlock(&wd.lock);
}

void watchdog_members(const char *member)
{
	int seq, top;

	if (!wd.running)
		return;
	/*
	 * Ranks left out arm nothing, so their sequence falls behind: agree on
	 * the highest. Every rank that reached this call has disarmed all it
	 * armed, so every rank is done up to that number; set it so the ranks
	 * left out later never count as not done for what they skipped.
	 */
	pthread_mutex_lock(&wd.lock);
	seq = wd.seq;
	pthread_mutex_unlock(&wd.lock);
	MPI_Allreduce(&seq, &top, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	pthread_mutex_lock(&wd.lock);
	wd.seq = top;
	for (int r = 0; wd.tracking && wd.mpi->rank == 0 && r < wd.mpi->size; r++) {
		wd.member[r] = member ? member[r] != 0 : 1;
		if (wd.last_armed[r] < top)
			wd.last_armed[r] = top;
		if (wd.last_done[r] < top)
			wd.last_done[r] = top;
	}
	pthread_mutex_unlock(&wd.lock);
}

double watchdog_deadline(void)
{
	double d;

	pthread_mutex_lock(&wd.lock);
	d = wd.armed && wd.timeout_s > 0 ? wd.deadline : 0.0;
	pthread_mutex_unlock(&wd.lock);
	return d;
}

double watchdog_timeout(void)
{
	return wd.timeout_s;
}

void watchdog_on_abort(void (*fn)(void))
{
	__atomic_store_n(&wd.on_abort, fn, __ATOMIC_RELEASE);
}

void watchdog_stop(void)
{
	if (!wd.running)
		return;
	if (wd.tracking && wd.mpi->rank != 0)
		MPI_Waitall(WD_RING, wd.sreq, MPI_STATUSES_IGNORE);
	if (wd.tracking && wd.mpi->rank == 0) {
		/* collect the last done messages before cancelling the receives */
		double until = timer_now() + 5.0;
		int all;

		do {
			pthread_mutex_lock(&wd.lock);
			poll_done();
			all = 1;
			for (int r = 1; r < wd.mpi->size; r++)
				all &= !wd.member[r] || wd.last_done[r] >= wd.seq;
			pthread_mutex_unlock(&wd.lock);
			if (!all)
				usleep(1000);
		} while (!all && timer_now() < until);
	}
	pthread_mutex_lock(&wd.lock);
	wd.stop = 1;
	pthread_mutex_unlock(&wd.lock);
	pthread_join(wd.thread, NULL);
	wd.running = 0;
	if (wd.tracking && wd.mpi->rank == 0) {
		for (int r = 1; r < wd.mpi->size; r++) {
			MPI_Cancel(&wd.rreq[r - 1]);
			MPI_Wait(&wd.rreq[r - 1], MPI_STATUS_IGNORE);
		}
		free(wd.last_armed);
		free(wd.last_done);
		free(wd.rbuf);
		free(wd.rreq);
		free(wd.member);
	}
	json_decref(wd.detail);
	wd.detail = NULL;
	MPI_Barrier(wd.comm);
	MPI_Comm_free(&wd.comm);
}

void watchdog_fault_point(int rank, size_t bytes)
{
	const char *f = getenv("CCPROBE_FAULT");
	unsigned long long min = 0;
	int r;

	if (!f || sscanf(f, "hang:%d:%llu", &r, &min) < 1 || r != rank || bytes < min)
		return;
	log_warn("CCPROBE_FAULT: hanging on purpose at %zu bytes", bytes);
	for (;;)
		pause();
}
