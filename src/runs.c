/* runs.c: the run records (cronguard_runs; cronguard(1), GUARDED JOBS). */
#include "config.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "duration.h"
#include "jobctl.h"
#include "log.h"
#include "check.h"
#include "runs.h"
#include "schedule.h"
#include "util.h"

#define RUNS_DAY_MS ((int64_t)24 * 3600 * 1000)

/* The runs left "running" by a cronguard that died: the session is gone
 * and does not hold the lock (runs.h, runs_abandon).
 * Never on a read-only server (its %R, db_read_only_sql): jobs list and
 * jobs check run on replicas too, and must never write there. */
#define RUNS_ABANDONED_SQL \
	" outcome = 'running'" \
	" AND connection_id IS NOT NULL AND lock_name IS NOT NULL" \
	" AND NOT (IS_USED_LOCK(lock_name) <=> connection_id)" \
	" AND connection_id NOT IN" \
	"  (SELECT p.ID FROM information_schema.PROCESSLIST p)" \
	" AND %R IS NULL"

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
	    " '; found by ', %s) WHERE job = %s AND" RUNS_ABANDONED_SQL,
	    self_identity(), job, db_read_only_sql(db));
	if (st == DB_OK && (*n = r->affected) > 0) {
		snprintf(count, sizeof count, "%llu", *n);
		log_kv(LOG_WARN, "run_abandoned", "job", job, "runs", count,
		    "msg",
		    "run record left running by a cronguard that died: closed as abandoned");
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
		    errstr);
	free(errstr);
}

/* The slot_flags (RUNS_FLAG_*) and slot_gap_from of ri's record
 * (sql/016; manual: a run --slot), as SQL into *sql (buf_init'ed): NULL
 * without the slot before. */
static enum db_status
runs_flags_sql(struct db *db, const struct run_start_info *ri, int manual,
    struct buf *sql, char **errstr)
{
	if (ri->slot_prev == NULL) {
		buf_adds(sql, "NULL, NULL");
		return DB_OK;
	}
	if (db_fragment(db, sql, errstr,
	        "(NOT EXISTS (SELECT 1 FROM cronguard_runs"
	        " WHERE job = %s AND slot = %s)) * %d"
	        " + (NOT %d AND EXISTS (SELECT 1 FROM cronguard_runs"
	        " WHERE job = %s AND slot = %s"
	        " AND outcome IN ('running', 'success')"
	        " AND NOT slot_kind <=> 'manual')) * %d"
	        " + EXISTS (SELECT 1 FROM cronguard_runs"
	        " WHERE job = %s AND slot > %s) * %d,"
	        " (SELECT MAX(slot) FROM cronguard_runs"
	        " WHERE job = %s AND slot < %s)",
	        ri->job, ri->slot_prev, RUNS_FLAG_GAP, manual, ri->job,
	        ri->slot, RUNS_FLAG_TWICE, ri->job, ri->slot, RUNS_FLAG_FILL,
	        ri->job, ri->slot) != 0)
		return DB_ERR_QUERY;
	return DB_OK;
}

