/* runs.c: the run records (cronguard_runs, CONTRACT section 5.3). */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "duration.h"
#include "lock.h"
#include "log.h"
#include "report.h"
#include "runs.h"
#include "util.h"

#define RUNS_DAY_MS ((int64_t)24 * 3600 * 1000)

enum db_status
runs_abandon(
    struct db *db, const char *job, unsigned long long *n, char **errstr)
{
	struct db_result *r = NULL;
	enum db_status    st;
	char              count[32];

	*n = 0;
	st = db_query(db, &r, errstr,
	    "UPDATE cronguard_runs SET outcome = 'abandoned',"
	    " finished_at = NOW(6), error = CONCAT('abandoned: session ',"
	    " connection_id, ' is gone and does not hold lock ', lock_name,"
	    " '; found by ', %s)"
	    " WHERE job = %s AND outcome = 'running'"
	    " AND connection_id IS NOT NULL AND lock_name IS NOT NULL"
	    " AND NOT (IS_USED_LOCK(lock_name) <=> connection_id)"
	    " AND connection_id NOT IN"
	    "  (SELECT p.ID FROM information_schema.PROCESSLIST p)",
	    self_identity(), job);
	if (st == DB_OK && (*n = r->affected) > 0) {
		snprintf(count, sizeof count, "%llu", *n);
		log_kv(LOG_WARN, "run_abandoned", "job", job, "runs", count,
		    "msg",
		    "run record left running by a cronguard that died: closed as abandoned",
		    NULL);
	}
	db_result_free(r);
	return st;
}

/* Closing abandoned runs is housekeeping: a failure (a monitoring user
 * without UPDATE, say) is logged and leaves them for the next one. */
static void
runs_abandon_quietly(struct db *db, const char *job)
{
	unsigned long long n;
	char              *errstr = NULL;

	if (runs_abandon(db, job, &n, &errstr) != DB_OK)
		log_kv(LOG_WARN, "run_abandon_failed", "job", job, "error",
		    errstr, NULL);
	free(errstr);
}

enum db_status
runs_insert(struct db *db, const struct run_start_info *ri,
    unsigned long long *id, char **errstr)
{
	struct db_result *r = NULL;
	enum db_status    st;

	runs_abandon_quietly(db, ri->job);
	st = db_query(db, &r, errstr,
	    "INSERT INTO cronguard_runs (job, lock_name, host, pid,"
	    " connection_id, fence, run_uuid) VALUES (%s, %s, %s, %lld,"
	    " IF(%d, CONNECTION_ID(), NULL), NULLIF(%llu, 0), %s)",
	    ri->job, ri->lock, ri->host, (long long)ri->pid,
	    ri->connection_id != 0, ri->fence, ri->uuid);
	if (st == DB_OK)
		*id = r->insert_id;
	db_result_free(r);
	return st;
}

enum db_status
runs_heartbeat(struct db *db, unsigned long long id, char **errstr)
{
	return db_query(db, NULL, errstr,
	    "UPDATE cronguard_runs"
	    " SET heartbeat_at = NOW(6) WHERE id = %llu",
	    id);
}

enum db_status
runs_finish(struct db *db, unsigned long long id, const char *outcome,
    int exit_status, const char *error, const struct run_output *output,
    char **errstr)
{
	/* A job's status is 0..255: -1 (none) becomes NULL. */
	int status = exit_status < 0 ? -1 : exit_status;

	if (output == NULL)
		return db_query(db, NULL, errstr,
		    "UPDATE cronguard_runs"
		    " SET finished_at = NOW(6), outcome = %s,"
		    " exit_status = NULLIF(%d, -1), error = %s WHERE id = %llu",
		    outcome, status, error, id);
	/* The output is bytes: _binary keeps the server from reading them
	 * as the session's utf8mb4 (a job may print anything, NUL too).
	 * The tail is at most OUTPUT_MAX_LIMIT, within %.*s's int. */
	return db_query(db, NULL, errstr,
	    "UPDATE cronguard_runs"
	    " SET finished_at = NOW(6), outcome = %s,"
	    " exit_status = NULLIF(%d, -1), error = %s,"
	    " output = _binary %.*s, output_bytes = %llu WHERE id = %llu",
	    outcome, status, error, (int)output->len,
	    output->data != NULL ? output->data : "", output->total, id);
}

