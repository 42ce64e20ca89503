/*
 * status.h: what "cronguard status" shows (cronguard(1), status): every
 * configured job with jobs check's verdict and a strip of its latest slots,
 * every configured channel with its outbox counts, pause, circuit, quota and
 * its last 24 hours of attempts, all by the database clock.  The writers are
 * status-html.h (the page) and report.h (report_status_json).
 *
 * The statements do not grow with the number of jobs or slots: jobs
 * check's verdicts come from jobcheck_run_all (jobcheck.h), taken as they are.
 */
#ifndef CRONGUARD_STATUS_H
#define CRONGUARD_STATUS_H

#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "conf.h"
#include "db.h"
#include "jobcheck.h"
#include "jobctl.h"
#include "outbox-admin.h"
#include "schedule.h"

/* The slots a strip shows by default, and at most (--slots). */
#define STATUS_SLOTS_DEFAULT 48
#define STATUS_SLOTS_MAX 1000
/* The failed runs of a job whose output tail the page carries, newest
 * first, and the bytes of each tail. */
#define STATUS_TAILS 3
#define STATUS_TAIL_SIZE 1024
/* The hours of the attempt histogram, the newest last. */
#define STATUS_HOURS 24

/* What one cell of a strip says: a slot of a scheduled job, or a run of
 * a job without a schedule. */
enum status_cell {
	CELL_NONE,    /* no run expected: before the job's first run */
	CELL_WAITING, /* due, no run yet, its grace not over */
	CELL_SUCCESS,
	CELL_FAILED,  /* runs, none succeeded (or the run failed) */
	CELL_MISSED,  /* grace over, no run started, not paused */
	CELL_LATE,    /* succeeded, first run started after grace */
	CELL_TWICE,   /* more than one success not started by run --slot */
	CELL_RUNNING, /* a run is recorded running */
	CELL_PAUSED,  /* no run, the job was paused at the slot */
	CELL_MANUAL,  /* its runs were started by run --slot only */
	CELL_ACKED,   /* missed, at or before the newest jobs ack */
	CELL_NSTATES
};
/* "success", "ran twice", ...: the word the page and JSON use. */
const char *status_cell_name(enum status_cell);

struct status_cell_info {
	enum status_cell state;
	int64_t          slot; /* the slot (Unix s); -1: a run, no slot */
	char             slot_text[TZONE_RFC3339_MAX]; /* in the job's zone */
	int              nruns;
	/* The run shown (the latest of the slot); run_id 0: none. */
	unsigned long long run_id;
	char              *started;   /* UTC "YYYY-MM-DD hh:mm:ss" */
	int64_t            started_s; /* the same, Unix seconds */
	long long          duration_ms;
	char              *host;
	long long          exit_status; /* -1: none */
	char              *outcome;
	/* A failed run's output tail (bytes, may hold anything), or NULL. */
	char              *tail;
	size_t             tail_len;
	unsigned long long output_bytes; /* all the run wrote */
};

struct status_job {
	const struct conf_job   *job;
	struct job_check         check; /* jobs check's, pause judged */
	struct job_pause         pause; /* in effect, or paused 0 */
	char                    *zone;  /* of the slots; NULL: UTC runs */
	char                     next[TZONE_RFC3339_MAX]; /* "" none */
	struct status_cell_info *cells;                   /* oldest first */
	size_t                   ncells;
};

struct status_channel {
	const struct conf_channel *conf;
	long long pending, due, processing, failed, blocked, expired;
	long long oldest_due_age_s;
	const struct outbox_pause    *pause; /* in k's, or NULL */
	const struct ratelimit_state *limit; /* in k's, or NULL: no row */
	int                           quota_exhausted;
	/* Attempts per hour, [0] 24 hours ago, [STATUS_HOURS - 1] the
	 * last hour: sent, retried, failed. */
	long long hours[STATUS_HOURS][3];
};

struct status {
	char    *now;   /* the database clock, UTC "YYYY-MM-DD hh:mm:ss" */
	int64_t  now_s; /* the same, Unix seconds */
	unsigned slots;
	/* NULL, or why the database could not be read: the page says
	 * so, and nothing else in it is current. */
	char                  *error;
	enum check_status      jobs_status;   /* the worst job's */
	enum check_status      outbox_status; /* outbox_verdict */
	struct status_job     *jobs;
	size_t                 njobs;
	struct status_channel *channels;
	size_t                 nchannels;
	struct outbox_counts   counts; /* the whole outbox, as outbox check */
	unsigned long long     statements;       /* sent to collect it, */
	unsigned long long     check_statements; /* of them by jobs check */
};

/*
 * Read the status of c's jobs and channels with the latest slots slots of
 * each strip into *s (status_free).  DB_OK, or the status with *errstr
 * (then s holds what was read, and the caller sets s->error).
 */
enum db_status status_collect(struct db *, const struct conf *c, unsigned slots,
    struct status *s, char **errstr);
void           status_free(struct status *);

/* The cell of a scheduled job's slot from what its runs were
 * (exposed for tests): nruns in all, succeeded (not by run --slot),
 * manual successes, running, failed; first_start the first run's start
 * (Unix s); grace_s; now_s; before_first (the slot is before the job's
 * first run), paused (the job was paused at the slot), acked (the slot is
 * at or before the newest jobs ack: jobs check no longer counts it). */
struct status_slot_runs {
	int     nruns, launched, manual, running, failed;
	int64_t first_start;
};
enum status_cell status_slot_cell(const struct status_slot_runs *r,
    int64_t slot, int64_t grace_s, int64_t now_s, int before_first, int paused,
    int acked);

#endif