enum db_status
runs_insert(struct db *db, const struct run_start_info *ri,
    unsigned long long *id, char **errstr)
{
	struct db_result *r = NULL;
	struct buf        flags;
	enum db_status    st;
	int               manual;

	buf_init(&flags);
	runs_abandon_quietly(db, ri->job);
	manual = ri->slot != NULL && strcmp(ri->slot_kind, "manual") == 0;
	if (ri->slot != NULL &&
	    runs_flags_sql(db, ri, manual, &flags, errstr) != DB_OK) {
		buf_free(&flags);
		return DB_ERR_QUERY;
	}
	if (ri->slot == NULL)
		st = db_query(db, &r, errstr,
		    "INSERT INTO cronguard_runs (job, lock_name, host, pid,"
		    " connection_id, fence, run_uuid) VALUES (%s, %s, %s, %lld,"
		    " IF(%d, CONNECTION_ID(), NULL), NULLIF(%llu, 0), %s)",
		    ri->job, ri->lock, ri->host, (long long)ri->pid,
		    ri->connection_id != 0, ri->fence, ri->uuid);
	else
		/*
		 * The slot's own check, in the insert: a host that took the
		 * lock after another finished the slot (between its look at
		 * the slot and its GET_LOCK) writes no record and runs
		 * nothing.  Under the lock, so no second record can race it.
		 * A manual run (run --slot) is an operator's re-run and is
		 * always written.
		 */
		st = db_query(db, &r, errstr,
		    "INSERT INTO cronguard_runs (job, lock_name, host, pid,"
		    " connection_id, fence, run_uuid, slot, slot_kind,"
		    " slot_flags, slot_gap_from)"
		    " SELECT %s, %s, %s, %lld, IF(%d, CONNECTION_ID(), NULL),"
		    " NULLIF(%llu, 0), %s, %s, %s, %F FROM DUAL"
		    " WHERE %d OR NOT EXISTS (SELECT 1 FROM cronguard_runs"
		    " WHERE job = %s AND outcome = 'success' AND slot = %s)",
		    ri->job, ri->lock, ri->host, (long long)ri->pid,
		    ri->connection_id != 0, ri->fence, ri->uuid, ri->slot,
		    ri->slot_kind, &flags, manual, ri->job, ri->slot);
	if (st == DB_OK)
		*id = r->affected > 0 ? r->insert_id : 0;
	db_result_free(r);
	buf_free(&flags);
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

/* Output longer than this is checked against the server's
 * max_allowed_packet before it is written (no server takes a packet under
 * 1 MiB), so the common record costs no statement more. */
#define RUNS_OUTPUT_UNCHECKED ((size_t)448 << 10)
/* What the statement around the output takes at most. */
#define RUNS_STATEMENT_ROOM ((unsigned long long)64 << 10)

size_t
runs_output_room(unsigned long long pkt)
{
	if (pkt <= 2 * RUNS_STATEMENT_ROOM)
		return 0;
	return (size_t)((pkt - RUNS_STATEMENT_ROOM) / 2);
}

enum db_status
runs_max_packet(struct db *db, unsigned long long *pkt, char **errstr)
{
	char          *value = NULL;
	const char    *perr;
	enum db_status st;

	st = db_query_value(
	    db, &value, errstr, "SELECT @@SESSION.max_allowed_packet");
	if (st == DB_OK &&
	    (value == NULL || parse_ull(value, ULLONG_MAX, pkt, &perr) != 0)) {
		*errstr = xasprintf("max_allowed_packet is '%s', not a number",
		    value != NULL ? value : "NULL");
		st = DB_ERR_QUERY;
	}
	free(value);
	return st;
}

/* The room on db's session, or 0 when the server does not say (the write
 * then goes as it is, and lock.c retries it without the output). */
static size_t
runs_session_room(struct db *db)
{
	unsigned long long pkt;
	char              *errstr = NULL;
	size_t             room = 0;

	if (runs_max_packet(db, &pkt, &errstr) == DB_OK)
		room = runs_output_room(pkt);
	free(errstr);
	return room;
}

enum db_status
runs_finish(struct db *db, unsigned long long id, const char *outcome,
    int exit_status, const char *error, const struct run_output *output,
    char **errstr)
{
	/* A job's status is 0..255: -1 (none) becomes NULL. */
	int         status = exit_status < 0 ? -1 : exit_status;
	const char *data;
	size_t      len, room;

	if (output == NULL)
		return db_query(db, NULL, errstr,
		    "UPDATE cronguard_runs"
		    " SET finished_at = NOW(6), outcome = %s,"
		    " exit_status = NULLIF(%d, -1), error = %s WHERE id = %llu",
		    outcome, status, error, id);
	/* Cut to what the server takes: the newest bytes are kept, and
	 * output_bytes, still the whole count, is the visible marker. */
	data = output->data != NULL ? output->data : "";
	len = output->len;
	if (len > RUNS_OUTPUT_UNCHECKED && (room = runs_session_room(db)) > 0 &&
	    len > room) {
		data += len - room;
		len = room;
	}
	/* The output is bytes: _binary keeps the server from reading them
	 * as the session's utf8mb4 (a job may print anything, NUL too).
	 * The tail is at most OUTPUT_MAX_LIMIT, within %.*s's int. */
	return db_query(db, NULL, errstr,
	    "UPDATE cronguard_runs"
	    " SET finished_at = NOW(6), outcome = %s,"
	    " exit_status = NULLIF(%d, -1), error = %s,"
	    " output = _binary %.*s, output_bytes = %llu WHERE id = %llu",
	    outcome, status, error, (int)len, data, output->total, id);
}

/* The jobs of jobs[0..n) with a run runs_abandon would close, in one
 * statement (ix_runs_job_outcome: the running runs only), then
 * runs_abandon for those: none, as a rule, so jobs check and jobs list
 * over any number of jobs cost one statement here. */
static enum db_status
runs_abandon_all(
    struct db *db, const char *const *jobs, size_t n, char **errstr)
{
	struct db_result *r = NULL;
	enum db_status    st;
	size_t            i;

	if (n == 1) {
		runs_abandon_quietly(db, jobs[0]);
		return DB_OK;
	}
	st = db_query(db, &r, errstr,
	    "SELECT DISTINCT job FROM cronguard_runs WHERE job IN (%A)"
	    " AND" RUNS_ABANDONED_SQL,
	    n, jobs, db_read_only_sql(db));
	for (i = 0; st == DB_OK && i < r->nrows; i++)
		if (db_cell(r, i, 0) != NULL)
			runs_abandon_quietly(db, db_cell(r, i, 0));
	db_result_free(r);
	return st;
}

/* One job's summary, row row of r from column 1 (column 0 is its index). */
static void
runs_job_summary_row(
    const struct db_result *r, size_t row, struct job_summary *js)
{
	const char *cell, *e;

	js->last_success = db_cell_dup(r, row, 1);
	if ((cell = db_cell(r, row, 2)) != NULL &&
	    parse_double(cell, 0, 1e12, &js->last_success_ts, &e) != 0)
		js->last_success_ts = -1;
	js->last_success_age_s = db_cell_ll(r, row, 3, -1);
	js->last_id = (unsigned long long)db_cell_ll(r, row, 4, 0);
	js->last_outcome = db_cell_dup(r, row, 5);
	js->last_started = db_cell_dup(r, row, 6);
	js->last_age_s = db_cell_ll(r, row, 7, -1);
	js->last_finished = db_cell_dup(r, row, 8);
	js->last_exit_status = db_cell_ll(r, row, 9, -1);
	js->last_connection_id = (unsigned long long)db_cell_ll(r, row, 10, 0);
	if (js->last_connection_id != 0 && db_cell(r, row, 11) != NULL)
		js->last_session_alive = db_cell_ll(r, row, 11, 0) > 0;
	js->done_id = (unsigned long long)db_cell_ll(r, row, 12, 0);
	js->done_outcome = db_cell_dup(r, row, 13);
	js->done_finished = db_cell_dup(r, row, 14);
	js->last_fence = (unsigned long long)db_cell_ll(r, row, 15, 0);
}

enum db_status
runs_job_summaries(struct db *db, const char *const *jobs, size_t n,
    struct job_summary *js, char **errstr)
{
	struct db_result *r = NULL;
	enum db_status    st = DB_ERR_QUERY;
	long long         k;
	size_t            i;

	for (i = 0; i < n; i++) {
		memset(&js[i], 0, sizeof js[i]);
		js[i].last_success_ts = -1;
		js[i].last_success_age_s = js[i].last_age_s =
		    js[i].last_exit_status = -1;
		js[i].last_session_alive = -1;
	}
	if (n == 0)
		return DB_OK;
	if ((st = runs_abandon_all(db, jobs, n, errstr)) != DB_OK)
		goto out;
	/*
	 * One statement for every job: each row of the jobs' table (%K)
	 * makes two dives, the last success (ix_runs_job_outcome) and the
	 * newest run (ix_runs_job), however long the job's history; ORDER
	 * BY ... LIMIT 1, since a MAX() per row would read the job's every
	 * entry.  The newest finished run is the newest run unless that one
	 * is still running, and only then a third dive (ix_runs_job_done,
	 * sql/013); the process list is read only then too (joined to every
	 * job's row it cost a third of the statement at 1,000 jobs).  The
	 * LIMIT keeps g a table of its own (doc/architecture.md): merged
	 * into the joins, the newest-run dive ran three times a job.
	 */
	st = db_query(db, &r, errstr,
	    "SELECT g.k, g.fin, UNIX_TIMESTAMP(g.fin),"
	    " TIMESTAMPDIFF(SECOND, g.fin, NOW(6)),"
	    " r.id, r.outcome, r.started_at,"
	    " TIMESTAMPDIFF(SECOND, r.started_at, NOW(6)), r.finished_at,"
	    " r.exit_status, r.connection_id, IF(r.outcome = 'running',"
	    " EXISTS (SELECT 1 FROM information_schema.PROCESSLIST p"
	    " WHERE p.ID = r.connection_id), NULL),"
	    " d.id, d.outcome, d.finished_at, r.fence"
	    " FROM (SELECT n.k, n.v,"
	    "  (SELECT x.finished_at FROM cronguard_runs x WHERE x.job = n.v"
	    "   AND x.outcome = 'success' ORDER BY x.finished_at DESC LIMIT 1)"
	    "   AS fin,"
	    "  (SELECT x.id FROM cronguard_runs x WHERE x.job = n.v"
	    "   ORDER BY x.id DESC LIMIT 1) AS last_id"
	    "  FROM %K n LIMIT %llu) g"
	    " LEFT JOIN cronguard_runs r ON r.id = g.last_id"
	    " LEFT JOIN cronguard_runs d ON d.id = IF(r.outcome = 'running',"
	    " (" RUNS_DONE_OF("g.v") "), r.id)",
	    n, jobs, (unsigned long long)n);
	if (st != DB_OK)
		goto out;
	if (r->nrows != n || r->ncols != 16) {
		*errstr = xasprintf("query failed: %zu rows of %zu columns for"
		                    " %zu jobs",
		    r->nrows, r->ncols, n);
		st = DB_ERR_QUERY;
		goto out;
	}
	for (i = 0; i < r->nrows; i++) {
		k = db_cell_ll(r, i, 0, -1);
		if (k < 0 || (size_t)k >= n)
			continue;
		runs_job_summary_row(r, i, &js[k]);
	}
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

/* One job's slot state, row row of r from column 1. */
static enum db_status
runs_slot_state_row(
    const struct db_result *r, size_t row, struct slot_state *st, char **errstr)
{
	if ((st->now_us = db_cell_ll(r, row, 1, -1)) <= 0) {
		*errstr = xasprintf("the database clock said \"%s\"",
		    db_cell(r, row, 1) != NULL ? db_cell(r, row, 1) : "NULL");
		return DB_ERR_QUERY;
	}
	st->last_success = db_cell_ll(r, row, 2, -1);
	st->first_run = db_cell_ll(r, row, 3, -1);
	st->server_zone = db_cell_dup(r, row, 4);
	st->server_system = db_cell_ll(r, row, 5, 0) == 1;
	st->top = db_cell_ll(r, row, 14, -1);
	return DB_OK;
}

/* Pause row row of r (job, paused_by, paused_at, reason, until from
 * column 6, until in seconds, in effect 1 or 0) into the jobs it covers:
 * the first in effect that comes (the rows come in jobctl's order) is a
 * job's pause, the latest end of the others its pause_ended. */
static void
runs_slot_pause_row(const struct db_result *r, size_t row,
    const struct name_index *ni, struct slot_state *st)
{
	struct slot_state *s;
	int64_t            end = db_cell_ll(r, row, 11, -1);
	size_t             j, hi;

	for (jobctl_covers(ni, db_cell(r, row, 6), &j, &hi); j < hi; j++) {
		s = &st[j];
		if (db_cell_ll(r, row, 13, 0) != 1) {
			if (end > s->pause_ended)
				s->pause_ended = end;
		} else if (s->pause_job == NULL) {
			s->pause_job = db_cell_dup(r, row, 6);
			s->paused_by = db_cell_dup(r, row, 7);
			s->paused_at = db_cell_dup(r, row, 8);
			s->reason = db_cell_dup(r, row, 9);
			s->until = db_cell_dup(r, row, 10);
		}
	}
}

enum db_status
runs_slot_states(struct db *db, const char *const *jobs, size_t n,
    struct slot_state *st, char **errstr)
{
	struct db_result *r = NULL;
	struct name_index ni;
	enum db_status    rc = DB_OK;
	long long         k;
	size_t            i, njobs = 0;

	for (i = 0; i < n; i++) {
		memset(&st[i], 0, sizeof st[i]);
		st[i].last_success = st[i].first_run = st[i].pause_ended = -1;
		st[i].top = -1;
	}
	if (n == 0)
		return DB_OK;
	/*
	 * One statement for every job: for each row of the jobs' table
	 * (%K) the latest successful slot is one probe of ix_runs_job_slot,
	 * the first run one of ix_runs_job, the newest slot one of
	 * ix_runs_job_slot_at (sql/016; ORDER BY ... LIMIT 1: a MAX() per
	 * row would read the job's every entry).  Then the pause rows
	 * of the jobs and "*", by name (a subquery a job cost a third of the
	 * statement at 1,000 jobs), in jobctl's order: their rank comes
	 * last, after the jobs' rows.  The server's zone is
	 * @@global.time_zone, and its SYSTEM is resolved to
	 * @@system_time_zone, an abbreviation that runs_slot_zone takes
	 * only when it is UTC (tzone_open_server).  The LIMIT keeps s a
	 * table of its own (doc/architecture.md): merged into the join, the
	 * first-run dive ran three times a job.
	 */
	rc = db_query(db, &r, errstr,
	    "SELECT s.k, CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED),"
	    " FLOOR(UNIX_TIMESTAMP(s.last_ok)),"
	    " FLOOR(UNIX_TIMESTAMP(COALESCE(f.slot, f.started_at))),"
	    " IF(@@global.time_zone = 'SYSTEM', @@system_time_zone,"
	    " @@global.time_zone),"
	    " @@global.time_zone = 'SYSTEM',"
	    " NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
	    " FLOOR(UNIX_TIMESTAMP(s.top))"
	    " FROM (SELECT n.k, n.v,"
	    "  (SELECT x.slot FROM cronguard_runs x WHERE x.job = n.v"
	    "   AND x.outcome = 'success' ORDER BY x.slot DESC LIMIT 1)"
	    "   AS last_ok,"
	    "  (SELECT x.id FROM cronguard_runs x WHERE x.job = n.v"
	    "   ORDER BY x.id LIMIT 1) AS first_id,"
	    "  (SELECT t.slot FROM cronguard_runs t"
	    "   FORCE INDEX (ix_runs_job_slot_at) WHERE t.job = n.v"
	    "   ORDER BY t.slot DESC LIMIT 1) AS top"
	    "  FROM %K n LIMIT %llu) s"
	    " LEFT JOIN cronguard_runs f ON f.id = s.first_id"
	    " UNION ALL SELECT NULL, NULL, NULL, NULL, NULL, NULL, job,"
	    " paused_by, DATE_FORMAT(paused_at, '%%Y-%%m-%%d %%T'), reason,"
	    " DATE_FORMAT(until_at, '%%Y-%%m-%%d %%T'),"
	    " CEIL(UNIX_TIMESTAMP(until_at)),"
	    " ROW_NUMBER() OVER (" JOBCTL_PAUSE_ORDER_SQL "),"
	    " until_at IS NULL OR until_at > NOW(6), NULL"
	    " FROM cronguard_job_pauses WHERE job IN (%A, '" JOBCTL_ALL "')"
	    " ORDER BY 13",
	    n, jobs, (unsigned long long)n, n, jobs);
	if (rc != DB_OK)
		goto out;
	if (r->ncols != 15)
		goto bad;
	name_index_init(&ni, jobs, n);
	for (i = 0; i < r->nrows; i++) {
		if (db_cell(r, i, 0) == NULL) {
			runs_slot_pause_row(r, i, &ni, st);
			continue;
		}
		k = db_cell_ll(r, i, 0, -1);
		if (k < 0 || (size_t)k >= n)
			continue;
		njobs++;
		if ((rc = runs_slot_state_row(r, i, &st[k], errstr)) != DB_OK)
			break;
	}
	name_index_free(&ni);
	if (rc != DB_OK || njobs == n)
		goto out;
bad:
	*errstr =
	    xasprintf("query failed: %zu rows of %zu columns for %zu jobs",
	        njobs, r->ncols, n);
	rc = DB_ERR_QUERY;
out:
	db_result_free(r);
	return rc;
}

enum db_status
runs_slot_state(
    struct db *db, const char *job, struct slot_state *st, char **errstr)
{
	return runs_slot_states(db, &job, 1, st, errstr);
}

void
runs_slot_state_free(struct slot_state *st)
{
	free(st->server_zone);
	free(st->pause_job);
	free(st->paused_by);
	free(st->paused_at);
	free(st->reason);
	free(st->until);
	memset(st, 0, sizeof *st);
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

/* The zone of a job's slots: tz, else the server's (st), never a guess
 * (tzone_open_server).  0 and *z, or -1 with *errstr. */
int
runs_slot_zone(const char *tz, const struct slot_state *st, struct tzone **z,
    char **errstr)
{
	if (tz != NULL)
		return tzone_open(tz, z, errstr);
	return tzone_open_server(st->server_zone, st->server_system, z, errstr);
}

void
runs_slot_info_of(const struct slot_state *st, const struct schedule *schedule,
    const char *tz, struct job_slot_info *si, struct tzone_held **held)
{
	struct tzone *z = NULL;
	char         *errstr = NULL;
	int64_t       now, t;

	memset(si, 0, sizeof *si);
	if (runs_slot_zone(tz, st, &z, &errstr) != 0) {
		free(errstr);
		return;
	}
	*held = tzone_hold(*held, z);
	now = st->now_us / 1000000;
	if (schedule_prev(schedule, z, now, &t) == 0) {
		tzone_format(z, t, si->latest, sizeof si->latest);
		si->latest_done = st->last_success >= t;
	}
	if (schedule_next(schedule, z, now, &t) == 0)
		tzone_format(z, t, si->next, sizeof si->next);
	tzone_free(z);
}

/* The slot columns of runs_recent_slots_all over runs x, grouped by
 * slot, each joined to its slot's ack a (RUNS_RECENT_ACK). */
#define RUNS_RECENT_COLUMNS(x) \
	"FLOOR(UNIX_TIMESTAMP(" x ".slot)) AS sl," \
	" SUM(" x ".outcome = 'success') AS ok," \
	" SUM(" x ".outcome NOT IN ('success', 'running')) AS bad," \
	" FLOOR(UNIX_TIMESTAMP(MIN(" x ".started_at))) AS first," \
	" MAX(a.id) IS NOT NULL AS acked," \
	" SUM(" x ".outcome = 'success' AND NOT " x ".slot_kind <=> 'manual')" \
	" AS launched, COUNT(*) AS runs"
/* The ack of run x's slot of job j: a probe of uq_job_acks, at most one
 * row (a subquery per slot cost a tenth of the statement). */
#define RUNS_RECENT_ACK(x, j) \
	" LEFT JOIN cronguard_job_acks a ON a.job = " j " AND a.slot = " x \
	".slot"

/* runs_recent_slots_all for many runs a job: a SELECT per job, each
 * reading its latest out[i].max runs on ix_runs_job. */
static int
runs_recent_union_sql(struct db *db, struct buf *sql, const char *const *jobs,
    const struct runs_recent *out, size_t n, char **errstr)
{
	size_t i;

	buf_adds(sql, "SELECT * FROM (");
	for (i = 0; i < n; i++)
		if (db_fragment(db, sql, errstr,
		        "%R(SELECT %llu AS k, " RUNS_RECENT_COLUMNS(
		            "x") " FROM (SELECT slot, outcome, started_at, slot_kind"
		                 " FROM cronguard_runs WHERE job = %s ORDER BY id DESC"
		                 " LIMIT %llu) x" RUNS_RECENT_ACK(
		                     "x", "%s") " GROUP BY x.slot)",
		        i > 0 ? " UNION ALL " : "", (unsigned long long)i,
		        jobs[i], (unsigned long long)out[i].max, jobs[i]) != 0)
			return -1;
	buf_adds(sql, ") u ORDER BY k, sl IS NULL, sl DESC");
	return 0;
}

/* runs_recent_slots_all for a few runs a job (m): one query block over
 * the jobs' table, whose rows find the ids of their latest m runs, each
 * a dive into ix_runs_job, then those runs by id, the j-th of each row
 * through a table of m numbers (eq_ref; with x.id IN (...) the server
 * plans a range again for each row, most of the statement's time); a
 * statement of a SELECT per job costs the server a table and a plan
 * each.  The LIMIT keeps g a table of its own (doc/architecture.md), each
 * dive once a job. */
static int
runs_recent_joined_sql(struct db *db, struct buf *sql, const char *const *jobs,
    size_t n, size_t m, char **errstr)
{
	size_t i;

	buf_adds(sql,
	    "SELECT g.k, " RUNS_RECENT_COLUMNS("x") " FROM (SELECT n.k, n.v");
	for (i = 0; i < m; i++)
		if (db_fragment(db, sql, errstr,
		        ", (SELECT y.id FROM cronguard_runs y WHERE y.job = n.v"
		        " ORDER BY y.id DESC LIMIT 1 OFFSET %llu) AS i%llu",
		        (unsigned long long)i, (unsigned long long)i) != 0)
			return -1;
	if (db_fragment(db, sql, errstr,
	        " FROM %K n LIMIT %llu) g JOIN (SELECT 0 AS j", n, jobs,
	        (unsigned long long)n) != 0)
		return -1;
	for (i = 1; i < m; i++)
		if (db_fragment(db, sql, errstr, " UNION ALL SELECT %llu",
		        (unsigned long long)i) != 0)
			return -1;
	buf_adds(sql, ") s JOIN cronguard_runs x ON x.id = CASE s.j");
	for (i = 0; i < m; i++)
		if (db_fragment(db, sql, errstr, " WHEN %llu THEN g.i%llu",
		        (unsigned long long)i, (unsigned long long)i) != 0)
			return -1;
	buf_adds(sql,
	    " END" RUNS_RECENT_ACK(
	        "x", "g.v") " GROUP BY g.k, g.v, x.slot"
	                    " ORDER BY g.k, sl IS NULL, sl DESC");
	return 0;
}

/* The slots among each job's latest runs (runs.h), newest first, with
 * the acks of each; the runs without a slot (before the job had a
 * schedule) are one NULL group, counted for truncated.  One statement:
 * a query block over the jobs' table when each reads a few, else a
 * SELECT per job (ix_runs_job read backwards). */
enum db_status
runs_recent_slots_all(struct db *db, const char *const *jobs, const size_t *max,
    size_t n, struct runs_recent *out, char **errstr)
{
	struct db_result   *r = NULL;
	struct buf          sql;
	struct runs_recent *o;
	enum db_status      st = DB_OK;
	long long          *runs = NULL, k;
	size_t              i, m;

	buf_init(&sql);
	memset(out, 0, n * sizeof *out);
	if (n == 0)
		return DB_OK;
	for (i = 0, m = 0; i < n; i++) {
		out[i].max =
		    max[i] > RUNS_RECENT_RUNS ? RUNS_RECENT_RUNS : max[i];
		if (out[i].max > m)
			m = out[i].max;
	}
	if (m <= RUNS_RECENT_JOINED) {
		/* A few each: as many for every job, the most asked. */
		for (i = 0; i < n; i++)
			out[i].max = m;
		if (runs_recent_joined_sql(db, &sql, jobs, n, m, errstr) != 0)
			st = DB_ERR_QUERY;
	} else if (runs_recent_union_sql(db, &sql, jobs, out, n, errstr) != 0)
		st = DB_ERR_QUERY;
	if (st != DB_OK)
		goto out;
	if ((st = db_query(db, &r, errstr, "%F", &sql)) != DB_OK)
		goto out;
	runs = xcalloc(n, sizeof *runs);
	/* Each job's rows counted first (runs[], reused below). */
	for (i = 0; i < r->nrows; i++) {
		k = db_cell_ll(r, i, 0, -1);
		if (k >= 0 && (size_t)k < n)
			runs[k]++;
	}
	for (i = 0; i < n; i++) {
		out[i].rows = xcalloc((size_t)runs[i] + 1, sizeof *out[i].rows);
		runs[i] = 0;
	}
	for (i = 0; i < r->nrows; i++) {
		k = db_cell_ll(r, i, 0, -1);
		if (k < 0 || (size_t)k >= n)
			continue;
		o = &out[k];
		runs[k] += db_cell_ll(r, i, 7, 0);
		if (db_cell(r, i, 1) == NULL)
			continue;
		o->rows[o->n].slot = db_cell_ll(r, i, 1, -1);
		o->rows[o->n].successes = db_cell_ll(r, i, 2, 0);
		o->rows[o->n].failures = db_cell_ll(r, i, 3, 0);
		o->rows[o->n].first_start = db_cell_ll(r, i, 4, -1);
		o->rows[o->n].acked = db_cell_ll(r, i, 5, 0) == 1;
		o->rows[o->n].launched = db_cell_ll(r, i, 6, 0);
		o->n++;
	}
	for (i = 0; i < n; i++)
		out[i].truncated = runs[i] >= (long long)out[i].max;
out:
	free(runs);
	db_result_free(r);
	buf_free(&sql);
	return st;
}

void
runs_recent_free(struct runs_recent *rr)
{
	free(rr->rows);
	memset(rr, 0, sizeof *rr);
}

enum db_status
runs_flagged_all(struct db *db, const char *const *jobs, const int64_t *since,
    size_t n, struct runs_flagged *out, char **errstr)
{
	struct db_result        *r = NULL;
	struct runs_flagged_row *row;
	struct runs_flagged     *o;
	struct name_index        ni;
	enum db_status           st = DB_OK;
	size_t                   i;
	long                     k;
	int64_t                  lo;
	char                     text[TZONE_UTC_MAX];

	memset(out, 0, n * sizeof *out);
	if (n == 0)
		return DB_OK;
	for (i = 0, lo = since[0]; i < n; i++)
		if (since[i] < lo)
			lo = since[i];
	/*
	 * The window's flagged runs of the jobs, then the newest run without
	 * flags of each job that has some (both one range of ix_runs_flags a
	 * flag value, each run's job among a list of literals: a table of
	 * the jobs joined there cost its building twice); each row by its
	 * job's name, which name_index maps back.  A job's runs older than
	 * its own window are left out below.  A run's slot's successes are
	 * counted only for a run flagged RUNS_FLAG_TWICE, the one
	 * jobcheck_twice reads them of: most flagged runs end a gap.
	 */
	tzone_utc(lo, text, sizeof text);
	if ((st = db_query(db, &r, errstr,
	         "SELECT x.job, FLOOR(UNIX_TIMESTAMP(x.slot)) AS sl,"
	         " x.slot_flags AS fl,"
	         " FLOOR(UNIX_TIMESTAMP(x.slot_gap_from)) AS gap,"
	         " IF(x.slot_flags & %d, (SELECT COUNT(*) FROM cronguard_runs z"
	         "  FORCE INDEX (ix_runs_job_slot_at) WHERE z.job = x.job"
	         "  AND z.slot = x.slot AND z.outcome = 'success'"
	         "  AND NOT z.slot_kind <=> 'manual'), 0) AS launched,"
	         " EXISTS (SELECT 1 FROM cronguard_job_acks a"
	         "  WHERE a.job = x.job AND a.slot = x.slot) AS acked"
	         " FROM cronguard_runs x FORCE INDEX (ix_runs_flags)"
	         " WHERE x.slot_flags IN (1, 2, 3, 4, 5, 6, 7) AND x.slot >= %s"
	         " AND x.job IN (%A)"
	         " UNION ALL SELECT u.job, FLOOR(UNIX_TIMESTAMP(MAX(u.slot))), -2,"
	         " 0, 0, 0 FROM cronguard_runs u FORCE INDEX (ix_runs_flags)"
	         " WHERE u.slot_flags IS NULL AND u.slot >= %s"
	         " AND u.job IN (%A) GROUP BY u.job"
	         " ORDER BY 1, 2 DESC",
	         RUNS_FLAG_TWICE, text, n, jobs, text, n, jobs)) != DB_OK)
		goto out;
	for (i = 0; i < n; i++) {
		out[i].rows = xcalloc(1, sizeof *out[i].rows);
		out[i].top = -1;
	}
	name_index_init(&ni, jobs, n);
	for (i = 0; i < r->nrows; i++) {
		if ((k = name_index_find(&ni, db_cell(r, i, 0))) < 0)
			continue;
		o = &out[k];
		if (db_cell_ll(r, i, 1, -1) < since[k])
			continue; /* before this job's window */
		if (db_cell_ll(r, i, 2, 0) == -2) {
			o->unknown = 1;
			continue;
		}
		o->rows = xreallocarray(o->rows, o->n + 1, sizeof *o->rows);
		row = &o->rows[o->n++];
		row->slot = db_cell_ll(r, i, 1, -1);
		row->flags = (unsigned)db_cell_ll(r, i, 2, 0);
		row->gap_from = db_cell_ll(r, i, 3, -1);
		row->launched = db_cell_ll(r, i, 4, 0);
		row->acked = db_cell_ll(r, i, 5, 0) == 1;
	}
	name_index_free(&ni);
out:
	db_result_free(r);
	return st;
}

void
runs_flagged_free(struct runs_flagged *rf)
{
	free(rf->rows);
	memset(rf, 0, sizeof *rf);
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
	" outcome, exit_status, fence, run_uuid, output_bytes," \
	" DATE_FORMAT(slot, '%%Y-%%m-%%dT%%T+00:00') AS slot, slot_kind"

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
runs_lock_fences(struct db *db, const char *const *names,
    const unsigned long long *run_ids, size_t n, unsigned long long *held,
    unsigned long long *last, char **errstr)
{
	struct db_result  *r = NULL;
	enum db_status     st = DB_OK;
	unsigned long long id;
	long long          k;
	const char        *kind;
	size_t             i, j;

	for (i = 0; i < n; i++)
		held[i] = last[i] = 0;
	if (n == 0)
		return DB_OK;
	/* The leases' tokens by name, the runs' by id: primary-key lookups,
	 * one statement. */
	st = db_query(db, &r, errstr,
	    "SELECT 'l', n.k, (SELECT fence FROM cronguard_leases l"
	    " WHERE l.name = n.v) FROM %K n"
	    " UNION ALL SELECT 'r', id, fence FROM cronguard_runs"
	    " WHERE id IN (%L)",
	    n, names, n, run_ids);
	if (st != DB_OK)
		goto out;
	for (i = 0; i < r->nrows; i++) {
		kind = db_cell(r, i, 0);
		k = db_cell_ll(r, i, 1, -1);
		if (kind == NULL || k < 0)
			continue;
		if (kind[0] == 'l' && (size_t)k < n)
			last[k] = (unsigned long long)db_cell_ll(r, i, 2, 0);
		else if (kind[0] == 'r') {
			id = (unsigned long long)k;
			for (j = 0; j < n; j++)
				if (run_ids[j] == id)
					held[j] =
					    (unsigned long long)db_cell_ll(
					        r, i, 2, 0);
		}
	}
out:
	db_result_free(r);
	return st;
}