enum lock_result
runs_start(
    struct lock *l, const char *host, long pid, const char *uuid, char **errstr)
{
	struct run_start_info ri;
	enum db_status        st;

	memset(&ri, 0, sizeof ri);
	ri.job = l->job;
	ri.lock = l->name;
	ri.host = host;
	ri.pid = pid;
	ri.connection_id = l->held && l->lease_us == 0 ? l->connection_id : 0;
	ri.fence = l->fence;
	ri.uuid = uuid;
	if ((st = l->ops->run_start(l->conn, &ri, &l->run_id, errstr)) !=
	    DB_OK) {
		l->run_id = 0;
		return lock_result_of_db(st);
	}
	return LOCK_OK;
}

/* keep_runs after a run: housekeeping, so a failure (a deadlock with
 * another host's prune, say) is logged and left to the next run. */
static void
runs_prune_quietly(struct lock *l)
{
	unsigned long long n = 0;
	char              *errstr = NULL, count[32];

	if (l->keep_runs == 0 || l->ops->run_prune == NULL || l->conn == NULL)
		return;
	if (l->ops->run_prune(l->conn, l->job, l->keep_runs, &n, &errstr) !=
	    DB_OK)
		log_kv(LOG_WARN, "runs_prune_failed", "job", l->job, "error",
		    errstr, NULL);
	else if (n > 0) {
		snprintf(count, sizeof count, "%llu", n);
		log_kv(LOG_DEBUG, "runs_pruned", "job", l->job, "runs", count,
		    NULL);
	}
	free(errstr);
}

void
runs_end(struct lock *l, const struct run_end *end, int incident,
    const char *jobtext)
{
	char          *errstr = NULL, *detail = NULL, *error = NULL;
	const char    *outcome = end->outcome;
	enum db_status st = DB_ERR_CONNECT;
	int            attempt;

	if (incident)
		outcome = l->lost ? "lock_lost" : "incident";
	if (incident && end->error != NULL)
		error = xasprintf("%s; lock incident, see the log", end->error);
	else if (incident)
		error = xstrdup("lock incident, see the log");
	else if (end->error != NULL)
		error = xstrdup(end->error);

	for (attempt = 0; attempt < 2; attempt++) {
		if (l->conn == NULL || l->dead) {
			if (l->conn != NULL)
				l->ops->destroy(l->conn, NULL);
			l->conn = NULL;
			l->dead = 0;
			free(errstr);
			errstr = NULL;
			if ((st = l->ops->connect(l->ctx, &l->conn, &errstr)) !=
			    DB_OK) {
				l->conn = NULL;
				break;
			}
		}
		free(errstr);
		errstr = NULL;
		st = l->ops->run_finish(l->conn, l->run_id, outcome,
		    end->exit_status, error, end->output, &errstr);
		if (st != DB_ERR_LOST)
			break;
		l->dead = 1;
	}
	if (st == DB_OK)
		runs_prune_quietly(l);
	if (st != DB_OK) {
		detail = xasprintf("finishing run record %llu failed: %s (%s)",
		    l->run_id, errstr != NULL ? errstr : "unknown error",
		    jobtext);
		lock_incident(l, "run_record_failed", detail);
	}
	free(detail);
	free(error);
	free(errstr);
}

enum db_status
runs_job_summary(
    struct db *db, const char *job, struct job_summary *js, char **errstr)
{
	struct db_result *r = NULL;
	enum db_status    st;
	const char       *cell, *e;

