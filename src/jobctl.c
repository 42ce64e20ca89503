/* jobctl.c: fleet-wide pauses and acknowledgements of jobs (cronguard(1),
 * "jobs pause"). */
#include "config.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db.h"
#include "jobctl.h"
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

char *
jobctl_pause_text(const struct job_pause *p)
{
	struct buf b;

	if (p == NULL || !p->paused)
		return NULL;
	buf_init(&b);
	buf_printf(&b, "paused%s by %s since %.19s",
	    p->job != NULL && strcmp(p->job, JOBCTL_ALL) == 0 ? " (every job)"
	                                                      : "",
	    p->paused_by != NULL ? p->paused_by : "?",
	    p->paused_at != NULL ? p->paused_at : "?");
	if (p->until_at != NULL)
		buf_printf(&b, " until %.19s", p->until_at);
	else
		buf_adds(&b, " until resumed");
	if (p->reason != NULL)
		buf_printf(&b, ": %s", p->reason);
	return buf_steal(&b);
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
jobctl_pause_row(const struct db_result *r, size_t i, struct job_pause *p)
{
	memset(p, 0, sizeof *p);
	p->paused = 1;
	p->job = db_cell_dup(r, i, 0);
	p->paused_at = db_cell_dup(r, i, 1);
	p->paused_by = db_cell_dup(r, i, 2);
	p->reason = db_cell_dup(r, i, 3);
	p->until_at = db_cell_dup(r, i, 4);
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
	/* Expired rows are dead weight; a pause is never read from them. */
	if ((st = db_query_retry(db, NULL, errstr,
	         "DELETE FROM cronguard_job_pauses WHERE until_at <= NOW(6)")) !=
	    DB_OK)
		goto out;
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
	jobctl_pause_row(r, 0, out);
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
	if ((st = db_query_retry(db, &r, errstr,
	         "DELETE FROM cronguard_job_pauses WHERE job = %s AND"
	         " (until_at IS NULL OR until_at > NOW(6))",
	         job)) != DB_OK)
		goto out;
	*was = r->affected > 0;
	/* An expired row of the job goes too: it paused nothing. */
	st = db_query_retry(db, NULL, errstr,
	    "DELETE FROM cronguard_job_pauses WHERE job = %s", job);
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
	         "DELETE FROM cronguard_job_pauses WHERE"
	         " until_at IS NULL OR until_at > NOW(6)")) != DB_OK)
		goto out;
	*n = r->affected;
	st = db_query_retry(
	    db, NULL, errstr, "DELETE FROM cronguard_job_pauses");
out:
	db_result_free(r);
	return st;
}

enum db_status
jobctl_pause_get(
    struct db *db, const char *job, struct job_pause *out, char **errstr)
{
	struct db_result *r = NULL;
	enum db_status    st;

	memset(out, 0, sizeof *out);
	if ((st = db_query(db, &r, errstr,
	         "SELECT " JOBCTL_PAUSE_COLUMNS
	         " FROM cronguard_job_pauses WHERE " JOBCTL_PAUSE_WHERE_SQL
	         " " JOBCTL_PAUSE_ORDER_SQL " LIMIT 1",
	         job)) != DB_OK)
		goto out;
	if (r->nrows == 1 && r->ncols == 5)
		jobctl_pause_row(r, 0, out);
out:
	db_result_free(r);
	return st;
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
		jobctl_pause_row(r, i, &(*out)[i]);
	*n = r->nrows;
out:
	db_result_free(r);
	return st;
}

/* ------------------------------------------------------------ slots */

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar
 * (Howard Hinnant's days_from_civil). */
static long long
jobctl_days(long long y, int m, int d)
{
	long long era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* n digits at *p as a number in [min, max], *p moved past them. */
static int
jobctl_digits(const char **p, int n, int min, int max, int *v)
{
	int i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if ((*p)[i] < '0' || (*p)[i] > '9')
			return -1;
		*v = *v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	return *v >= min && *v <= max ? 0 : -1;
}

static int
jobctl_mday_max(int y, int m)
{
	static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30,
		31 };

	if (m == 2 && (y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)))
		return 29;
	return mdays[m - 1];
}

