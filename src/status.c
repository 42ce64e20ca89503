/*
 * status.c: what "cronguard status" shows (status.h), read from the
 * database by its clock.  jobs check's verdicts (status_judge, through
 * jobcheck_run_all), the strips, pauses and the outbox are each a fixed
 * number of set-based statements whatever the number of jobs.
 */
#include "config.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "jobcheck.h"
#include "jobctl.h"
#include "outbox-admin.h"
#include "outbox.h"
#include "runs.h"
#include "schedule.h"
#include "status.h"
#include "util.h"

static const char *const status_cell_names[CELL_NSTATES] = {
	[CELL_NONE] = "no run expected",
	[CELL_WAITING] = "waiting",
	[CELL_SUCCESS] = "success",
	[CELL_FAILED] = "failed",
	[CELL_MISSED] = "missed",
	[CELL_LATE] = "late",
	[CELL_TWICE] = "ran twice",
	[CELL_RUNNING] = "running",
	[CELL_PAUSED] = "paused",
	[CELL_MANUAL] = "manual",
	[CELL_ACKED] = "acknowledged",
};

const char *
status_cell_name(enum status_cell c)
{
	return (unsigned)c < CELL_NSTATES ? status_cell_names[c] : "?";
}

enum status_cell
status_slot_cell(const struct status_slot_runs *r, int64_t slot,
    int64_t grace_s, int64_t now_s, int before_first, int paused, int acked)
{
	if (r->running > 0)
		return CELL_RUNNING;
	if (r->launched > 1)
		return CELL_TWICE;
	if (r->launched == 1)
		return r->first_start - slot > grace_s ? CELL_LATE
		                                       : CELL_SUCCESS;
	if (r->manual > 0)
		return CELL_MANUAL;
	if (r->nruns > 0)
		return CELL_FAILED;
	if (now_s - slot <= grace_s)
		return CELL_WAITING;
	if (before_first)
		return CELL_NONE;
	if (paused)
		return CELL_PAUSED;
	return acked ? CELL_ACKED : CELL_MISSED;
}

/* ------------------------------------------------------------- jobs */

/*
 * jobs check's verdict on every job, all at once as jobs check reads
 * them (jobcheck_run_all).  The pause in effect is judged as jobs check
 * judges it.
 */
static enum db_status
status_judge(struct db *db, struct status *s, char **errstr)
{
	const struct conf_job **jobs;
	struct job_sched       *scheds;
	struct job_check       *jcs;
	enum db_status          st;
	unsigned long long      before = db_statements(db);
	size_t                  i;

	jobs = xcalloc(s->njobs + 1, sizeof *jobs);
	scheds = xcalloc(s->njobs + 1, sizeof *scheds);
	jcs = xcalloc(s->njobs + 1, sizeof *jcs);
	for (i = 0; i < s->njobs; i++) {
		jobs[i] = s->jobs[i].job;
		jobcheck_sched_from_conf(jobs[i], &scheds[i]);
	}
	/* Every job at once: a few statements whatever their number. */
	st = jobcheck_run_all(db, jobs, s->njobs, scheds, jcs, errstr);
	/* Each verdict moves to its job (freed with the status). */
	for (i = 0; i < s->njobs; i++)
		s->jobs[i].check = jcs[i];
	free(jcs);
	free(scheds);
	free(jobs);
	s->check_statements = db_statements(db) - before;
	return st;
}

static void
pause_copy(struct job_pause *dst, const struct job_pause *src)
{
	memset(dst, 0, sizeof *dst);
	dst->paused = src->paused;
	dst->job = src->job != NULL ? xstrdup(src->job) : NULL;
	dst->paused_at =
	    src->paused_at != NULL ? xstrdup(src->paused_at) : NULL;
	dst->paused_by =
	    src->paused_by != NULL ? xstrdup(src->paused_by) : NULL;
	dst->reason = src->reason != NULL ? xstrdup(src->reason) : NULL;
	dst->until_at = src->until_at != NULL ? xstrdup(src->until_at) : NULL;
}

