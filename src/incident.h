/* incident.h: the one incident reporter (cronguard(1), GUARDED JOBS). */
#ifndef CRONGUARD_INCIDENT_H
#define CRONGUARD_INCIDENT_H

/*
 * The incident reporter.  Every cleanup failure and every lost-lock or
 * lost-lease condition goes through incident_report(), nowhere else: it
 * logs at error level with the stable event name and, when an alert URL is
 * configured, POSTs the incident as JSON directly with libcurl, over http
 * or https only (never through the database or the outbox, which may be
 * what failed).
 *
 * The run record is the caller's business (it may be unreachable); the
 * caller passes run_id so the log line and alert identify it.
 */
struct incident {
	const char        *event;   /* lock_lost, lock_release_failed, ... */
	const char        *job;     /* job or lock owner name, or NULL */
	const char        *lock;    /* lock name, or NULL */
	const char        *channel; /* outbox channel name, or NULL */
	unsigned long long run_id;  /* 0 if none */
	unsigned long      connection_id; /* 0 if none */
	const char        *detail;        /* human-readable why, or NULL */
};

/* A sink receives every incident after it is logged (tests install one). */
typedef void (*incident_sink_fn)(const struct incident *, void *arg);
void incident_set_sink(incident_sink_fn, void *arg);
/* Alert channel: url NULL disables; timeout in milliseconds.  Waits for
 * the alerts in flight first (incident_flush). */
void incident_set_alert(const char *url, long timeout_ms);
/* Log the incident, give it to the sink, and start its alert POST in the
 * background: it returns without waiting for the alert endpoint, so that
 * what the incident calls for (terminating a job) comes first. */
void incident_report(const struct incident *);
/* Wait for every alert POST still in flight, each for at most the alert
 * timeout (they run side by side); the command layer calls it before the
 * process exits. */
void incident_flush(void);

#endif
