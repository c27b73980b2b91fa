#ifndef CCDIAG_CORE_SPAWN_H
#define CCDIAG_CORE_SPAWN_H

/*
 * core/spawn.c: starting the commands ccdiag runs (ccprobe --plan, the
 * launchers, ccreport, scontrol, ssh) and those a probe runs (the dcgm
 * probe's dcgmi) with posix_spawn and an argument vector: no shell ever sees
 * a host name, a path or a profile value. Plain C (no MPI).
 */
#include <sys/types.h>

/* the exit status as a shell gives it: the code, or 128 + the signal */
int spawn_status(int wstatus);

/*
 * Runs argv (argv[0] looked up in PATH) with stdin from /dev/null, waits at
 * most timeout_s seconds (0: no limit; then SIGKILL) and returns its status
 * (spawn_status), or -1 when it cannot start. out and errout (may be NULL)
 * get its stdout and stderr, malloc'd and NUL-terminated (at most 1 MiB each).
 */
int spawn_capture(char *const argv[], char **out, char **errout, int timeout_s);

/* the same with stdin from the file in_path (opened without following a link) */
int spawn_capture_in(char *const argv[], const char *in_path, char **out, char **errout, int timeout_s);

/*
 * The same for a command that may hang (a diagnostic): argv runs in a process
 * group of its own with no signal blocked (whatever the caller blocks), and
 * past timeout_s seconds (> 0) the whole group gets SIGTERM, then SIGKILL 2 s
 * later, so what it started dies with it; *timed_out (may be NULL) says so.
 * Returns its status, or -1 with errno (ENOENT: argv[0] is not on PATH).
 */
int spawn_capture_group(char *const argv[], char **out, char **errout, double timeout_s,
			int *timed_out);

/*
 * Starts argv with stdout and stderr appended to log_path (ccdiag's own when
 * NULL) and stdin from /dev/null; in a session of its own when setsid (a
 * terminal's Ctrl-C reaches ccdiag alone). Returns the pid, or -1 with errno.
 */
pid_t spawn_logged(char *const argv[], const char *log_path, int setsid);

/* waits for pid and returns its spawn_status, or -1 */
int spawn_wait(pid_t pid);

#endif
