/*
 * jobctl.h: the operator's control of jobs across the fleet (cronguard(1),
 * "jobs pause", "jobs resume", "jobs ack"): pauses in
 * cronguard_job_pauses, acknowledgements in cronguard_job_acks.  Times
 * are the session's (UTC) and "now" is the database clock, never the
 * host's.  Statements only: nothing here prints or exits; each call
 * returns a db_status and on failure sets *errstr (allocated).
 */
#ifndef CRONGUARD_JOBCTL_H
#define CRONGUARD_JOBCTL_H

#include <stddef.h>
#include <stdint.h>

#include "db.h"

/* The job of the row that pauses every job (jobs pause --all), also the
 * jobs configured only on other hosts. */
#define JOBCTL_ALL "*"
/* The longest --reason, in bytes (the columns hold 1024 characters). */
#define JOBCTL_REASON_MAX 1024

/*
 * The pause rows in effect for one job, for a statement of the caller's
 * (the slot statement of run): a condition over cronguard_job_pauses
 * whose one %s is the job's name, given to db_format like any value.
 * A row is in effect until its until_at (NULL: until jobs resume) by the
 * database clock; the job's own row and the JOBCTL_ALL row both pause it.
 *
 *	JOBCTL_PAUSED_SQL	"EXISTS (...)": 1 when the job is paused,
 *				else 0; e.g.
 *	    db_query(db, &r, &e, "SELECT ..., " JOBCTL_PAUSED_SQL, ..., job)
 *	JOBCTL_PAUSE_COL_SQL(col)	one column of the pause in effect
 *				("paused_by", "reason", "until_at",
 *				"paused_at", "job"), NULL when there is none;
 *				the row is the one jobctl_pause_get returns.
 *
 * Every use takes its own %s argument (the job).  The _OF forms take the
 * job as an SQL expression instead (a column of an outer table, for a
 * statement over many jobs).
 */
#define JOBCTL_PAUSE_WHERE_OF(job) \
	"job IN (" job ", '" JOBCTL_ALL "') AND (until_at IS NULL OR" \
	" until_at > NOW(6))"
#define JOBCTL_PAUSE_WHERE_SQL JOBCTL_PAUSE_WHERE_OF("%s")
/* The pause that holds longest first: no end, then the latest end, then
 * the job's own row before the JOBCTL_ALL one. */
#define JOBCTL_PAUSE_ORDER_SQL \
	"ORDER BY until_at IS NULL DESC, until_at DESC, job = '" JOBCTL_ALL "'"
#define JOBCTL_PAUSED_SQL \
	"EXISTS (SELECT 1 FROM cronguard_job_pauses WHERE " JOBCTL_PAUSE_WHERE_SQL \
	")"
#define JOBCTL_PAUSE_COL_OF(col, job) \
	"(SELECT " col \
	" FROM cronguard_job_pauses WHERE " JOBCTL_PAUSE_WHERE_OF( \
	    job) " " JOBCTL_PAUSE_ORDER_SQL " LIMIT 1)"
#define JOBCTL_PAUSE_COL_SQL(col) JOBCTL_PAUSE_COL_OF(col, "%s")

/* The indexes among the names of ni that a pause or mark row of job
 * covers: [*lo, *hi), the job's own, every one for JOBCTL_ALL, none for
 * another name. */
struct name_index;
void jobctl_covers(
    const struct name_index *ni, const char *job, size_t *lo, size_t *hi);

/* A pause row.  Strings allocated (jobctl_pause_free) or NULL. */
struct job_pause {
	int   paused;    /* 1: a pause is in effect, the rest is filled */
	char *job;       /* the row's job: the job's own name or JOBCTL_ALL */
	char *paused_at; /* "YYYY-MM-DD hh:mm:ss.uuuuuu", UTC */
	char *paused_by; /* "user@host:pid" */
	char *reason;    /* NULL: none given */
	char *until_at;  /* NULL: until jobs resume */
};
void jobctl_pause_free(struct job_pause *);

/* "user@host:pid" of this process (static storage): paused_by, acked_by. */
const char *jobctl_identity(void);

/*
 * Pause the n jobs (JOBCTL_ALL: every job) in one statement, replacing a
 * pause they have: paused_at now, paused_by jobctl_identity(), reason
 * (NULL: none), until now + for_ms (0: until jobs resume).  The ended
 * rows of other jobs stay (their history, jobctl_slot_marks_all); a paused
 * job's own ended row is replaced.  *out (may be NULL) is the first
 * job's new row.
 */
