/* check_status.c: the status page without a server: the one HTML escaper
 * (status-html.c), a slot's cell from its runs (status.c), and the page's
 * promises for a database that could not be read. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "status-html.h"
#include "status.h"
#include "testutil.h"
#include "util.h"

/* ------------------------------------------------------------ escaper */

static const struct {
	const char *in;
	size_t      len; /* 0: strlen */
	const char *out;
} esc_cases[] = {
	{ "plain text", 0, "plain text" },
	{ "<script>alert(1)</script>", 0,
	    "&lt;script&gt;alert(1)&lt;/script&gt;" },
	{ "a & b", 0, "a &amp; b" },
	{ "\"double\" 'single'", 0, "&quot;double&quot; &#39;single&#39;" },
	{ "x\" onmouseover=\"alert(1)", 0,
	    "x&quot; onmouseover=&quot;alert(1)" },
	/* tab and newline kept; ESC, CR, BEL and DEL shown, not sent */
	{ "a\tb\nc", 0, "a\tb\nc" },
	{ "\033[31mred\033[0m", 0, "\xe2\x90\x9b[31mred\xe2\x90\x9b[0m" },
	{ "\r\a\x7f", 0, "\xe2\x90\x8d\xe2\x90\x87\xe2\x90\xa1" },
	/* a NUL byte inside the data */
	{ "a\0b", 3,
	    "a\xe2\x90\x80"
	    "b" },
	/* UTF-8 kept; a bad byte, an overlong form, a C1 control and a
	 * right-to-left override replaced */
	{ "\xc3\xa9t\xc3\xa9 \xec\x98\x88\xec\x95\xbd", 0,
	    "\xc3\xa9t\xc3\xa9 \xec\x98\x88\xec\x95\xbd" },
	{ "a\xffz", 0, "a\xef\xbf\xbdz" },
	{ "\xc0\xbc", 0, "\xef\xbf\xbd\xef\xbf\xbd" },
	{ "\xc2\x9b"
	  "1m",
	    0,
	    "\xef\xbf\xbd"
	    "1m" },
	{ "abc\xe2\x80\xae"
	  "gpj.exe",
	    0,
	    "abc\xef\xbf\xbd"
	    "gpj.exe" },
	{ "\xe2\x81\xa6x", 0, "\xef\xbf\xbdx" },
	/* a sequence cut at the end of the data */
	{ "ab\xe2\x80", 0, "ab\xef\xbf\xbd\xef\xbf\xbd" },
};

START_TEST(test_escape)
{
	struct buf  b;
	const char *in = esc_cases[_i].in;
	size_t      len = esc_cases[_i].len ? esc_cases[_i].len : strlen(in);

	buf_init(&b);
	status_html_escape(&b, in, len);
	ck_assert_msg(strcmp(buf_str(&b), esc_cases[_i].out) == 0,
	    "case %d: got \"%s\", want \"%s\"", _i, buf_str(&b),
	    esc_cases[_i].out);
	buf_free(&b);
}
END_TEST

/* Whatever bytes come in, nothing that opens a tag, an entity of its own
 * or an attribute comes out, and the result is well-formed UTF-8. */
START_TEST(test_escape_every_byte)
{
	struct buf    b;
	unsigned char in[256 * 2];
	size_t        i;

	for (i = 0; i < sizeof in; i++)
		in[i] = (unsigned char)(i % 256);
	buf_init(&b);
	status_html_escape(&b, (const char *)in, sizeof in);
	ck_assert_ptr_null(strpbrk(buf_str(&b), "<>\"'"));
	ck_assert_int_eq((int)strlen(buf_str(&b)), (int)b.len);
	ck_assert(utf8_valid(buf_str(&b)));
	for (i = 0; i < b.len; i++) {
		if (b.data[i] == '&')
			ck_assert(strncmp(b.data + i, "&amp;", 5) == 0 ||
			    strncmp(b.data + i, "&lt;", 4) == 0 ||
			    strncmp(b.data + i, "&gt;", 4) == 0 ||
			    strncmp(b.data + i, "&quot;", 6) == 0 ||
			    strncmp(b.data + i, "&#39;", 5) == 0);
	}
	buf_free(&b);
}
END_TEST

/* ---------------------------------------------------------- the cells */

