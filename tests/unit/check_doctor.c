/* check_doctor.c: what cronguard doctor checks without a server: an
 * unreachable database (db NULL), the configuration's and the secret
 * files' modes and contents, a channel whose secret cannot be read, and
 * channels whose port on loopback is closed.  The checks against a real
 * server are tests/integration/t0150, t0151, t0152 and t1176. */
#include "config.h"

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "conf.h"
#include "doctor.h"
#include "testutil.h"
#include "util.h"

static char dir[] = "/tmp/check_doctor.XXXXXX";
static char conf_path[64], secret_path[64];

static void
write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fputs(text, f) >= 0, 1);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(path, mode), 0);
}

static void
setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(conf_path, sizeof conf_path, "%s/cronguard.conf", dir);
	snprintf(secret_path, sizeof secret_path, "%s/secret", dir);
	write_file(secret_path, "s3cret\n", 0600);
}

static void
teardown(void)
{
	testutil_rmdir(dir);
}

/* The configuration text (SECRET: the secret file's path), loaded. */
static void
load(struct conf *c, const char *text)
{
	struct buf  b;
	const char *p;
	char       *err = NULL;

	buf_init(&b);
	while ((p = strstr(text, "SECRET")) != NULL) {
		buf_add(&b, text, (size_t)(p - text));
		buf_adds(&b, secret_path);
		text = p + 6;
	}
	buf_adds(&b, text);
	write_file(conf_path, b.data, 0600);
	buf_free(&b);
	ck_assert_msg(conf_load(conf_path, c, &err) == 0, "%s", err);
}

/* The result called name, or NULL. */
static const struct doctor_result *
result(const struct doctor_report *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (strcmp(r->v[i].name, name) == 0)
			return &r->v[i];
	return NULL;
}

static const char db_conf[] =
    "database = { name = \"app\"; user = \"cg\"; password_file = \"SECRET\"; };\n";

START_TEST(test_database_unreachable)
{
	struct doctor_report        r;
	struct conf                 c;
	const struct doctor_result *d;
	char                       *want;

	load(&c, db_conf);
	doctor_run(NULL, "cannot connect to 127.0.0.1:3306: refused", &c, &r);
	ck_assert_uint_ge(r.n, 3);
	d = &r.v[0];
	ck_assert_str_eq(d->name, "database");
	ck_assert_int_eq(d->status, CHECK_UNKNOWN);
	ck_assert_str_eq(
	    d->finding, "cannot connect to 127.0.0.1:3306: refused");
	ck_assert_ptr_nonnull(d->fix);
	/* only the file checks ran, and passed */
	ck_assert_ptr_null(result(&r, "server"));
	ck_assert_ptr_null(result(&r, "migrations"));
	d = result(&r, "config_file");
	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(d->status, CHECK_OK);
	ck_assert_ptr_null(d->fix);
	want = xasprintf("%s mode 0600", conf_path);
	ck_assert_str_eq(d->finding, want);
	free(want);
	d = result(&r, "secret_file");
	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(d->status, CHECK_OK);
	ck_assert_int_eq(r.worst, CHECK_UNKNOWN);
	doctor_report_free(&r);
	ck_assert_ptr_null(r.v);
	ck_assert_uint_eq(r.n, 0);
	conf_free(&c);
}
END_TEST

/* Files that went wrong after loading: found, with the fix to run; an
 * unreachable database is UNKNOWN whatever the files say. */
