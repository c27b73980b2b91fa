/*
 * core/spawn.c: posix_spawn of the commands ccdiag and the probes run (spawn.h).
 */
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define CAPTURE_MAX (1 << 20)

int spawn_status(int w)
{
	if (WIFEXITED(w))
		return WEXITSTATUS(w);
	if (WIFSIGNALED(w))
		return 128 + WTERMSIG(w);
	return -1;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

struct buf {
	char *s;
	size_t n;
};

static int drain(int fd, struct buf *b)
{
	char tmp[4096];
	ssize_t r = read(fd, tmp, sizeof(tmp));

	if (r <= 0)
		return r < 0 && errno == EINTR ? 1 : 0;
	if (b->n + r <= CAPTURE_MAX) {
		char *s = realloc(b->s, b->n + r + 1);

		if (!s)
			return 0;
		b->s = s;
		memcpy(b->s + b->n, tmp, r);
		b->n += r;
		b->s[b->n] = '\0';
	}
	return 1;
}

/* the child starts with the default dispositions and no blocked signal; flags: more of them */
static void default_signals(posix_spawnattr_t *at, short flags)
{
	sigset_t none, dfl;

	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGINT);
	sigaddset(&dfl, SIGTERM);
	sigaddset(&dfl, SIGPIPE);
	posix_spawnattr_setsigmask(at, &none);
	posix_spawnattr_setsigdefault(at, &dfl);
	posix_spawnattr_setflags(at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | flags);
}

/* spawn_capture, _in and _group: group 1 runs argv in a process group of its own; stdin from in_path */
static int capture(char *const argv[], const char *in_path, char **out, char **errout, double timeout_s,
		   int group, int *timed_out)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	int po[2], pe[2], w = 0, rc, killed = 0;
	pid_t pid;
	struct buf bo = { 0 }, be = { 0 };
	struct pollfd fds[2];
	double end = now_s() + timeout_s, term_at = 0;

	if (timed_out)
		*timed_out = 0;
	if (pipe2(po, O_CLOEXEC))
		return -1;
	if (pipe2(pe, O_CLOEXEC)) {
		close(po[0]);
		close(po[1]);
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	posix_spawn_file_actions_addopen(&fa, 0, in_path, O_RDONLY | O_NOFOLLOW, 0);
	posix_spawn_file_actions_adddup2(&fa, po[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
	if (group) {
		/* the caller's blocked signals (ccprobe blocks SIGTERM for its watchdog) are not the child's */
		posix_spawnattr_setpgroup(&at, 0);
		default_signals(&at, POSIX_SPAWN_SETPGROUP);
	}
	rc = posix_spawnp(&pid, argv[0], &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(po[1]);
	close(pe[1]);
	if (rc) {
		close(po[0]);
		close(pe[0]);
		errno = rc;
		return -1;
	}
	fds[0] = (struct pollfd){ po[0], POLLIN, 0 };
	fds[1] = (struct pollfd){ pe[0], POLLIN, 0 };
	while (fds[0].fd >= 0 || fds[1].fd >= 0) {
		int ms = -1;

		if (timeout_s > 0) {
			double t = now_s();

			if (!group && t >= end) {
				kill(pid, SIGKILL);
				break;
			}
			if (group && t >= end && !killed) {
				/* the group: what argv started (a shell's children) goes too */
				kill(-pid, SIGTERM);
				killed = 1;
				term_at = t;
				if (timed_out)
					*timed_out = 1;
			}
			if (group && killed && t >= term_at + 2) {
				kill(-pid, SIGKILL);
				break;
			}
			ms = (int)(((killed ? term_at + 2 : end) - t) * 1000) + 1;
		}
		if (poll(fds, 2, ms) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++)
			if (fds[i].fd >= 0 && fds[i].revents && !drain(fds[i].fd, i ? &be : &bo)) {
				close(fds[i].fd);
				fds[i].fd = -1;
			}
	}
	for (int i = 0; i < 2; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	while (waitpid(pid, &w, 0) < 0 && errno == EINTR)
		;
	if (out)
		*out = bo.s ? bo.s : strdup("");
	else
		free(bo.s);
	if (errout)
		*errout = be.s ? be.s : strdup("");
	else
		free(be.s);
	return spawn_status(w);
}

int spawn_capture(char *const argv[], char **out, char **errout, int timeout_s)
{
	return capture(argv, "/dev/null", out, errout, timeout_s, 0, NULL);
}

int spawn_capture_in(char *const argv[], const char *in_path, char **out, char **errout, int timeout_s)
{
	return capture(argv, in_path, out, errout, timeout_s, 0, NULL);
}

int spawn_capture_group(char *const argv[], char **out, char **errout, double timeout_s,
			int *timed_out)
{
	return capture(argv, "/dev/null", out, errout, timeout_s, 1, timed_out);
}

pid_t spawn_logged(char *const argv[], const char *log_path, int setsid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	pid_t pid;
	int rc;

	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (log_path) {
		posix_spawn_file_actions_addopen(&fa, 1, log_path,
						 O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW, 0644);
		posix_spawn_file_actions_adddup2(&fa, 1, 2);
	}
	default_signals(&at, setsid ? POSIX_SPAWN_SETSID : 0);
	rc = posix_spawnp(&pid, argv[0], &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (rc) {
		errno = rc;
		return -1;
	}
	return pid;
}

int spawn_wait(pid_t pid)
{
	int w;

	while (waitpid(pid, &w, 0) < 0)
		if (errno != EINTR)
			return -1;
	return spawn_status(w);
}
