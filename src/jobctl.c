/* jobctl.c: fleet-wide pauses and acknowledgements of jobs (cronguard(1),
 * "jobs pause"). */
#include "config.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "jobctl.h"
#include "runs.h"
#include "schedule.h"
#include "util.h"

#define JOBCTL_PAUSE_COLUMNS "job, paused_at, paused_by, reason, until_at"

void
jobctl_pause_free(struct job_pause *p)
{
	if (p == NULL)
		return;
	free(p->job);
	free(p->paused_at);
	free(p->paused_by);
	free(p->reason);
	free(p->until_at);
	memset(p, 0, sizeof *p);
}

const char *
jobctl_identity(void)
{
	static char    id[400];
	struct passwd *pw;
	char           uid[32];
	const char    *user;

	if ((pw = getpwuid(geteuid())) != NULL && pw->pw_name != NULL)
		user = pw->pw_name;
	else {
		snprintf(uid, sizeof uid, "%ld", (long)geteuid());
		user = uid;
	}
	snprintf(id, sizeof id, "%s@%s", user, self_identity());
	return id;
}

/* Row i of a JOBCTL_PAUSE_COLUMNS result into *p. */
static void
jobctl_pause_row(
    const struct db_result *r, size_t i, size_t c, struct job_pause *p)
{
	memset(p, 0, sizeof *p);
	p->paused = 1;
	p->job = db_cell_dup(r, i, c);
	p->paused_at = db_cell_dup(r, i, c + 1);
	p->paused_by = db_cell_dup(r, i, c + 2);
	p->reason = db_cell_dup(r, i, c + 3);
	p->until_at = db_cell_dup(r, i, c + 4);
}

enum db_status
jobctl_pause(struct db *db, const char *const *jobs, size_t n, int64_t for_ms,
    const char *reason, struct job_pause *out, char **errstr)
{
	struct db_result *r = NULL;
	struct buf        values;
	enum db_status    st;
	size_t            i;

	buf_init(&values);
	if (out != NULL)
		memset(out, 0, sizeof *out);
	if (n == 0) {
		*errstr = xstrdup("no job to pause");
		st = DB_ERR_QUERY;
		goto out;
	}
	/* One statement: every job's pause starts at the same NOW(6). */
	for (i = 0; i < n; i++) {
		if (db_fragment(db, &values, errstr,
		        "%R(%s, NOW(6), %s, %s, IF(%lld > 0, NOW(6) + INTERVAL %lld MICROSECOND, NULL))",
		        i > 0 ? ", " : "", jobs[i], jobctl_identity(), reason,
		        (long long)for_ms, (long long)for_ms * 1000) != 0) {
			st = DB_ERR_QUERY;
			goto out;
		}
	}
	/* Ended rows stay (one per job at most): jobs check reads the slots
	 * of a resumed pause from them (jobctl_slot_marks_all).  Only the
	 * paused jobs' own rows are replaced. */
	if ((st = db_query_retry(db, NULL, errstr,
	         "INSERT INTO cronguard_job_pauses (job, paused_at, paused_by,"
	         " reason, until_at) VALUES %F ON DUPLICATE KEY UPDATE"
	         " paused_at = VALUES(paused_at),"
	         " paused_by = VALUES(paused_by), reason = VALUES(reason),"
	         " until_at = VALUES(until_at)",
	         &values)) != DB_OK)
		goto out;
	if (out == NULL)
		goto out;
	if ((st = db_query(db, &r, errstr,
	         "SELECT " JOBCTL_PAUSE_COLUMNS
	         " FROM cronguard_job_pauses WHERE job = %s",
	         jobs[0])) != DB_OK)
		goto out;
	if ((st = db_one_row(r, 5, errstr)) != DB_OK)
		goto out;
	jobctl_pause_row(r, 0, 0, out);
out:
	db_result_free(r);
	buf_free(&values);
	return st;
}

enum db_status
jobctl_resume(struct db *db, const char *job, int *was, char **errstr)
{
	struct db_result *r = NULL;
	enum db_status    st;

	*was = 0;
	/* Ended, not deleted: jobs check still knows that a slot of the
	 * pause was not missed (jobctl_paused_at). */
	if ((st = db_query_retry(db, &r, errstr,
	         "UPDATE cronguard_job_pauses SET until_at = NOW(6)"
	         " WHERE job = %s AND (until_at IS NULL OR until_at > NOW(6))",
	         job)) != DB_OK)
		goto out;
	*was = r->affected > 0;
out:
	db_result_free(r);
	return st;
}

