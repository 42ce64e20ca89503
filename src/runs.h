/*
 * runs.h: the run records (cronguard_runs; cronguard(1),
 * GUARDED JOBS).  A run
 * is written "running" when the job starts and ends as success, failure,
 * timeout, killed, error, incident or lock_lost when it finishes, or as
 * abandoned when a later cronguard finds its own process died.
 */
#ifndef CRONGUARD_RUNS_H
#define CRONGUARD_RUNS_H

#include "conf.h"
#include "db.h"
#include "check.h"
#include "schedule.h"
#include "util.h"

struct run_start_info {
	const char        *job;
	const char        *lock; /* NULL without a named lock */
	const char        *host;
	long               pid;
	unsigned long long connection_id; /* 0 without a named lock */
	unsigned long long fence;         /* 0 without a lock */
	const char        *uuid;          /* run_uuid (ping rid=); NULL none */
	/* The slot the run is for, UTC "YYYY-MM-DD hh:mm:ss", and why it
	 * runs ("schedule", "catch_up", "manual"); NULL: no schedule.  For
	 * every kind but "manual" the record is written only when the slot
	 * has no successful run yet (*id is then 0). */
	const char *slot;
	const char *slot_kind;
	/* The schedule's slot before slot, UTC as slot: the record's
	 * slot_flags (RUNS_FLAG_*) are written only when it is given. */
	const char *slot_prev;
};

/* slot_flags (sql/016), written with a run for a slot and its slot_prev:
 * the slot before had no run (a gap ends at this run; slot_gap_from the
 * newest slot before it with a run), the run started while a run of its
 * slot, not a manual one, was running or had succeeded (a manual run
 * never sets it), ... */
#define RUNS_FLAG_GAP 1
#define RUNS_FLAG_TWICE 2
/* ... and a run of the job was there for a later slot (a catch-up in an
 * older gap). */
#define RUNS_FLAG_FILL 4

/* A command job's captured output, for the run record. */
struct run_output {
	const char        *data; /* the tail kept: len bytes, may hold NUL */
	size_t             len;
	unsigned long long total; /* bytes the job wrote in all */
};

/* How the job ended, for the run record. */
struct run_end {
	const char *outcome;             /* success, failure, timeout, ... */
	int         exit_status;         /* the job's own status; -1 none */
	const char *error;               /* the job's error, or NULL */
	const struct run_output *output; /* NULL: not captured */
};

/*
 * The statements over one session; the real lock_db_ops use them.  Each
 * returns a db_status and on failure sets *errstr (allocated).
 */
/* INSERT a run record, outcome "running"; *id its id.  The connection id
 * is the session's own (CONNECTION_ID()) when ri->connection_id is not 0.
 * Closes the job's abandoned runs first (runs_abandon; a failure there is
 * logged only). */
enum db_status runs_insert(struct db *, const struct run_start_info *ri,
    unsigned long long *id, char **errstr);
/* heartbeat_at = NOW(6) */
enum db_status runs_heartbeat(
    struct db *, unsigned long long id, char **errstr);
/* The most output a run record can carry on a server whose
 * max_allowed_packet is pkt: escaped, a byte takes at most two, and the
 * statement around it stays under 64 KiB.  0: none.  runs_finish cuts a
 * longer output to its newest bytes (output_bytes keeps the whole count,
 * the visible marker). */
size_t runs_output_room(unsigned long long pkt);
/* @@SESSION.max_allowed_packet into *pkt. */
enum db_status runs_max_packet(
    struct db *, unsigned long long *pkt, char **errstr);

/* finished_at = NOW(6), outcome, exit_status (-1: NULL), error (NULL),
 * output and output_bytes (output NULL: both NULL, not captured). */
enum db_status runs_finish(struct db *, unsigned long long id,
    const char *outcome, int exit_status, const char *error,
    const struct run_output *output, char **errstr);

/*
 * What the run records say about one job, for jobs list, jobs check and
 * locks (database clock throughout).  Strings are allocated or NULL;
 * numbers -1 when unknown or absent.
 */
