/* check_ping.c: the ping URLs of the healthchecks.io conventions. */
#include "config.h"

#include <stdlib.h>

#include <check.h>

#include "ping.h"
#include "testutil.h"

#define RID "0f6a3c2e-8d1b-4c5a-9e7f-1a2b3c4d5e6f"

static void
url_is(const char *url, enum ping_kind kind, const char *want)
{
	char *got = ping_url(url, kind, RID);

	ck_assert_str_eq(got, want);
	free(got);
}

START_TEST(test_three_pings)
{
	url_is("https://hc-ping.com/abc", PING_START,
	    "https://hc-ping.com/abc/start?rid=" RID);
	url_is("https://hc-ping.com/abc", PING_SUCCESS,
	    "https://hc-ping.com/abc?rid=" RID);
	url_is("https://hc-ping.com/abc", PING_FAIL,
	    "https://hc-ping.com/abc/fail?rid=" RID);
}
END_TEST

/* A trailing slash does not double before /start; success keeps the URL
 * as given. */
START_TEST(test_trailing_slash)
{
	url_is("https://hc-ping.com/abc/", PING_START,
	    "https://hc-ping.com/abc/start?rid=" RID);
	url_is("https://hc-ping.com/abc//", PING_FAIL,
	    "https://hc-ping.com/abc/fail?rid=" RID);
	url_is("https://hc-ping.com/abc/", PING_SUCCESS,
	    "https://hc-ping.com/abc/?rid=" RID);
}
END_TEST

/* A query string stays, after the suffix; a fragment is dropped. */
START_TEST(test_query_kept)
{
	url_is("https://h/p?create=1", PING_START,
	    "https://h/p/start?create=1&rid=" RID);
	url_is("https://h/p/?create=1#frag", PING_FAIL,
	    "https://h/p/fail?create=1&rid=" RID);
	url_is("https://h/p#frag", PING_SUCCESS, "https://h/p?rid=" RID);
}
END_TEST

static Suite *
ping_suite(void)
{
	Suite *s = suite_create("ping");
	TCase *tc = tcase_create("ping");

	tcase_add_test(tc, test_three_pings);
	tcase_add_test(tc, test_trailing_slash);
	tcase_add_test(tc, test_query_kept);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_main(ping_suite);
}
