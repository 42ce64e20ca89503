/* doctor-time.c: the checks of "cronguard doctor" on time (doctor-int.h):
 * each zone a job names, where it is read (the server for once_per, this
 * host's tzdata for a schedule), and the server's clock against this
 * host's. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "doctor-int.h"
#include "schedule.h"
#include "util.h"

/* A clock difference above this is a WARNING. */
#define DOCTOR_CLOCK_WARN_MS 2000

/* A job's zone that only this host reads (a schedule's slots, from the
 * host's tzdata, schedule.c): whether the host has it. */
static void
doctor_host_zone(const struct conf_job *j, struct doctor_report *r)
{
	struct tzone *z = NULL;
	char         *errstr = NULL, *fix;

	if (tzone_open(j->timezone, &z, &errstr) == 0) {
		doctor_add(r, CHECK_OK, "timezone", NULL,
		    "job %s: its schedule reads %s from this host's tzdata "
		    "(the server's time-zone tables are not used)",
		    j->name, j->timezone);
		tzone_free(z);
		return;
	}
	fix = xasprintf("install tzdata on this host, or correct "
	                "jobs.%s.timezone",
	    j->name);
	doctor_add(
	    r, CHECK_CRITICAL, "timezone", fix, "job %s: %s", j->name, errstr);
	free(fix);
	free(errstr);
}

/*
 * Every time zone a job names.  once_per converts its slots in SQL, so
 * the server must know the zone: a name it does not know fails the
 * job's first run (exit 78); a fixed offset (+09:00) needs no tables.  A
 * schedule without once_per reads the zone from this host's tzdata
 * (doctor_host_zone): the server's tables do not matter to it.
 */
void
doctor_timezones(struct db *db, const struct conf *c, struct doctor_report *r)
{
	const struct conf_job *j;
	char                  *v = NULL, *utc = NULL, *errstr = NULL, *fix;
	size_t                 i;

	for (i = 0; i < c->njobs; i++) {
		j = &c->jobs[i];
		if (j->timezone == NULL)
			continue;
		if (j->once_per_ms == 0) {
			doctor_host_zone(j, r);
			continue;
		}
		if (db_query_value(db, &v, &errstr,
		        "SELECT CONVERT_TZ('2001-01-01 00:00:00', '+00:00', %s)",
		        j->timezone) != DB_OK) {
			doctor_add(r, CHECK_WARNING, "timezone", NULL,
			    "job %s: cannot ask the server about %s: %s",
			    j->name, j->timezone, errstr);
		} else if (v != NULL) {
			doctor_add(r, CHECK_OK, "timezone", NULL,
			    "job %s: the server knows %s", j->name,
			    j->timezone);
		} else {
			/* Without tables the server knows no name at all. */
			(void)db_query_value(db, &utc, &errstr,
			    "SELECT CONVERT_TZ('2001-01-01 00:00:00', "
			    "'+00:00', 'UTC')");
			if (utc != NULL)
				fix = xasprintf(
				    "correct jobs.%s.timezone: a name "
				    "the server knows, or an offset "
				    "such as +09:00",
				    j->name);
			else
				fix = xstrdup(
				    "load the server's time-zone tables: "
				    "mariadb-tzinfo-to-sql /usr/share/zoneinfo | "
				    "mariadb mysql (or give an offset such as "
				    "+09:00)");
			doctor_add(r, CHECK_CRITICAL, "timezone", fix,
			    "job %s: the server does not know the time zone "
			    "%s%s: its first run would exit 78",
			    j->name, j->timezone,
			    utc == NULL ? " (it has no time-zone tables)" : "");
			free(fix);
			free(utc);
			utc = NULL;
		}
		free(v);
		v = NULL;
		free(errstr);
		errstr = NULL;
	}
}

/* The slots of a job with a schedule and no timezone follow the server's
 * zone: it must be known by name (tzone_open_server), else run refuses
 * the job (78) rather than guess an offset. */
static void
doctor_server_zone(const struct conf *c, const char *global,
    const char *system_zone, struct doctor_report *r)
{
	const struct conf_job *j;
	struct tzone          *z = NULL;
	char                  *errstr = NULL, *fix;
	int    sys = global != NULL && strcmp(global, "SYSTEM") == 0;
	size_t i;

	for (i = 0; i < c->njobs; i++) {
		j = &c->jobs[i];
		if (j->schedule_text == NULL || j->timezone != NULL)
			continue;
		if (tzone_open_server(
		        sys ? system_zone : global, sys, &z, &errstr) == 0) {
			doctor_add(r, CHECK_OK, "time_zone", NULL,
			    "job %s has no timezone: its slots follow the "
			    "server's %s",
			    j->name, tzone_name(z));
			tzone_free(z);
			z = NULL;
			continue;
		}
		fix =
		    xasprintf("timezone = \"America/New_York\" (the "
		              "server's Area/City) on job %s, or the server's "
		              "time_zone",
		        j->name);
		doctor_add(r, CHECK_CRITICAL, "time_zone", fix,
		    "job %s has no timezone, and %s: run refuses it (78)",
		    j->name, errstr);
		free(fix);
		free(errstr);
		errstr = NULL;
	}
}

/* The server's time_zone, and its clock against this host's. */
void
doctor_clock(const struct conf *c, struct db *db, struct doctor_report *r)
{
	struct db_result *res = NULL;
	char             *errstr = NULL;
	double            server_s;
	int64_t           before, after, diff;
	const char       *perr;

	before = now_wall_ms();
	if (db_query(db, &res, &errstr,
	        "SELECT @@GLOBAL.time_zone, @@system_time_zone,"
	        " UNIX_TIMESTAMP(NOW(6))") != DB_OK ||
	    db_one_row(res, 3, &errstr) != DB_OK) {
		doctor_add(r, CHECK_WARNING, "clock", NULL,
		    "cannot read the server's clock: %s", errstr);
		goto out;
	}
	after = now_wall_ms();
	doctor_server_zone(c, db_cell(res, 0, 0), db_cell(res, 0, 1), r);
	if (db_cell(res, 0, 2) == NULL ||
	    parse_double(db_cell(res, 0, 2), 0, 1e11, &server_s, &perr) != 0) {
		doctor_add(r, CHECK_WARNING, "clock", NULL,
		    "cannot read the server's clock");
		goto out;
	}
	/* Against the middle of the round trip. */
	diff = (int64_t)(server_s * 1000) - (before + after) / 2;
	if (diff < 0)
		diff = -diff;
	if (diff > DOCTOR_CLOCK_WARN_MS)
		doctor_add(r, CHECK_WARNING, "clock",
		    "synchronise both clocks with NTP (chrony, systemd-timesyncd)",
		    "this host's clock and the server's differ by %lld ms (time_zone %s, system %s)",
		    (long long)diff,
		    db_cell(res, 0, 0) ? db_cell(res, 0, 0) : "NULL",
		    db_cell(res, 0, 1) ? db_cell(res, 0, 1) : "NULL");
	else
		doctor_add(r, CHECK_OK, "clock", NULL,
		    "clocks within %lld ms (time_zone %s, system %s)",
		    (long long)diff,
		    db_cell(res, 0, 0) ? db_cell(res, 0, 0) : "NULL",
		    db_cell(res, 0, 1) ? db_cell(res, 0, 1) : "NULL");
out:
	db_result_free(res);
	free(errstr);
}