START_TEST(test_slot_cell)
{
	struct status_slot_runs r;
	const int64_t           slot = 1000000, grace = 90, now = slot + 600;

	memset(&r, 0, sizeof r);
	ck_assert_int_eq(
	    status_slot_cell(&r, slot, grace, now, 0, 0, 0), CELL_MISSED);
	ck_assert_int_eq(
	    status_slot_cell(&r, slot, grace, now, 0, 1, 0), CELL_PAUSED);
	ck_assert_int_eq(
	    status_slot_cell(&r, slot, grace, now, 1, 0, 0), CELL_NONE);
	/* acknowledged with jobs ack: shown apart; a pause still wins */
	ck_assert_int_eq(
	    status_slot_cell(&r, slot, grace, now, 0, 0, 1), CELL_ACKED);
	ck_assert_int_eq(
	    status_slot_cell(&r, slot, grace, now, 0, 1, 1), CELL_PAUSED);
	ck_assert_int_eq(status_slot_cell(&r, slot, grace, slot + 60, 0, 0, 1),
	    CELL_WAITING);
	/* within its grace: waiting, never missed */
	ck_assert_int_eq(status_slot_cell(&r, slot, grace, slot + 60, 0, 0, 0),
	    CELL_WAITING);
	r.nruns = 1;
	r.failed = 1;
	ck_assert_int_eq(
	    status_slot_cell(&r, slot, grace, now, 0, 1, 0), CELL_FAILED);
	ck_assert_int_eq(
	    status_slot_cell(&r, slot, grace, now, 0, 0, 1), CELL_FAILED);
	r.launched = 1;
	r.nruns = 2;
	r.first_start = slot + 5;
	ck_assert_int_eq(
	    status_slot_cell(&r, slot, grace, now, 0, 0, 0), CELL_SUCCESS);
	r.first_start = slot + 91;
	ck_assert_int_eq(
	    status_slot_cell(&r, slot, grace, now, 0, 0, 0), CELL_LATE);
	r.launched = 2;
	ck_assert_int_eq(
	    status_slot_cell(&r, slot, grace, now, 0, 0, 0), CELL_TWICE);
	r.running = 1;
	ck_assert_int_eq(
	    status_slot_cell(&r, slot, grace, now, 0, 0, 0), CELL_RUNNING);
	memset(&r, 0, sizeof r);
	r.nruns = 1;
	r.manual = 1;
	ck_assert_int_eq(
	    status_slot_cell(&r, slot, grace, now, 0, 0, 0), CELL_MANUAL);
}
END_TEST

START_TEST(test_cell_names)
{
	int i, k;

	/* Each state has its own word, and none is the start of another:
	 * the stylesheet picks a cell's colour by the word it starts with. */
	for (i = 0; i < CELL_NSTATES; i++) {
		ck_assert(strlen(status_cell_name((enum status_cell)i)) > 0);
		for (k = 0; k < CELL_NSTATES; k++) {
			char w[64];

			if (i == k)
				continue;
			snprintf(w, sizeof w, "%s ",
			    status_cell_name((enum status_cell)i));
			ck_assert(strncmp(status_cell_name((enum status_cell)k),
			              w, strlen(w)) != 0);
		}
	}
}
END_TEST

/* ----------------------------------------------------------- the page */

START_TEST(test_page_unreachable)
{
	struct status s;
	char         *page;

	memset(&s, 0, sizeof s);
	s.error = xstrdup("cannot connect to <db>: refused");
	page = status_html(&s, "2026-12-06 18:00:00 UTC", "web1");
	ck_assert_ptr_nonnull(strstr(page, "could not be reached"));
	ck_assert_ptr_nonnull(strstr(page, "&lt;db&gt;"));
	ck_assert_ptr_null(strstr(page, "<db>"));
	ck_assert_ptr_null(strstr(page, "Generated at"));
	ck_assert_ptr_nonnull(strstr(page, "2026-12-06 18:00:00 UTC"));
	free(page);
	free(s.error);
}
END_TEST

static Suite *
status_suite(void)
{
	Suite *s = suite_create("status");
	TCase *tc = tcase_create("status");

	tcase_add_loop_test(tc, test_escape, 0, (int)nitems(esc_cases));
	tcase_add_test(tc, test_escape_every_byte);
	tcase_add_test(tc, test_slot_cell);
	tcase_add_test(tc, test_cell_names);
	tcase_add_test(tc, test_page_unreachable);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_main(status_suite);
}