	memset(js, 0, sizeof *js);
	js->last_success_ts = -1;
	js->last_success_age_s = js->last_age_s = js->last_exit_status = -1;
	js->last_session_alive = -1;
	runs_abandon_quietly(db, job);
	st = db_query(db, &r, errstr,
	    "SELECT s.fin, UNIX_TIMESTAMP(s.fin),"
	    " TIMESTAMPDIFF(SECOND, s.fin, NOW(6)),"
	    " r.id, r.outcome, r.started_at,"
	    " TIMESTAMPDIFF(SECOND, r.started_at, NOW(6)), r.finished_at,"
	    " r.exit_status, r.connection_id,"
	    " (SELECT COUNT(*) FROM information_schema.PROCESSLIST p"
	    "  WHERE p.ID = r.connection_id),"
	    " d.id, d.outcome, d.finished_at, r.fence"
	    " FROM (SELECT MAX(finished_at) AS fin FROM cronguard_runs"
	    "  WHERE job = %s AND outcome = 'success') s"
	    " LEFT JOIN cronguard_runs r ON r.id = (SELECT MAX(x.id)"
	    "  FROM cronguard_runs x WHERE x.job = %s)"
	    " LEFT JOIN cronguard_runs d ON d.id = (SELECT MAX(y.id)"
	    "  FROM cronguard_runs y WHERE y.job = %s"
	    "  AND y.outcome <> 'running')",
	    job, job, job);
	if (st != DB_OK)
		goto out;
	if ((st = db_one_row(r, 15, errstr)) != DB_OK)
		goto out;
	js->last_success = db_cell_dup(r, 0, 0);
	if ((cell = db_cell(r, 0, 1)) != NULL &&
	    parse_double(cell, 0, 1e12, &js->last_success_ts, &e) != 0)
		js->last_success_ts = -1;
	js->last_success_age_s = db_cell_ll(r, 0, 2, -1);
	js->last_id = (unsigned long long)db_cell_ll(r, 0, 3, 0);
	js->last_outcome = db_cell_dup(r, 0, 4);
	js->last_started = db_cell_dup(r, 0, 5);
	js->last_age_s = db_cell_ll(r, 0, 6, -1);
	js->last_finished = db_cell_dup(r, 0, 7);
	js->last_exit_status = db_cell_ll(r, 0, 8, -1);
	js->last_connection_id = (unsigned long long)db_cell_ll(r, 0, 9, 0);
	if (js->last_connection_id != 0)
		js->last_session_alive = db_cell_ll(r, 0, 10, 0) > 0;
	js->done_id = (unsigned long long)db_cell_ll(r, 0, 11, 0);
	js->done_outcome = db_cell_dup(r, 0, 12);
	js->done_finished = db_cell_dup(r, 0, 13);
	js->last_fence = (unsigned long long)db_cell_ll(r, 0, 14, 0);
out:
	db_result_free(r);
	return st;
}

void
runs_job_summary_free(struct job_summary *js)
{
	free(js->last_success);
	free(js->last_outcome);
	free(js->last_started);
	free(js->last_finished);
	free(js->done_outcome);
	free(js->done_finished);
	memset(js, 0, sizeof *js);
}

