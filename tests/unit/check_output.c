/* check_output.c: the bounded ring that keeps a job's output tail. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "output.h"
#include "testutil.h"

/* The tail as a NUL-terminated copy, for comparing. */
static char *
tail_str(struct output *o)
{
	const char *p;
	size_t      n;
	char       *s;

	p = output_tail(o, &n);
	s = calloc(1, n + 1);
	ck_assert_ptr_nonnull(s);
	if (n > 0)
		memcpy(s, p, n);
	return s;
}

START_TEST(test_empty)
{
	struct output o;
	size_t        n = 99;

	output_init(&o, 8);
	ck_assert_ptr_null(output_tail(&o, &n));
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_eq(o.total, 0);
	output_free(&o);
}
END_TEST

START_TEST(test_under_max_kept_whole)
{
	struct output o;
	char         *s;

	output_init(&o, 16);
	output_add(&o, "abc", 3);
	output_add(&o, "def", 3);
	s = tail_str(&o);
	ck_assert_str_eq(s, "abcdef");
	ck_assert_uint_eq(o.total, 6);
	free(s);
	output_free(&o);
}
END_TEST

START_TEST(test_wraps_keeps_last_max)
{
	struct output o;
	char         *s;

	output_init(&o, 5);
	output_add(&o, "abc", 3);
	output_add(&o, "def", 3); /* wraps: bcdef */
	s = tail_str(&o);
	ck_assert_str_eq(s, "bcdef");
	free(s);
	output_add(&o, "gh", 2); /* after a tail: defgh */
	output_add(&o, "i", 1);
	s = tail_str(&o);
	ck_assert_str_eq(s, "efghi");
	ck_assert_uint_eq(o.total, 9);
	free(s);
	output_free(&o);
}
END_TEST

START_TEST(test_write_longer_than_max)
{
	struct output o;
	char         *s;

	output_init(&o, 4);
	output_add(&o, "xy", 2);
	output_add(&o, "0123456789", 10);
	s = tail_str(&o);
	ck_assert_str_eq(s, "6789");
	ck_assert_uint_eq(o.total, 12);
	free(s);
	output_free(&o);
}
END_TEST

START_TEST(test_nul_bytes_kept)
{
	struct output o;
	const char   *p;
	size_t        n;

	output_init(&o, 4);
	output_add(&o, "a\0b\0c", 5);
	p = output_tail(&o, &n);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(memcmp(p, "\0b\0c", 4), 0);
	output_free(&o);
}
END_TEST

/* Against a model: the last max bytes of everything written, for many
 * write sizes around the ring's size and wrap points. */
START_TEST(test_matches_model)
{
	enum { MAX = 37, ALL = 5000 };
	static char   all[ALL];
	struct output o;
	const char   *p;
	size_t        n, off = 0, w, i, keep;
	unsigned      seed = 7;

	for (i = 0; i < ALL; i++)
		all[i] = (char)('a' + i % 26);
	output_init(&o, MAX);
	while (off < ALL) {
		w = (size_t)rand_r(&seed) % (2 * MAX + 2);
		if (w > ALL - off)
			w = ALL - off;
		output_add(&o, all + off, w);
		off += w;
		if (rand_r(&seed) % 3 == 0 || off == ALL) {
			p = output_tail(&o, &n);
			keep = off < MAX ? off : MAX;
			ck_assert_uint_eq(n, keep);
			if (keep > 0)
				ck_assert_int_eq(
				    memcmp(p, all + off - keep, keep), 0);
		}
		ck_assert_uint_le(o.cap, MAX);
	}
	ck_assert_uint_eq(o.total, ALL);
	output_free(&o);
}
END_TEST

/* Memory follows what was written, up to max: a line does not cost the
 * whole ring. */
START_TEST(test_allocation_bounded)
{
	struct output o;
	static char   big[1 << 16];
	int           i;

	output_init(&o, OUTPUT_MAX_DEFAULT);
	output_add(&o, "one line\n", 9);
	ck_assert_uint_le(o.cap, 4096);
	for (i = 0; i < 100; i++)
		output_add(&o, big, sizeof big);
	ck_assert_uint_eq(o.cap, OUTPUT_MAX_DEFAULT);
	ck_assert_uint_eq(o.len, OUTPUT_MAX_DEFAULT);
	ck_assert_uint_eq(o.total, 9 + 100ULL * sizeof big);
	output_free(&o);
}
END_TEST

static Suite *
output_suite(void)
{
	Suite *s = suite_create("output");
	TCase *tc = tcase_create("output");

	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_under_max_kept_whole);
	tcase_add_test(tc, test_wraps_keeps_last_max);
	tcase_add_test(tc, test_write_longer_than_max);
	tcase_add_test(tc, test_nul_bytes_kept);
	tcase_add_test(tc, test_matches_model);
	tcase_add_test(tc, test_allocation_bounded);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_main(output_suite);
}
