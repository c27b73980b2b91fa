#ifndef CCDIAG_PROGRESS_H
#define CCDIAG_PROGRESS_H

/*
 * Progress on stderr, from rank 0 only: on a terminal one line updated in
 * place (a singleton or srun --pty; mpirun hands ranks a pipe for stderr); otherwise a plain line at most every CCPROBE_PROGRESS_EVERY seconds
 * (default 30). Silent under -q.
 */

/* Starts a stage of n steps named what (e.g. "all_reduce float sum"). */
void progress_begin(int rank, int quiet, const char *what, int n);
/* Step k (1..n) is done; detail names it (e.g. "1048576 B"). */
void progress_step(int k, const char *detail);
/* Clears the line on a terminal, before other output to it. */
void progress_clear(void);
/* Ends the stage: clears the line on a terminal. */
void progress_end(void);

#endif