enum db_status
runs_slot(struct db *db, const char *job, int64_t once_per_ms, const char *tz,
    const char *at, struct run_slot *rs, char **errstr)
{
	struct db_result *r = NULL;
	enum db_status    st;
	long long         days, secs;

	memset(rs, 0, sizeof *rs);
	/* Whole days: a slot of "days" days (conf.c checks the period). */
	days = once_per_ms >= RUNS_DAY_MS ? once_per_ms / RUNS_DAY_MS : 1;
	secs = once_per_ms >= RUNS_DAY_MS ? RUNS_DAY_MS / 1000
	                                  : once_per_ms / 1000;
	if (secs <= 0) {
		*errstr = xasprintf("once_per must be at least a second");
		return DB_ERR_QUERY;
	}
	/* loc: now in tz; sl: the slot's start in tz, back to UTC. */
	st = db_query(db, &r, errstr,
	    "SELECT CONVERT_TZ(s.sl, s.tz, @@session.time_zone),"
	    " CONVERT_TZ(s.sl + INTERVAL %lld DAY + INTERVAL %lld SECOND,"
	    "  s.tz, @@session.time_zone),"
	    " (SELECT MIN(r.id) FROM cronguard_runs r WHERE r.job = %s"
	    "  AND r.outcome = 'success' AND r.started_at <= s.now"
	    "  AND r.started_at >= CONVERT_TZ(s.sl, s.tz, @@session.time_zone)),"
	    " s.loc IS NULL,"
	    " CONVERT_TZ('2000-01-01 00:00:00', '+00:00', 'UTC') IS NOT NULL"
	    " FROM (SELECT l.now, l.tz, l.loc,"
	    "  TIMESTAMP(DATE(l.loc) - INTERVAL MOD(TO_DAYS(l.loc), %lld) DAY)"
	    "  + INTERVAL FLOOR(TIME_TO_SEC(l.loc) / %lld) * %lld SECOND AS sl"
	    "  FROM (SELECT n.now, n.tz,"
	    "   CONVERT_TZ(n.now, @@session.time_zone, n.tz) AS loc"
	    "   FROM (SELECT COALESCE(CAST(%s AS DATETIME(6)), NOW(6)) AS now,"
	    "    COALESCE(%s, @@global.time_zone) AS tz) n) l) s",
	    days - 1, secs, job, days, secs, secs, at, tz);
	if (st != DB_OK)
		goto out;
	if ((st = db_one_row(r, 5, errstr)) != DB_OK)
		goto out;
	rs->tz_tables = db_cell_ll(r, 0, 4, 0) == 1;
	if ((rs->tz_unknown = db_cell_ll(r, 0, 3, 1) != 0))
		goto out;
	rs->start = db_cell_dup(r, 0, 0);
	rs->end = db_cell_dup(r, 0, 1);
	rs->done_id = (unsigned long long)db_cell_ll(r, 0, 2, 0);
	if (rs->start == NULL || rs->end == NULL) {
		*errstr = xasprintf("no slot for %s%s", at != NULL ? at : "now",
		    " (a local time the zone skips?)");
		st = DB_ERR_QUERY;
	}
out:
	db_result_free(r);
	return st;
}

void
runs_slot_free(struct run_slot *rs)
{
	free(rs->start);
	free(rs->end);
	memset(rs, 0, sizeof *rs);
}

enum db_status
runs_locks(struct db *db, struct db_result **res, char **errstr)
{
	return db_query(db, res, errstr,
	    "SELECT DISTINCT lock_name FROM cronguard_runs"
	    " WHERE outcome = 'running' AND lock_name IS NOT NULL"
	    " ORDER BY lock_name");
}

/* ------------------------------------------------------- jobs check */