enum db_status
jobctl_resume_all(struct db *db, unsigned long long *n, char **errstr)
{
	struct db_result *r = NULL;
	enum db_status    st;

	*n = 0;
	if ((st = db_query_retry(db, &r, errstr,
	         "UPDATE cronguard_job_pauses SET until_at = NOW(6)"
	         " WHERE until_at IS NULL OR until_at > NOW(6)")) != DB_OK)
		goto out;
	*n = r->affected;
out:
	db_result_free(r);
	return st;
}

/* Row i of r (kind, from, until from column 1) into *mk. */
static void
jobctl_marks_row(const struct db_result *r, size_t i, struct jobctl_marks *mk)
{
	const char *kind = db_cell(r, i, 1);

	if (kind != NULL && kind[0] == 'a')
		mk->acked = db_cell_ll(r, i, 2, -1);
	else if (mk->npauses < nitems(mk->pauses)) {
		mk->pauses[mk->npauses].from = db_cell_ll(r, i, 2, -1);
		mk->pauses[mk->npauses].until = db_cell_ll(r, i, 3, -1);
		mk->npauses++;
	}
}

void
jobctl_covers(
    const struct name_index *ni, const char *job, size_t *lo, size_t *hi)
{
	long k = name_index_find(ni, job);

	*lo = k >= 0 ? (size_t)k : 0;
	*hi = k >= 0
	    ? (size_t)k + 1
	    : (job != NULL && strcmp(job, JOBCTL_ALL) == 0 ? ni->n : 0);
}

enum db_status
jobctl_slot_marks_all(struct db *db, const char *const *jobs, size_t n,
    struct jobctl_marks *m, char **errstr)
{
	struct db_result *r = NULL;
	struct name_index ni;
	enum db_status    st = DB_OK;
	size_t            i, j, hi;

	for (i = 0; i < n; i++) {
		memset(&m[i], 0, sizeof m[i]);
		m[i].acked = -1;
	}
	if (n == 0)
		return DB_OK;
	/* The pauses of the jobs and "*" (the primary key), then each
	 * job's newest ack (uq_job_acks): rows by name, no row per job
	 * (a table of the jobs joined to both cost a subquery a job). */
	st = db_query(db, &r, errstr,
	    "SELECT p.job, 'p', FLOOR(UNIX_TIMESTAMP(p.paused_at)),"
	    " CEIL(UNIX_TIMESTAMP(p.until_at)) FROM cronguard_job_pauses p"
	    " WHERE p.job IN (%A, '" JOBCTL_ALL "')"
	    " UNION ALL SELECT a.job, 'a', FLOOR(UNIX_TIMESTAMP(MAX(a.slot))),"
	    " NULL FROM cronguard_job_acks a WHERE a.job IN (%A) GROUP BY a.job",
	    n, jobs, n, jobs);
	if (st != DB_OK)
		goto out;
	name_index_init(&ni, jobs, n);
	for (i = 0; i < r->nrows && r->ncols == 4; i++)
		for (jobctl_covers(&ni, db_cell(r, i, 0), &j, &hi); j < hi; j++)
			jobctl_marks_row(r, i, &m[j]);
	name_index_free(&ni);
out:
	db_result_free(r);
	return st;
}

int
jobctl_marks_paused(const struct jobctl_marks *m, int64_t t)
{
	size_t i;

	for (i = 0; i < m->npauses; i++)
		if (m->pauses[i].from <= t &&
		    (m->pauses[i].until < 0 || t <= m->pauses[i].until))
			return 1;
	return 0;
}

enum db_status
jobctl_pause_get_all(struct db *db, const char *const *jobs, size_t n,
    struct job_pause *out, char **errstr)
{
	struct db_result *r = NULL;
	struct name_index ni;
	enum db_status    st = DB_OK;
	size_t            i, j, hi;

	memset(out, 0, n * sizeof *out);
	if (n == 0)
		return DB_OK;
	/* The pauses in effect of the jobs and "*", the one that holds
	 * longest first (JOBCTL_PAUSE_ORDER_SQL): a job's pause is the first
	 * of its own and "*", as jobctl_pause_get's LIMIT 1 picks it. */
	st = db_query(db, &r, errstr,
	    "SELECT " JOBCTL_PAUSE_COLUMNS " FROM cronguard_job_pauses"
	    " WHERE job IN (%A, '" JOBCTL_ALL "') AND (until_at IS NULL OR"
	    " until_at > NOW(6)) " JOBCTL_PAUSE_ORDER_SQL,
	    n, jobs);
	if (st != DB_OK || r->ncols != 5)
		goto out;
	name_index_init(&ni, jobs, n);
	for (i = 0; i < r->nrows; i++)
		for (jobctl_covers(&ni, db_cell(r, i, 0), &j, &hi); j < hi; j++)
			if (!out[j].paused)
				jobctl_pause_row(r, i, 0, &out[j]);
	name_index_free(&ni);
out:
	db_result_free(r);
	return st;
}