struct job_summary {
	char              *last_success; /* finished_at of the last success */
	double             last_success_ts; /* as Unix time; -1 never */
	long long          last_success_age_s;
	unsigned long long last_id; /* the newest run; 0 none */
	char              *last_outcome;
	char              *last_started;
	long long          last_age_s; /* since it started */
	char              *last_finished;
	long long          last_exit_status;
	unsigned long long last_connection_id; /* 0 none */
	int                last_session_alive; /* its session is in the
	                                        * process list: 1, 0; -1
	                                        * unknown or not running */
	/* The newest run that is not running any more. */
	unsigned long long done_id; /* 0 none */
	char              *done_outcome;
	char              *done_finished;
	unsigned long long last_fence; /* the newest run's token; 0 none */
};
/*
 * Close the runs of job left "running" by a cronguard that died: the run's
 * session is not in the process list and does not hold its lock (a live
 * run holds it on that session from before its record is written until
 * after).  They become "abandoned", finished_at the time they were found,
 * error naming the session, the lock and who found them (a warning
 * run_abandoned is logged).  *n is how many.  Runs without a named lock
 * cannot be judged this way and are left alone.
 */
enum db_status runs_abandon(
    struct db *, const char *job, unsigned long long *n, char **errstr);

/* The newest finished run of the job named by the SQL expression job:
 * one entry of ix_runs_job_done (sql/013), which doctor's runs_index
 * check EXPLAINs. */
#define RUNS_DONE_OF(job) \
	"SELECT y.id FROM cronguard_runs y WHERE y.job = " job \
	" AND y.done = 1 ORDER BY y.id DESC LIMIT 1"
/* The summaries of jobs[0..n) into js[0..n) (runs_job_summary_free
 * each), each job's abandoned runs closed first (a failure is logged,
 * not returned): two statements whatever n, and one more for each job
 * with a run to close as abandoned, which is rare. */
enum db_status runs_job_summaries(struct db *, const char *const *jobs,
    size_t n, struct job_summary *js, char **errstr);
void           runs_job_summary_free(struct job_summary *);

/*
 * once_per: the database clock's time is cut into slots aligned to the
 * period in time zone tz (NULL: the server's @@global.time_zone): a
 * period that divides a day counts from local midnight, whole days from
 * a fixed day, so a day of 23 or 25 hours is still one slot.  Times are
 * the session's (UTC), as in cronguard_runs.
 */
struct run_slot {
	char              *start;      /* the current slot's start */
	char              *end;        /* and the next one's */
	unsigned long long done_id;    /* the first success started in it; 0 */
	int                tz_unknown; /* the server does not know tz */
	int                tz_tables;  /* its time-zone tables are loaded */
};
/* Fill *rs for job's slot at now (at NULL) or at "YYYY-MM-DD hh:mm:ss"
 * (UTC, for tests).  DB_OK (look at tz_unknown), or the status with
 * *errstr.  Free with runs_slot_free. */
enum db_status runs_slot(struct db *, const char *job, int64_t once_per_ms,
    const char *tz, const char *at, struct run_slot *rs, char **errstr);
void           runs_slot_free(struct run_slot *);

/*
 * schedule: what the guard needs to pick a job's slot, read in one
 * statement on the lock session (cronguard.conf(5), "Schedules").  Times
 * are Unix seconds by the database clock.
 */
struct slot_state {
	int64_t now_us;       /* NOW(6), microseconds */
	int64_t last_success; /* the latest slot with a success; -1 none */
	int64_t first_run;    /* the slot (or start) of the first run; -1 */
	char   *server_zone;  /* the zone the server's clock is in: a name
	                       * or "+hh:mm" offset (SYSTEM resolved) */
	int server_system;    /* server_zone is SYSTEM's abbreviation */
	/* The pause in effect (the job's own or "*"), else pause_job NULL. */
	char *pause_job;
	char *paused_by;
	char *paused_at; /* UTC "YYYY-MM-DD hh:mm:ss" */
	char *reason;    /* NULL: none given */
	char *until;     /* UTC; NULL: until resumed */
	/* The end of the latest pause that ended (resumed or expired), Unix
	 * seconds rounded up; -1 none. */
	int64_t pause_ended;
	int64_t top; /* the newest slot with a run (ix_runs_job_slot_at); -1 */
};
/* Fill *st for job.  DB_OK, or the status with *errstr.  Free with
 * runs_slot_state_free. */
