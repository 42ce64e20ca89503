/* jobcheck.c: the verdict of jobs check on one job (jobcheck.h), from its
 * run records, its lock and its schedule. */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "duration.h"
#include "jobcheck-int.h"
#include "jobcheck.h"
#include "jobctl.h"
#include "lock.h"
#include "log.h"
#include "report.h"
#include "runs.h"
#include "schedule.h"
#include "util.h"

/* The latest runs a scheduled job's flagged plan reads beyond
 * alert_after_failures (jobcheck_plan_runs). */
#define JOBCHECK_LATEST_RUNS 2

static void jobcheck_add(struct job_check *jc, enum check_status st,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
jobcheck_add(struct job_check *jc, enum check_status st, const char *fmt, ...)
{
	va_list ap;

	jc->status = check_status_worst(jc->status, st);
	if (jc->msg.len > 0)
		buf_adds(&jc->msg, ", ");
	va_start(ap, fmt);
	buf_vprintf(&jc->msg, fmt, ap);
	va_end(ap);
}

/* A finished run that did not succeed: a lock incident (duplicate work
 * may have happened) pages someone; the rest is a failed job. */
static enum check_status
jobcheck_outcome_status(const char *outcome)
{
	if (strcmp(outcome, "incident") == 0 ||
	    strcmp(outcome, "lock_lost") == 0)
		return CHECK_CRITICAL;
	return CHECK_WARNING;
}

/* The slot before rs's and rs's own into jc->slots (the previous one
 * is the slot of the last microsecond before rs starts). */
static enum db_status
jobcheck_tally(struct db *db, const struct conf_job *j, struct job_check *jc,
    const struct run_slot *rs, char **errstr)
{
	struct run_slot prev;
	char           *at = NULL;
	enum db_status  st;

	memset(&prev, 0, sizeof prev);
	if ((st = db_query_value(db, &at, errstr,
	         "SELECT CAST(%s AS DATETIME(6)) - INTERVAL 1 MICROSECOND",
	         rs->start)) != DB_OK)
		goto out;
	if ((st = runs_slot(db, j->name, j->once_per_ms, j->timezone, at, &prev,
	         errstr)) != DB_OK)
		goto out;
	if (prev.tz_unknown || prev.start == NULL) {
		*errstr = xasprintf("no slot before %s", rs->start);
		st = DB_ERR_QUERY;
		goto out;
	}
	if ((st = runs_slot_tally(db, j->name, prev.start, rs->start,
	         &jc->slots[0], errstr)) != DB_OK)
		goto out;
	jc->nslots = 1;
	if ((st = runs_slot_tally(db, j->name, rs->start, rs->end,
	         &jc->slots[1], errstr)) != DB_OK)
		goto out;
	jc->nslots = 2;
out:
	runs_slot_free(&prev);
	free(at);
	return st;
}

/* once_per: a completed slot with no success, a slot that ran twice. */
static enum db_status
jobcheck_slots(struct db *db, const struct conf_job *j, struct job_check *jc,
    char **errstr)
{
	const struct run_slot_tally *t;
	struct run_slot              rs;
	enum db_status               st;
	int                          i;

	if ((st = runs_slot(db, j->name, j->once_per_ms, j->timezone, NULL, &rs,
	         errstr)) != DB_OK)
		return st;
	if (rs.tz_unknown) {
		jobcheck_add(jc, CHECK_UNKNOWN,
		    "timezone %s is unknown to the server",
		    j->timezone != NULL ? j->timezone : "(the server's)");
		goto out;
	}
	if ((st = jobcheck_tally(db, j, jc, &rs, errstr)) != DB_OK)
		goto out;
	t = &jc->slots[0];
	/* A slot before the job's first run is not missed. */
	if (t->successes == 0 && t->had_runs && t->since_end_ms > j->grace_ms) {
		if (t->caught_up_id != 0)
			jobcheck_add(jc, CHECK_WARNING,
			    "slot %.19s had no successful run (caught up by run %llu)",
			    t->start, t->caught_up_id);
		else
			jobcheck_add(jc, CHECK_CRITICAL,
			    "slot %.19s ended at %.19s with no successful run",
			    t->start, t->end);
	}
	for (i = 0; i < jc->nslots; i++) {
		t = &jc->slots[i];
		if (t->successes > 1)
			jobcheck_add(jc, CHECK_WARNING,
			    "ran twice: %lld successful runs in slot %.19s (runs %llu and %llu)",
			    t->successes, t->start, t->first_id, t->last_id);
	}
out:
	runs_slot_free(&rs);
	return st;
}

/* Slots t with lo < t < hi that may be missed (jobcheck_window). */
struct jobcheck_span {
	int64_t lo, hi;
};

static int
jobcheck_span_cmp(const void *a, const void *b)
{
	const struct jobcheck_span *x = a, *y = b;

	return x->hi < y->hi ? 1 : x->hi > y->hi ? -1 : 0;
}

/* The spans of p's window whose slots may be missed, newest end first,
 * into *sp (free) of *n: every slot, or with the runs' flags only those
 * after the newest run and in the gaps (jobcheck_in_gap decides). */
static void
jobcheck_spans(
    const struct jobcheck_plan *p, struct jobcheck_span **sp, size_t *n)
{
	size_t i;

	*sp = xcalloc(p->rf.n + 1, sizeof **sp);
	(*sp)[0].lo = p->flagged ? p->rf.top : INT64_MIN;
	(*sp)[0].hi = INT64_MAX;
	*n = 1;
	for (i = 0; p->flagged && i < p->rf.n; i++)
		if (p->rf.rows[i].flags & RUNS_FLAG_GAP) {
			(*sp)[*n].lo = p->rf.rows[i].gap_from;
			(*sp)[(*n)++].hi = p->rf.rows[i].slot;
		}
	qsort(*sp, *n, sizeof **sp, jobcheck_span_cmp);
}

/* p's zone held for the calls that follow (p->held), when the caller
 * holds zones. */
static void
jobcheck_hold(const struct jobcheck_plan *p)
{
	if (p->held != NULL)
		*p->held = tzone_hold(*p->held, p->z);
}

/*
 * The due slots of the look-back window (jobcheck.h) that may be missed,
 * newest first, into p->win of p->nwin: a slot whose grace has passed, at
 * or after the job's first run and now - missed_lookback, at most
 * JOBCHECK_SLOTS_SCANNED; with the runs' flags, only those of the spans
 * the flags leave open, so that a job without gaps costs no walk through
 * its window.  None while the job is paused or has no run.
 */
void
jobcheck_window(struct jobcheck_plan *p)
{
	const struct conf_job   *j = p->job;
	const struct job_sched  *sc = p->sc;
	const struct slot_state *ss = &p->jc->sched.st;
	struct jobcheck_span    *sp;
	int64_t                  now = ss->now_us / 1000000, lo, t, last;
	size_t                   cap = 0, nsp, i, scanned = 0;

	free(p->win);
	p->win = NULL;
	p->nwin = 0;
	if (ss->pause_job != NULL || ss->first_run < 0)
		return;
	jobcheck_hold(p);
	lo = p->lo < ss->first_run ? ss->first_run : p->lo;
	jobcheck_spans(p, &sp, &nsp);
	last = now + 1;
	for (i = 0; i < nsp && scanned < JOBCHECK_SLOTS_SCANNED; i++) {
		t = sp[i].hi - 1 < last - 1 ? sp[i].hi - 1 : last - 1;
		if (schedule_prev(sc->schedule, p->z, t, &t) != 0)
			continue;
		while (t >= lo && t > sp[i].lo &&
		    scanned++ < JOBCHECK_SLOTS_SCANNED) {
			last = t;
			if ((now - t) * 1000 > j->grace_ms) {
				if (p->nwin == cap) {
					cap = cap == 0 ? 64 : cap * 2;
					p->win = xreallocarray(
					    p->win, cap, sizeof *p->win);
				}
				p->win[p->nwin++] = t;
			}
			if (schedule_prev(sc->schedule, p->z, t - 1, &t) != 0)
				break;
		}
	}
	free(sp);
}

/*
 * Whether slot t lies in a gap the flagged runs rf tell of (sql/016;
 * doc/architecture.md, "Missed slots from the runs' flags"), slots
 * asked newest first (*j: where the last look ended).  A slot after every
 * run has none.  Else the run of the next slot with a flagged run
 * decides: t had no run when it started if it ends a gap begun before t,
 * and none since unless one is flagged at t (a run written after a
 * later slot's is flagged 4); an unflagged run between them would have
 * been there when it started.
 */
static int
jobcheck_in_gap(const struct runs_flagged *rf, int64_t t, size_t *j)
{
	const struct runs_flagged_row *rows = rf->rows;
	size_t                         i;

	while (*j < rf->n && rows[*j].slot > t)
		(*j)++;
	if (*j < rf->n && rows[*j].slot == t)
		return 0;
	if (t > rf->top)
		return 1;
	for (i = *j; i > 0 && rows[i - 1].slot == rows[*j - 1].slot; i--)
		if ((rows[i - 1].flags & RUNS_FLAG_GAP) &&
		    rows[i - 1].gap_from < t)
			return 1;
	return 0;
}

/* Whether window slot t (newer ones first) had a run started, from p's
 * runs (k, j: where the last looks ended): 1 yes, 0 no, -1 when the runs
 * read cannot tell (older ones were not read). */
static int
jobcheck_has_run(const struct jobcheck_plan *p, int64_t t, size_t *k, size_t *j)
{
	const struct runs_slot_row *rows = p->rr.rows;
	size_t                      n = p->rr.n;

	while (*k < n && rows[*k].slot > t)
		(*k)++;
	if (*k < n && rows[*k].slot == t)
		return 1;
	if (p->flagged)
		return !jobcheck_in_gap(&p->rf, t, j);
	/* Older slots may have runs that were not read. */
	if (p->rr.truncated && (n == 0 || t < rows[n - 1].slot))
		return -1;
	return 0;
}

/*
 * The missed slots (jobcheck.h): the window's slots (p->win, newest
 * first) against the runs read (p->rr, or its latest runs and the flagged
 * ones, p->rf) and the job's pauses and newest ack (p->marks), in memory.
 * No statement per slot.
 */
static void
jobcheck_missed(const struct jobcheck_plan *p, struct job_check *jc)
{
	const struct jobctl_marks *m = &p->marks;
	const struct tzone        *z = p->z;
	struct job_slots          *s = &jc->sched;
	int64_t                    t, newest = -1;
	size_t                     i, k = 0, j = 0;
	int                        ran;

	for (i = 0; i < p->nwin; i++) {
		t = p->win[i];
		if ((ran = jobcheck_has_run(p, t, &k, &j)) < 0)
			break;
		if (ran)
			continue;
		if (t <= m->acked)
			break; /* an ack covers the older ones */
		if (jobctl_marks_paused(m, t))
			continue;
		if (newest < 0)
			newest = t;
		if (s->nlisted < JOBCHECK_MISSED_LISTED) {
			if (s->missed_slots == NULL)
				s->missed_slots =
				    xcalloc(JOBCHECK_MISSED_LISTED,
				        sizeof *s->missed_slots);
			tzone_format(z, t, s->missed_slots[s->nlisted++],
			    sizeof *s->missed_slots);
		}
		s->nmissed++;
	}
	if (s->nmissed == 0)
		return;
	/* No success since the newest missed slot: CRITICAL. */
	s->missed = s->st.last_success < newest;
	if (s->missed)
		jobcheck_add(jc, CHECK_CRITICAL,
		    "slot %s missed: no run started (%lld missed slot%s)",
		    s->missed_slots[0], s->nmissed, s->nmissed == 1 ? "" : "s");
	else
		jobcheck_add(jc, CHECK_WARNING,
		    "%lld missed slot%s before the last success, the latest %s (jobs ack clears)",
		    s->nmissed, s->nmissed == 1 ? "" : "s", s->missed_slots[0]);
}

void
jobcheck_plan_free(struct jobcheck_plan *p)
{
	free(p->win);
	tzone_free(p->z);
	runs_recent_free(&p->rr);
	runs_flagged_free(&p->rf);
	memset(p, 0, sizeof *p);
}

/* From the slot state (jc->sched.st, read): the zone, the latest and
 * next slots and the window's start, into *p; an UNKNOWN when the zone or the
 * schedule cannot tell (p->ready 0). */
void
jobcheck_schedule_plan(const struct conf_job *j, const struct job_sched *sc,
    struct job_check *jc, struct jobcheck_plan *p)
{
	struct job_slots *s = &jc->sched;
	char             *errstr = NULL;
	int64_t           now, next;

	s->scheduled = 1;
	jc->sched_level =
	    sc->alert_level == CHECK_CRITICAL ? CHECK_CRITICAL : CHECK_WARNING;
	s->paused = s->st.pause_job != NULL;
	if (runs_slot_zone(sc->timezone, &s->st, &p->z, &errstr) != 0) {
		jobcheck_add(jc, CHECK_UNKNOWN, "time zone: %s",
		    errstr != NULL ? errstr : "unknown");
		free(errstr);
		return;
	}
	jobcheck_hold(p);
	now = s->st.now_us / 1000000;
	p->lo = now - j->missed_lookback_ms / 1000;
	p->job = j;
	p->sc = sc;
	p->jc = jc;
	if (schedule_prev(sc->schedule, p->z, now, &p->latest) != 0) {
		jobcheck_add(jc, CHECK_UNKNOWN, "the schedule has no slot");
		return;
	}
	tzone_format(p->z, p->latest, s->latest, sizeof s->latest);
	if (schedule_next(sc->schedule, p->z, now, &next) == 0)
		tzone_format(p->z, next, s->next, sizeof s->next);
	p->want = sc->alert_after_failures > 0 ? sc->alert_after_failures : 1;
	p->ready = 1;
}

/* Runs enough for the window's slots (a retry each) and the failed
 * slots' count (ten retries each); with the runs' flags, only the
 * latest: the count's end and the latest slot's first start, as a rule
 * (jobcheck_plan_enough). */
static size_t
jobcheck_plan_runs(const struct jobcheck_plan *p)
{
	if (p->flagged)
		return p->want + JOBCHECK_LATEST_RUNS;
	return 2 * p->nwin + 10 * p->want + 100;
}

/* Whether the latest runs read of a flagged plan are enough: every run
 * was read, or a slot before the oldest read (which may lack runs not
 * read) ends the count of failed slots, so the newest is whole too. */
static int
jobcheck_plan_enough(const struct jobcheck_plan *p)
{
	size_t i;

	if (!p->flagged || !p->rr.truncated)
		return 1;
	for (i = 0; i + 1 < p->rr.n; i++)
		if (p->rr.rows[i].successes > 0 || p->rr.rows[i].acked)
			return 1;
	return 0;
}

/* The newest slot not acknowledged with more than one success not
 * started by run --slot (an operator's re-run is never a second run of
 * its slot), among the runs read and the flagged ones: 1 and *slot,
 * *launched, or 0. */
static int
jobcheck_twice(
    const struct jobcheck_plan *p, int64_t *slot, long long *launched)
{
	const struct runs_slot_row    *rows = p->rr.rows;
	const struct runs_flagged_row *f;
	size_t                         i;

	for (i = 0; i < p->rr.n; i++)
		if (rows[i].launched > 1 && !rows[i].acked) {
			*slot = rows[i].slot;
			*launched = rows[i].launched;
			return 1;
		}
	for (i = 0; p->flagged && i < p->rf.n; i++) {
		f = &p->rf.rows[i];
		if ((f->flags & RUNS_FLAG_TWICE) && f->launched > 1 &&
		    !f->acked) {
			*slot = f->slot;
			*launched = f->launched;
			return 1;
		}
	}
	return 0;
}

/* The schedule's alerts from the runs and marks read (p ready). */
void
jobcheck_schedule(const struct conf_job *j, const struct job_sched *sc,
    const struct jobcheck_plan *p, struct job_check *jc)
{
	struct job_slots           *s = &jc->sched;
	const struct runs_slot_row *rows = p->rr.rows;
	enum check_status           level;
	size_t                      n = p->rr.n, i;
	char                        text[TZONE_RFC3339_MAX];
	int64_t                     t;
	long long                   launched;

	jobcheck_hold(p);
	level =
	    sc->alert_level == CHECK_CRITICAL ? CHECK_CRITICAL : CHECK_WARNING;
	/* Missed: a slot no run started for; a running or failed slot has
	 * one, and is judged by max_runtime or alert_after_failures. */
	jobcheck_missed(p, jc);
	/* Consecutive failed slots, newest first; an ack ends the count. */
	for (i = 0; i < n; i++) {
		if (rows[i].successes > 0 || rows[i].acked)
			break;
		if (rows[i].failures > 0)
			s->failed_slots++;
	}
	if (s->failed_slots >= (long long)p->want) {
		tzone_format(p->z, rows[0].slot, text, sizeof text);
		jobcheck_add(jc, level,
		    "%lld consecutive failed slot%s, the last %s (jobs ack clears)",
		    s->failed_slots, s->failed_slots == 1 ? "" : "s", text);
	}
	if (jobcheck_twice(p, &t, &launched)) {
		tzone_format(p->z, t, text, sizeof text);
		s->ran_twice = 1;
		jobcheck_add(jc, level,
		    "ran twice: %lld successful runs for slot %s", launched,
		    text);
	}
	if (n > 0 && rows[0].slot == p->latest && rows[0].first_start >= 0 &&
	    (rows[0].first_start - p->latest) * 1000 > j->grace_ms) {
		s->late = 1;
		jobcheck_add(jc, CHECK_WARNING,
		    "slot %s started late, %llds after its time", s->latest,
		    (long long)(rows[0].first_start - p->latest));
	}
}

/* The verdict from the run records and the lock (read into jc). */
void
jobcheck_judge(const struct conf_job *j, const struct job_sched *sched,
    struct job_check *jc)
{
	const struct job_summary *js = &jc->js;
	char                      d1[32], d2[32], age[32];
	char                     *why = NULL;
	int64_t                   limit;

	if (j->expect_every_ms > 0 && sched->schedule == NULL) {
		duration_format(j->expect_every_ms, d1, sizeof d1);
		duration_format(j->grace_ms, d2, sizeof d2);
		limit = j->expect_every_ms + j->grace_ms;
		if (js->last_success_ts < 0)
			jobcheck_add(jc, CHECK_WARNING,
			    "no successful run recorded (expected every %s + %s)",
			    d1, d2);
		else if (js->last_success_age_s * 1000 > limit) {
			duration_format(
			    js->last_success_age_s * 1000, age, sizeof age);
			jobcheck_add(jc, CHECK_CRITICAL,
			    "last success %s ago (expected every %s + %s)", age,
			    d1, d2);
		}
	}

	/* Until a later run succeeds; a run still going clears nothing. */
	if (js->done_outcome != NULL &&
	    strcmp(js->done_outcome, "success") != 0 &&
	    (sched->schedule == NULL ||
	        jobcheck_outcome_status(js->done_outcome) == CHECK_CRITICAL))
		jobcheck_add(jc, jobcheck_outcome_status(js->done_outcome),
		    "last run %llu: %s at %.19s", js->done_id, js->done_outcome,
		    js->done_finished != NULL ? js->done_finished : "?");

	jc->running = js->last_outcome != NULL &&
	    strcmp(js->last_outcome, "running") == 0;
	if (jc->running && js->last_session_alive == 0) {
		/* The session of a live run is there until it finishes. */
		jobcheck_add(jc, CHECK_WARNING,
		    "run %llu died without finishing (its session %llu is gone)",
		    js->last_id, js->last_connection_id);
		jc->running = 0;
	} else if (jc->running && js->last_age_s >= 0) {
		duration_format(js->last_age_s * 1000, age, sizeof age);
		duration_format(j->max_runtime_ms, d1, sizeof d1);
		if (js->last_age_s * 1000 > j->max_runtime_ms + j->grace_ms)
			jobcheck_add(jc, CHECK_CRITICAL,
			    "run %llu running for %s, past max_runtime %s + grace",
			    js->last_id, age, d1);
		else if (js->last_age_s * 1000 > j->max_runtime_ms)
			jobcheck_add(jc, CHECK_WARNING,
			    "run %llu running for %s, past max_runtime %s",
			    js->last_id, age, d1);
	}

	/* A lock that no run of ours accounts for. */
	if (jc->holder.connection_id != 0 && jc->holder.run_id == 0 &&
	    lock_holder_stuck(
	        &jc->holder, j->max_runtime_ms, j->grace_ms, &why))
		jobcheck_add(
		    jc, CHECK_CRITICAL, "lock %s held by %s", j->lock, why);
	free(why);
}

/* The indexes of jobs whose schedule (want 1) or named lock (want 2)
 * jobs check reads, and their job or lock names, into *idx and *names
 * (both allocated, n + 1 long); the count. */
static size_t
jobcheck_pick(const struct conf_job **jobs, size_t n,
    const struct job_sched *scheds, int want, size_t **idx, const char ***names)
{
	size_t i, k = 0;

	*idx = xcalloc(n + 1, sizeof **idx);
	*names = xcalloc(n + 1, sizeof **names);
	for (i = 0; i < n; i++) {
		if (want == 1 && scheds[i].schedule != NULL) {
			(*idx)[k] = i;
			(*names)[k++] = jobs[i]->name;
		} else if (want == 2 && jobs[i]->guard == GUARD_NAMED_LOCK) {
			(*idx)[k] = i;
			(*names)[k++] = jobs[i]->lock;
		}
	}
	return k;
}

/* The ready plans' flagged runs since their look-back (sql/016), one
 * statement, and their newest slot, which the slot state read; then each
 * plan's window, only the slots the flags leave open when all its runs
 * there have them. */
static enum db_status
jobcheck_flagged(struct db *db, const char **rnames, const size_t *ridx,
    size_t nr, struct jobcheck_plan *plans, char **errstr)
{
	struct runs_flagged  *rf;
	struct jobcheck_plan *p;
	int64_t              *since;
	enum db_status        rc;
	size_t                i;

	rf = xcalloc(nr + 1, sizeof *rf);
	since = xcalloc(nr + 1, sizeof *since);
	for (i = 0; i < nr; i++)
		since[i] = plans[ridx[i]].lo;
	rc = runs_flagged_all(db, rnames, since, nr, rf, errstr);
	for (i = 0; i < nr; i++) {
		p = &plans[ridx[i]];
		if (rc == DB_OK) {
			p->rf = rf[i];
			p->rf.top = p->jc->sched.st.top;
			p->flagged = !rf[i].unknown;
		} else
			runs_flagged_free(&rf[i]);
		jobcheck_window(p);
	}
	free(rf);
	free(since);
	return rc;
}

/* The recent runs of plans[idx[0..n)] (jobcheck_plan_runs each), one
 * statement. */
static enum db_status
jobcheck_recent_of(struct db *db, const char **names, const size_t *idx,
    size_t n, struct jobcheck_plan *plans, char **errstr)
{
	struct runs_recent *rr = xcalloc(n + 1, sizeof *rr);
	size_t             *max = xcalloc(n + 1, sizeof *max);
	enum db_status      rc;
	size_t              i;

	for (i = 0; i < n; i++)
		max[i] = jobcheck_plan_runs(&plans[idx[i]]);
	rc = runs_recent_slots_all(db, names, max, n, rr, errstr);
	for (i = 0; i < n; i++) {
		runs_recent_free(&plans[idx[i]].rr);
		plans[idx[i]].rr = rr[i];
	}
	free(rr);
	free(max);
	return rc;
}

/* The ready plans' recent runs: the latest few of the flagged ones in
 * one statement, then in full those of the others and of the flagged
 * ones whose latest are not enough (jobcheck_plan_enough), in one more
 * when there are any. */
static enum db_status
jobcheck_recent(struct db *db, const char **rnames, const size_t *ridx,
    size_t nr, struct jobcheck_plan *plans, char **errstr)
{
	const char   **fnames = xcalloc(nr + 1, sizeof *fnames);
	const char   **mnames = xcalloc(nr + 1, sizeof *mnames);
	size_t        *fidx = xcalloc(nr + 1, sizeof *fidx);
	size_t        *midx = xcalloc(nr + 1, sizeof *midx);
	size_t         i, nf = 0, nmore = 0;
	enum db_status rc;

	for (i = 0; i < nr; i++) {
		if (plans[ridx[i]].flagged) {
			fidx[nf] = ridx[i];
			fnames[nf++] = rnames[i];
		} else {
			midx[nmore] = ridx[i];
			mnames[nmore++] = rnames[i];
		}
	}
	if ((rc = jobcheck_recent_of(db, fnames, fidx, nf, plans, errstr)) !=
	    DB_OK)
		goto out;
	for (i = 0; i < nf; i++) {
		if (jobcheck_plan_enough(&plans[fidx[i]]))
			continue;
		plans[fidx[i]].flagged = 0;
		jobcheck_window(&plans[fidx[i]]);
		midx[nmore] = fidx[i];
		mnames[nmore++] = fnames[i];
	}
	rc = jobcheck_recent_of(db, mnames, midx, nmore, plans, errstr);
out:
	free(fnames);
	free(mnames);
	free(fidx);
	free(midx);
	return rc;
}

/*
 * The schedules' reads for the nsc scheduled jobs (idx, names): their
 * slot states, then, from the windows those give, their flagged runs,
 * their recent runs (the latest few where the flags tell the rest, in
 * full for the others) and their marks: four or five statements whatever
 * the number of jobs.
 */
static enum db_status
jobcheck_plan_all(struct db *db, const struct conf_job **jobs,
    const struct job_sched *scheds, struct job_check *out, const size_t *idx,
    const char **names, size_t nsc, struct jobcheck_plan *plans, char **errstr)
{
	struct slot_state   *st = NULL;
	struct jobctl_marks *mk = NULL;
	const char         **rnames = NULL;
	size_t              *ridx = NULL, i, nr = 0;
	enum db_status       rc;

	st = xcalloc(nsc + 1, sizeof *st);
	if ((rc = runs_slot_states(db, names, nsc, st, errstr)) != DB_OK)
		goto out;
	rnames = xcalloc(nsc + 1, sizeof *rnames);
	ridx = xcalloc(nsc + 1, sizeof *ridx);
	for (i = 0; i < nsc; i++) {
		out[idx[i]].sched.st = st[i];
		memset(&st[i], 0, sizeof st[i]);
		jobcheck_schedule_plan(
		    jobs[idx[i]], &scheds[idx[i]], &out[idx[i]], &plans[i]);
		if (!plans[i].ready)
			continue;
		ridx[nr] = i;
		rnames[nr++] = names[i];
	}
	mk = xcalloc(nr + 1, sizeof *mk);
	if ((rc = jobcheck_flagged(db, rnames, ridx, nr, plans, errstr)) !=
	        DB_OK ||
	    (rc = jobcheck_recent(db, rnames, ridx, nr, plans, errstr)) !=
	        DB_OK ||
	    (rc = jobctl_slot_marks_all(db, rnames, nr, mk, errstr)) != DB_OK)
		goto out;
	for (i = 0; i < nr; i++) {
		plans[ridx[i]].marks = mk[i];
		out[idx[ridx[i]]].sched.acked = mk[i].acked;
	}
out:
	for (i = 0; i < nsc; i++)
		runs_slot_state_free(&st[i]);
	free(st);
	free(mk);
	free(rnames);
	free(ridx);
	return rc;
}

enum db_status
jobcheck_run_all(struct db *db, const struct conf_job **jobs, size_t n,
    const struct job_sched *scheds, struct job_check *out, char **errstr)
{
	struct job_summary   *js = NULL;
	struct lock_holder   *lh = NULL;
	struct jobcheck_plan *plans = NULL;
	struct tzone_held    *held = NULL; /* the plans' zones, in turn */
	const char          **names = NULL, **lnames = NULL, **snames = NULL;
	size_t               *lidx = NULL, *sidx = NULL, nl = 0, nsc = 0, i, k;
	enum db_status        st;

	for (i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof out[i]);
		out[i].sched.acked = -1;
		out[i].job = jobs[i];
		out[i].status = CHECK_OK;
		buf_init(&out[i].msg);
		buf_adds(&out[i].msg, ""); /* never NULL data */
	}
	names = xcalloc(n + 1, sizeof *names);
	for (i = 0; i < n; i++)
		names[i] = jobs[i]->name;
	js = xcalloc(n + 1, sizeof *js);
	if ((st = runs_job_summaries(db, names, n, js, errstr)) != DB_OK)
		goto out;
	for (i = 0; i < n; i++) {
		out[i].js = js[i];
		memset(&js[i], 0, sizeof js[i]);
	}
	nl = jobcheck_pick(jobs, n, scheds, 2, &lidx, &lnames);
	lh = xcalloc(nl + 1, sizeof *lh);
	if ((st = lock_holders_get(db, lnames, nl, lh, errstr)) != DB_OK)
		goto out;
	for (i = 0; i < nl; i++) {
		out[lidx[i]].holder = lh[i];
		memset(&lh[i], 0, sizeof lh[i]);
	}
	for (i = 0; i < n; i++)
		jobcheck_judge(jobs[i], &scheds[i], &out[i]);
	nsc = jobcheck_pick(jobs, n, scheds, 1, &sidx, &snames);
	plans = xcalloc(nsc + 1, sizeof *plans);
	for (k = 0; k < nsc; k++)
		plans[k].held = &held;
	if ((st = jobcheck_plan_all(db, jobs, scheds, out, sidx, snames, nsc,
	         plans, errstr)) != DB_OK)
		goto out;
	for (k = 0; k < nsc; k++)
		if (plans[k].ready)
			jobcheck_schedule(jobs[sidx[k]], &scheds[sidx[k]],
			    &plans[k], &out[sidx[k]]);
	/* once_per: a few statements a job (jobcheck_slots). */
	for (i = 0; i < n; i++)
		if (scheds[i].schedule == NULL && jobs[i]->once_per_ms > 0 &&
		    (st = jobcheck_slots(db, jobs[i], &out[i], errstr)) !=
		        DB_OK)
			goto out;
	st = DB_OK;
out:
	tzone_release(held);
	for (k = 0; k < nsc; k++)
		jobcheck_plan_free(&plans[k]);
	for (i = 0; js != NULL && i < n; i++)
		runs_job_summary_free(&js[i]);
	for (i = 0; lh != NULL && i < nl; i++)
		lock_holder_free(&lh[i]);
	free(plans);
	free(js);
	free(lh);
	free(names);
	free(lnames);
	free(lidx);
	free(snames);
	free(sidx);
	return st;
}

