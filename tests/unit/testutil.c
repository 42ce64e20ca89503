/* testutil.c: helpers shared by the Check suites under tests/unit. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

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
