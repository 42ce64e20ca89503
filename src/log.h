/* log.h: logfmt or JSON lines on stderr (incidents: incident.h). */
#ifndef CRONGUARD_LOG_H
#define CRONGUARD_LOG_H

#include <stdarg.h>

enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };
enum log_format { LOG_TEXT = 0, LOG_JSON };

void log_init(enum log_level, enum log_format);
int  log_enabled(enum log_level);
/* Parse "text"/"json"; returns -1 on anything else. */
int log_format_parse(const char *, enum log_format *);
/* Now in UTC as 2026-11-30T12:00:00.123Z, for log lines and alerts. */
void log_timestamp(char *buf, size_t len);

/*
 * Log one event: level, a stable event name, then key/value string pairs.
 * A pair whose value is NULL is left out.  The macro ends the list itself,
 * so no caller writes a terminator: a bare NULL at the end, or a key
 * without its value, is a compile error (at most 15 pairs).
 *
 *	log_kv(LOG_INFO, "job_skipped", "job", name, "holder", id);
 *
 * Keys must be simple words; values are quoted as logfmt or JSON requires.
 * Never pass a secret as a value.
 */
#define log_kv(level, ...) \
	((void)sizeof(struct { \
		_Static_assert(LOG_KV_ODD(__VA_ARGS__) == 1, \
		    "log_kv: an event name, then key and value pairs, and no " \
		    "terminator"); \
		char c; \
	}), \
	    log_kv_list(level, __VA_ARGS__, (const char *)NULL))
/* 1 when the argument list is odd in length (up to 31 arguments). */
#define LOG_KV_ODD(...) \
	LOG_KV_PICK_(__VA_ARGS__, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, \
	    1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, -1)
#define LOG_KV_PICK_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, \
    a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, \
    a29, a30, a31, a32, n, ...) \
	n
/* What log_kv expands to: the list ends in a NULL pointer (the compiler
 * checks that much); call log_kv instead. */
void log_kv_list(enum log_level, const char *event, ...)
    __attribute__((sentinel));
void log_kvv(enum log_level, const char *event, va_list);

#endif
