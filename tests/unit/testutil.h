/* testutil.h: helpers shared by the Check suites under tests/unit. */
#ifndef CRONGUARD_TESTUTIL_H
#define CRONGUARD_TESTUTIL_H

#include "conf.h"

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

#endif
