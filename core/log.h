#ifndef CCDIAG_LOG_H
#define CCDIAG_LOG_H

/*
 * Logging to stderr, each line prefixed "host:rank: ". Call log_init once the
 * MPI context is known; before that the prefix is "ccprobe: ".
 */
enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

void log_init(const char *host, int rank);
void log_set_level(enum log_level level);
enum log_level log_get_level(void);
void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