/* Of two pauses in effect, the one that holds longer (jobctl.h's
 * order: no end, then the latest end, then the job's own row). */
static int
pause_longer(const struct job_pause *a, const struct job_pause *b)
{
	if (b == NULL)
		return 1;
	if ((a->until_at == NULL) != (b->until_at == NULL))
		return a->until_at == NULL;
	if (a->until_at != NULL && strcmp(a->until_at, b->until_at) != 0)
		return strcmp(a->until_at, b->until_at) > 0;
	return strcmp(a->job, JOBCTL_ALL) != 0;
}

/* The pause in effect for each job, from one statement; judged. */
static enum db_status
status_pauses(struct db *db, struct status *s, char **errstr)
{
	struct job_pause       *all = NULL;
	const struct job_pause *best;
	enum db_status          st;
	size_t                  n = 0, i, k;

	if ((st = jobctl_pause_list(db, &all, &n, errstr)) != DB_OK)
		return st;
	for (i = 0; i < s->njobs; i++) {
		best = NULL;
		for (k = 0; k < n; k++) {
			if (all[k].job == NULL ||
			    (strcmp(all[k].job, JOBCTL_ALL) != 0 &&
			        strcmp(all[k].job, s->jobs[i].job->name) != 0))
				continue;
			if (pause_longer(&all[k], best))
				best = &all[k];
		}
		if (best != NULL)
			pause_copy(&s->jobs[i].pause, best);
		jobcheck_judge_paused(&s->jobs[i].check, &s->jobs[i].pause);
	}
	for (k = 0; k < n; k++)
		jobctl_pause_free(&all[k]);
	free(all);
	return DB_OK;
}

/* Every pause row (in effect or ended) as a span, for the strips. */
struct pause_span {
	char   *job;
	int64_t from, until; /* until -1: none */
};

static enum db_status
status_pause_spans(
    struct db *db, struct pause_span **out, size_t *n, char **errstr)
{
	struct db_result *r = NULL;
	enum db_status    st;
	size_t            i;

	*out = NULL;
	*n = 0;
	if ((st = db_query(db, &r, errstr,
	         "SELECT job, FLOOR(UNIX_TIMESTAMP(paused_at)),"
	         " CEIL(UNIX_TIMESTAMP(until_at))"
	         " FROM cronguard_job_pauses")) != DB_OK)
		return st;
	*out = xcalloc(r->nrows + 1, sizeof **out);
	for (i = 0; i < r->nrows; i++) {
		if (db_cell(r, i, 0) == NULL)
			continue;
		(*out)[*n].job = xstrdup(db_cell(r, i, 0));
		(*out)[*n].from = db_cell_ll(r, i, 1, 0);
		(*out)[*n].until = db_cell_ll(r, i, 2, -1);
		(*n)++;
	}
	db_result_free(r);
	return DB_OK;
}

static int
status_paused_at(
    const struct pause_span *p, size_t n, const char *job, int64_t t)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (strcmp(p[i].job, JOBCTL_ALL) != 0 &&
		    strcmp(p[i].job, job) != 0)
			continue;
		if (t >= p[i].from && (p[i].until < 0 || t < p[i].until))
			return 1;
	}
	return 0;
}

/*
 * The slots of a scheduled job's strip: the latest s->slots at or before
 * now, oldest first, into j->cells; its zone and next slot.  The zone is
 * the one jobs check read (runs_slot_zone from the job's slot state);
 * one that cannot be told leaves the strip empty, as jobs check says.
 */
static void
status_job_slots(struct status *s, struct status_job *j, int64_t *oldest,
    struct tzone_held **held)
{
	const struct conf_job *cj = j->job;
	struct tzone          *z = NULL;
	char                  *err = NULL;
	int64_t                t, next;
	size_t                 n = 0, i;