enum db_status runs_slot_state(
    struct db *, const char *job, struct slot_state *st, char **errstr);
void runs_slot_state_free(struct slot_state *);
/* runs_slot_state for jobs[0..n) into st[0..n), in one statement. */
enum db_status runs_slot_states(struct db *, const char *const *jobs, size_t n,
    struct slot_state *st, char **errstr);
/* The zone of a job's slots: tz (its timezone), else the server's from
 * st when it is known by name (tzone_open_server: never a fixed offset
 * guessed from an abbreviation).  0 and *z (tzone_free), or -1 with
 * *errstr. */
int runs_slot_zone(const char *tz, const struct slot_state *st,
    struct tzone **z, char **errstr);

/* The lock names of the runs recorded as running, one per row, sorted:
 * every named lock a cronguard holds, configured or not (exec --lock). */
enum db_status runs_locks(struct db *, struct db_result **res, char **errstr);

/*
 * The successful runs of one once_per slot [start, end), for jobs check.
 * Times are the session's (UTC); numbers by the database clock.
 */
struct run_slot_tally {
	char              *start;
	char              *end;
	long long          successes; /* runs that succeeded, by start */
	unsigned long long first_id;  /* the first and the last of them; 0 */
	unsigned long long last_id;
	long long          since_end_ms; /* NOW(6) - end; < 0 while it lasts */
	int                had_runs; /* a run of the job started before end */
	unsigned long long caught_up_id; /* first success since end; 0 */
};
/* Tally job's successes that started in [start, end).  DB_OK or the
 * status with *errstr.  Free with runs_slot_tally_free. */
enum db_status runs_slot_tally(struct db *, const char *job, const char *start,
    const char *end, struct run_slot_tally *, char **errstr);
void           runs_slot_tally_free(struct run_slot_tally *);

/* jobs list: a scheduled job's latest and next slot (RFC 3339 in its
 * zone) and whether the latest has a success. */
struct job_slot_info {
	char latest[TZONE_RFC3339_MAX];
	char next[TZONE_RFC3339_MAX];
	int  latest_done;
};
/* Fill *si for a job with schedule in zone tz (NULL: the server's) from
 * its slot state (runs_slot_states); a zone that cannot be told leaves
 * the slots empty.  The zone stays held in *held (tzone_hold) for the
 * next job's; tzone_release(*held) after the last. */
void runs_slot_info_of(const struct slot_state *,
    const struct schedule *schedule, const char *tz, struct job_slot_info *si,
    struct tzone_held **held);

/* One slot's runs, for jobs check's schedule alerts. */
struct runs_slot_row {
	int64_t   slot;
	long long successes, failures;
	long long launched; /* successes not started by run --slot (manual) */
	int64_t   first_start; /* the first run's start */
	int       acked;
};
/* One job's recent slots (runs_recent_slots_all): rows (free with
 * runs_recent_free) of n; truncated 1 when the job has more runs than
 * max (an older slot may have runs not read); max the runs read. */
struct runs_recent {
	struct runs_slot_row *rows;
	size_t                n;
	int                   truncated;
	size_t                max;
};
/* The most of a job's latest runs read for its recent slots. */
#define RUNS_RECENT_RUNS 2000
/* The most read in one query block for every job (runs_recent_slots_all);
 * more, a SELECT per job. */
#define RUNS_RECENT_JOINED 16
/* For jobs[0..n): the slots that have runs among job i's latest max[i]
 * runs (at most RUNS_RECENT_RUNS; ix_runs_job; when none asks more than
 * RUNS_RECENT_JOINED, the most any asks, for every job), newest first,
 * with the acks of each, in one statement: out[i]
 * (runs_recent_free each).  DB_OK, or the status with *errstr. */
