/*
 * doctor-int.h: what the rooms of "cronguard doctor" share, and nothing
 * else includes.  doctor.c runs the checks in order (the driver, the
 * files, the report); doctor-db.c checks the database server (version,
 * role, indexes, session settings, privileges, migrations);
 * doctor-time.c the time zones jobs name and the clocks; doctor-channels.c
 * probes each channel and the alert URL.  Each check appends results to
 * a doctor_report and prints nothing.
 */
#ifndef CRONGUARD_DOCTOR_INT_H
#define CRONGUARD_DOCTOR_INT_H

#include "check.h"
#include "conf.h"
#include "db.h"
#include "doctor.h"

/* Append one result to r: its status, name, fix (kept unless OK) and
 * finding (printf-style). */
void doctor_add(struct doctor_report *r, enum check_status st, const char *name,
    const char *fix, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* doctor-db.c */
/* The server's flavour and version; 1 when it has SKIP LOCKED. */
int doctor_server(struct db *db, struct doctor_report *r);
/* Whether the server takes writes; 1 when it is read-only. */
int doctor_role(struct db *db, struct doctor_report *r);
/* The schema's migrations against the release's. */
void doctor_migrations(struct db *db, struct doctor_report *r);
/* The outbox claim's EXPLAIN: it must use its index. */
void doctor_claim_index(struct db *db, const struct conf *c, int read_only,
    struct doctor_report *r);
/* The run records' EXPLAIN: ix_runs_job_done. */
void doctor_runs_index(
    struct db *db, const struct conf *c, struct doctor_report *r);
/* The EXPLAINs of the outbox history's statements. */
void doctor_history_index(struct db *db, struct doctor_report *r);
/* The session's wait_timeout against each guarded job's heartbeat. */
void doctor_timeouts(
    struct db *db, const struct conf *c, struct doctor_report *r);
/* max_allowed_packet against output_max and each channel's max_size. */
void doctor_packet(
    struct db *db, const struct conf *c, struct doctor_report *r);
/* wsrep_on: a named_lock guard is local to one Galera node. */
void doctor_wsrep(struct db *db, const struct conf *c, struct doctor_report *r);
/* The session's transaction isolation. */
void doctor_isolation(struct db *db, struct doctor_report *r);
/* The user's privileges on the schema. */
void doctor_privileges(
    struct db *db, const struct conf *c, struct doctor_report *r);

/* doctor-time.c */
/* The server's time zone and clock against this host's. */
void doctor_clock(const struct conf *c, struct db *db, struct doctor_report *r);
/* Every time zone a job names, where it is read. */
void doctor_timezones(
    struct db *db, const struct conf *c, struct doctor_report *r);

/* doctor-channels.c */
/* One channel's probe: its secrets, then its stages. */
void doctor_channel(
    struct conf *c, const struct conf_channel *ch, struct doctor_report *r);
/* The alert URL's probe. */
void doctor_alert(const struct conf *c, struct doctor_report *r);

#endif