static void runs_check_add(struct job_check *jc, enum check_status st,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
runs_check_add(struct job_check *jc, enum check_status st, const char *fmt, ...)
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
runs_outcome_status(const char *outcome)
{
	if (strcmp(outcome, "incident") == 0 ||
	    strcmp(outcome, "lock_lost") == 0)
		return CHECK_CRITICAL;
	return CHECK_WARNING;
}

/* The slot before rs's and rs's own into jc->slots (the previous one
 * is the slot of the last microsecond before rs starts). */
static enum db_status
runs_check_tally(struct db *db, const struct conf_job *j, struct job_check *jc,
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
runs_check_slots(struct db *db, const struct conf_job *j, struct job_check *jc,
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
		runs_check_add(jc, CHECK_UNKNOWN,
		    "timezone %s is unknown to the server",
		    j->timezone != NULL ? j->timezone : "(the server's)");
		goto out;
	}
	if ((st = runs_check_tally(db, j, jc, &rs, errstr)) != DB_OK)
		goto out;
	t = &jc->slots[0];
	/* A slot before the job's first run is not missed. */
	if (t->successes == 0 && t->had_runs && t->since_end_ms > j->grace_ms) {
		if (t->caught_up_id != 0)
			runs_check_add(jc, CHECK_WARNING,
			    "slot %.19s had no successful run (caught up by run %llu)",
			    t->start, t->caught_up_id);
		else
			runs_check_add(jc, CHECK_CRITICAL,
			    "slot %.19s ended at %.19s with no successful run",
			    t->start, t->end);
	}
	for (i = 0; i < jc->nslots; i++) {
		t = &jc->slots[i];
		if (t->successes > 1)
			runs_check_add(jc, CHECK_WARNING,
			    "ran twice: %lld successful runs in slot %.19s (runs %llu and %llu)",
			    t->successes, t->start, t->first_id, t->last_id);
	}
out:
	runs_slot_free(&rs);
	return st;
}

enum db_status
runs_check(struct db *db, const struct conf_job *j, struct job_check *jc,
    char **errstr)
{
	const struct job_summary *js = &jc->js;
	char                      d1[32], d2[32], age[32];
	char                     *why = NULL;
	int64_t                   limit;
	enum db_status            st;

	memset(jc, 0, sizeof *jc);
	jc->job = j;
	jc->status = CHECK_OK;
	buf_init(&jc->msg);
	buf_adds(&jc->msg, ""); /* never NULL data */
	if ((st = runs_job_summary(db, j->name, &jc->js, errstr)) != DB_OK)
		return st;
	if (j->guard == GUARD_NAMED_LOCK &&
	    (st = lock_holder_get(db, j->lock, &jc->holder, errstr)) != DB_OK)
		return st;

	if (j->expect_every_ms > 0) {
		duration_format(j->expect_every_ms, d1, sizeof d1);
		duration_format(j->grace_ms, d2, sizeof d2);
		limit = j->expect_every_ms + j->grace_ms;
		if (js->last_success_ts < 0)
			runs_check_add(jc, CHECK_WARNING,
			    "no successful run recorded (expected every %s + %s)",
			    d1, d2);
		else if (js->last_success_age_s * 1000 > limit) {
			duration_format(
			    js->last_success_age_s * 1000, age, sizeof age);
			runs_check_add(jc, CHECK_CRITICAL,
			    "last success %s ago (expected every %s + %s)", age,
			    d1, d2);
		}
	}

	/* Until a later run succeeds; a run still going clears nothing. */
	if (js->done_outcome != NULL &&
	    strcmp(js->done_outcome, "success") != 0)
		runs_check_add(jc, runs_outcome_status(js->done_outcome),
		    "last run %llu: %s at %.19s", js->done_id, js->done_outcome,
		    js->done_finished != NULL ? js->done_finished : "?");

	jc->running = js->last_outcome != NULL &&
	    strcmp(js->last_outcome, "running") == 0;
	if (jc->running && js->last_session_alive == 0) {
		/* The session of a live run is there until it finishes. */
		runs_check_add(jc, CHECK_WARNING,
		    "run %llu died without finishing (its session %llu is gone)",
		    js->last_id, js->last_connection_id);
		jc->running = 0;
	} else if (jc->running && js->last_age_s >= 0) {
		duration_format(js->last_age_s * 1000, age, sizeof age);
		duration_format(j->max_runtime_ms, d1, sizeof d1);
		if (js->last_age_s * 1000 > j->max_runtime_ms + j->grace_ms)
			runs_check_add(jc, CHECK_CRITICAL,
			    "run %llu running for %s, past max_runtime %s + grace",
			    js->last_id, age, d1);
		else if (js->last_age_s * 1000 > j->max_runtime_ms)
			runs_check_add(jc, CHECK_WARNING,
			    "run %llu running for %s, past max_runtime %s",
			    js->last_id, age, d1);
	}

	/* A lock that no run of ours accounts for. */
	if (jc->holder.connection_id != 0 && jc->holder.run_id == 0 &&
	    lock_holder_stuck(
	        &jc->holder, j->max_runtime_ms, j->grace_ms, &why))
		runs_check_add(
		    jc, CHECK_CRITICAL, "lock %s held by %s", j->lock, why);
	free(why);
	if (j->once_per_ms > 0)
		return runs_check_slots(db, j, jc, errstr);
	return DB_OK;
}

void
runs_check_free(struct job_check *jc)
{
	int i;

	for (i = 0; i < jc->nslots; i++)
		runs_slot_tally_free(&jc->slots[i]);
	buf_free(&jc->msg);
	runs_job_summary_free(&jc->js);
	lock_holder_free(&jc->holder);
}

enum db_status
runs_slot_tally(struct db *db, const char *job, const char *start,
    const char *end, struct run_slot_tally *t, char **errstr)
{
	struct db_result *r = NULL;
	enum db_status    st;

	memset(t, 0, sizeof *t);
	st = db_query(db, &r, errstr,
	    "SELECT COUNT(r.id), MIN(r.id), MAX(r.id),"
	    " TIMESTAMPDIFF(MICROSECOND, CAST(%s AS DATETIME(6)), NOW(6))"
	    "  DIV 1000,"
	    " EXISTS (SELECT 1 FROM cronguard_runs x WHERE x.job = %s"
	    "  AND x.started_at < %s),"
	    " (SELECT MIN(y.id) FROM cronguard_runs y WHERE y.job = %s"
	    "  AND y.outcome = 'success' AND y.started_at >= %s)"
	    " FROM cronguard_runs r WHERE r.job = %s"
	    " AND r.outcome = 'success' AND r.started_at >= %s"
	    " AND r.started_at < %s",
	    end, job, end, job, end, job, start, end);
	if (st != DB_OK)
		goto out;
	if ((st = db_one_row(r, 6, errstr)) != DB_OK)
		goto out;
	t->start = xstrdup(start);
	t->end = xstrdup(end);
	t->successes = db_cell_ll(r, 0, 0, 0);
	t->first_id = (unsigned long long)db_cell_ll(r, 0, 1, 0);
	t->last_id = (unsigned long long)db_cell_ll(r, 0, 2, 0);
	t->since_end_ms = db_cell_ll(r, 0, 3, 0);
	t->had_runs = db_cell_ll(r, 0, 4, 0) == 1;
	t->caught_up_id = (unsigned long long)db_cell_ll(r, 0, 5, 0);
out:
	db_result_free(r);
	return st;
}

void
runs_slot_tally_free(struct run_slot_tally *t)
{
	free(t->start);
	free(t->end);
	memset(t, 0, sizeof *t);
}

/* ------------------------------------------- run history (jobs runs) */

/* RUNS_LIST_COLUMNS as expressions. */
#define RUNS_LIST_SELECT \
	"SELECT id, job, host, pid, started_at, finished_at," \
	" TIMESTAMPDIFF(MICROSECOND, started_at," \
	"  COALESCE(finished_at, NOW(6))) DIV 1000 AS duration_ms," \
	" outcome, exit_status, fence, run_uuid, output_bytes"

enum db_status
runs_list(struct db *db, const char *job, unsigned limit,
    struct db_result **res, char **errstr)
{
	/* Newest first by id: ix_runs_job (job, id) read backwards. */
	if (job != NULL)
		return db_query(db, res, errstr,
		    RUNS_LIST_SELECT " FROM cronguard_runs WHERE job = %s"
		                     " ORDER BY id DESC LIMIT %u",
		    job, limit);
	return db_query(db, res, errstr,
	    RUNS_LIST_SELECT " FROM cronguard_runs ORDER BY id DESC LIMIT %u",
	    limit);
}

enum db_status
runs_get(
    struct db *db, unsigned long long id, struct db_result **res, char **errstr)
{
	return db_query(db, res, errstr,
	    RUNS_LIST_SELECT ", lock_name, connection_id, heartbeat_at, error,"
	                     " OCTET_LENGTH(output) AS output_length, output"
	                     " FROM cronguard_runs WHERE id = %llu",
	    id);
}

/*
 * The newest successful run of each job (of job j only with %s): never
 * deleted.  In a derived table, which the server materialises, because a
 * DELETE may not read its own table otherwise.
 */
#define RUNS_NEWEST_SUCCESS \
	" SELECT k.id FROM (SELECT (SELECT x.id FROM cronguard_runs x" \
	"  WHERE x.job = j.job AND x.outcome = 'success'" \
	"  ORDER BY x.finished_at DESC, x.id DESC LIMIT 1) AS id" \
	"  FROM (SELECT DISTINCT job FROM cronguard_runs" \
	"   WHERE %s IS NULL OR job = %s) j) k WHERE k.id IS NOT NULL"

enum db_status
runs_purge(
    struct db *db, int64_t before_ms, unsigned long long *n, char **errstr)
{
	struct db_result  *r = NULL;
	enum db_status     st;
	unsigned long long got;

	*n = 0;
	do {
		st = db_query_retry(db, &r, errstr,
		    "DELETE FROM cronguard_runs"
		    " WHERE started_at < NOW(6) - INTERVAL %lld MICROSECOND"
		    " AND finished_at < NOW(6) - INTERVAL %lld MICROSECOND"
		    " AND outcome <> 'running' AND id NOT IN (" RUNS_NEWEST_SUCCESS
		    ") ORDER BY started_at LIMIT %u",
		    (long long)before_ms * 1000, (long long)before_ms * 1000,
		    (const char *)NULL, (const char *)NULL,
		    (unsigned)RUNS_DELETE_BATCH);
		got = st == DB_OK ? r->affected : 0;
		*n += got;
		db_result_free(r);
		r = NULL;
	} while (st == DB_OK && got == RUNS_DELETE_BATCH);
	return st;
}

enum db_status
runs_prune(struct db *db, const char *job, unsigned keep, unsigned long long *n,
    char **errstr)
{
	struct db_result *r = NULL;
	enum db_status    st;

	*n = 0;
	if (keep == 0)
		return DB_OK;
	/* Below the keep-th newest id: ix_runs_job (job, id) both times. */
	st = db_query(db, &r, errstr,
	    "DELETE FROM cronguard_runs WHERE job = %s"
	    " AND outcome <> 'running'"
	    " AND id < (SELECT c.id FROM (SELECT id FROM cronguard_runs"
	    "  WHERE job = %s ORDER BY id DESC LIMIT 1 OFFSET %u) c)"
	    " AND id NOT IN (" RUNS_NEWEST_SUCCESS ")"
	    " ORDER BY id LIMIT %u",
	    job, job, keep - 1, job, job, (unsigned)RUNS_DELETE_BATCH);
	if (st == DB_OK)
		*n = r->affected;
	db_result_free(r);
	return st;
}

enum db_status
runs_lock_fence(struct db *db, const char *name, unsigned long long run_id,
    unsigned long long *held, unsigned long long *last, char **errstr)
{
	struct db_result *r = NULL;
	enum db_status    st;

	*held = *last = 0;
	st = db_query(db, &r, errstr,
	    "SELECT (SELECT fence FROM cronguard_runs WHERE id = %llu),"
	    " (SELECT fence FROM cronguard_leases WHERE name = %s)",
	    run_id, name);
	if (st == DB_OK && (st = db_one_row(r, 2, errstr)) == DB_OK) {
		*held = (unsigned long long)db_cell_ll(r, 0, 0, 0);
		*last = (unsigned long long)db_cell_ll(r, 0, 1, 0);
	}
	db_result_free(r);
	return st;
}
