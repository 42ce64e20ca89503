/* testutil.c: helpers shared by the Check suites under tests/unit. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "migrate.h"
#include "outbox-admin.h"
#include "testutil.h"
#include "util.h"

char *
testutil_capture(int fd, void (*fn)(void *), void *arg)
{
	FILE *tmp = tmpfile();
	int   saved = dup(fd);
	long  len;
	char *out;

	ck_assert_ptr_nonnull(tmp);
	ck_assert_int_ge(saved, 0);
	fflush(NULL);
	dup2(fileno(tmp), fd);
	fn(arg);
	fflush(NULL);
	dup2(saved, fd);
	close(saved);
	len = ftell(tmp);
	ck_assert_int_ge(len, 0);
	out = xcalloc(1, (size_t)len + 1);
	rewind(tmp);
	ck_assert_uint_eq(fread(out, 1, (size_t)len, tmp), (size_t)len);
	fclose(tmp);
	return out;
}

int
testutil_live_db(struct conf_database *c)
{
	const char *port, *host, *user, *pw, *why;
	long long   p;

	if ((port = getenv("CRONGUARD_TEST_DB_PORT")) == NULL ||
	    *port == '\0') {
		/* Under CI a missing server is a failure, not a skip. */
		ck_assert_msg(
		    (why = getenv("CI")) == NULL || strcmp(why, "true") != 0,
		    "CI=true but CRONGUARD_TEST_DB_PORT is not set");
		return 0;
	}
	ck_assert_msg(parse_ll(port, 1, 65535, &p, &why) == 0,
	    "CRONGUARD_TEST_DB_PORT %s: %s", port, why);
	memset(c, 0, sizeof *c);
	host = getenv("CRONGUARD_TEST_DB_HOST");
	user = getenv("CRONGUARD_TEST_DB_USER");
	pw = getenv("CRONGUARD_TEST_DB_PASSWORD");
	c->host = (char *)(host != NULL && *host != '\0' ? host : "127.0.0.1");
	c->port = (unsigned)p;
	c->user = (char *)(user != NULL && *user != '\0' ? user : "root");
	c->password = (char *)(pw != NULL ? pw : "");
	c->connect_timeout_ms = 5000;
	c->read_timeout_ms = 30000;
	c->write_timeout_ms = 30000;
	c->tls_mode = TLS_PREFERRED;
	return 1;
}

int
testutil_live_main(Suite *(*suite)(void))
{
	const char *port = getenv("CRONGUARD_TEST_DB_PORT");
	const char *ci = getenv("CI");

	if (port == NULL || *port == '\0') {
		if (ci != NULL && strcmp(ci, "true") == 0) {
			fprintf(stderr,
			    "CI=true but CRONGUARD_TEST_DB_PORT "
			    "is not set\n");
			return EXIT_FAILURE;
		}
		fprintf(stderr,
		    "skip: no test server "
		    "(CRONGUARD_TEST_DB_PORT is not set)\n");
		return 77;
	}
	return testutil_main(suite);
}

int
testutil_main(Suite *(*suite)(void))
{
	SRunner *sr;
	int      failed;

	sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

void
testutil_live_open(
    const char *prefix, struct db **db, char *name, size_t namesz)
{
	struct conf_database c;
	struct migration_set set;
	struct db           *admin = NULL;
	char                *errstr = NULL;
	size_t               i;

	ck_assert_msg(testutil_live_db(&c), "no test server");
	ck_assert_int_eq(db_connect(&c, &admin, &errstr), DB_OK);
	snprintf(name, namesz, "%s_%ld", prefix, (long)getpid());
	ck_assert_msg(db_query(admin, NULL, &errstr,
	                  "DROP DATABASE IF EXISTS %I", name) == DB_OK,
	    "%s", errstr);
	ck_assert_msg(
	    db_query(admin, NULL, &errstr, "CREATE DATABASE %I", name) == DB_OK,
	    "%s", errstr);
	db_close(admin);

	c.name = (char *)name;
	ck_assert_msg(db_connect(&c, db, &errstr) == DB_OK, "%s", errstr);
	memset(&set, 0, sizeof set);
	ck_assert_msg(
	    migrate_scan(migrate_sqldir(), &set, &errstr) == 0, "%s", errstr);
	ck_assert_msg(
	    migrate_load(*db, &set, 1, &errstr) == DB_OK, "%s", errstr);
	for (i = 0; i < set.n; i++)
		ck_assert_msg(migrate_apply(*db, &set.v[i], &errstr) == DB_OK,
		    "%s: %s", set.v[i].file, errstr);
	migrate_set_free(&set);
}

struct db *
testutil_live_connect(const char *name)
{
	struct conf_database c;
	struct db           *db = NULL;
	char                *errstr = NULL;

	ck_assert_msg(testutil_live_db(&c), "no test server");
	c.name = (char *)name;
	ck_assert_msg(db_connect(&c, &db, &errstr) == DB_OK, "%s", errstr);
	return db;
}

void
testutil_live_close(struct db *db, const char *name)
{
	char *errstr = NULL;

	ck_assert_msg(
	    db_query(db, NULL, &errstr, "DROP DATABASE %I", name) == DB_OK,
	    "%s", errstr);
	db_close(db);
}

struct conf_channel
testutil_channel(double rate, long long quota, unsigned failures)
{
	struct conf_channel c;

	memset(&c, 0, sizeof c);
	c.name = (char *)"mail";
	c.type = CHANNEL_SMTP;
	c.timeout_ms = 1000;
	c.rate = rate;
	c.daily_quota = quota;
	c.circuit_failures = failures;
	c.circuit_cooldown_ms = 60000;
	return c;
}

void
testutil_msgs(struct outbox_msg *m, struct outbox_msg **p, size_t n)
{
	size_t i;

	memset(m, 0, n * sizeof *m);
	for (i = 0; i < n; i++) {
		m[i].id = i + 1;
		p[i] = &m[i];
	}
}

struct conf_outbox
testutil_outbox_conf(void)
{
	struct conf c;

	conf_defaults(&c);
	return c.outbox;
}

struct outbox_counts
testutil_counts(long long pending, long long due, long long processing,
    long long stale, long long stuck, long long failed, long long oldest,
    long long unknown)
{
	struct outbox_counts k;

	memset(&k, 0, sizeof k);
	k.pending = pending;
	k.due = due;
	k.processing = processing;
	k.stale = stale;
	k.stuck = stuck;
	k.failed = failed;
	k.oldest_due_age_s = oldest;
	k.unknown_channel = unknown;
	return k;
}

void
testutil_rmdir(char *tmpl)
{
	char *cmd = xasprintf("rm -rf '%s'", tmpl);

	(void)!system(cmd);
	free(cmd);
	memcpy(tmpl + strlen(tmpl) - 6, "XXXXXX", 6);
}

int64_t
testutil_at(int hh, int mm, int ss)
{
	struct tm tm;

	memset(&tm, 0, sizeof tm);
	tm.tm_year = 2026 - 1900;
	tm.tm_mon = 11;
	tm.tm_mday = 6;
	tm.tm_hour = hh;
	tm.tm_min = mm;
	tm.tm_sec = ss;
	return (int64_t)timegm(&tm);
}