void
jobcheck_sched_from_conf(const struct conf_job *j, struct job_sched *s)
{
	memset(s, 0, sizeof *s);
	s->schedule = j->schedule;
	s->timezone = j->timezone;
	s->alert_after_failures = j->alert_after_failures;
	s->alert_level =
	    j->alert_level == ALERT_CRITICAL ? CHECK_CRITICAL : CHECK_WARNING;
}

void
jobcheck_judge_paused(struct job_check *jc, const struct job_pause *p)
{
	char *text, *was;

	if ((text = report_job_pause(p)) == NULL)
		return;
	was = jc->msg.len > 0 ? xstrdup(jc->msg.data) : NULL;
	buf_reset(&jc->msg);
	buf_adds(&jc->msg, text);
	if (was != NULL)
		buf_printf(&jc->msg, " (while paused: %s %s)",
		    check_status_name(jc->status), was);
	jc->status = CHECK_OK;
	free(was);
	free(text);
}

void
jobcheck_free(struct job_check *jc)
{
	int i;

	for (i = 0; i < jc->nslots; i++)
		runs_slot_tally_free(&jc->slots[i]);
	runs_slot_state_free(&jc->sched.st);
	free(jc->sched.missed_slots);
	buf_free(&jc->msg);
	runs_job_summary_free(&jc->js);
	lock_holder_free(&jc->holder);
}
