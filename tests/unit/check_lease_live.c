/* check_lease_live.c: the lease lock and its fencing token against the test
 * MariaDB (CRONGUARD_TEST_DB_PORT), with the shipped migration 006. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "db.h"
#include "lease.h"
#include "testutil.h"
#include "util.h"

static char lease_dbname[64];

/* A fresh database with every shipped migration (testutil_live_open). */
static struct db *
lease_setup(void)
{
	struct db *db = NULL;

	testutil_live_open(
	    "check_lease", &db, lease_dbname, sizeof lease_dbname);
	return db;
}

static void
lease_teardown(struct db *db)
{
	testutil_live_close(db, lease_dbname);
}

/* The owner token of name as the table has it ("" when free). */
static char *
lease_owner(struct db *db, const char *name)
{
	struct lease_holder h;
	char               *errstr = NULL, *owner;

	ck_assert_int_eq(lease_holder(db, name, &h, &errstr), LEASE_OK);
	owner = xstrdup(h.owner_token != NULL ? h.owner_token : "");
	lease_holder_free(&h);
	return owner;
}

#define SEC 1000000ULL

/* Free: acquired with fence 1; held: busy for another token; the holder
 * columns name the owner. */
START_TEST(test_acquire_busy)
{
	struct db          *db;
	struct lease_holder h;
	char                a[LEASE_TOKEN_SIZE], b[LEASE_TOKEN_SIZE];
	char               *errstr = NULL;
	unsigned long long  fence = 99;

	db = lease_setup();
	lease_token(a);
	lease_token(b);
	ck_assert_int_eq(strlen(a), 32);
	ck_assert_str_ne(a, b);
	ck_assert_int_eq(
	    lease_acquire(db, "j", a, "host-a", 11, 60 * SEC, &fence, &errstr),
	    LEASE_OK);
	ck_assert_uint_eq(fence, 1);
	ck_assert_int_eq(
	    lease_acquire(db, "j", b, "host-b", 22, 60 * SEC, &fence, &errstr),
	    LEASE_BUSY);
	ck_assert_uint_eq(fence, 0);
	/* Not even the owner takes it twice. */
	ck_assert_int_eq(
	    lease_acquire(db, "j", a, "host-a", 11, 60 * SEC, &fence, &errstr),
	    LEASE_BUSY);
	ck_assert_int_eq(lease_holder(db, "j", &h, &errstr), LEASE_OK);
	ck_assert_str_eq(h.owner_token, a);
	ck_assert_str_eq(h.host, "host-a");
	ck_assert_int_eq(h.pid, 11);
	ck_assert_uint_eq(h.fence, 1);
	ck_assert_uint_eq(h.connection_id, db_connection_id(db));
	ck_assert_int_eq(h.expired, 0);
	ck_assert_int_ge(h.held_s, 0);
	lease_holder_free(&h);
	/* Another name is independent. */
	ck_assert_int_eq(
	    lease_acquire(db, "k", b, "host-b", 22, 60 * SEC, &fence, &errstr),
	    LEASE_OK);
	ck_assert_uint_eq(fence, 1);
	lease_teardown(db);
}
END_TEST

/* Only the owner extends and releases; a stranger's try changes nothing. */
START_TEST(test_owner_checks)
{
	struct db         *db;
	char               a[LEASE_TOKEN_SIZE], b[LEASE_TOKEN_SIZE], *owner;
	char              *errstr = NULL;
	unsigned long long fence;

	db = lease_setup();
	lease_token(a);
	lease_token(b);
	ck_assert_int_eq(
	    lease_acquire(db, "j", a, "host-a", 11, 60 * SEC, &fence, &errstr),
	    LEASE_OK);
	ck_assert_int_eq(lease_extend(db, "j", a, 60 * SEC, &errstr), LEASE_OK);
	ck_assert_int_eq(
	    lease_extend(db, "j", b, 60 * SEC, &errstr), LEASE_LOST);
	ck_assert_int_eq(lease_release(db, "j", b, &errstr), LEASE_LOST);
	owner = lease_owner(db, "j");
	ck_assert_str_eq(owner, a);
	free(owner);
	ck_assert_int_eq(lease_release(db, "j", a, &errstr), LEASE_OK);
	owner = lease_owner(db, "j");
	ck_assert_str_eq(owner, "");
	free(owner);
	/* Released: the old owner can neither extend nor release again. */
	ck_assert_int_eq(
	    lease_extend(db, "j", a, 60 * SEC, &errstr), LEASE_LOST);
	ck_assert_int_eq(lease_release(db, "j", a, &errstr), LEASE_LOST);
	ck_assert_int_eq(
	    lease_acquire(db, "j", b, "host-b", 22, 60 * SEC, &fence, &errstr),
	    LEASE_OK);
	ck_assert_uint_eq(fence, 2);
	lease_teardown(db);
}
END_TEST

