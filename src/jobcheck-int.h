/*
 * jobcheck-int.h: the judgement of jobs check apart from the statements
 * that read what it judges, for jobcheck.c and its unit suite
 * (tests/unit/check_jobcheck.c) only.  jobcheck_run_all reads every job's
 * summary, lock, slot state, recent slots and marks in a few statements,
 * then judges each job in memory with these.
 */
#ifndef CRONGUARD_JOBCHECK_INT_H
#define CRONGUARD_JOBCHECK_INT_H

#include <stddef.h>
#include <stdint.h>

#include "jobcheck.h"
#include "jobctl.h"
#include "runs.h"
#include "schedule.h"

/* What jobcheck_schedule needs of one scheduled job, read for all the
 * jobs at once (jobcheck_run_all). */
struct jobcheck_plan {
	struct tzone *z;
	int64_t      *win; /* the window's due slots, newest first */
	size_t        nwin;
	int64_t       latest;
	int64_t       lo; /* now - missed_lookback */
	/* The job, its schedule and its check (borrowed). */
	const struct conf_job  *job;
	const struct job_sched *sc;
	const struct job_check *jc;
	size_t                  want;  /* alert_after_failures, at least 1 */
	int                     ready; /* zone and slot known: judge the runs */
	struct runs_recent      rr; /* the job's recent slots, newest first */
	struct jobctl_marks     marks; /* its pauses and newest ack */
	/* From the runs' flags (sql/016): rr holds only the latest runs, a
	 * slot older than those has a run unless it lies in a flagged gap
	 * or after rf.top.  0: rr holds the window's runs (the full read). */
	int                 flagged;
	struct runs_flagged rf; /* the window's flagged runs */
	/* The zone held while plans are computed one after the other
	 * (schedule.h, tzone_hold), or NULL: each call switches TZ. */
	struct tzone_held **held;
};

/* From the slot state (jc->sched.st, filled): the zone, the latest and
 * next slots and the look-back window's start, into *p; an UNKNOWN when the
 * zone or the schedule cannot tell (p->ready 0). */
void jobcheck_schedule_plan(const struct conf_job *, const struct job_sched *,
    struct job_check *jc, struct jobcheck_plan *p);
/* The due slots of p's look-back window that may be missed, newest
 * first, into p->win (p ready; with p->flagged only those the flags
 * leave open), after the flagged runs are read. */
void jobcheck_window(struct jobcheck_plan *p);
/* The schedule's alerts (missed, failed, ran twice, late) from p's runs
 * and marks (p ready) into jc. */
void jobcheck_schedule(const struct conf_job *, const struct job_sched *,
    const struct jobcheck_plan *p, struct job_check *jc);
void jobcheck_plan_free(struct jobcheck_plan *);
/* The verdict from the run records and the lock (jc->js, jc->holder). */
void jobcheck_judge(
    const struct conf_job *, const struct job_sched *, struct job_check *jc);

#endif
