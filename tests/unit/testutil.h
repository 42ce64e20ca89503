/* testutil.h: helpers shared by the Check suites under tests/unit. */
#ifndef CRONGUARD_TESTUTIL_H
#define CRONGUARD_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include <check.h>

#include "conf.h"
#include "channel.h"
#include "db.h"

/*
 * Run fn(arg) with the file descriptor fd (STDOUT_FILENO, STDERR_FILENO)
 * going to a temporary file; return what fn wrote there, allocated (the
 * caller frees).  The stdio streams are flushed around fn.  Fails the
 * test on any error.
 */
char *testutil_capture(int fd, void (*fn)(void *), void *arg);

/*
 * The test server's connection settings from CRONGUARD_TEST_DB_HOST,
 * _PORT, _USER and _PASSWORD, with the configuration's default timeouts
 * and TLS mode and no database name.  Returns 1 with *c filled (its
 * strings are the environment's: do not free them), or 0 when
 * CRONGUARD_TEST_DB_PORT is unset or empty: no server, skip (but under
 * CI=true that fails the test).  A port that is set but not a port fails
 * the test.
 */
int testutil_live_db(struct conf_database *c);

/*
 * main() of a suite that needs the live test server: run suite() and
 * return 0 or 1; without CRONGUARD_TEST_DB_PORT return 77 (skip, so the
 * run says so), or 1 under CI=true, without running anything.
 */
int testutil_live_main(Suite *(*suite)(void));
/* The one runner of a suite: run it, and exit 0 or 1 by its failures. */
int testutil_main(Suite *(*suite)(void));

/* Unix seconds of 2026-12-06 hh:mm:ss UTC: the day the schedule suites
 * judge on. */
int64_t testutil_at(int hh, int mm, int ss);

/*
 * On the live server: create the database <prefix>_<pid> (dropped first)
 * with every migration of CRONGUARD_SQLDIR applied, connect *db to it and
 * write its name to name[namesz].  Fails the test on any error.
 */
void testutil_live_open(
    const char *prefix, struct db **db, char *name, size_t namesz);

/* A second session on the database name (to hold locks against *db). */
struct db *testutil_live_connect(const char *name);

/* Drop the database name and close db. */
void testutil_live_close(struct db *db, const char *name);

/* An SMTP channel "mail" with a 1 s timeout, a 60 s circuit cooldown and
 * the given limits (0: none). */
struct conf_channel testutil_channel(
    double rate, long long quota, unsigned failures);

/* m[0..n-1] zeroed with ids 1..n, and p[i] = &m[i]. */
void testutil_msgs(struct outbox_msg *m, struct outbox_msg **p, size_t n);

/* Remove the directory mkdtemp(tmpl) made, with what it holds, and put
 * back tmpl's XXXXXX for the next mkdtemp (a fixture's teardown). */
void testutil_rmdir(char *tmpl);

/* The outbox section's defaults (its thresholds among them). */
struct conf_outbox testutil_outbox_conf(void);

/* The watchdog's counts, the rest zero (check_report, check_outbox_admin). */
struct outbox_counts;
struct outbox_counts testutil_counts(long long pending, long long due,
    long long processing, long long stale, long long stuck, long long failed,
    long long oldest, long long unknown);

#endif