	if (cj->schedule == NULL || !j->check.sched.scheduled)
		return;
	if (runs_slot_zone(cj->timezone, &j->check.sched.st, &z, &err) != 0) {
		free(err);
		return;
	}
	*held = tzone_hold(*held, z);
	j->zone = xstrdup(tzone_name(z));
	if (schedule_next(cj->schedule, z, s->now_s, &next) == 0)
		tzone_format(z, next, j->next, sizeof j->next);
	j->cells = xcalloc(s->slots, sizeof *j->cells);
	if (schedule_prev(cj->schedule, z, s->now_s, &t) == 0) {
		while (n < s->slots) {
			j->cells[n++].slot = t;
			if (schedule_prev(cj->schedule, z, t - 1, &t) != 0)
				break;
		}
	}
	/* Newest first so far: turn it round. */
	for (i = 0; i < n / 2; i++) {
		t = j->cells[i].slot;
		j->cells[i].slot = j->cells[n - 1 - i].slot;
		j->cells[n - 1 - i].slot = t;
	}
	for (i = 0; i < n; i++) {
		j->cells[i].run_id = 0;
		j->cells[i].exit_status = -1;
		j->cells[i].duration_ms = -1;
		tzone_format(z, j->cells[i].slot, j->cells[i].slot_text,
		    sizeof j->cells[i].slot_text);
	}
	j->ncells = n;
	if (n > 0 && j->cells[0].slot < *oldest)
		*oldest = j->cells[0].slot;
	tzone_free(z);
}

static int
job_cmp(const void *a, const void *b)
{
	const struct status_job *const *x = a, *const *y = b;

	return strcmp((*x)->job->name, (*y)->job->name);
}

