/* doctor.c: the preflight checks of "cronguard doctor" (doctor.h): the
 * order they run in, the file checks and the report.  The checks live in
 * doctor-db.c, doctor-time.c and doctor-channels.c (doctor-int.h); every
 * check appends one result, none prints. */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "doctor-int.h"
#include "util.h"

void
doctor_add(struct doctor_report *r, enum check_status st, const char *name,
    const char *fix, const char *fmt, ...)
{
	struct doctor_result *d;
	va_list               ap;

	r->v = xreallocarray(r->v, r->n + 1, sizeof *r->v);
	d = &r->v[r->n++];
	d->status = st;
	d->name = xstrdup(name);
	va_start(ap, fmt);
	d->finding = xvasprintf(fmt, ap);
	va_end(ap);
	d->fix = st != CHECK_OK && fix != NULL ? xstrdup(fix) : NULL;
	r->worst = check_status_worst(r->worst, st);
}

/* The fix for a failed connect, by the server's or client's error. */
static const char *
doctor_connect_fix(unsigned err)
{
	switch (err) {
	case 1045: /* ER_ACCESS_DENIED_ERROR */
		return "check database.user and its password (password_file), "
		       "and that the user may connect from this host";
	case 1049: /* ER_BAD_DB_ERROR */
		return "create the database first (CREATE DATABASE ... "
		       "CHARACTER SET utf8mb4, as in the README's First setup), "
		       "or correct database.name";
	case 1044: /* ER_DBACCESS_DENIED_ERROR */
		return "GRANT the user its privileges on the schema (README, "
		       "First setup)";
	case 2002: /* CR_CONNECTION_ERROR: the socket */
		return "correct database.socket (Debian's MariaDB: "
		       "/run/mysqld/mysqld.sock), or start the server";
	default:
		return "check the database section, the server and the network";
	}
}

/* The configuration and the secret files against the one mode rule that
 * loading applies too (conf_file_problem); a secret file must also
 * be readable by this user and not empty. */
static void
doctor_file(
    struct doctor_report *r, const char *what, const char *path, int secret)
{
	struct stat sb;
	char       *reason, *fix;

	if (stat(path, &sb) != 0) {
		doctor_add(r, CHECK_CRITICAL, what,
		    "create it, or fix the path", "%s: cannot stat: %s", path,
		    strerror(errno));
		return;
	}
	if (conf_file_problem(path, &sb, secret, &reason, &fix) == 0 &&
	    (!secret || conf_secret_problem(path, NULL, &reason, &fix) == 0)) {
		doctor_add(r, CHECK_OK, what, NULL, "%s mode %04o", path,
		    (unsigned)(sb.st_mode & 07777));
		return;
	}
	doctor_add(r, CHECK_CRITICAL, what, fix, "%s", reason);
	free(reason);
	free(fix);
}

static void
doctor_files(const struct conf *c, struct doctor_report *r)
{
	size_t i;

	doctor_file(r, "config_file", c->path, 0);
	for (i = 0; i < c->nsecrets; i++)
		doctor_file(r, "secret_file", c->secrets[i].path, 1);
}

void
doctor_run(struct db *db, const char *db_error, struct conf *c,
    struct doctor_report *r)
{
	size_t i;
	int    skip_locked, read_only;

	memset(r, 0, sizeof *r);
	r->worst = CHECK_OK;
	if (db == NULL)
		doctor_add(r, CHECK_UNKNOWN, "database",
		    doctor_connect_fix(db_connect_errno()), "%s",
		    db_error != NULL ? db_error : "not connected");
	else {
		/* Causes before what they cause: a read-only server or a
		 * schema behind the release fails the claim's EXPLAIN too,
		 * and the verdict names the first worst result. */
		skip_locked = doctor_server(db, r);
		read_only = doctor_role(db, r);
		doctor_migrations(db, r);
		if (skip_locked) {
			doctor_claim_index(db, c, read_only, r);
			doctor_runs_index(db, c, r);
			doctor_history_index(db, r);
		}
		doctor_timeouts(db, c, r);
		doctor_packet(db, c, r);
		doctor_wsrep(db, c, r);
		doctor_isolation(db, r);
		doctor_clock(c, db, r);
		doctor_privileges(db, c, r);
		doctor_timezones(db, c, r);
	}
	doctor_files(c, r);
	for (i = 0; i < c->nchannels; i++)
		doctor_channel(c, &c->channels[i], r);
	if (c->alert_url != NULL)
		doctor_alert(c, r);
	/* Unreachable is UNKNOWN whatever the files say. */
	if (db == NULL)
		r->worst = CHECK_UNKNOWN;
}

void
doctor_report_free(struct doctor_report *r)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		free(r->v[i].name);
		free(r->v[i].finding);
		free(r->v[i].fix);
	}
	free(r->v);
	r->v = NULL;
	r->n = 0;
}
