#ifndef CCDIAG_WATCHDOG_H
#define CCDIAG_WATCHDOG_H

#include "mpictx.h"
#include "results.h"

#include <jansson.h>

/*
 * The watchdog turns a hang or a signal into a record instead of a frozen
 * job. Every rank runs one thread that
 *  - ends the run when the armed measurement passes its deadline: rank 0
 *    writes a "timeout" record (what, deadline, the ranks and hosts that had
 *    not finished it, and those that never started it) and an end record,
 *    then calls MPI_Abort;
 *  - on SIGINT/SIGTERM writes an "interrupted" end record (rank 0) and aborts.
 * To know who is not done, each rank tells rank 0 when it starts and when it
 * finishes a measurement (4-byte messages on a private communicator,
 * received by rank 0's watchdog thread), which needs MPI_THREAD_MULTIPLE;
 * without it the record says the ranks are unknown.
 */

/* Blocks SIGINT/SIGTERM in the calling thread; call before MPI_Init so every thread inherits it. */
void watchdog_block_signals(void);

/* Starts the thread. res is rank 0's results (NULL elsewhere). Collective. Returns 0 or -1. */
int watchdog_start(struct mpictx *mpi, struct results *res, double timeout_s, double t_start);

/*
 * Arms the deadline for the measurement about to start. what names it;
 * detail (taken) is copied into a timeout record. Every rank must arm and
 * disarm the same measurements in the same order.
 */
void watchdog_arm(const char *what, json_t *detail);

/*
 * The same with a deadline of its own, seconds (> 0) instead of --timeout's,
 * for a measurement known to take long (a DCGM diagnostic of 15 to 90
 * minutes). --timeout 0 still turns every deadline off.
 */
void watchdog_arm_for(const char *what, json_t *detail, double seconds);

/* This rank finished the armed measurement. */
void watchdog_disarm(void);
/*
 * This rank finished its part of the armed measurement but the deadline
 * stays armed until watchdog_disarm: for a measurement whose ranks end at
 * different times and then wait for each other (trainstep's step, then the
 * agreement on it), so that a rank hung in its part is named as not done
 * while rank 0, waiting for it, still fires at the deadline.
 */
void watchdog_done(void);

/*
 * Says which world ranks take part in the measurements that follow (member
 * is [world size], non-zero = takes part; NULL = all), for --scale, where
 * the ranks of the nodes left out wait at a barrier: a timeout then names
 * only members as not done, never a rank that was not asked to run.
 * Collective over MPI_COMM_WORLD; call between measurements, on every rank,
 * with the same member array. Ranks not taking part arm nothing until the
 * next call.
 */
void watchdog_members(const char *member);

/*
 * The deadline of the armed measurement on the timer_now() clock, or 0 when
 * none is armed or --timeout is 0. Lets code that polls a device (the nccl
 * backend) give up at the same moment the watchdog fires.
 */
double watchdog_deadline(void);

/* The per-measurement timeout in seconds (--timeout); 0 = none. */
double watchdog_timeout(void);

/*
 * Registers fn (NULL removes it), called once by the watchdog thread just
 * before it aborts the job on a timeout or signal, so a library can release
 * what a process exit would leave hung (the nccl backend aborts its
 * communicator). fn must return within seconds and must not call MPI.
 */
void watchdog_on_abort(void (*fn)(void));

/* Stops the thread. Collective; call before MPI_Finalize. */
void watchdog_stop(void);

/*
 * Ends the whole job now with exit code code, after the abort hook: for a
 * run that can no longer record (its results file failed). Never returns.
 */
void watchdog_abort(int code) __attribute__((noreturn));

/*
 * Fault injection for tests: when CCPROBE_FAULT is "hang:RANK[:BYTES]", the
 * rank RANK never returns from this call for a measurement of at least BYTES
 * (default 0) bytes, as a hung GPU or host would. Does nothing otherwise.
 */
void watchdog_fault_point(int rank, size_t bytes);

#endif