enum db_status jobctl_pause(struct db *, const char *const *jobs, size_t n,
    int64_t for_ms, const char *reason, struct job_pause *out, char **errstr);

/* Resume job (JOBCTL_ALL: the --all row only): end its row (until_at
 * now).  *was 1
 * when it was paused (a row in effect), 0 when not: not an error. */
enum db_status jobctl_resume(
    struct db *, const char *job, int *was, char **errstr);
/* Resume every job: end every row in effect, JOBCTL_ALL's too; *n how
 * many.  A resumed row stays, ended (until_at now), for jobctl_paused_at;
 * the next pause of the job replaces it. */
enum db_status jobctl_resume_all(
    struct db *, unsigned long long *n, char **errstr);
/* What excuses a slot of job from being missed (jobs check): its pauses
 * (its own row and JOBCTL_ALL's, resumed since or not; Unix seconds,
 * until -1 for none) and its newest acknowledged slot (-1 for none). */
struct jobctl_span {
	int64_t from, until;
};
struct jobctl_marks {
	struct jobctl_span pauses[2];
	size_t             npauses;
	int64_t            acked; /* the newest acknowledged slot; -1 */
};
/* Fill m[0..n) for jobs[0..n), in one statement.  DB_OK, or the status
 * with *errstr. */
enum db_status jobctl_slot_marks_all(struct db *, const char *const *jobs,
    size_t n, struct jobctl_marks *m, char **errstr);
/* Whether instant t (a slot) fell in one of m's pauses: 1 or 0. */
int jobctl_marks_paused(const struct jobctl_marks *m, int64_t t);

/* The pause in effect for job (its own row or the JOBCTL_ALL row, the
 * one that holds longest), or out->paused 0.  Free with
 * jobctl_pause_free. */
enum db_status jobctl_pause_get(
    struct db *, const char *job, struct job_pause *out, char **errstr);
/* The same for jobs[0..n) into out[0..n) (jobctl_pause_free each), in one
 * statement. */
enum db_status jobctl_pause_get_all(struct db *, const char *const *jobs,
    size_t n, struct job_pause *out, char **errstr);

/* Every pause in effect, by job (JOBCTL_ALL first): *out an array of *n
 * (free each, then the array; NULL when none). */
enum db_status jobctl_pause_list(
    struct db *, struct job_pause **out, size_t *n, char **errstr);

/*
 * An operator's time for a slot of a job whose slots are in zone z (see
 * jobctl_slot_zone): tzone_parse's forms (RFC 3339 with any offset or Z,
 * or a local "YYYY-MM-DD HH:MM[:SS]" in z), the rule of cronguard(1),
 * "Slot times".  With a schedule s, the time must be one of its slots
 * (NULL: any whole second).  0 with *t and UTC "YYYY-MM-DD hh:mm:ss" in
 * out (JOBCTL_SLOT_MAX), or -1 with *errstr (allocated; for a time that
 * is no slot, naming the slots around it).
 */
#define JOBCTL_SLOT_MAX 20
struct tzone;
struct schedule;
int jobctl_slot_parse(const struct tzone *z, const struct schedule *s,
    const char *text, int64_t *t, char *out, size_t len, char **errstr);
/*
 * The zone of job's slots: tz (its timezone), else the database server's
 * (one statement).  DB_OK with *z (tzone_free), DB_OK with *z NULL and
 * *errstr when the server's zone cannot be told (a configuration error),
 * or the status with *errstr.
 */
enum db_status jobctl_slot_zone(struct db *, const char *job, const char *tz,
    struct tzone **z, char **errstr);

/* Acknowledge job's slot (UTC): acked_by jobctl_identity(), reason (not
 * NULL).  A second ack of the slot replaces the first's who and why. */
enum db_status jobctl_ack(struct db *, const char *job, const char *slot_utc,
    const char *reason, char **errstr);
/* The latest slot of job with a run that failed (finished, not success):
 * *slot allocated "YYYY-MM-DD hh:mm:ss.uuuuuu", NULL when there is none. */
enum db_status jobctl_failed_slot(
    struct db *, const char *job, char **slot, char **errstr);

#endif
