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
 * Log one event: level, a stable event name, then key/value string pairs
 * terminated by NULL.  A pair whose value is NULL is left out.
 *
 *	log_kv(LOG_INFO, "job_skipped", "job", name, "holder", id, NULL);
 *
 * Keys must be simple words; values are quoted as logfmt or JSON requires.
 * Never pass a secret as a value.
 */
void log_kv(enum log_level, const char *event, ...) __attribute__((sentinel));
void log_kvv(enum log_level, const char *event, va_list);

#endif