START_TEST(test_bad_files)
{
	struct doctor_report        r;
	struct conf                 c;
	const struct doctor_result *d;
	char                       *want;

	load(&c, db_conf);
	ck_assert_int_eq(chmod(conf_path, 0666), 0);
	write_file(secret_path, "", 0600);
	doctor_run(NULL, NULL, &c, &r);
	ck_assert_str_eq(r.v[0].finding, "not connected");
	d = result(&r, "config_file");
	ck_assert_int_eq(d->status, CHECK_CRITICAL);
	want = xasprintf("%s is writable by others (mode 0666)", conf_path);
	ck_assert_str_eq(d->finding, want);
	free(want);
	want = xasprintf("chmod go-w %s", conf_path);
	ck_assert_str_eq(d->fix, want);
	free(want);
	d = result(&r, "secret_file");
	ck_assert_int_eq(d->status, CHECK_CRITICAL);
	want = xasprintf("%s is empty", secret_path);
	ck_assert_str_eq(d->finding, want);
	free(want);
	ck_assert_int_eq(r.worst, CHECK_UNKNOWN);
	doctor_report_free(&r);

	/* readable by others: a secret's problem only */
	ck_assert_int_eq(chmod(conf_path, 0644), 0);
	write_file(secret_path, "s3cret\n", 0644);
	doctor_run(NULL, NULL, &c, &r);
	ck_assert_int_eq(result(&r, "config_file")->status, CHECK_OK);
	d = result(&r, "secret_file");
	ck_assert_int_eq(d->status, CHECK_CRITICAL);
	want = xasprintf("chmod o-r %s", secret_path);
	ck_assert_str_eq(d->fix, want);
	free(want);
	doctor_report_free(&r);
	conf_free(&c);
}
END_TEST

/* A channel whose secret file is gone is not probed: one result says
 * why, with the file's fix. */
START_TEST(test_channel_secret_missing)
{
	struct doctor_report        r;
	struct conf                 c;
	const struct doctor_result *d;

	load(&c,
	    "channels = { hook = { type = \"http\"; url = "
	    "\"http://127.0.0.1:1/x\"; signing_secret_file = \"SECRET\"; }; };\n");
	ck_assert_int_eq(unlink(secret_path), 0);
	doctor_run(NULL, NULL, &c, &r);
	d = result(&r, "channel_secret");
	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(d->status, CHECK_CRITICAL);
	ck_assert(strncmp(d->finding, "hook: ", 6) == 0);
	ck_assert_str_eq(d->fix, "create it, or correct the path");
	ck_assert_ptr_null(result(&r, "channel_connect"));
	doctor_report_free(&r);
	conf_free(&c);
}
END_TEST

/* Closed ports on loopback: the name resolves, the connect is refused,
 * and the fix names the key to correct (libcurl for HTTP, a plain socket
 * for AMQP). */
START_TEST(test_channel_refused)
{
	struct doctor_report        r;
	struct conf                 c;
	const struct doctor_result *d;
	size_t                      i, dns = 0, refused = 0;

	load(&c,
	    "channels = { hook = { type = \"http\"; url = "
	    "\"http://127.0.0.1:1/x\"; };\n"
#ifdef HAVE_AMQP
	    "  queue = { type = \"amqp\"; url = \"amqp://guest@127.0.0.1:1/\";"
	    " password_file = \"SECRET\"; };\n"
#endif
	    "};\n");
	doctor_run(NULL, NULL, &c, &r);
	for (i = 0; i < r.n; i++) {
		d = &r.v[i];
		if (strcmp(d->name, "channel_dns") == 0) {
			ck_assert_int_eq(d->status, CHECK_OK);
			dns++;
		}
		if (strcmp(d->name, "channel_connect") != 0)
			continue;
		ck_assert_int_eq(d->status, CHECK_CRITICAL);
		ck_assert_msg(strstr(d->finding,
		                  "cannot connect to 127.0.0.1 port 1") != NULL,
		    "%s", d->finding);
		ck_assert_ptr_nonnull(strstr(d->fix,
		    "start the server, or "
		    "correct channels."));
		refused++;
	}
#ifdef HAVE_AMQP
	ck_assert_uint_eq(dns, 2);
	ck_assert_uint_eq(refused, 2);
#else
	ck_assert_uint_eq(dns, 1);
	ck_assert_uint_eq(refused, 1);
#endif
	/* refused is the end of the probe: no protocol stage */
	ck_assert_ptr_null(result(&r, "channel_http"));
	doctor_report_free(&r);
	conf_free(&c);
}
END_TEST

static Suite *
doctor_suite(void)
{
	Suite *s = suite_create("doctor");
	TCase *tc = tcase_create("doctor");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_database_unreachable);
	tcase_add_test(tc, test_bad_files);
	tcase_add_test(tc, test_channel_secret_missing);
	tcase_add_test(tc, test_channel_refused);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_main(doctor_suite);
}
