/* check_cmd.c: the command layer of cmd.c: the command table, option
 * and operand parsing by an entry's template, --help, the usage errors,
 * and the shared option readers (--format, --reason, ids, the outbox
 * filters), run through cmd_run with entries of the test's own. */
#include "config.h"

#include <sys/stat.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "cmd.h"
#include "outbox-admin.h"
#include "testutil.h"
#include "util.h"

/* What the test command's exec saw. */
static struct {
	int    called;
	int    nargs;
	char   args[4][32];
	int    args_ended; /* args[nargs] is NULL (exec's argv) */
	size_t nchannel;
	char   channel[32]; /* the last --channel */
	char   channel_first[32];
	size_t ndry;
	size_t njobs; /* of the loaded configuration */
} seen;

/* What exec runs on the context after recording it; NULL: nothing. */
static int (*probe)(struct cmd_ctx *, struct conf *);

static int
test_exec(struct cmd_ctx *ctx, struct conf *c)
{
	const char *const *v;
	size_t             n;
	int                i;

	seen.called++;
	seen.nargs = ctx->nargs;
	for (i = 0; i < ctx->nargs && i < 4; i++)
		snprintf(seen.args[i], sizeof seen.args[i], "%s", ctx->args[i]);
	seen.args_ended = ctx->args[ctx->nargs] == NULL;
	if (ctx->entry->options != NULL &&
	    strcmp(ctx->entry->options[0].name, "channel") == 0) {
		v = cmd_opt_values(ctx, "channel", &n);
		seen.nchannel = cmd_opt_count(ctx, "channel");
		ck_assert_uint_eq(n, seen.nchannel);
		if (n > 0) {
			snprintf(seen.channel_first, sizeof seen.channel_first,
			    "%s", v[0]);
			snprintf(seen.channel, sizeof seen.channel, "%s",
			    cmd_opt_value(ctx, "channel"));
		}
		seen.ndry = cmd_opt_count(ctx, "dry-run");
	}
	seen.njobs = c->njobs;
	return probe != NULL ? probe(ctx, c) : 7;
}

static const struct cmd_option test_options[] = {
	{ "channel", 1 },
	{ "dry-run", 0 },
	{ "since", 1 },
	{ "event-type", 1 },
	{ "error", 1 },
	{ "reason", 1 },
	{ NULL, 0 },
};

static const struct cmd_entry plain = {
	.name = "test plain",
	.usage = "[--channel NAME] [--dry-run] NAME...",
	.summary = "A command of the test's.",
	.options = test_options,
	.min_args = 0,
	.max_args = -1,
	.exec = test_exec,
};

static const struct cmd_entry first = {
	.name = "test first",
	.usage = "[--channel NAME] -- COMMAND...",
	.options = test_options,
	.max_args = -1,
	.flags = CMD_OPTIONS_FIRST,
	.exec = test_exec,
};

static const struct cmd_entry one = {
	.name = "test one",
	.usage = "NAME",
	.min_args = 1,
	.max_args = 1,
	.exec = test_exec,
};

static const struct cmd_entry formats = {
	.name = "test format",
	.usage = "[--format text|json]",
	.options = cmd_format_template,
	.exec = test_exec,
};

static const struct cmd_entry checks = {
	.name = "test check",
	.usage = "[--format nagios|json|prometheus] [--metrics-file PATH]",
	.options = cmd_check_template,
	.exec = test_exec,
};

static const struct cmd_entry conf_entry = {
	.name = "test conf",
	.usage = "[JOB...]",
	.max_args = -1,
	.flags = CMD_NEEDS_CONF,
	.exec = test_exec,
};

static const struct cmd_entry db_entry = {
	.name = "test db",
	.usage = "",
	.flags = CMD_NEEDS_DB,
	.exec = test_exec,
};

/* One cmd_run, its stdout and stderr kept. */
struct run {
	const struct cmd_entry *e;
	const char             *conf;
	char                   *argv[8];
	int                     argc;
	int                     rc;
	char                   *out, *err;
};