enum db_status
jobctl_pause_get(
    struct db *db, const char *job, struct job_pause *out, char **errstr)
{
	return jobctl_pause_get_all(db, &job, 1, out, errstr);
}

enum db_status
jobctl_pause_list(
    struct db *db, struct job_pause **out, size_t *n, char **errstr)
{
	struct db_result *r = NULL;
	enum db_status    st;
	size_t            i;

	*out = NULL;
	*n = 0;
	if ((st = db_query(db, &r, errstr,
	         "SELECT " JOBCTL_PAUSE_COLUMNS
	         " FROM cronguard_job_pauses WHERE until_at IS NULL OR"
	         " until_at > NOW(6) ORDER BY job <> '" JOBCTL_ALL "', job")) !=
	    DB_OK)
		goto out;
	if (r->nrows == 0 || r->ncols != 5)
		goto out;
	*out = xcalloc(r->nrows, sizeof **out);
	for (i = 0; i < r->nrows; i++)
		jobctl_pause_row(r, i, 0, &(*out)[i]);
	*n = r->nrows;
out:
	db_result_free(r);
	return st;
}

/* ------------------------------------------------------------ slots */

int
jobctl_slot_parse(const struct tzone *z, const struct schedule *s,
    const char *text, int64_t *t, char *out, size_t len, char **errstr)
{
	struct tm tm;
	time_t    tt;
	int64_t   around[2];
	char      shown[TZONE_RFC3339_MAX], a[TZONE_RFC3339_MAX],
	    b[TZONE_RFC3339_MAX];

	if (tzone_parse_instant(z, text, t, errstr) != 0)
		return -1;
	tt = (time_t)*t;
	if (*t < 0 || len < JOBCTL_SLOT_MAX || gmtime_r(&tt, &tm) == NULL ||
	    tm.tm_year + 1900 > 9999) {
		*errstr = xasprintf("bad time '%s': out of range", text);
		return -1;
	}
	if (s != NULL && !schedule_contains(s, z, *t)) {
		tzone_format(z, *t, shown, sizeof shown);
		if (schedule_prev(s, z, *t, &around[0]) != 0 ||
		    schedule_next(s, z, *t, &around[1]) != 0) {
			*errstr = xasprintf("%s is no slot of \"%s\" in %s",
			    shown, schedule_text(s), tzone_name(z));
			return -1;
		}
		tzone_format(z, around[0], a, sizeof a);
		tzone_format(z, around[1], b, sizeof b);
		*errstr = xasprintf("%s is no slot of \"%s\" in %s (the "
		                    "slots around it: %s and %s)",
		    shown, schedule_text(s), tzone_name(z), a, b);
		return -1;
	}
	tzone_utc(*t, out, len);
	return 0;
}

enum db_status
jobctl_slot_zone(struct db *db, const char *job, const char *tz,
    struct tzone **z, char **errstr)
{
	struct slot_state st;
	enum db_status    rc;

	*z = NULL;
	if (tz != NULL) {
		(void)tzone_open(tz, z, errstr);
		return DB_OK;
	}
	if ((rc = runs_slot_state(db, job, &st, errstr)) != DB_OK)
		return rc;
	if (runs_slot_zone(NULL, &st, z, errstr) != 0 && *errstr == NULL)
		*errstr = xstrdup("cannot tell the database server's time "
		                  "zone: set the job's timezone");
	runs_slot_state_free(&st);
	return DB_OK;
}

/* ------------------------------------------------------------- acks */

enum db_status
jobctl_ack(struct db *db, const char *job, const char *slot_utc,
    const char *reason, char **errstr)
{
	return db_query_retry(db, NULL, errstr,
	    "INSERT INTO cronguard_job_acks (job, slot, acked_at, acked_by,"
	    " reason) VALUES (%s, %s, NOW(6), %s, %s) ON DUPLICATE KEY UPDATE"
	    " acked_at = VALUES(acked_at), acked_by = VALUES(acked_by),"
	    " reason = VALUES(reason)",
	    job, slot_utc, jobctl_identity(), reason);
}

enum db_status
jobctl_failed_slot(struct db *db, const char *job, char **slot, char **errstr)
{
	struct db_result *r = NULL;
	enum db_status    st;

	*slot = NULL;
	if ((st = db_query(db, &r, errstr,
	         "SELECT slot FROM cronguard_runs WHERE job = %s AND"
	         " slot IS NOT NULL AND outcome NOT IN ('success', 'running')"
	         " ORDER BY slot DESC, id DESC LIMIT 1",
	         job)) != DB_OK)
		goto out;
	if (r->nrows == 1)
		*slot = db_cell_dup(r, 0, 0);
out:
	db_result_free(r);
	return st;
}