enum db_status runs_recent_slots_all(struct db *, const char *const *jobs,
    const size_t *max, size_t n, struct runs_recent *out, char **errstr);
void           runs_recent_free(struct runs_recent *);

/* A flagged run of a job's window (runs_flagged_all). */
struct runs_flagged_row {
	int64_t  slot;
	unsigned flags;     /* RUNS_FLAG_* */
	int64_t  gap_from;  /* the newest slot before it with a run when it
	                       started (slot_gap_from); -1 none */
	long long launched; /* its slot's successes not started manually;
	                       counted for RUNS_FLAG_TWICE only, else 0 */
	int acked;          /* its slot is acknowledged */
};
/* One job's flagged runs since a time (runs_flagged_all), newest first:
 * rows (free with runs_flagged_free) of n; top the newest slot with a
 * run (-1: none), which runs_flagged_all leaves to its caller (the slot
 * state has it); unknown 1 when a run since then has no flags (written
 * before sql/016, or by hand): its runs must be read one by one. */
struct runs_flagged {
	struct runs_flagged_row *rows;
	size_t                   n;
	int64_t                  top;
	int                      unknown;
};
/* For jobs[0..n): job i's flagged runs for slots since since[i] (UTC
 * seconds), in one statement (ranges of ix_runs_flags, never the
 * unflagged runs): out[i].  DB_OK, or the status with *errstr. */
enum db_status runs_flagged_all(struct db *, const char *const *jobs,
    const int64_t *since, size_t n, struct runs_flagged *out, char **errstr);
void           runs_flagged_free(struct runs_flagged *);

/* ------------------------------------------- run history (jobs runs) */

/* The columns of runs_list, in order. */
#define RUNS_LIST_COLUMNS \
	"id, job, host, pid, started_at, finished_at, duration_ms, outcome," \
	" exit_status, fence, run_uuid, output_bytes, slot, slot_kind"
/* The runs of job (NULL: every job), newest first, at most limit, in
 * *res (RUNS_LIST_COLUMNS; duration_ms runs to NOW(6) while a run is
 * running).  DB_OK or the status with *errstr. */
enum db_status runs_list(struct db *, const char *job, unsigned limit,
    struct db_result **res, char **errstr);

/* The columns of runs_get, in order: RUNS_LIST_COLUMNS, then these. */
#define RUNS_GET_COLUMNS \
	RUNS_LIST_COLUMNS ", lock_name, connection_id, heartbeat_at, error," \
	                  " output_length, output"
/* Run id with every column (RUNS_GET_COLUMNS; output is bytes, its
 * length in res->lengths) in *res: no row when there is no such run. */
enum db_status runs_get(
    struct db *, unsigned long long id, struct db_result **res, char **errstr);

/*
 * Retention.  Neither ever deletes a running run, nor a job's newest
 * successful run: once_per, jobs check and jobs list read it.
 * runs_purge deletes the runs that started and finished more than
 * before_ms ago, in statements of RUNS_DELETE_BATCH rows, *n in all.
 * runs_prune deletes job's runs beyond its newest keep (keep_runs), one
 * statement of at most RUNS_DELETE_BATCH rows (the oldest), *n of them:
 * run after every run, it keeps up; keep 0 deletes nothing.
 */
#define RUNS_DELETE_BATCH 1000
enum db_status runs_purge(
    struct db *, int64_t before_ms, unsigned long long *n, char **errstr);
enum db_status runs_prune(struct db *, const char *job, unsigned keep,
    unsigned long long *n, char **errstr);

/* The fencing tokens of locks names[0..n), in one statement: held[i] the
 * token of run run_ids[i] (0 for none), last[i] the last one issued for
 * names[i] (cronguard_leases; 0 none). */
enum db_status runs_lock_fences(struct db *, const char *const *names,
    const unsigned long long *run_ids, size_t n, unsigned long long *held,
    unsigned long long *last, char **errstr);

#endif