static void
run_fn(void *arg)
{
	struct run *r = arg;

	r->rc = cmd_run(r->e, r->conf != NULL ? r->conf : "/nonexistent/conf",
	    r->argc, r->argv);
}

static void
run_err_fn(void *arg)
{
	struct run *r = arg;

	r->err = testutil_capture(STDERR_FILENO, run_fn, r);
}

/* cmd_run(e, conf, words...) with NULL ending the words (the first is
 * the command's last word); frees what the last run kept. */
static void
run(struct run *r, const struct cmd_entry *e, const char *conf, ...)
{
	va_list ap;
	char   *w;

	free(r->out);
	free(r->err);
	memset(r, 0, sizeof *r);
	memset(&seen, 0, sizeof seen);
	r->e = e;
	r->conf = conf;
	va_start(ap, conf);
	while ((w = va_arg(ap, char *)) != NULL && r->argc < 7)
		r->argv[r->argc++] = w;
	va_end(ap);
	r->out = testutil_capture(STDOUT_FILENO, run_err_fn, r);
}

static void
run_free(struct run *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

static void
teardown(void)
{
	probe = NULL;
}

/* ---------------------------------------------------------- the table */

START_TEST(test_table)
{
	const struct cmd_entry *e;
	size_t                  i, j, k;

	for (i = 0; (e = cmd_table[i]) != NULL; i++) {
		ck_assert_msg(
		    e->name != NULL && e->name[0] != '\0', "entry %zu", i);
		ck_assert_msg(e->usage != NULL, "%s: no usage", e->name);
		ck_assert_msg(e->exec != NULL, "%s: no exec", e->name);
		ck_assert_msg(e->min_args >= 0 &&
		        (e->max_args == -1 || e->max_args >= e->min_args),
		    "%s: operands %d..%d", e->name, e->min_args, e->max_args);
		for (j = 0; e->options != NULL && e->options[j].name != NULL;
		     j++) {
			for (k = 0; k < j; k++)
				ck_assert_str_ne(
				    e->options[k].name, e->options[j].name);
		}
		ck_assert_msg(
		    j <= CMD_OPTIONS_MAX, "%s: %zu options", e->name, j);
		for (k = 0; k < i; k++)
			ck_assert_str_ne(cmd_table[k]->name, e->name);
	}
	ck_assert_uint_ge(i, 20);
}
END_TEST

/* ------------------------------------------------ options and operands */

START_TEST(test_options_and_operands)
{
	struct run r = { 0 };

	run(&r, &plain, NULL, "plain", "--channel", "a", "--dry-run",
	    "--channel=b", "x", "y", NULL);
	ck_assert_int_eq(r.rc, 7); /* exec's own code */
	ck_assert_int_eq(seen.called, 1);
	ck_assert_uint_eq(seen.nchannel, 2);
	ck_assert_str_eq(seen.channel_first, "a");
	ck_assert_str_eq(seen.channel, "b"); /* the last one */
	ck_assert_uint_eq(seen.ndry, 1);
	ck_assert_int_eq(seen.nargs, 2);
	ck_assert_str_eq(seen.args[0], "x");
	ck_assert_str_eq(seen.args[1], "y");
	ck_assert_str_eq(r.err, "");
	run_free(&r);
}
END_TEST

/* Options before, between or after the operands, whatever
 * POSIXLY_CORRECT says; "--" ends them; an entry with CMD_OPTIONS_FIRST
 * ("exec --lock x cmd -x") stops at its first operand. */
START_TEST(test_options_anywhere)
{
	struct run r = { 0 };
	int        posix;

	for (posix = 0; posix < 2; posix++) {
		if (posix)
			setenv("POSIXLY_CORRECT", "1", 1);
		run(&r, &plain, NULL, "plain", "x", "--channel", "a", "y",
		    "--dry-run", NULL);
		ck_assert_int_eq(r.rc, 7);
		ck_assert_int_eq(seen.nargs, 2);
		ck_assert_str_eq(seen.args[0], "x");
		ck_assert_str_eq(seen.args[1], "y");
		ck_assert_int_eq(seen.args_ended, 1);
		ck_assert_str_eq(seen.channel, "a");
		ck_assert_uint_eq(seen.ndry, 1);
		run(&r, &plain, NULL, "plain", "x", "--", "--channel", NULL);
		ck_assert_int_eq(seen.nargs, 2);
		ck_assert_str_eq(seen.args[0], "x");
		ck_assert_str_eq(seen.args[1], "--channel");
		ck_assert_uint_eq(seen.nchannel, 0);
		run(&r, &first, NULL, "first", "--channel", "a", "cmd",
		    "--channel", "b", NULL);
		ck_assert_int_eq(seen.nargs, 3);
		ck_assert_str_eq(seen.args[0], "cmd");
		ck_assert_str_eq(seen.args[1], "--channel");
		ck_assert_str_eq(seen.args[2], "b");
		ck_assert_int_eq(seen.args_ended, 1);
		ck_assert_str_eq(seen.channel, "a");
		run(&r, &first, NULL, "first", "--", "cmd", "-x", NULL);
		ck_assert_int_eq(seen.nargs, 2);
		ck_assert_str_eq(seen.args[1], "-x");
	}
	unsetenv("POSIXLY_CORRECT");
	run_free(&r);
}
END_TEST

START_TEST(test_operand_counts)
{
	struct run r = { 0 };

	run(&r, &one, NULL, "one", NULL);
	ck_assert_int_eq(r.rc, EXIT_USAGE);
	ck_assert_int_eq(seen.called, 0);
	ck_assert_str_eq(r.err,
	    "cronguard: missing argument\n"
	    "usage: cronguard [-c file] [-v | -q] [--log-format text|json] "
	    "test one NAME\n");
	run(&r, &one, NULL, "one", "a", "b", NULL);
	ck_assert_int_eq(r.rc, EXIT_USAGE);
	ck_assert_int_eq(seen.called, 0);
	ck_assert_ptr_nonnull(
	    strstr(r.err, "cronguard: unexpected argument 'b'\n"));
	run(&r, &one, NULL, "one", "a", NULL);
	ck_assert_int_eq(r.rc, 7);
	run_free(&r);
}
END_TEST

START_TEST(test_help)
{
	struct run r = { 0 };

	run(&r, &plain, NULL, "plain", "x", "--help", NULL);
	ck_assert_int_eq(r.rc, EXIT_OK);
	ck_assert_int_eq(seen.called, 0);
	ck_assert_str_eq(r.out,
	    "usage: cronguard [-c file] [-v | -q] [--log-format text|json] "
	    "test plain [--channel NAME] [--dry-run] NAME...\n"
	    "\nA command of the test's.\n");
	/* after "--" it is an operand */
	run(&r, &plain, NULL, "plain", "--", "--help", NULL);
	ck_assert_int_eq(seen.called, 1);
	ck_assert_str_eq(seen.args[0], "--help");
	ck_assert_str_eq(r.out, "");
	run_free(&r);
}
END_TEST

START_TEST(test_bad_options)
{
	struct run  r = { 0 };
	const char *want;

	run(&r, &plain, NULL, "plain", "--bogus", NULL);
	ck_assert_int_eq(r.rc, EXIT_USAGE);
	ck_assert_int_eq(seen.called, 0);
	want = "cronguard: unknown option '--bogus'\nusage: ";
	ck_assert(strncmp(r.err, want, strlen(want)) == 0);
	run(&r, &plain, NULL, "plain", "--bogus=1", NULL);
	ck_assert_ptr_nonnull(
	    strstr(r.err, "cronguard: unknown option '--bogus'\n"));
	run(&r, &plain, NULL, "plain", "--channel", NULL);
	ck_assert_int_eq(r.rc, EXIT_USAGE);
	ck_assert_ptr_nonnull(
	    strstr(r.err, "cronguard: option '--channel' needs a value\n"));
	run(&r, &plain, NULL, "plain", "-x", NULL);
	ck_assert_ptr_nonnull(
	    strstr(r.err, "cronguard: unknown option '-x'\n"));
	/* a flag takes no value */
	run(&r, &plain, NULL, "plain", "--dry-run=yes", NULL);
	ck_assert_int_eq(r.rc, EXIT_USAGE);
	ck_assert_int_eq(seen.called, 0);
	run_free(&r);
}
END_TEST

/* -------------------------------------------------- the shared readers */

static unsigned long long ids_seen[4];
static size_t             nids_seen;

static int
probe_ids(struct cmd_ctx *ctx, struct conf *c)
{
	unsigned long long *ids;
	int                 rc;

	(void)c;
	if ((rc = cmd_parse_ids(ctx, &ids, &nids_seen)) != 0) {
		ck_assert_ptr_null(ids);
		return rc;
	}
	memcpy(ids_seen, ids, (nids_seen < 4 ? nids_seen : 4) * sizeof *ids);
	free(ids);
	return cmd_ids_changed(ctx, 2, nids_seen, "PENDING or FAILED");
}

START_TEST(test_ids)
{
	struct run r = { 0 };

	probe = probe_ids;
	/* repeats dropped, in order; 2 of 3 changed */
	run(&r, &plain, NULL, "plain", "5", "7", "5", "18446744073709551615",
	    NULL);
	ck_assert_uint_eq(nids_seen, 3);
	ck_assert(ids_seen[0] == 5 && ids_seen[1] == 7);
	ck_assert(ids_seen[2] == UINT64_MAX);
	ck_assert_int_eq(r.rc, EXIT_DATAERR);
	ck_assert_str_eq(r.err,
	    "cronguard: test plain: 1 of 3 ids are not PENDING or FAILED "
	    "messages (see outbox show)\n");
	run(&r, &plain, NULL, "plain", "5", "7", NULL);
	ck_assert_int_eq(r.rc, 0); /* all changed */
	ck_assert_str_eq(r.err, "");
	run(&r, &plain, NULL, "plain", "5", "x", NULL);
	ck_assert_int_eq(r.rc, EXIT_USAGE);
	ck_assert_ptr_nonnull(strstr(r.err, "cronguard: bad id x: invalid\n"));
	/* "-1" is an (unknown) option; after "--" it is a bad id */
	run(&r, &plain, NULL, "plain", "-1", NULL);
	ck_assert_int_eq(r.rc, EXIT_USAGE);
	ck_assert_ptr_nonnull(strstr(r.err, "unknown option '-1'"));
	run(&r, &plain, NULL, "plain", "--", "-1", NULL);
	ck_assert_int_eq(r.rc, EXIT_USAGE);
	ck_assert_ptr_nonnull(strstr(r.err, "cronguard: bad id -1: invalid\n"));
	run_free(&r);
}
END_TEST

static int json_seen;

static int
probe_format(struct cmd_ctx *ctx, struct conf *c)
{
	(void)c;
	json_seen = -1;
	return cmd_format_option(ctx, &json_seen);
}

START_TEST(test_format_option)
{
	struct run r = { 0 };

	probe = probe_format;
	run(&r, &formats, NULL, "format", NULL);
	ck_assert_int_eq(r.rc, 0);
	ck_assert_int_eq(json_seen, 0);
	run(&r, &formats, NULL, "format", "--format", "text", NULL);
	ck_assert_int_eq(r.rc, 0);
	ck_assert_int_eq(json_seen, 0);
	run(&r, &formats, NULL, "format", "--format", "json", NULL);
	ck_assert_int_eq(r.rc, 0);
	ck_assert_int_eq(json_seen, 1);
	run(&r, &formats, NULL, "format", "--format", "JSON", NULL);
	ck_assert_int_eq(r.rc, EXIT_USAGE);
	ck_assert_ptr_nonnull(
	    strstr(r.err, "cronguard: --format must be text or json\n"));
	run_free(&r);
}
END_TEST

static enum report_format fmt_seen;
static const char        *metrics_seen;

static int
probe_check(struct cmd_ctx *ctx, struct conf *c)
{
	int rc;

	(void)c;
	fmt_seen = REPORT_JSON;
	metrics_seen = "unset";
	rc = cmd_check_options(ctx, &fmt_seen, &metrics_seen);
	if (metrics_seen != NULL)
		metrics_seen =
		    strcmp(metrics_seen, "/m.prom") == 0 ? "/m.prom" : "other";
	return rc;
}

START_TEST(test_check_options)
{
	struct run r = { 0 };

	probe = probe_check;
	run(&r, &checks, NULL, "check", NULL);
	ck_assert_int_eq(r.rc, 0);
	ck_assert_int_eq(fmt_seen, REPORT_NAGIOS); /* the default */
	ck_assert_ptr_null(metrics_seen);
	run(&r, &checks, NULL, "check", "--format", "prometheus",
	    "--metrics-file", "/m.prom", NULL);
	ck_assert_int_eq(r.rc, 0);
	ck_assert_int_eq(fmt_seen, REPORT_PROMETHEUS);
	ck_assert_str_eq(metrics_seen, "/m.prom");
	run(&r, &checks, NULL, "check", "--format", "text", NULL);
	ck_assert_int_eq(r.rc, EXIT_USAGE);
	ck_assert_ptr_nonnull(strstr(
	    r.err, "cronguard: --format must be nagios, json or prometheus\n"));
	run_free(&r);
}
END_TEST

static int         reason_required;
static const char *reason_seen;

static int
probe_reason(struct cmd_ctx *ctx, struct conf *c)
{
	int rc;

	(void)c;
	rc = cmd_reason_option(ctx, reason_required, 4, &reason_seen);
	if (reason_seen != NULL)
		reason_seen = strcmp(reason_seen, "ok") == 0 ? "ok" : "other";
	return rc;
}

START_TEST(test_reason_option)
{
	struct run r = { 0 };

	probe = probe_reason;
	reason_required = 1;
	run(&r, &plain, NULL, "plain", NULL);
	ck_assert_int_eq(r.rc, EXIT_USAGE);
	ck_assert_ptr_nonnull(
	    strstr(r.err, "cronguard: --reason is required\n"));
	reason_required = 0;
	run(&r, &plain, NULL, "plain", NULL);
	ck_assert_int_eq(r.rc, 0);
	ck_assert_ptr_null(reason_seen);
	run(&r, &plain, NULL, "plain", "--reason", "ok", NULL);
	ck_assert_int_eq(r.rc, 0);
	ck_assert_str_eq(reason_seen, "ok");
	run(&r, &plain, NULL, "plain", "--reason", "", NULL);
	ck_assert_int_eq(r.rc, EXIT_USAGE);
	ck_assert_ptr_nonnull(strstr(r.err, "cronguard: --reason is empty\n"));
	run(&r, &plain, NULL, "plain", "--reason", "abcde", NULL);
	ck_assert_int_eq(r.rc, EXIT_USAGE);
	ck_assert_ptr_nonnull(strstr(r.err,
	    "cronguard: --reason is 5 bytes, more than the limit of 4\n"));
	run(&r, &plain, NULL, "plain", "--reason", "a\xff", NULL);
	ck_assert_int_eq(r.rc, EXIT_USAGE);
	ck_assert_ptr_nonnull(
	    strstr(r.err, "cronguard: --reason is not valid UTF-8\n"));
	run_free(&r);
}
END_TEST

static struct outbox_filter filter_seen;
static int                  any_seen, dry_seen;

static int
probe_filter(struct cmd_ctx *ctx, struct conf *c)
{
	(void)c;
	any_seen = dry_seen = -1;
	return cmd_outbox_filter(ctx, &filter_seen, &any_seen, &dry_seen);
}

START_TEST(test_outbox_filter)
{
	struct run r = { 0 };

	probe = probe_filter;
	run(&r, &plain, NULL, "plain", "--dry-run", NULL);
	ck_assert_int_eq(r.rc, 0);
	ck_assert_int_eq(any_seen, 0);
	ck_assert_int_eq(dry_seen, 1);
	ck_assert_ptr_null(filter_seen.channel);
	run(&r, &plain, NULL, "plain", "--since", "1h", NULL);
	ck_assert_int_eq(r.rc, 0);
	ck_assert_int_eq(any_seen, 1);
	ck_assert_int_eq(dry_seen, 0);
	ck_assert_int_eq(filter_seen.since_ms, 3600000);
	run(&r, &plain, NULL, "plain", "--error", "550", NULL);
	ck_assert_int_eq(any_seen, 1);
	ck_assert_int_eq(filter_seen.since_ms, 0);
	run(&r, &plain, NULL, "plain", "--since", "0s", NULL);
	ck_assert_int_eq(r.rc, EXIT_USAGE);
	ck_assert_ptr_nonnull(
	    strstr(r.err, "cronguard: --since: 0s: must be more than 0\n"));
	run(&r, &plain, NULL, "plain", "--since", "soon", NULL);
	ck_assert_int_eq(r.rc, EXIT_USAGE);
	ck_assert_ptr_nonnull(strstr(r.err, "cronguard: --since: soon: "));
	run_free(&r);
}
END_TEST

/* -------------------------------------------------- the configuration */

static char conf_path[] = "/tmp/check_cmd.XXXXXX";

static void
write_conf(const char *text)
{
	int fd = mkstemp(conf_path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	ck_assert_int_eq(fchmod(fd, 0600), 0);
	close(fd);
}

static void
remove_conf(void)
{
	unlink(conf_path);
	memcpy(conf_path + strlen(conf_path) - 6, "XXXXXX", 6);
}

static int
probe_jobs(struct cmd_ctx *ctx, struct conf *c)
{
	return cmd_jobs_known(ctx, c);
}

START_TEST(test_needs_conf)
{
	struct run r = { 0 };
	char      *want;

	run(&r, &conf_entry, "/nonexistent/cronguard.conf", "conf", NULL);
	ck_assert_int_eq(r.rc, EXIT_CONFIG);
	ck_assert_int_eq(seen.called, 0);
	ck_assert_ptr_nonnull(strstr(r.err, "/nonexistent/cronguard.conf"));
	write_conf("jobs = { nightly = { command = [ \"/bin/true\" ];"
	           " guard = \"local\"; }; };\n");
	run(&r, &conf_entry, conf_path, "conf", NULL);
	ck_assert_int_eq(r.rc, 7);
	ck_assert_uint_eq(seen.njobs, 1);
	/* operands that must name jobs */
	probe = probe_jobs;
	run(&r, &conf_entry, conf_path, "conf", "nightly", NULL);
	ck_assert_int_eq(r.rc, 0);
	run(&r, &conf_entry, conf_path, "conf", "nightly", "weekly", NULL);
	ck_assert_int_eq(r.rc, EXIT_USAGE);
	want = xasprintf("cronguard: no job \"weekly\" in %s\n", conf_path);
	ck_assert_ptr_nonnull(strstr(r.err, want));
	free(want);
	/* a database command without a database section: before exec */
	probe = NULL;
	run(&r, &db_entry, conf_path, "db", NULL);
	ck_assert_int_eq(r.rc, EXIT_CONFIG);
	ck_assert_int_eq(seen.called, 0);
	want = xasprintf("cronguard: %s: no database section\n", conf_path);
	ck_assert_str_eq(r.err, want);
	free(want);
	remove_conf();
	run_free(&r);
}
END_TEST

/* ------------------------------------------------------ CMD_OPENS_DB */

/* What the CMD_OPENS_DB entry's hooks saw. */
static struct {
	int checked, freed, had_db, state;
} opens;

static int
opens_check(struct cmd_ctx *ctx, const struct conf *c)
{
	int *state = ctx->state;

	opens.checked++;
	*state = 42;
	if (ctx->nargs > 0 && strcmp(ctx->args[0], "bad") == 0)
		return cmd_usage_error(ctx->entry, "bad operand");
	return 0;
}

static void
opens_free(void *state)
{
	opens.freed++;
	opens.state = *(int *)state;
}

static int
opens_exec(struct cmd_ctx *ctx, struct conf *c)
{
	opens.had_db = ctx->db != NULL;
	return test_exec(ctx, c);
}

static const struct cmd_entry opens_entry = {
	.name = "test opens",
	.usage = "[WORD]",
	.max_args = 1,
	.flags = CMD_NEEDS_CONF | CMD_OPENS_DB,
	.check = opens_check,
	.state_size = sizeof(int),
	.state_free = opens_free,
	.exec = opens_exec,
};

/* The framework's session: the check first, so that a bad argument is
 * its exit code with no connection tried; a connect that fails is exit
 * 69 and no exec; the state released either way; no database section:
 * exec with no session. */
START_TEST(test_opens_db)
{
	struct run r = { 0 };

	write_conf("database = { host = \"127.0.0.1\"; port = 1;"
	           " user = \"u\"; name = \"n\"; connect_timeout = \"1s\";"
	           " connect_retry = \"0s\"; };\n");
	memset(&opens, 0, sizeof opens);
	run(&r, &opens_entry, conf_path, "opens", "bad", NULL);
	ck_assert_int_eq(r.rc, EXIT_USAGE);
	ck_assert_int_eq(opens.checked, 1);
	ck_assert_int_eq(seen.called, 0);
	ck_assert_ptr_null(strstr(r.err, "connect"));
	ck_assert_int_eq(opens.freed, 1);
	ck_assert_int_eq(opens.state, 42);

	memset(&opens, 0, sizeof opens);
	run(&r, &opens_entry, conf_path, "opens", NULL);
	ck_assert_int_eq(r.rc, EXIT_UNAVAILABLE);
	ck_assert_int_eq(opens.checked, 1);
	ck_assert_int_eq(seen.called, 0);
	ck_assert_ptr_nonnull(
	    strstr(r.err, "cronguard: test opens: cannot connect to "));
	ck_assert_int_eq(opens.freed, 1);

	remove_conf();
	write_conf("jobs = { nightly = { command = [ \"/bin/true\" ];"
	           " guard = \"local\"; }; };\n");
	memset(&opens, 0, sizeof opens);
	run(&r, &opens_entry, conf_path, "opens", NULL);
	ck_assert_int_eq(r.rc, 7);
	ck_assert_int_eq(seen.called, 1);
	ck_assert_int_eq(opens.had_db, 0);
	ck_assert_int_eq(opens.freed, 1);
	remove_conf();
	run_free(&r);
}
END_TEST

static Suite *
cmd_suite(void)
{
	Suite *s = suite_create("cmd");
	TCase *tc = tcase_create("cmd");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, test_table);
	tcase_add_test(tc, test_options_and_operands);
	tcase_add_test(tc, test_options_anywhere);
	tcase_add_test(tc, test_operand_counts);
	tcase_add_test(tc, test_help);
	tcase_add_test(tc, test_bad_options);
	tcase_add_test(tc, test_ids);
	tcase_add_test(tc, test_format_option);
	tcase_add_test(tc, test_check_options);
	tcase_add_test(tc, test_reason_option);
	tcase_add_test(tc, test_outbox_filter);
	tcase_add_test(tc, test_needs_conf);
	tcase_add_test(tc, test_opens_db);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_main(cmd_suite);
}