/* Expiry by the database clock: busy until then, free after; the old
 * owner can neither extend nor release what expired, and its release
 * does not touch the new owner's lease. */
START_TEST(test_expiry)
{
	struct db         *db;
	char               a[LEASE_TOKEN_SIZE], b[LEASE_TOKEN_SIZE], *owner;
	char              *errstr = NULL;
	unsigned long long fence;

	db = lease_setup();
	lease_token(a);
	lease_token(b);
	ck_assert_int_eq(
	    lease_acquire(db, "j", a, "host-a", 11, SEC / 2, &fence, &errstr),
	    LEASE_OK);
	ck_assert_uint_eq(fence, 1);
	ck_assert_int_eq(
	    lease_acquire(db, "j", b, "host-b", 22, 60 * SEC, &fence, &errstr),
	    LEASE_BUSY);
	sleep_ms(800);
	ck_assert_int_eq(lease_extend(db, "j", a, SEC, &errstr), LEASE_LOST);
	ck_assert_int_eq(
	    lease_acquire(db, "j", b, "host-b", 22, 60 * SEC, &fence, &errstr),
	    LEASE_OK);
	ck_assert_uint_eq(fence, 2);
	ck_assert_int_eq(lease_release(db, "j", a, &errstr), LEASE_LOST);
	owner = lease_owner(db, "j");
	ck_assert_str_eq(owner, b);
	free(owner);

	/* Expired but not taken: release says lost, and clears it. */
	ck_assert_int_eq(lease_release(db, "j", b, &errstr), LEASE_OK);
	ck_assert_int_eq(
	    lease_acquire(db, "j", a, "host-a", 11, SEC / 5, &fence, &errstr),
	    LEASE_OK);
	sleep_ms(400);
	ck_assert_int_eq(lease_release(db, "j", a, &errstr), LEASE_LOST);
	owner = lease_owner(db, "j");
	ck_assert_str_eq(owner, "");
	free(owner);
	lease_teardown(db);
}
END_TEST

/* The fence only grows: across release, expiry, a new session, and the
 * named lock's lease_fence_next on the same counter. */
START_TEST(test_fence_monotonic)
{
	struct db         *db, *db2 = NULL;
	char               a[LEASE_TOKEN_SIZE], *errstr = NULL;
	unsigned long long fence, last = 0;
	int                i;

	db = lease_setup();
	for (i = 0; i < 5; i++) {
		lease_token(a);
		ck_assert_int_eq(lease_acquire(db, "j", a, "h", 1, 60 * SEC,
		                     &fence, &errstr),
		    LEASE_OK);
		ck_assert_uint_gt(fence, last);
		last = fence;
		ck_assert_int_eq(lease_release(db, "j", a, &errstr), LEASE_OK);
	}
	ck_assert_uint_eq(last, 5);
	/* A new session (a restart) continues the counter. */
	db2 = testutil_live_connect(lease_dbname);
	ck_assert_int_eq(lease_fence_next(db2, "j", &fence, &errstr), LEASE_OK);
	ck_assert_uint_eq(fence, 6);
	lease_token(a);
	ck_assert_int_eq(
	    lease_acquire(db2, "j", a, "h", 1, 60 * SEC, &fence, &errstr),
	    LEASE_OK);
	ck_assert_uint_eq(fence, 7);
	/* The named lock's counter on a name never leased starts at 1. */
	ck_assert_int_eq(lease_fence_next(db2, "n", &fence, &errstr), LEASE_OK);
	ck_assert_uint_eq(fence, 1);
	ck_assert_int_eq(lease_fence_next(db2, "n", &fence, &errstr), LEASE_OK);
	ck_assert_uint_eq(fence, 2);
	db_close(db2);
	lease_teardown(db);
}
END_TEST

/* Without the table the calls fail with the server's error, never busy. */
START_TEST(test_no_table)
{
	struct db         *db;
	char               a[LEASE_TOKEN_SIZE], *errstr = NULL;
	unsigned long long fence;

	db = lease_setup();
	ck_assert_int_eq(
	    db_query(db, NULL, &errstr, "DROP TABLE cronguard_leases"), DB_OK);
	lease_token(a);
	ck_assert_int_eq(
	    lease_acquire(db, "j", a, "h", 1, 60 * SEC, &fence, &errstr),
	    LEASE_ERR_SCHEMA);
	ck_assert_ptr_nonnull(strstr(errstr, "cronguard_leases"));
	ck_assert_ptr_nonnull(strstr(errstr, "run cronguard db migrate"));
	free(errstr);
	lease_teardown(db);
}
END_TEST

static Suite *
lease_suite(void)
{
	Suite *s = suite_create("lease");
	TCase *tc = tcase_create("live");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_acquire_busy);
	tcase_add_test(tc, test_owner_checks);
	tcase_add_test(tc, test_expiry);
	tcase_add_test(tc, test_fence_monotonic);
	tcase_add_test(tc, test_no_table);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_live_main(lease_suite);
}
