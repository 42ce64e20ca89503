/* guard.h: run one job under its guard (cronguard(1), GUARDED JOBS). */
#ifndef CRONGUARD_GUARD_H
#define CRONGUARD_GUARD_H

#include <stdint.h>

#include "conf.h"
#include "lock.h"
#include "output.h"

/* After SIGTERM (timeout, lost lock), SIGKILL follows this much later. */
#define GUARD_KILL_AFTER_MS 10000

struct schedule;

struct guard_job {
	const char       *job;  /* job name (exec: the lock name) */
	char *const      *argv; /* command, NULL-terminated; or NULL */
	const char       *sql;  /* or an SQL statement */
	enum guard_kind   guard;
	const char       *lock;        /* lock name (named lock, lease, auto) */
	const char       *runtime_dir; /* for the local flock */
	int64_t           max_runtime_ms;
	int64_t           grace_ms;
	int64_t           timeout_ms; /* 0: none */
	int64_t           heartbeat_ms;
	int64_t           lease_ms;      /* GUARD_LEASE, GUARD_AUTO */
	int64_t           kill_after_ms; /* GUARD_KILL_AFTER_MS */
	enum on_lock_lost on_lock_lost;
	int               busy_exit;
	int64_t           once_per_ms; /* 0: every launch runs */
	const char       *timezone;    /* of the slots; NULL: the server's */
	unsigned          keep_runs;   /* runs kept after a run; 0: all */
	enum output_mode  output;      /* command jobs; SQL jobs print none */
	size_t            output_max;  /* 0: OUTPUT_MAX_DEFAULT */
	const char       *ping_url;    /* NULL: no pings */
	/* schedule: once per slot (NULL: every launch runs, or once_per) */
	const struct schedule *schedule;
	enum catch_up          catch_up;
	unsigned               backfill_limit;       /* catch_up "all" */
	int64_t                starting_deadline_ms; /* catch_up "none" */
	const char            *slot_arg; /* run --slot: that slot only */
	int pausable; /* a configured job: jobs pause stops it (not exec) */
};

/* The guard_job of configured job j of c (borrowing from both): run
 * and jobs list describe a job the one way. */
void guard_job_from_conf(
    struct guard_job *gj, const struct conf *c, const struct conf_job *j);

/* What a run leaves for the command layer, which prints the output. */
struct guard_result {
	int ran;      /* the job was started */
	int failed;   /* ...and the exit code is not 0: it failed, timed
	               * out, was killed or had a lock incident */
	int captured; /* output holds the tail of its stdout and stderr */
	struct output output;
};
void guard_result_free(struct guard_result *);

/*
 * Run gj under its three layers: the local flock in runtime_dir (unless
 * guard is "none"), the database lock (GUARD_NAMED_LOCK; GUARD_LEASE;
 * GUARD_AUTO: the named lock, or the lease on a Galera node) and the run
 * record
 * in cronguard_runs, all through ops/ctx (NULL ops: no database, no run
 * record; only valid without a database lock).  Returns the exit code of
 * cronguard(1), EXIT STATUS: the job's own status when it ran without an
 * incident, 0 or busy_exit when skipped (the lock busy, or once_per: a
 * successful run already started in the current slot; 0 for a pausable job
 * paused by jobs pause, whatever its kind), 75, 76, 69, 78, 124, 126, 127.
 *
 * A command job's stdout and stderr go into one pipe (its writes stay in
 * order) unless gj->output is OUTPUT_INHERIT; the last output_max bytes
 * are kept in the run record (output, output_bytes) and handed back in
 * *res (guard_result_free; res NULL: not wanted).  The job is SIGKILLed
 * when cronguard dies.  With a ping_url: the start ping once the run
 * record is written, success or fail (with the output's tail) after the
 * release; rid= is the run's run_uuid.
 */
int guard_run(const struct guard_job *gj, const struct lock_db_ops *ops,
    void *ctx, struct guard_result *res);

#endif
