/* check_backoff.c: retry delays and Retry-After parsing. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "backoff.h"
#include "conf.h"
#include "testutil.h"

static struct conf_outbox
conf_backoff(void)
{
	struct conf_outbox c;

	memset(&c, 0, sizeof c);
	c.backoff_initial_ms = 30000;
	c.backoff_multiplier = 2.0;
	c.backoff_max_ms = 3600000;
	c.backoff_jitter = 0.2;
	return c;
}

START_TEST(test_growth_without_jitter)
{
	struct conf_outbox c = conf_backoff();

	/* rnd 0.5 is the centre of the jitter band: no spread. */
	ck_assert_int_eq(backoff_delay_ms(&c, 1, 0, 0.5), 30000);
	ck_assert_int_eq(backoff_delay_ms(&c, 2, 0, 0.5), 60000);
	ck_assert_int_eq(backoff_delay_ms(&c, 3, 0, 0.5), 120000);
	ck_assert_int_eq(backoff_delay_ms(&c, 7, 0, 0.5), 1920000);
	/* capped */
	ck_assert_int_eq(backoff_delay_ms(&c, 8, 0, 0.5), 3600000);
	ck_assert_int_eq(backoff_delay_ms(&c, 1000, 0, 0.5), 3600000);
	ck_assert_int_eq(backoff_delay_ms(&c, 0, 0, 0.5), 30000);
}
END_TEST

START_TEST(test_jitter_bounds)
{
	struct conf_outbox c = conf_backoff();
	int64_t            d;
	unsigned           a;
	int                i;

	for (a = 1; a < 12; a++) {
		for (i = 0; i < 200; i++) {
			d = backoff_delay_ms(&c, a, 0, backoff_random());
			ck_assert_int_ge(d, 0);
			ck_assert_int_le(d, c.backoff_max_ms);
			if (a == 1) {
				ck_assert_int_ge(d, 24000);
				ck_assert_int_le(d, 36000);
			}
		}
	}
	ck_assert_int_eq(backoff_delay_ms(&c, 1, 0, 0.0), 24000);
	/* the cap holds after the spread */
	ck_assert_int_eq(backoff_delay_ms(&c, 20, 0, 0.999), 3600000);
	ck_assert_int_eq(backoff_delay_ms(&c, 20, 0, 0.0), 2880000);
}
END_TEST

START_TEST(test_random_range)
{
	double r;
	int    i;

	for (i = 0; i < 10000; i++) {
		r = backoff_random();
		ck_assert(r >= 0.0 && r < 1.0);
	}
}
END_TEST

START_TEST(test_retry_after_floor)
{
	struct conf_outbox c = conf_backoff();

	c.backoff_initial_ms = 1000;
	/* at least the server's Retry-After, even past the cap */
	ck_assert_int_eq(backoff_delay_ms(&c, 1, 5000, 0.5), 5000);
	ck_assert_int_eq(backoff_delay_ms(&c, 1, 500, 0.5), 1000);
	c.backoff_max_ms = 2000;
	ck_assert_int_eq(backoff_delay_ms(&c, 9, 7200000, 0.5), 7200000);
}
END_TEST

START_TEST(test_retry_after_seconds)
{
	int64_t ms = -1;

	ck_assert_int_eq(backoff_parse_retry_after("5", 0, &ms), 0);
	ck_assert_int_eq(ms, 5000);
	ck_assert_int_eq(backoff_parse_retry_after(" 120 \r\n", 0, &ms), 0);
	ck_assert_int_eq(ms, 120000);
	ck_assert_int_eq(backoff_parse_retry_after("0", 0, &ms), 0);
	ck_assert_int_eq(ms, 0);
	ck_assert_int_eq(
	    backoff_parse_retry_after("99999999999999999999", 0, &ms), 0);
	ck_assert_int_eq(ms, (int64_t)BACKOFF_RETRY_AFTER_MAX_S * 1000);
	ck_assert_int_eq(backoff_parse_retry_after("-5", 0, &ms), -1);
	ck_assert_int_eq(backoff_parse_retry_after("5s", 0, &ms), -1);
	ck_assert_int_eq(backoff_parse_retry_after("1.5", 0, &ms), -1);
	ck_assert_int_eq(backoff_parse_retry_after("", 0, &ms), -1);
	ck_assert_int_eq(backoff_parse_retry_after("soon", 0, &ms), -1);
}
END_TEST

START_TEST(test_retry_after_date)
{
	int64_t ms = -1;
	time_t  t = 1445412480; /* Wed, 21 Oct 2015 07:28:00 GMT */

	ck_assert_int_eq(backoff_parse_retry_after(
	                     "Wed, 21 Oct 2015 07:28:00 GMT", t - 30, &ms),
	    0);
	ck_assert_int_eq(ms, 30000);
	/* the obsolete forms RFC 9110 still requires recipients to accept */
	ck_assert_int_eq(backoff_parse_retry_after(
	                     "Wednesday, 21-Oct-15 07:28:00 GMT", t - 2, &ms),
	    0);
	ck_assert_int_eq(ms, 2000);
	ck_assert_int_eq(
	    backoff_parse_retry_after("Wed Oct 21 07:28:00 2015", t - 1, &ms),
	    0);
	ck_assert_int_eq(ms, 1000);
	/* in the past: no delay */
	ck_assert_int_eq(backoff_parse_retry_after(
	                     "Wed, 21 Oct 2015 07:28:00 GMT", t + 100, &ms),
	    0);
	ck_assert_int_eq(ms, 0);
	/* far future: capped */
	ck_assert_int_eq(
	    backoff_parse_retry_after("Wed, 21 Oct 2035 07:28:00 GMT", t, &ms),
	    0);
	ck_assert_int_eq(ms, (int64_t)BACKOFF_RETRY_AFTER_MAX_S * 1000);
}
END_TEST

static Suite *
backoff_suite(void)
{
	Suite *s = suite_create("backoff");
	TCase *tc = tcase_create("backoff");

	tcase_add_test(tc, test_growth_without_jitter);
	tcase_add_test(tc, test_jitter_bounds);
	tcase_add_test(tc, test_random_range);
	tcase_add_test(tc, test_retry_after_floor);
	tcase_add_test(tc, test_retry_after_seconds);
	tcase_add_test(tc, test_retry_after_date);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_main(backoff_suite);
}