/* Unix time t as UTC "YYYY-MM-DD hh:mm:ss" (Hinnant's civil_from_days);
 * -1 past year 9999. */
static int
jobctl_utc_text(long long t, char *out, size_t len)
{
	long long z = t / 86400 + 719468, sec = t % 86400;
	long long era, doe, yoe, doy, mp, y;
	int       d, m;

	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	y = yoe + era * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	d = (int)(doy - (153 * mp + 2) / 5 + 1);
	m = (int)(mp < 10 ? mp + 3 : mp - 9);
	y += m <= 2;
	if (y > 9999)
		return -1;
	snprintf(out, len, "%04lld-%02d-%02d %02lld:%02lld:%02lld", y, m, d,
	    sec / 3600, sec / 60 % 60, sec % 60);
	return 0;
}

int
jobctl_slot_parse(const char *text, char *out, size_t len, char **errstr)
{
	const char *p = text;
	int         y, mo, d, h, mi, s = 0, oh = 0, om = 0, sign = 0;
	long long   t, days;

	if (jobctl_digits(&p, 4, 1970, 9999, &y) != 0 || *p++ != '-' ||
	    jobctl_digits(&p, 2, 1, 12, &mo) != 0 || *p++ != '-' ||
	    jobctl_digits(&p, 2, 1, 31, &d) != 0 ||
	    d > jobctl_mday_max(y, mo) || (*p != ' ' && *p != 'T'))
		goto bad;
	p++;
	if (jobctl_digits(&p, 2, 0, 23, &h) != 0 || *p++ != ':' ||
	    jobctl_digits(&p, 2, 0, 59, &mi) != 0)
		goto bad;
	if (*p == ':') {
		p++;
		if (jobctl_digits(&p, 2, 0, 59, &s) != 0)
			goto bad;
	}
	if (*p == 'Z' || *p == 'z')
		p++;
	else if (*p == '+' || *p == '-') {
		sign = *p++ == '-' ? -1 : 1;
		if (jobctl_digits(&p, 2, 0, 23, &oh) != 0 || *p++ != ':' ||
		    jobctl_digits(&p, 2, 0, 59, &om) != 0)
			goto bad;
	}
	if (*p != '\0')
		goto bad;
	days = jobctl_days(y, mo, d);
	t = days * 86400 + h * 3600 + mi * 60 + s -
	    (long long)sign * (oh * 3600 + om * 60);
	if (t < 0 || len < JOBCTL_SLOT_MAX)
		goto bad;
	if (jobctl_utc_text(t, out, len) != 0)
		goto bad;
	return 0;
bad:
	*errstr = xasprintf("bad time '%s': expected YYYY-MM-DD HH:MM[:SS] "
	                    "(UTC) or RFC 3339 with an offset "
	                    "(2026-12-01T01:30:00+01:00)",
	    text);
	return -1;
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

enum db_status
jobctl_acked(struct db *db, const char *job, const char *slot_utc, int *acked,
    char **errstr)
{
	char          *v = NULL;
	enum db_status st;

	*acked = 0;
	if ((st = db_query_value(db, &v, errstr,
	         "SELECT EXISTS (SELECT 1 FROM cronguard_job_acks WHERE"
	         " job = %s AND slot = CAST(%s AS DATETIME(6)))",
	         job, slot_utc)) != DB_OK)
		goto out;
	switch (db_parse_bool(v)) {
	case 1:
		*acked = 1;
		break;
	case 0:
		break;
	default:
		*errstr = xasprintf("query failed: acknowledged is '%s'",
		    v != NULL ? v : "NULL");
		st = DB_ERR_QUERY;
	}
out:
	free(v);
	return st;
}

enum db_status
jobctl_ack_list(
    struct db *db, const char *job, struct db_result **res, char **errstr)
{
	return db_query(db, res, errstr,
	    "SELECT " JOBCTL_ACK_COLUMNS
	    " FROM cronguard_job_acks WHERE job = %s ORDER BY slot DESC",
	    job);
}
