/* log.h: logfmt or JSON lines on stderr, and the one incident reporter. */
#ifndef CRONGUARD_LOG_H
#define CRONGUARD_LOG_H

#include <stdarg.h>

enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };
enum log_format { LOG_TEXT = 0, LOG_JSON };

void log_init(enum log_level, enum log_format);
int  log_enabled(enum log_level);
/* Parse "text"/"json"; returns -1 on anything else. */
int log_format_parse(const char *, enum log_format *);

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
/* Shorthand: one "msg" field, printf-formatted. */
void log_msg(enum log_level, const char *event, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * The incident reporter.  Every cleanup failure and every lost-lock or
 * lost-lease condition goes through incident_report(), nowhere else: it
 * logs at error level with the stable event name and, when an alert URL is
 * configured, POSTs the incident as JSON directly with libcurl (never
 * through the database or the outbox, which may be what failed).
 *
 * The run record is the caller's business (it may be unreachable); the
 * caller passes run_id so the log line and alert identify it.
 */
struct incident {
	const char        *event;  /* lock_lost, lock_release_failed, ... */
	const char        *job;    /* job or lock owner name, or NULL */
	const char        *lock;   /* lock name, or NULL */
	unsigned long long run_id; /* 0 if none */
	unsigned long      connection_id; /* 0 if none */
	const char        *detail;        /* human-readable why, or NULL */
};

/* A sink receives every incident after it is logged (tests install one). */
typedef void (*incident_sink_fn)(const struct incident *, void *arg);
void incident_set_sink(incident_sink_fn, void *arg);
/* Alert channel: url NULL disables; timeout in milliseconds. */
void incident_set_alert(const char *url, long timeout_ms);
void incident_report(const struct incident *);
/* Number of incidents reported by this process so far. */
unsigned incident_count(void);

#endif