static struct status_job *
job_find(struct status_job **sorted, size_t n, const char *name)
{
	size_t lo = 0, hi = n, mid;
	int    c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((c = strcmp(name, sorted[mid]->job->name)) == 0)
			return sorted[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

static struct status_cell_info *
cell_of_slot(struct status_job *j, int64_t slot)
{
	size_t lo = 0, hi = j->ncells, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (j->cells[mid].slot == slot)
			return &j->cells[mid];
		if (j->cells[mid].slot < slot)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void
cell_clear_run(struct status_cell_info *c)
{
	free(c->started);
	free(c->host);
	free(c->outcome);
	free(c->tail);
	c->started = c->host = c->outcome = c->tail = NULL;
	c->tail_len = 0;
}

/* The columns of the strips' one statement. */
enum {
	RUN_JOB,
	RUN_SLOT,
	RUN_START_S,
	RUN_START,
	RUN_DURATION,
	RUN_HOST,
	RUN_OUTCOME,
	RUN_EXIT,
	RUN_KIND,
	RUN_ID,
	RUN_TAIL,
	RUN_BYTES,
	RUN_NCOLS
};

/* Row i of r as the run cell c shows. */
static void
cell_set_run(struct status_cell_info *c, const struct db_result *r, size_t i)
{
	cell_clear_run(c);
	c->run_id = (unsigned long long)db_cell_ll(r, i, RUN_ID, 0);
	c->started = db_cell_dup(r, i, RUN_START);
	c->started_s = db_cell_ll(r, i, RUN_START_S, 0);
	c->duration_ms = db_cell_ll(r, i, RUN_DURATION, -1);
	c->host = db_cell_dup(r, i, RUN_HOST);
	c->outcome = db_cell_dup(r, i, RUN_OUTCOME);
	c->exit_status = db_cell_ll(r, i, RUN_EXIT, -1);
	c->output_bytes = (unsigned long long)db_cell_ll(r, i, RUN_BYTES, 0);
	if (db_cell(r, i, RUN_TAIL) != NULL) {
		c->tail_len = r->lengths[i][RUN_TAIL];
		c->tail = xmalloc(c->tail_len + 1);
		memcpy(c->tail, r->rows[i][RUN_TAIL], c->tail_len);
		c->tail[c->tail_len] = '\0';
	}
}

/* An unscheduled job's cell for its run in row i: the newest s->slots
 * runs are kept (rows come oldest first). */
static void
status_run_cell(
    struct status *s, struct status_job *j, const struct db_result *r, size_t i)
{
	struct status_cell_info *c;
	const char              *o = db_cell(r, i, RUN_OUTCOME);
	const char              *kind = db_cell(r, i, RUN_KIND);

	if (j->cells == NULL)
		j->cells = xcalloc(s->slots, sizeof *j->cells);
	if (j->ncells == s->slots) {
		cell_clear_run(&j->cells[0]);
		memmove(&j->cells[0], &j->cells[1],
		    (j->ncells - 1) * sizeof *j->cells);
		j->ncells--;
	}
	c = &j->cells[j->ncells++];
	memset(c, 0, sizeof *c);
	c->slot = -1;
	c->nruns = 1;
	cell_set_run(c, r, i);
	if (o != NULL && strcmp(o, "running") == 0)
		c->state = CELL_RUNNING;
	else if (o != NULL && strcmp(o, "success") == 0)
		c->state = kind != NULL && strcmp(kind, "manual") == 0
		    ? CELL_MANUAL
		    : CELL_SUCCESS;
	else
		c->state = CELL_FAILED;
}

/* The run in row i into its slot's tally (and as the cell's run when it
 * is the one to show: the latest, a failed one before a success only
 * when nothing succeeded). */
static void
status_slot_run(struct status_cell_info *c, struct status_slot_runs *t,
    const struct db_result *r, size_t i)
{
	const char *o = db_cell(r, i, RUN_OUTCOME);
	const char *kind = db_cell(r, i, RUN_KIND);
	int         manual = kind != NULL && strcmp(kind, "manual") == 0;

	if (t->nruns++ == 0)
		t->first_start = db_cell_ll(r, i, RUN_START_S, 0);
	c->nruns = t->nruns;
	if (o != NULL && strcmp(o, "running") == 0)
		t->running++;
	else if (o != NULL && strcmp(o, "success") == 0) {
		if (manual)
			t->manual++;
		else
			t->launched++;
	} else
		t->failed++;
	cell_set_run(c, r, i);
}

/* The runs of every job since the oldest slot shown, in one statement:
 * the tail of the newest STATUS_TAILS failed runs of each job. */
static enum db_status
status_runs(struct db *db, struct status *s, int64_t since,
    struct db_result **res, char **errstr)
{
	struct buf     in;
	enum db_status st = DB_OK;
	size_t         i;

	buf_init(&in);
	buf_adds(&in, "job IN (");
	for (i = 0; i < s->njobs; i++) {
		if (i > 0)
			buf_addc(&in, ',');
		if (db_fragment(db, &in, errstr, "%s", s->jobs[i].job->name) !=
		    0) {
			st = DB_ERR_QUERY;
			goto out;
		}
	}
	buf_addc(&in, ')');
	st = db_query(db, res, errstr,
	    "SELECT job, FLOOR(UNIX_TIMESTAMP(slot)),"
	    " FLOOR(UNIX_TIMESTAMP(started_at)), CAST(started_at AS DATETIME),"
	    " TIMESTAMPDIFF(MICROSECOND, started_at,"
	    " COALESCE(finished_at, NOW(6))) DIV 1000,"
	    " host, outcome, exit_status, slot_kind, id,"
	    " IF(nfailed <= %u, tail, NULL), output_bytes"
	    " FROM (SELECT job, slot, started_at, finished_at, host, outcome,"
	    " exit_status, slot_kind, id, output_bytes,"
	    " IF(outcome IN ('success', 'running'), NULL,"
	    " RIGHT(output, %u)) AS tail,"
	    " ROW_NUMBER() OVER (PARTITION BY job,"
	    " outcome IN ('success', 'running') ORDER BY id DESC) AS nfailed"
	    " FROM cronguard_runs"
	    " WHERE started_at >= FROM_UNIXTIME(%lld) AND %F) x"
	    " ORDER BY job, started_at, id",
	    (unsigned)STATUS_TAILS, (unsigned)STATUS_TAIL_SIZE,
	    (long long)since, &in);
	if (st == DB_OK && (*res)->nrows > 0 && (*res)->ncols != RUN_NCOLS) {
		*errstr = xstrdup("runs: unexpected result");
		st = DB_ERR_QUERY;
	}
out:
	buf_free(&in);
	return st;
}

/* The strips of every job: slots from the schedules, runs and pauses
 * from one statement each. */
static enum db_status
status_strips(struct db *db, struct status *s, char **errstr)
{
	struct status_job      **sorted = NULL, *j;
	struct status_slot_runs *tally = NULL;
	struct status_cell_info *c;
	struct pause_span       *spans = NULL;
	struct db_result        *r = NULL;
	struct tzone_held       *held = NULL; /* the jobs' zones, in turn */
	enum db_status           st;
	const char              *name;
	int64_t                  oldest = s->now_s, slot, grace_s, first;
	size_t                   nspans = 0, i, k, off, *base = NULL;

	if (s->njobs == 0)
		return DB_OK;
	sorted = xcalloc(s->njobs, sizeof *sorted);
	base = xcalloc(s->njobs + 1, sizeof *base);
	for (i = 0; i < s->njobs; i++) {
		status_job_slots(s, &s->jobs[i], &oldest, &held);
		sorted[i] = &s->jobs[i];
		base[i + 1] = base[i] + s->jobs[i].ncells;
	}
	tzone_release(held);
	/* Unscheduled jobs show their runs of the same span, or of the
	 * last two days when no job has a schedule. */
	if (oldest == s->now_s)
		oldest = s->now_s - 2 * 86400;
	qsort(sorted, s->njobs, sizeof *sorted, job_cmp);
	tally = xcalloc(base[s->njobs] + 1, sizeof *tally);
	if ((st = status_runs(db, s, oldest, &r, errstr)) != DB_OK ||
	    (st = status_pause_spans(db, &spans, &nspans, errstr)) != DB_OK)
		goto out;
	for (i = 0; i < r->nrows; i++) {
		if ((name = db_cell(r, i, RUN_JOB)) == NULL ||
		    (j = job_find(sorted, s->njobs, name)) == NULL)
			continue;
		if (j->job->schedule == NULL) {
			status_run_cell(s, j, r, i);
			continue;
		}
		if (db_cell(r, i, RUN_SLOT) == NULL)
			continue;
		slot = db_cell_ll(r, i, RUN_SLOT, -1);
		if ((c = cell_of_slot(j, slot)) == NULL)
			continue;
		off = base[j - s->jobs] + (size_t)(c - j->cells);
		status_slot_run(c, &tally[off], r, i);
	}
	for (i = 0; i < s->njobs; i++) {
		j = &s->jobs[i];
		if (j->job->schedule == NULL)
			continue;
		grace_s = j->job->grace_ms / 1000;
		first = j->check.sched.st.first_run;
		for (k = 0; k < j->ncells; k++) {
			c = &j->cells[k];
			c->state =
			    status_slot_cell(&tally[base[i] + k], c->slot,
			        grace_s, s->now_s, first < 0 || c->slot < first,
			        status_paused_at(
			            spans, nspans, j->job->name, c->slot),
			        c->slot <= j->check.sched.acked);
		}
	}
out:
	for (i = 0; i < nspans; i++)
		free(spans[i].job);
	free(spans);
	db_result_free(r);
	free(tally);
	free(base);
	free(sorted);
	return st;
}

/* ------------------------------------------------------------ outbox */

static struct status_channel *
channel_find(struct status *s, const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < s->nchannels; i++) {
		if (strcmp(s->channels[i].conf->name, name) == 0)
			return &s->channels[i];
	}
	return NULL;
}

/* The counts of each channel, in one statement. */
static enum db_status
status_channel_counts(struct db *db, struct status *s, char **errstr)
{
	struct status_channel *ch;
	struct db_result      *r = NULL;
	enum db_status         st;
	size_t                 i;

	if ((st = db_query(db, &r, errstr,
	         "SELECT channel, SUM(status = 'PENDING'),"
	         " SUM(status = 'PENDING' AND next_attempt_at <= NOW(6)),"
	         " SUM(status = 'PROCESSING'), SUM(status = 'FAILED'),"
	         " SUM(status = 'FAILED' AND last_error LIKE 'expired%%'),"
	         " COALESCE(FLOOR(TIMESTAMPDIFF(MICROSECOND, MIN(IF("
	         " status = 'PENDING' AND next_attempt_at <= NOW(6),"
	         " next_attempt_at, NULL)), NOW(6)) / 1000000), 0)"
	         " FROM outbox_messages"
	         " WHERE status IN ('PENDING', 'PROCESSING', 'FAILED')"
	         " GROUP BY channel")) != DB_OK)
		return st;
	for (i = 0; i < r->nrows; i++) {
		if ((ch = channel_find(s, db_cell(r, i, 0))) == NULL)
			continue;
		ch->pending = db_cell_ll(r, i, 1, 0);
		ch->due = db_cell_ll(r, i, 2, 0);
		ch->processing = db_cell_ll(r, i, 3, 0);
		ch->failed = db_cell_ll(r, i, 4, 0);
		ch->expired = db_cell_ll(r, i, 5, 0);
		ch->oldest_due_age_s = db_cell_ll(r, i, 6, 0);
		if (ch->oldest_due_age_s < 0)
			ch->oldest_due_age_s = 0;
	}
	db_result_free(r);
	return DB_OK;
}

/* The blocked rows of each channel: outbox check's count (from the FAILED
 * rows to the PENDING rows they hold back), by channel. */
static enum db_status
status_channel_blocked(
    struct db *db, const struct conf *c, struct status *s, char **errstr)
{
	struct status_channel *ch;
	struct db_result      *r = NULL;
	struct buf             cond;
	enum db_status         st = DB_OK;
	size_t                 i;

	buf_init(&cond);
	if (c->outbox.ordering != ORDERING_PER_KEY)
		goto out;
	if (outbox_blocking_sql(db, &c->outbox, "f", "p", 1, &cond, errstr) !=
	    0) {
		st = DB_ERR_QUERY;
		goto out;
	}
	if ((st = db_query(db, &r, errstr,
	         "SELECT p.channel, COUNT(DISTINCT p.id)"
	         " FROM outbox_messages f FORCE INDEX (ix_outbox_due)"
	         " STRAIGHT_JOIN outbox_messages p ON %F AND"
	         " p.status = 'PENDING'"
	         " WHERE f.status = 'FAILED' AND f.ordering_key IS NOT NULL"
	         " GROUP BY p.channel",
	         &cond)) != DB_OK)
		goto out;
	for (i = 0; i < r->nrows; i++) {
		if ((ch = channel_find(s, db_cell(r, i, 0))) != NULL)
			ch->blocked = db_cell_ll(r, i, 1, 0);
	}
out:
	db_result_free(r);
	buf_free(&cond);
	return st;
}

/* The attempts of the last 24 hours by channel and hour, in one
 * statement (attempts of rows deleted since are not counted). */
static enum db_status
status_channel_hours(struct db *db, struct status *s, char **errstr)
{
	struct status_channel *ch;
	struct db_result      *r = NULL;
	enum db_status         st;
	long long              ago;
	size_t                 i, h;
	int                    k;

	if ((st = db_query(db, &r, errstr,
	         "SELECT m.channel, FLOOR(TIMESTAMPDIFF(SECOND, a.started_at,"
	         " NOW(6)) / 3600) AS ago, SUM(a.outcome = 'SENT'),"
	         " SUM(a.outcome = 'RETRY'), SUM(a.outcome = 'FAILED')"
	         " FROM outbox_attempts a"
	         " JOIN outbox_messages m ON m.id = a.outbox_id"
	         " WHERE a.started_at > NOW(6) - INTERVAL %u HOUR"
	         " GROUP BY m.channel, ago",
	         (unsigned)STATUS_HOURS)) != DB_OK)
		return st;
	for (i = 0; i < r->nrows; i++) {
		ago = db_cell_ll(r, i, 1, -1);
		if ((ch = channel_find(s, db_cell(r, i, 0))) == NULL ||
		    ago < 0 || ago >= STATUS_HOURS)
			continue;
		h = STATUS_HOURS - 1 - (size_t)ago;
		for (k = 0; k < 3; k++)
			ch->hours[h][k] += db_cell_ll(r, i, 2 + (size_t)k, 0);
	}
	db_result_free(r);
	return DB_OK;
}

static enum db_status
status_outbox(
    struct db *db, const struct conf *c, struct status *s, char **errstr)
{
	struct status_channel *ch;
	enum db_status         st;
	size_t                 i;

	s->channels = xcalloc(c->nchannels + 1, sizeof *s->channels);
	for (i = 0; i < c->nchannels; i++)
		s->channels[s->nchannels++].conf = &c->channels[i];
	if ((st = outbox_count(db, c, &s->counts, errstr)) != DB_OK ||
	    (st = outbox_count_channels(db, c, &s->counts, errstr)) != DB_OK ||
	    (st = status_channel_counts(db, s, errstr)) != DB_OK ||
	    (st = status_channel_blocked(db, c, s, errstr)) != DB_OK ||
	    (st = status_channel_hours(db, s, errstr)) != DB_OK)
		return st;
	s->outbox_status = outbox_verdict(&s->counts, &c->outbox);
	for (i = 0; i < s->counts.npaused; i++) {
		if ((ch = channel_find(s, s->counts.paused[i].channel)) != NULL)
			ch->pause = &s->counts.paused[i];
	}
	for (i = 0; i < s->counts.nchannels; i++) {
		if ((ch = channel_find(s, s->counts.channels[i].channel)) ==
		    NULL)
			continue;
		ch->limit = &s->counts.channels[i];
		ch->quota_exhausted = s->counts.quota[i].exhausted;
	}
	return DB_OK;
}

/* ------------------------------------------------------------- whole */

enum db_status
status_collect(struct db *db, const struct conf *c, unsigned slots,
    struct status *s, char **errstr)
{
	struct db_result *r = NULL;
	enum db_status    st;
	size_t            i;

	memset(s, 0, sizeof *s);
	s->slots = slots;
	s->jobs_status = CHECK_OK;
	s->outbox_status = CHECK_OK;
	s->statements = db_statements(db);
	if ((st = db_query(db, &r, errstr,
	         "SELECT CAST(NOW() AS CHAR), UNIX_TIMESTAMP(NOW())")) !=
	        DB_OK ||
	    (st = db_one_row(r, 2, errstr)) != DB_OK)
		goto out;
	s->now = xstrdup(db_cell(r, 0, 0) != NULL ? db_cell(r, 0, 0) : "");
	s->now_s = db_cell_ll(r, 0, 1, 0);
	s->jobs = xcalloc(c->njobs + 1, sizeof *s->jobs);
	for (i = 0; i < c->njobs; i++) {
		s->jobs[i].job = &c->jobs[i];
		buf_init(&s->jobs[i].check.msg);
	}
	s->njobs = c->njobs;
	if ((st = status_judge(db, s, errstr)) != DB_OK ||
	    (st = status_pauses(db, s, errstr)) != DB_OK ||
	    (st = status_strips(db, s, errstr)) != DB_OK)
		goto out;
	for (i = 0; i < s->njobs; i++)
		s->jobs_status =
		    check_status_worst(s->jobs_status, s->jobs[i].check.status);
	st = status_outbox(db, c, s, errstr);
out:
	s->statements = db_statements(db) - s->statements;
	db_result_free(r);
	return st;
}

void
status_free(struct status *s)
{
	size_t i, k;

	for (i = 0; i < s->njobs; i++) {
		jobcheck_free(&s->jobs[i].check);
		jobctl_pause_free(&s->jobs[i].pause);
		for (k = 0; k < s->jobs[i].ncells; k++)
			cell_clear_run(&s->jobs[i].cells[k]);
		free(s->jobs[i].cells);
		free(s->jobs[i].zone);
	}
	free(s->jobs);
	free(s->channels);
	outbox_counts_free(&s->counts);
	free(s->now);
	free(s->error);
	memset(s, 0, sizeof *s);
}
