/*
 * jobcheck.h: jobs check's verdict on one job, from its run records
 * (runs.h), its lock (lock.h) and its schedule (cronguard(1), jobs check
 * and "Schedules").  The writers are report.h's.
 */
#ifndef CRONGUARD_JOBCHECK_H
#define CRONGUARD_JOBCHECK_H

#include "check.h"
#include "conf.h"
#include "db.h"
#include "lock.h"
#include "runs.h"
#include "schedule.h"
#include "util.h"

/* A job's schedule as jobs check judges it (the command layer fills it
 * from the configuration); schedule NULL: the job has none. */
struct job_sched {
	const struct schedule *schedule;
	const char            *timezone;             /* NULL: the server's */
	unsigned               alert_after_failures; /* 0 counts as 1 */
	enum check_status      alert_level;          /* WARNING or CRITICAL */
};

/* The most missed slots jobs check lists, and looks at. */
#define JOBCHECK_MISSED_LISTED 100
#define JOBCHECK_SLOTS_SCANNED 100000

/* What jobs check found about a scheduled job's slots (RFC 3339 text in
 * the job's zone; "" when there is none). */
struct job_slots {
	int  scheduled;                 /* the job has a schedule */
	char latest[TZONE_RFC3339_MAX]; /* the latest slot at or before now */
	char next[TZONE_RFC3339_MAX];   /* the next one */
	int  missed;       /* a missed slot with no success since (CRITICAL) */
	long long nmissed; /* missed slots in the look-back window */
	/* The newest JOBCHECK_MISSED_LISTED of them, newest first. */
	char (*missed_slots)[TZONE_RFC3339_MAX];
	size_t    nlisted;
	int       late; /* the latest slot's first run started after grace */
	long long failed_slots; /* consecutive failed slots, newest first */
	int       ran_twice; /* a slot with more than one success (not acked) */
	int       paused;    /* a pause is in effect */
	int64_t   acked; /* the newest acknowledged slot (UTC seconds); -1 */
	struct slot_state st;
};

/* One job judged for jobs check from its run records and its lock. */
struct job_check {
	const struct conf_job *job;
	enum check_status      status;
	struct buf             msg; /* why, when not OK; "" when OK */
	struct job_summary     js;
	struct lock_holder     holder;
	int                    running; /* a live run is recorded */
	/* once_per: the last completed slot, then the current one. */
	struct run_slot_tally slots[2];
	int                   nslots;
	struct job_slots      sched;       /* schedule */
	enum check_status     sched_level; /* its alert_level */
};

/*
 * Judge a job (cronguard(1), jobs check; cronguard-outbox(7), MONITORING): its
 * last success older than expect_every + grace, a run past max_runtime (+
 * grace: CRITICAL), a run whose session died, a lock that no run of ours
 * accounts for, and the newest finished run when it did not succeed (incident,
 * lock_lost: CRITICAL; failure, timeout, killed, error, abandoned: WARNING).
 * With once_per, the last completed slot and the current one: a completed slot
 * without a success is CRITICAL once grace has passed after its end (WARNING
 * when a later success caught up), a slot with more than one success is a
 * WARNING (ran twice).  With a schedule (sched->schedule): a slot of the
 * look-back window (missed_lookback) after the job's first run whose grace has
 * passed with no run started for it, outside every pause and not at or before
 * an acknowledged slot, is missed: CRITICAL while no success followed it,
 * WARNING once one did (a running or failed slot is never missed);
 * alert_after_failures consecutive failed slots are at alert_level, a slot with
 * two successes not started by run --slot too (ran twice), and a first run that
 * started later than grace after its slot is a WARNING (late); a slot
 * acknowledged with jobs ack is not reported; expect_every and the last failed
 * run's WARNING do not apply.
 *
 * Every job of jobs[0..n) with its schedule scheds[0..n) is judged so,
 * into out[0..n) (jobcheck_free each, also after a failure), from a few
 * statements whatever n (runs_job_summaries,
 * lock_holders_get, runs_slot_states, runs_recent_slots_all,
 * jobctl_slot_marks_all; cronguard(1), jobs check), and a few more for each
 * once_per job.  DB_OK, or the status with *errstr.
 */
enum db_status jobcheck_run_all(struct db *, const struct conf_job **jobs,
    size_t n, const struct job_sched *scheds, struct job_check *out,
    char **errstr);
void           jobcheck_free(struct job_check *);

/* The schedule of conf job j as jobs check judges it, into *s (borrows
 * from j). */
void jobcheck_sched_from_conf(const struct conf_job *j, struct job_sched *s);

/*
 * A paused job is OK whatever its run records say: it is not expected to
 * run (cronguard(1), "jobs pause").  Its message says who paused it; what
 * the run records said follows, so that nothing is hidden.  p not in
 * effect: jc is left as it is.
 */
struct job_pause;
void jobcheck_judge_paused(struct job_check *jc, const struct job_pause *p);

#endif
