/* check_conf.c: configuration parsing, validation errors with file:line,
 * defaults, the secret rules and secret masking in conf_print_text. */
#include "config.h"

#include <sys/prctl.h>
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "conf-print.h"
#include "conf.h"
#include "testutil.h"
#include "util.h"

/* A temporary file holding text, with the given mode; path allocated. */
static char *
tmp_file(const char *text, mode_t mode)
{
	char  *path = xstrdup("/tmp/cg-check-conf-XXXXXX");
	size_t len = strlen(text);
	int    fd;

	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
	return path;
}

static void
tmp_remove(char *path)
{
	unlink(path);
	free(path);
}

/* Load text from a file of the given mode; returns conf_load's result. */
static int
load_text(
    const char *text, mode_t mode, struct conf *c, char **errstr, char **pathp)
{
	char *path = tmp_file(text, mode);
	int   rv;

	rv = conf_load(path, c, errstr);
	if (pathp != NULL)
		*pathp = path;
	else
		tmp_remove(path);
	return rv;
}

/* ------------------------------------------------------------ good */

START_TEST(test_minimal_defaults)
{
	struct conf c;
	char       *err = NULL;

	ck_assert_int_eq(load_text("database = { name = \"app\"; };\n", 0600,
	                     &c, &err, NULL),
	    0);
	ck_assert_ptr_null(err);
	ck_assert(c.have_database);
	ck_assert_str_eq(c.db.name, "app");
	ck_assert_str_eq(c.db.host, "127.0.0.1");
	ck_assert_uint_eq(c.db.port, 3306);
	ck_assert_ptr_null(c.db.socket);
	ck_assert_ptr_null(c.db.password);
	ck_assert_int_eq(c.db.connect_timeout_ms, 5000);
	ck_assert_int_eq(c.db.connect_retry_ms, 30000);
	ck_assert_int_eq(c.db.read_timeout_ms, 30000);
	ck_assert_int_eq(c.db.write_timeout_ms, 30000);
	ck_assert_int_eq(c.db.tls_mode, TLS_PREFERRED);
	ck_assert_uint_eq(c.outbox.batch_size, 50);
	ck_assert_int_eq(c.outbox.poll_interval_ms, 1000);
	ck_assert_int_eq(c.outbox.lease_ms, 300000);
	ck_assert_int_eq(c.outbox.watchdog_ms, 900000);
	ck_assert_uint_eq(c.outbox.max_attempts, 8);
	ck_assert_int_eq(c.outbox.backoff_initial_ms, 30000);
	ck_assert(c.outbox.backoff_multiplier == 2.0);
	ck_assert_int_eq(c.outbox.backoff_max_ms, 3600000);
	ck_assert(c.outbox.backoff_jitter == 0.2);
	ck_assert_int_eq(c.outbox.ordering, ORDERING_PER_KEY);
	ck_assert(c.outbox.keep_sent);
	ck_assert_int_eq(c.outbox.pending_warn, 1000);
	ck_assert_int_eq(c.outbox.pending_crit, 10000);
	ck_assert_int_eq(c.outbox.oldest_due_warn_ms, 300000);
	ck_assert_int_eq(c.outbox.oldest_due_crit_ms, 1800000);
	ck_assert_int_eq(c.outbox.failed_warn, 1);
	ck_assert_int_eq(c.outbox.failed_crit, 100);
	ck_assert_uint_eq(c.nchannels, 0);
	ck_assert_uint_eq(c.njobs, 0);
	ck_assert_ptr_null(c.alert_url);
	ck_assert_int_eq(c.alert_timeout_ms, 10000);
	ck_assert_ptr_nonnull(c.runtime_dir);
	conf_free(&c);
	conf_free(&c); /* safe twice: conf_free zeroes */
}
END_TEST

START_TEST(test_empty_file)
{
	struct conf c;
	char       *err = NULL;

	ck_assert_int_eq(load_text("", 0600, &c, &err, NULL), 0);
	ck_assert(!c.have_database);
	conf_free(&c);
}
END_TEST

START_TEST(test_defaults_allocate_nothing)
{
	struct conf c;
	char       *err = NULL, *path;

	/* The command layer fills defaults, then loads over them. */
	conf_defaults(&c);
	ck_assert_ptr_null(c.db.host);
	ck_assert_ptr_null(c.runtime_dir);
	ck_assert_uint_eq(c.outbox.batch_size, 50);
	path = tmp_file("runtime_dir = \"/var/tmp/cg\";\n", 0644);
	ck_assert_int_eq(conf_load(path, &c, &err), 0);
	ck_assert_str_eq(c.runtime_dir, "/var/tmp/cg");
	ck_assert_str_eq(c.path, path);
	conf_free(&c);
	tmp_remove(path);
}
END_TEST

static const char full_fmt[] =
    "# every key\n"
    "runtime_dir = \"/run/cg-test\";\n"
    "database = {\n"
    "  socket = \"/run/mysqld/mysqld.sock\";\n"
    "  user = \"cronguard\";\n"
    "  password_file = \"%s\";\n"
    "  option_file = \"/etc/mysql/cronguard.cnf\"; option_group = "
    "\"cronguard\";\n"
    "  name = \"app\";\n"
    "  connect_timeout = 7; read_timeout = \"1m\"; write_timeout = \"45s\";\n"
    "  tls = { mode = \"verify_identity\"; ca = \"/ca.pem\"; cert = "
    "\"/c.pem\";\n"
    "          key = \"/k.pem\"; };\n"
    "};\n"
    "outbox = {\n"
    "  batch_size = 10; poll_interval = \"250ms\"; lease = \"10m\";\n"
    "  watchdog = \"1h\"; max_attempts = 3; attempt_log = \"failures\";\n"
    "  backoff = { initial = \"10s\"; multiplier = 3; max = \"2h\";\n"
    "              jitter = 0.5; }; ordering_scope = \"global\";\n"
    "  ordering = \"none\"; keep_sent = false;\n"
    "  thresholds = { pending_warn = 5; pending_crit = 6000000000L;\n"
    "                 oldest_due_warn = \"1m\"; oldest_due_crit = \"2m\";\n"
    "                 failed_warn = 2; failed_crit = 3; };\n"
    "};\n"
    "channels = {\n"
    "  mail = {\n"
    "    type = \"smtp\";\n"
    "    url = \"smtp://127.0.0.1:2525\";\n"
    "    username = \"relay\"; password_file = \"%s\";\n"
    "    from = \"Reservations <noreply@example.com>\";\n"
    "    tls = \"required\"; timeout = \"20s\"; connections = 2;\n"
    "    rate = 14.5; daily_quota = 500; max_size = 1048576;\n"
    "    circuit = { failures = 5; cooldown = \"2m\"; };\n"
    "    ttl = \"2h\"; on_failure = \"skip\";\n"
    "  };\n"
    "  billing = {\n"
    "    type = \"http\";\n"
    "    url = \"https://hooks.example.com/billing\";\n"
    "    method = \"PUT\";\n"
    "    headers = [ \"Authorization: Bearer tok3n-s3cret\",\n"
    "                \"Content-Type: application/json\" ];\n"
    "    signing_secret_file = \"%s\";\n"
    "    timeout = \"10s\"; concurrency = 8;\n"
    "  };\n"
    "};\n"
    "jobs = {\n"
    "  leave-accrual = {\n"
    "    command = [ \"/usr/local/bin/accrue-leave\", \"--today\" ];\n"
    "    max_runtime = \"1h\"; timeout = \"2h\"; expect_every = \"1d\";\n"
    "    grace = \"5m\"; heartbeat = \"10s\"; on_lock_lost = \"continue\";\n"
    "    busy_exit = 3; once_per = \"1d\"; timezone = \"Europe/Berlin\";\n"
    "    output = \"capture\"; output_max = \"1M\";\n"
    "    ping_url = \"https://hc-ping.com/abc?x=1\";\n"
    "  };\n"
    "  monthly-billing = { sql = \"CALL build_monthly_billing()\";\n"
    "    max_runtime = \"10m\"; expect_every = \"31d\"; guard = \"local\";"
    " schedule = \"0 3 1 * *\"; catch_up = \"all\"; backfill_limit = 5;"
    " starting_deadline = \"1h\"; alert_after_failures = 2;"
    " alert_level = \"critical\";\n"
    "    lock = \"app:billing\"; };\n"
    "  cleanup = { command = [ \"/bin/true\" ]; guard = \"none\";\n"
    "    ping_url_file = \"%s\"; output_max = 4096; };\n"
    "};\n"
    "alert = { url = \"https://ops@hooks.example.com/ops?token=abc#x\";\n"
    "          timeout = \"3s\"; };\n";

struct secrets {
	char *db, *smtp, *sig, *ping;
};

static char *
full_config(struct secrets *s)
{
	s->db = tmp_file("db-pass-word\n", 0600);
	s->smtp = tmp_file("smtp-pass-word\n", 0640);
	s->sig = tmp_file("whsec_c2lnbmluZw==\n", 0600);
	s->ping = tmp_file("https://hc-ping.com/uuid-secret\n", 0600);
	return xasprintf(full_fmt, s->db, s->smtp, s->sig, s->ping);
}

static void
secrets_remove(struct secrets *s)
{
	tmp_remove(s->db);
	tmp_remove(s->smtp);
	tmp_remove(s->sig);
	tmp_remove(s->ping);
}

START_TEST(test_full)
{
	struct secrets             s;
	struct conf                c;
	const struct conf_channel *mail, *billing;
	const struct conf_job     *j;
	char                      *text, *err = NULL;

	text = full_config(&s);
	ck_assert_msg(load_text(text, 0644, &c, &err, NULL) == 0, "%s", err);
	ck_assert_str_eq(c.runtime_dir, "/run/cg-test");
	ck_assert_ptr_null(c.db.host);
	ck_assert_str_eq(c.db.socket, "/run/mysqld/mysqld.sock");
	ck_assert_str_eq(c.db.user, "cronguard");
	ck_assert_str_eq(c.db.password, "db-pass-word");
	ck_assert_str_eq(c.db.password_file, s.db);
	ck_assert_str_eq(c.db.option_file, "/etc/mysql/cronguard.cnf");
	ck_assert_str_eq(c.db.option_group, "cronguard");
	ck_assert_int_eq(c.db.connect_timeout_ms, 7000);
	ck_assert_int_eq(c.db.read_timeout_ms, 60000);
	ck_assert_int_eq(c.db.write_timeout_ms, 45000);
	ck_assert_int_eq(c.db.tls_mode, TLS_VERIFY_IDENTITY);
	ck_assert_str_eq(c.db.tls_ca, "/ca.pem");
	ck_assert_str_eq(c.db.tls_cert, "/c.pem");
	ck_assert_str_eq(c.db.tls_key, "/k.pem");

	ck_assert_uint_eq(c.outbox.batch_size, 10);
	ck_assert_int_eq(c.outbox.poll_interval_ms, 250);
	ck_assert_int_eq(c.outbox.lease_ms, 600000);
	ck_assert_int_eq(c.outbox.watchdog_ms, 3600000);
	ck_assert_uint_eq(c.outbox.max_attempts, 3);
	ck_assert_int_eq(c.outbox.backoff_initial_ms, 10000);
	ck_assert(c.outbox.backoff_multiplier == 3.0);
	ck_assert_int_eq(c.outbox.backoff_max_ms, 7200000);
	ck_assert(c.outbox.backoff_jitter == 0.5);
	ck_assert_int_eq(c.outbox.ordering, ORDERING_NONE);
	ck_assert(!c.outbox.keep_sent);
	ck_assert_int_eq(c.outbox.pending_warn, 5);
	ck_assert_int_eq(c.outbox.pending_crit, 6000000000LL);
	ck_assert_int_eq(c.outbox.oldest_due_warn_ms, 60000);
	ck_assert_int_eq(c.outbox.oldest_due_crit_ms, 120000);
	ck_assert_int_eq(c.outbox.failed_warn, 2);
	ck_assert_int_eq(c.outbox.failed_crit, 3);

	ck_assert_uint_eq(c.nchannels, 2);
	/* Channel secrets are not read until a command asks. */
	ck_assert_ptr_null(c.channels[0].password);
	ck_assert_ptr_null(c.channels[1].signing_secret);
	ck_assert_int_eq(conf_read_secrets(&c, "billing", &err), 0);
	ck_assert_ptr_null(c.channels[0].password);
	ck_assert_ptr_nonnull(c.channels[1].signing_secret);
	ck_assert_int_eq(conf_read_secrets(&c, NULL, &err), 0);
	mail = conf_channel_find(&c, "mail");
	ck_assert_ptr_nonnull(mail);
	ck_assert_int_eq(mail->type, CHANNEL_SMTP);
	ck_assert_int_eq(mail->line, 24);
	ck_assert_str_eq(mail->url, "smtp://127.0.0.1:2525");
	ck_assert_str_eq(mail->username, "relay");
	ck_assert_str_eq(mail->password, "smtp-pass-word");
	ck_assert_str_eq(mail->from, "Reservations <noreply@example.com>");
	ck_assert_str_eq(mail->tls, "required");
	ck_assert_int_eq(mail->timeout_ms, 20000);
	ck_assert_uint_eq(mail->connections, 2);
	ck_assert(mail->rate == 14.5);
	ck_assert_int_eq(mail->daily_quota, 500);
	ck_assert_int_eq(mail->max_size, 1048576);
	ck_assert_uint_eq(mail->circuit_failures, 5);
	ck_assert_int_eq(mail->circuit_cooldown_ms, 120000);
	billing = conf_channel_find(&c, "billing");
	ck_assert_ptr_nonnull(billing);
	ck_assert_int_eq(billing->type, CHANNEL_HTTP);
	ck_assert_str_eq(billing->method, "PUT");
	ck_assert_uint_eq(billing->nheaders, 2);
	ck_assert_str_eq(
	    billing->headers[0], "Authorization: Bearer tok3n-s3cret");
	ck_assert_ptr_null(billing->headers[2]);
	ck_assert_str_eq(billing->signing_secret, "whsec_c2lnbmluZw==");
	ck_assert_uint_eq(billing->concurrency, 8);
	ck_assert_int_eq(billing->circuit_cooldown_ms, 60000);
	ck_assert_ptr_null(conf_channel_find(&c, "nope"));

	ck_assert_uint_eq(c.njobs, 3);
	j = conf_job_find(&c, "leave-accrual");
	ck_assert_ptr_nonnull(j);
	ck_assert_uint_eq(j->ncommand, 2);
	ck_assert_str_eq(j->command[0], "/usr/local/bin/accrue-leave");
	ck_assert_str_eq(j->command[1], "--today");
	ck_assert_ptr_null(j->command[2]);
	ck_assert_ptr_null(j->sql);
	ck_assert_int_eq(j->max_runtime_ms, 3600000);
	ck_assert_int_eq(j->timeout_ms, 7200000);
	ck_assert_int_eq(j->expect_every_ms, 86400000);
	ck_assert_int_eq(j->grace_ms, 300000);
	ck_assert_int_eq(j->heartbeat_ms, 10000);
	ck_assert_int_eq(j->guard, GUARD_NAMED_LOCK);
	ck_assert_str_eq(j->lock, "cronguard:app:leave-accrual");
	ck_assert_int_eq(j->on_lock_lost, LOCK_LOST_CONTINUE);
	ck_assert_int_eq(j->busy_exit, 3);
	ck_assert_int_eq(j->once_per_ms, 86400000);
	ck_assert_str_eq(j->timezone, "Europe/Berlin");
	ck_assert_int_eq(j->output, OUTPUT_CAPTURE);
	ck_assert_int_eq(j->output_max, 1048576);
	ck_assert_str_eq(j->ping_url, "https://hc-ping.com/abc?x=1");
	j = conf_job_find(&c, "cleanup");
	ck_assert_ptr_nonnull(j);
	ck_assert_int_eq(j->output, OUTPUT_ON_FAILURE);
	ck_assert_int_eq(j->output_max, 4096);
	/* A job's secret file is read when the job runs, not before. */
	ck_assert_ptr_null(j->ping_url);
	ck_assert_int_eq(conf_read_secrets(&c, NULL, &err), 0);
	ck_assert_ptr_null(j->ping_url);
	ck_assert_int_eq(conf_read_job_secrets(&c, "leave-accrual", &err), 0);
	ck_assert_ptr_null(j->ping_url);
	ck_assert_int_eq(conf_read_job_secrets(&c, "cleanup", &err), 0);
	ck_assert_str_eq(j->ping_url, "https://hc-ping.com/uuid-secret");
	j = conf_job_find(&c, "monthly-billing");
	ck_assert_ptr_nonnull(j);
	ck_assert_ptr_null(j->command);
	ck_assert_str_eq(j->sql, "CALL build_monthly_billing()");
	ck_assert_int_eq(j->guard, GUARD_LOCAL);
	ck_assert_str_eq(j->lock, "app:billing");
	ck_assert_int_eq(j->grace_ms, 600000);
	ck_assert_int_eq(j->heartbeat_ms, 30000);
	ck_assert_int_eq(j->timeout_ms, 0);
	ck_assert_int_eq(j->on_lock_lost, LOCK_LOST_TERMINATE);
	j = conf_job_find(&c, "cleanup");
	ck_assert_int_eq(j->guard, GUARD_NONE);
	ck_assert_int_eq(j->max_runtime_ms, 3600000);
	ck_assert_int_eq(j->expect_every_ms, 0);
	ck_assert_ptr_null(conf_job_find(&c, "nope"));

	ck_assert_str_eq(
	    c.alert_url, "https://ops@hooks.example.com/ops?token=abc#x");
	ck_assert_int_eq(c.alert_timeout_ms, 3000);
	conf_free(&c);
	free(text);
	secrets_remove(&s);
}
END_TEST

/* ------------------------------------------------------------ errors */

static const struct bad {
	const char *text;
	int         line;
	const char *want; /* the message must contain this */
} bad[] = {
	/* syntax, reported by libconfig with its line */
	{ "database = {\n  name = ;\n};\n", 2, "syntax error" },
	/* unknown keys at every level */
	{ "databse = { name = \"a\"; };\n", 1, "databse: unknown key" },
	{ "database = {\n  name = \"a\";\n  hots = \"x\";\n};\n", 3,
	    "database.hots: unknown key" },
	{ "database = { name = \"a\";\n tls = { mode = \"required\";\n"
	  " crt = \"x\"; }; };\n",
	    3, "database.tls.crt: unknown key" },
	{ "outbox = {\n backoff = {\n  factor = 2.0; }; };\n", 3,
	    "outbox.backoff.factor: unknown key" },
	{ "outbox = { thresholds = { stuck_warn = 1; }; };\n", 1,
	    "outbox.thresholds.stuck_warn: unknown key" },
	{ "jobs = {\n x = { command = [\"/bin/true\"]; guard = \"none\";\n"
	  "  retries = 2; }; };\n",
	    3, "jobs.x.retries: unknown key" },
	{ "channels = { h = { type = \"http\"; url = \"http://x/\";\n"
	  "  circuit = { failures = 1; cooldwn = \"1m\"; }; }; };\n",
	    2, "channels.h.circuit.cooldwn: unknown key" },
	{ "alert = { url = \"https://x/\"; retries = 3; };\n", 1,
	    "alert.retries: unknown key" },
	/* a key of the other channel type */
	{ "channels = {\n h = { type = \"http\"; url = \"http://x/\";\n"
	  "  from = \"a@b\"; }; };\n",
	    3, "channels.h.from: not valid for a channel of type http" },
	{ "channels = { m = { type = \"smtp\"; url = \"smtp://x\";\n"
	  " from = \"a@b\";\n headers = [ \"A: b\" ]; }; };\n",
	    3, "channels.m.headers: not valid for a channel of type smtp" },
	/* wrong types */
	{ "database = { name = \"a\";\n port = \"3306\"; };\n", 2,
	    "database.port: expected an integer, not a string" },
	{ "database = { name = 5; };\n", 1,
	    "database.name: expected a string" },
	{ "outbox = { keep_sent = 1; };\n", 1,
	    "outbox.keep_sent: expected true or false" },
	{ "outbox = { backoff = { jitter = \"0.2\"; }; };\n", 1,
	    "outbox.backoff.jitter: expected a number" },
	{ "database = \"x\";\n", 1, "database: expected a group" },
	{ "jobs = { x = { command = \"/bin/true\"; guard = \"none\"; }; };\n",
	    1, "jobs.x.command: expected an array of strings" },
	{ "jobs = { x = { command = ( \"/bin/echo\", 5 );\n"
	  " guard = \"none\"; }; };\n",
	    1,
	    "jobs.x.command[1]: expected a "
	    "string" },
	{ "database = { name = \"\"; };\n", 1,
	    "database.name: must not be empty" },
	{ "channels = { m = { type = \"smtp\"; url = \"smtp://x\";\n"
	  " from = \"a@b\\r\\nBcc: x@y\"; }; };\n",
	    2, "channels.m.from: contains a control character" },
	/* durations */
	{ "outbox = {\n lease = \"5 m\"; };\n", 2,
	    "outbox.lease: bad duration \"5 m\": unknown unit" },
	{ "outbox = { poll_interval = \"1.5s\"; };\n", 1,
	    "outbox.poll_interval: bad duration \"1.5s\": fraction" },
	{ "outbox = { lease = -5; };\n", 1,
	    "outbox.lease: bad duration -5: "
	    "negative" },
	{ "outbox = { lease = \"-5s\"; };\n", 1, "negative" },
	{ "database = { name = \"a\";\n connect_timeout = "
	  "\"99999999999999999999s\"; };\n",
	    2, "database.connect_timeout: bad duration" },
	{ "outbox = { lease = 2.5; };\n", 1,
	    "outbox.lease: expected a "
	    "duration" },
	{ "outbox = { lease = \"0s\"; };\n", 1,
	    "outbox.lease: must be at "
	    "least 1s" },
	/* lock names */
	{ "database = { name = \"app\"; };\njobs = { x = {\n"
	  " command = [ \"/bin/true\" ];\n lock = "
	  "\"12345678901234567890123456789012345678901234567890123456789012345"
	  "\"; }; };\n",
	    4, "jobs.x.lock: lock name longer than 64" },
	{ "database = { name = \"app\"; };\njobs = { x = {\n"
	  " command = [ \"/bin/true\" ];\n lock = \"caf\xc3\xa9\"; }; };\n",
	    4, "jobs.x.lock: lock name is not printable ASCII" },
	{ "database = { name = \"a-rather-long-database-name-for-locks\"; };\n"
	  "jobs = {\n  a-rather-long-job-name-too = { command = [\"/x\"]; };\n"
	  "};\n",
	    3,
	    "default lock name \"cronguard:a-rather-long-database-"
	    "name-for-locks:a-rather-long-job-name-too\" is longer than 64 "
	    "characters: set lock" },
	/* lease against channel timeouts */
	{ "outbox = {\n lease = \"30s\"; };\nchannels = { h = {\n"
	  " type = \"http\"; url = \"http://x/\"; timeout = \"30s\"; }; };\n",
	    2,
	    "outbox.lease (30s) must be longer than channels.h.timeout (30s)" },
	{ "channels = { m = {\n type = \"smtp\"; url = \"smtp://x\";\n"
	  " from = \"a@b\";\n timeout = \"10m\"; }; };\n",
	    4,
	    "outbox.lease (5m) must be longer than channels.m.timeout (10m)" },
	{ "outbox = {\n lease = \"20m\"; };\n", 2,
	    "outbox.watchdog (15m) must be longer than outbox.lease (20m)" },
	/* required keys, exclusive keys */
	{ "database = {\n host = \"db\"; };\n", 1, "database: name missing" },
	{ "database = { name = \"a\"; host = \"h\";\n socket = \"/s\"; };\n", 2,
	    "database.socket: give host (and port) or socket, not both" },
	{ "database = { name = \"a\";\n tls = { cert = \"/c\"; }; };\n", 2,
	    "database.tls: cert and key go together" },
	{ "database = { name = \"a\"; };\njobs = {\n x = { command = "
	  "[\"/bin/true\"];\n sql = \"SELECT 1\"; }; };\n",
	    3, "jobs.x: give exactly one of command and sql" },
	{ "database = { name = \"a\"; };\njobs = {\n x = { sql = \"SELECT 1\";\n"
	  " output = \"capture\"; }; };\n",
	    4, "jobs.x.output: an SQL job has no output to capture" },
	{ "database = { name = \"a\"; };\njobs = {\n x = { command = [\"/x\"];\n"
	  " output = \"mail\"; }; };\n",
	    4, "jobs.x.output: " },
	{ "database = { name = \"a\"; };\njobs = {\n x = { command = [\"/x\"];\n"
	  " output_max = \"12X\"; }; };\n",
	    4, "jobs.x.output_max: \"12X\" is not a size" },
	{ "database = { name = \"a\"; };\njobs = {\n x = { command = [\"/x\"];\n"
	  " output_max = 0; }; };\n",
	    4, "jobs.x.output_max: 0 is out of range" },
	{ "database = { name = \"a\"; };\njobs = {\n x = { command = [\"/x\"];\n"
	  " output_max = \"17M\"; }; };\n",
	    4, "jobs.x.output_max: 17M is out of range" },
	{ "database = { name = \"a\"; };\njobs = {\n x = { command = [\"/x\"];\n"
	  " ping_url = \"http://h/p\";\n ping_url_file = \"/nonexistent\"; }; };\n",
	    5, "jobs.x.ping_url_file: give" },
	{ "database = { name = \"a\"; };\njobs = {\n x = { command = [\"/x\"];\n"
	  " ping_url = \"file:///etc/passwd\"; }; };\n",
	    4, "jobs.x.ping_url: \"file:///etc/passwd\" is not an http://" },
	{ "alert = { url = \"http://h/a\";\n timeout = \"3650d\"; };\n", 2,
	    "alert.timeout: must be at most 1m" },
	{ "database = { name = \"a\"; };\njobs = {\n x = { grace = \"1m\"; };"
	  " };\n",
	    3, "jobs.x: give exactly one of command and sql" },
	{ "database = { name = \"a\"; };\n"
	  "jobs = { x = {\n command = [ ]; }; };\n",
	    3, "jobs.x.command: must not be empty" },
	{ "jobs = {\n x = { command = [ \"/bin/true\" ]; }; };\n", 2,
	    "jobs.x: guard named_lock needs a database section" },
	{ "jobs = {\n x = { command = [ \"/bin/true\" ];"
	  " guard = \"auto\"; }; };\n",
	    2, "jobs.x: guard auto needs a database section" },
	{ "database = { name = \"a\"; };\njobs = { x = { command = [\"/x\"];\n"
	  " heartbeat = \"10s\";\n lease = \"15s\"; }; };\n",
	    4, "jobs.x.lease: lease must be at least twice the heartbeat" },
	{ "jobs = {\n x = { sql = \"SELECT 1\"; guard = \"local\"; }; };\n", 2,
	    "jobs.x: an sql job needs a database section" },
	{ "channels = {\n m = { url = \"smtp://x\"; }; };\n", 2,
	    "channels.m: type missing" },
	{ "channels = {\n m = { type = \"smtp\"; from = \"a@b\"; }; };\n", 2,
	    "channels.m: url missing" },
	{ "channels = { m = { type = \"smtp\";\n url = \"http://x/\";\n"
	  " from = \"a@b\"; }; };\n",
	    2,
	    "channels.m.url: \"http://x/\" is not an smtp:// or smtps:// URL" },
	{ "channels = {\n m = { type = \"smtp\"; url = \"smtp://x\"; }; };\n",
	    2, "channels.m: from missing" },
	{ "channels = { h = { type = \"http\"; url = \"http://x/\";\n"
	  " headers = [ \"Bearer abc\" ]; }; };\n",
	    2, "channels.h.headers[0]: \"Bearer abc\" is not \"Name: value\"" },
	{ "channels = {\n bad.name = { type = \"http\"; }; };\n", 2,
	    "syntax error" },
	{ "alert = {\n url = \"ftp://x/\"; };\n", 2,
	    "alert.url: \"ftp://x/\" "
	    "is not an http:// or https:// URL" },
	/* ranges */
	{ "outbox = { batch_size = 0; };\n", 1,
	    "outbox.batch_size: 0 is out of range 1..1000" },
	{ "outbox = { batch_size = 1001; };\n", 1,
	    "outbox.batch_size: 1001 is out of range 1..1000" },
	{ "outbox = { max_attempts = 0; };\n", 1,
	    "outbox.max_attempts: 0 is out of range" },
	{ "outbox = { backoff = {\n jitter = 1.5; }; };\n", 2,
	    "outbox.backoff.jitter: 1.5 is out of range 0..1" },
	{ "outbox = { backoff = {\n jitter = -0.1; }; };\n", 2,
	    "outbox.backoff.jitter: -0.1 is out of range 0..1" },
	{ "outbox = { backoff = { multiplier = 0.5; }; };\n", 1,
	    "outbox.backoff.multiplier: 0.5 is out of range 1..100" },
	{ "outbox = { backoff = {\n initial = \"2h\"; }; };\n", 1,
	    "outbox.backoff: initial must not be longer than max" },
	{ "outbox = { thresholds = { pending_warn = 10;\n"
	  " pending_crit = 5; }; };\n",
	    1, "pending_warn must not exceed" },
	{ "database = { name = \"a\";\n port = 70000; };\n", 2,
	    "database.port: 70000 is out of range 1..65535" },
	{ "database = { name = \"a\"; };\njobs = { x = { command = [\"/x\"];\n"
	  " busy_exit = 256; }; };\n",
	    3,
	    "jobs.x.busy_exit: 256 is out of "
	    "range 0..255" },
	{ "database = { name = \"a\"; };\njobs = { x = { command = [\"/x\"];\n"
	  " once_per = \"7h\"; }; };\n",
	    3, "jobs.x.once_per: must divide a day" },
	{ "database = { name = \"a\"; };\njobs = { x = { command = [\"/x\"];\n"
	  " once_per = \"1h\"; timezone = \"Europe/Berlin; DROP\"; }; };\n",
	    3, "jobs.x.timezone: \"Europe/Berlin; DROP\" is not a time zone" },
	{ "jobs = { x = { command = [\"/x\"]; guard = \"local\";\n"
	  " once_per = \"1d\"; }; };\n",
	    2, "jobs.x.once_per: once_per needs a database section" },
	/* enumerations */
	{ "database = { name = \"a\";\n tls = { mode = \"yes\"; }; };\n", 2,
	    "database.tls.mode: invalid value \"yes\" (expected disabled, "
	    "preferred, required or verify_identity)" },
	{ "database = { name = \"a\"; };\njobs = { x = { command = [\"/x\"];\n"
	  " guard = \"mutex\"; }; };\n",
	    3,
	    "jobs.x.guard: invalid value "
	    "\"mutex\" (expected named_lock, local, none, lease or auto)" },
	{ "database = { name = \"a\"; };\njobs = { x = { command = [\"/x\"];\n"
	  " on_lock_lost = \"ignore\"; }; };\n",
	    3, "jobs.x.on_lock_lost: invalid value \"ignore\"" },
	{ "outbox = { ordering = \"fifo\"; };\n", 1,
	    "outbox.ordering: invalid value \"fifo\" (expected per_key or "
	    "none)" },
	{ "channels = { s = {\n type = \"sms\"; }; };\n", 2,
	    "channels.s.type: invalid value \"sms\" (expected smtp, http or "
	    "amqp)" },
	{ "channels = { h = { type = \"http\"; url = \"http://x/\";\n"
	  " method = \"GET\"; }; };\n",
	    2, "channels.h.method: invalid value" },
	{ "channels = { m = { type = \"smtp\"; url = \"smtp://x\";\n"
	  " from = \"a@b\"; tls = \"starttls\"; }; };\n",
	    2,
	    "channels.m.tls: invalid value \"starttls\" (expected none or "
	    "required)" },
};

START_TEST(test_bad)
{
	struct conf c;
	char       *err = NULL, *path, *want;

	ck_assert_int_eq(load_text(bad[_i].text, 0600, &c, &err, &path), -1);
	ck_assert_ptr_nonnull(err);
	want = xasprintf("%s:%d: ", path, bad[_i].line);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0,
	    "case %d: \"%s\" does not start with \"%s\"", _i, err, want);
	ck_assert_msg(strstr(err, bad[_i].want) != NULL,
	    "case %d: \"%s\" lacks \"%s\"", _i, err, bad[_i].want);
	/* conf_load leaves nothing allocated behind on failure. */
	ck_assert_ptr_null(c.path);
	ck_assert_ptr_null(c.channels);
	ck_assert_ptr_null(c.jobs);
	free(want);
	free(err);
	tmp_remove(path);
}
END_TEST

static void
write_at(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(fputs(text, f), 0);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(path, mode), 0);
}

/* @include is relative to the configuration's directory, and errors and
 * the secret rules apply to the included file itself. */
START_TEST(test_include)
{
	char        dir[] = "/tmp/cg-check-conf-dir-XXXXXX";
	char       *main_path, *part, *deep, *err = NULL, *want;
	struct conf c;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	main_path = xasprintf("%s/main.conf", dir);
	part = xasprintf("%s/part.conf", dir);
	write_at(main_path, "# main\n@include \"part.conf\"\n", 0644);

	write_at(part, "outbox = { batch_size = 7; };\n", 0644);
	ck_assert_msg(conf_load(main_path, &c, &err) == 0, "%s", err);
	ck_assert_uint_eq(c.outbox.batch_size, 7);
	conf_free(&c);

	/* An included file others can write is refused like the main one. */
	ck_assert_int_eq(chmod(part, 0664), 0);
	ck_assert_int_eq(conf_load(main_path, &c, &err), -1);
	want = xasprintf("%s:2: @include \"part.conf\" (%s): %s is writable "
	                 "by its group (mode 0664) (chmod go-w %s)",
	    main_path, part, part, part);
	ck_assert_str_eq(err, want);
	free(want);
	free(err);

	write_at(part, "\noutbox = { lease = \"x\"; };\n", 0644);
	ck_assert_int_eq(conf_load(main_path, &c, &err), -1);
	want = xasprintf("%s:2: outbox.lease: bad duration", part);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "%s", err);
	free(want);
	free(err);

	/* The included file holds the inline password: its mode counts. */
	write_at(
	    part, "database = { name = \"a\";\n password = \"x\"; };\n", 0604);
	ck_assert_int_eq(chmod(main_path, 0600), 0);
	ck_assert_int_eq(conf_load(main_path, &c, &err), -1);
	want = xasprintf("%s:2: database.password: a secret given inline: "
	                 "%s is readable by others",
	    part, part);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "%s", err);
	free(want);
	free(err);
	ck_assert_int_eq(chmod(part, 0600), 0);
	ck_assert_int_eq(chmod(main_path, 0644), 0);
	ck_assert_msg(conf_load(main_path, &c, &err) == 0, "%s", err);
	conf_free(&c);

	/* libconfig 1.5 exit(2)s on an @include of a directory or of a
	 * missing file: conf_load must refuse those first, with file:line. */
	write_at(main_path, "# main\n  @include \".\"\n", 0644);
	ck_assert_int_eq(conf_load(main_path, &c, &err), -1);
	want = xasprintf(
	    "%s:2: @include \".\" (%s/.): not a regular file", main_path, dir);
	ck_assert_str_eq(err, want);
	free(want);
	free(err);
	write_at(main_path, "@include \"part.conf\"\n@include \"gone.conf\"\n",
	    0644);
	ck_assert_int_eq(conf_load(main_path, &c, &err), -1);
	want = xasprintf("%s:2: @include \"gone.conf\" (%s/gone.conf): No "
	                 "such file or directory",
	    main_path, dir);
	ck_assert_str_eq(err, want);
	free(want);
	free(err);

	/* A string or group left open in an included file is that file's
	 * error, not the including line's; so is one in a nested include. */
	write_at(main_path,
	    "outbox = { lease = \"5m\"; };\n"
	    "@include \"part.conf\"\nalert = {};\n",
	    0644);
	write_at(part, "\nrun = \"open\n", 0644);
	ck_assert_int_eq(conf_load(main_path, &c, &err), -1);
	want = xasprintf("%s:3: syntax error", part);
	ck_assert_str_eq(err, want);
	free(want);
	free(err);
	write_at(part, "outbox = { batch_size = 7;\n\n", 0644);
	ck_assert_int_eq(conf_load(main_path, &c, &err), -1);
	ck_assert_msg(strncmp(err, part, strlen(part)) == 0, "%s", err);
	free(err);
	write_at(part, "@include \"deep.conf\"\n", 0644);
	deep = xasprintf("%s/deep.conf", dir);
	write_at(deep, "jobs = {\n", 0644);
	ck_assert_int_eq(conf_load(main_path, &c, &err), -1);
	ck_assert_msg(strncmp(err, deep, strlen(deep)) == 0, "%s", err);
	free(err);
	/* A relative path is resolved against the current directory. */
	write_at(part, "@include \"nowhere.conf\"\n", 0644);
	ck_assert_int_eq(chdir(dir), 0);
	ck_assert_int_eq(conf_load("main.conf", &c, &err), -1);
	want = xasprintf("part.conf:1: @include \"nowhere.conf\" "
	                 "(%s/nowhere.conf): No such file or directory",
	    dir);
	ck_assert_msg(strstr(err, want) != NULL, "%s", err);
	ck_assert_int_eq(chdir("/"), 0);
	free(want);
	free(err);

	unlink(deep);
	unlink(part);
	unlink(main_path);
	rmdir(dir);
	free(deep);
	free(part);
	free(main_path);
}
END_TEST

/* libconfig cuts a string at a NUL byte and drops a \x00 escape: both are
 * refused with the line, so "a\0pp" never silently becomes "a". */
START_TEST(test_nul_refused)
{
	static const char raw[] = "database = { name = \"a\0pp\"; };\n";
	struct conf       c;
	char             *err = NULL, *path, *want;
	FILE             *f;

	path = tmp_file("", 0600);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fwrite("\n", 1, 1, f), 1);
	ck_assert_int_eq(fwrite(raw, 1, sizeof raw - 1, f), sizeof raw - 1);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(conf_load(path, &c, &err), -1);
	want = xasprintf("%s:2: a NUL byte is not allowed", path);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "%s", err);
	free(want);
	free(err);
	tmp_remove(path);

	ck_assert_int_eq(load_text("# \\x00 in a comment is fine\n"
	                           "database = { user = \"u\";\n"
	                           "  name = \"a\\x00pp\"; };\n",
	                     0600, &c, &err, &path),
	    -1);
	want = xasprintf("%s:3: a \\x00 escape (NUL) in a string", path);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "%s", err);
	free(want);
	free(err);
	tmp_remove(path);

	/* An escaped backslash before "x00" is just text. */
	ck_assert_int_eq(load_text("database = { name = \"a\\\\x00\"; };\n",
	                     0600, &c, &err, NULL),
	    0);
	ck_assert_str_eq(c.db.name, "a\\x00");
	conf_free(&c);
}
END_TEST

/* -c naming a FIFO (or a device) is refused at once instead of blocking
 * in the read. */
START_TEST(test_not_regular_refused)
{
	char        dir[] = "/tmp/cg-check-conf-fifo-XXXXXX", *fifo, *want;
	struct conf c;
	char       *err = NULL;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	fifo = xasprintf("%s/fifo.conf", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(conf_load(fifo, &c, &err), -1);
	want = xasprintf("%s: not a regular file", fifo);
	ck_assert_str_eq(err, want);
	free(want);
	free(err);
	ck_assert_int_eq(conf_load("/dev/zero", &c, &err), -1);
	ck_assert_str_eq(err, "/dev/zero: not a regular file");
	free(err);
	unlink(fifo);
	rmdir(dir);
	free(fifo);
}
END_TEST

START_TEST(test_missing_file)
{
	struct conf c;
	char       *err = NULL;

	ck_assert_int_eq(
	    conf_load("/nonexistent/cronguard.conf", &c, &err), -1);
	ck_assert_str_eq(err,
	    "/nonexistent/cronguard.conf: No such file or "
	    "directory");
	free(err);
}
END_TEST

/* ------------------------------------------------------------ secrets */

START_TEST(test_inline_password_modes)
{
	static const char text[] =
	    "database = { name = \"a\";\n user = \"u\";\n"
	    " password = \"hunter2\"; };\n";
	static const struct {
		mode_t mode;
		int    ok;
	} modes[] = { { 0600, 1 }, { 0400, 1 }, { 0640, 1 }, { 0604, 0 },
		{ 0644, 0 } };
	struct conf c;
	char       *err, *path;
	size_t      i;

	for (i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		err = NULL;
		path = NULL;
		if (modes[i].ok) {
			ck_assert_int_eq(
			    load_text(text, modes[i].mode, &c, &err, NULL), 0);
			ck_assert_str_eq(c.db.password, "hunter2");
			conf_free(&c);
			continue;
		}
		ck_assert_int_eq(
		    load_text(text, modes[i].mode, &c, &err, &path), -1);
		ck_assert_msg(
		    strstr(err, ":3: database.password: ") != NULL, "%s", err);
		ck_assert_msg(strstr(err, "(chmod o-r ") != NULL ||
		        strstr(err, "(chmod go-w ") != NULL,
		    "%s", err);
		ck_assert(strstr(err, "hunter2") == NULL);
		free(err);
		tmp_remove(path);
	}
}
END_TEST

/* The one mode rule (cronguard.conf(5), FILES): the configuration, its
 * includes and the secret files are written by their owner only; a
 * secret may be read by its group (root:cronguard 0640), never by others. */
START_TEST(test_file_mode_rule)
{
	static const struct {
		mode_t      conf, secret;
		const char *want; /* NULL: loads */
	} cases[] = {
		{ 0640, 0640, NULL },
		{ 0644, 0600, NULL },
		{ 0400, 0440, NULL },
		{ 0664, 0640,
		    "is writable by its group (mode 0664) (chmod go-w " },
		{ 0646, 0640,
		    "is writable by others (mode 0646) (chmod go-w " },
		{ 0640, 0660,
		    "is writable by its group (mode 0660) (chmod go-w " },
		{ 0640, 0602,
		    "is writable by others (mode 0602) (chmod go-w " },
		{ 0640, 0604, "is readable by others (mode 0604) (chmod o-r " },
	};
	struct conf c;
	struct stat st;
	char       *err, *secret, *text, *reason, *fix, *want;
	size_t      i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		err = NULL;
		secret = tmp_file("pw\n", cases[i].secret);
		text = xasprintf("database = { name = \"a\";\n"
		                 " password_file = \"%s\"; };\n",
		    secret);
		if (cases[i].want == NULL) {
			ck_assert_msg(
			    load_text(text, cases[i].conf, &c, &err, NULL) == 0,
			    "case %zu: %s", i, err);
			conf_free(&c);
		} else {
			ck_assert_int_eq(
			    load_text(text, cases[i].conf, &c, &err, NULL), -1);
			ck_assert_msg(strstr(err, cases[i].want) != NULL,
			    "case %zu: %s lacks %s", i, err, cases[i].want);
			free(err);
		}
		free(text);
		tmp_remove(secret);
	}
	/* The same function answers doctor. */
	secret = tmp_file("s3cret\n", 0640);
	memset(&st, 0, sizeof st);
	st.st_uid = geteuid();
	st.st_mode = 0100640;
	ck_assert_int_eq(conf_file_problem(secret, &st, 1, &reason, &fix), 0);
	ck_assert_ptr_null(reason);
	st.st_mode = 0100604;
	ck_assert_int_eq(conf_file_problem(secret, &st, 0, &reason, &fix), 0);
	ck_assert_int_eq(conf_file_problem(secret, &st, 1, &reason, &fix), -1);
	want = xasprintf("%s is readable by others (mode 0604)", secret);
	ck_assert_str_eq(reason, want);
	free(want);
	want = xasprintf("chmod o-r %s", secret);
	ck_assert_str_eq(fix, want);
	free(want);
	free(reason);
	free(fix);
	tmp_remove(secret);
	/* An empty secret file is read but unusable (-2), and says what
	 * to do without naming the file again. */
	secret = tmp_file("\n", 0640);
	ck_assert_int_eq(conf_secret_problem(secret, NULL, &reason, &fix), -2);
	ck_assert_msg(strstr(reason, "is empty") != NULL, "%s", reason);
	ck_assert_str_eq(fix, "write the secret into it");
	free(reason);
	free(fix);
	tmp_remove(secret);
}
END_TEST

#ifdef HAVE_AMQP
/* A user in an amqp:// URL is the username, percent-decoded (the README's
 * example: amqps://relay@host/vhost with password_file); a username key
 * that disagrees is the error. */
START_TEST(test_amqp_url_user)
{
	static const struct {
		const char *url, *username, *want_user, *want_err;
	} cases[] = {
		{ "amqps://relay@mq.example.com/orders", NULL, "relay", NULL },
		{ "amqps://relay@mq.example.com/orders", "relay", "relay",
		    NULL },
		{ "amqp://re%40lay%3a@mq.example.com/", NULL, "re@lay:", NULL },
		{ "amqp://mq.example.com/", "relay", "relay", NULL },
		{ "amqps://relay@mq.example.com/orders", "other", NULL,
		    ":3: channels.bus.username: \"other\" disagrees with the "
		    "URL's user \"relay\"" },
		{ "amqp://re%4@mq.example.com/", NULL, NULL,
		    ":2: channels.bus.url: the user name in the URL is empty or "
		    "badly percent-encoded" },
		{ "amqp://mq.example.com/", NULL, NULL,
		    "a password needs a username" },
	};
	struct conf c;
	char       *pw, *text, *err;
	size_t      i;

	pw = tmp_file("amqp-pw\n", 0640);
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		err = NULL;
		text = xasprintf("channels = { bus = { type = \"amqp\";\n"
		                 " url = \"%s\"; exchange = \"x\";\n"
		                 " %s%s%s password_file = \"%s\"; }; };\n",
		    cases[i].url, cases[i].username ? "username = \"" : "",
		    cases[i].username ? cases[i].username : "",
		    cases[i].username ? "\";" : "", pw);
		if (cases[i].want_err == NULL) {
			ck_assert_msg(
			    load_text(text, 0644, &c, &err, NULL) == 0,
			    "case %zu: %s", i, err);
			ck_assert_str_eq(
			    c.channels[0].username, cases[i].want_user);
			ck_assert_int_eq(conf_read_secrets(&c, NULL, &err), 0);
			ck_assert_str_eq(c.channels[0].password, "amqp-pw");
			conf_free(&c);
		} else {
			ck_assert_int_eq(
			    load_text(text, 0644, &c, &err, NULL), -1);
			ck_assert_msg(strstr(err, cases[i].want_err) != NULL,
			    "case %zu: %s lacks %s", i, err, cases[i].want_err);
			free(err);
		}
		free(text);
	}
	tmp_remove(pw);
}
END_TEST
#endif

START_TEST(test_url_password)
{
	static const char text[] =
	    "channels = {\n m = { type = \"smtp\"; from = \"a@b\";\n"
	    " url = \"smtps://u:pw@mail.example.com\"; }; };\n"
	    "alert = { url = \"https://u@x/\"; };\n";
	struct conf c;
	char       *err = NULL, *path;

	ck_assert_int_eq(load_text(text, 0644, &c, &err, &path), -1);
	ck_assert_msg(
	    strstr(err, ":3: channels.m.url: a secret given inline") != NULL,
	    "%s", err);
	free(err);
	tmp_remove(path);
	/* A user name alone is no secret. */
	ck_assert_int_eq(load_text("alert = { url = \"https://u@x/\"; };\n",
	                     0644, &c, &err, NULL),
	    0);
	conf_free(&c);
	ck_assert_int_eq(load_text(text, 0600, &c, &err, NULL), 0);
	conf_free(&c);
}
END_TEST

/* SMTP credentials need TLS, or allow_plaintext_auth said in so many
 * words (cronguard-outbox(7), Circuit breaker). */
START_TEST(test_smtp_auth_needs_tls)
{
	static const char *const ok[] = {
		"url = \"smtps://x\";",
		"url = \"smtp://x\"; tls = \"required\";",
		"url = \"smtp://x\"; allow_plaintext_auth = true;",
	};
	struct conf c;
	char       *err = NULL, *text;
	size_t      i;

	text = xasprintf("channels = { mail = { type = \"smtp\";\n"
	                 " url = \"smtp://x\"; from = \"a@b\";\n"
	                 " username = \"u\"; password = \"pw\"; }; };\n");
	ck_assert_int_eq(load_text(text, 0600, &c, &err, NULL), -1);
	ck_assert_msg(strstr(err,
	                  ":3: channels.mail.username: credentials "
	                  "would cross the network in clear") != NULL,
	    "%s", err);
	free(err);
	free(text);
	for (i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		text =
		    xasprintf("channels = { mail = { type = \"smtp\";\n"
		              " %s from = \"a@b\";\n"
		              " username = \"u\"; password = \"pw\"; }; };\n",
		        ok[i]);
		ck_assert_msg(load_text(text, 0600, &c, &err, NULL) == 0,
		    "%s: %s", ok[i], err);
		ck_assert_int_eq(
		    conf_channel_find(&c, "mail")->allow_plaintext_auth,
		    i == 2);
		conf_free(&c);
		free(text);
	}
}
END_TEST

START_TEST(test_inline_channel_secrets)
{
	static const char text[] =
	    "channels = {\n m = { type = \"smtp\"; url = \"smtps://x\";\n"
	    " from = \"a@b\"; username = \"u\";\n password = \"pw\"; };\n"
	    " h = { type = \"http\"; url = \"http://x/\";\n"
	    " signing_secret = \"sig\"; }; };\n";
	struct conf c;
	char       *err = NULL, *path;

	ck_assert_int_eq(load_text(text, 0644, &c, &err, &path), -1);
	ck_assert_msg(
	    strstr(err, ":4: channels.m.password: ") != NULL, "%s", err);
	free(err);
	tmp_remove(path);
	ck_assert_int_eq(load_text(text, 0600, &c, &err, NULL), 0);
	ck_assert_str_eq(conf_channel_find(&c, "m")->password, "pw");
	ck_assert_str_eq(conf_channel_find(&c, "h")->signing_secret, "sig");
	conf_free(&c);
}
END_TEST

static void
check_secret_file_error(const char *key, const char *secret_path,
    mode_t conf_mode, const char *want)
{
	struct conf c;
	char       *text, *err = NULL, *path, *line;

	if (strcmp(key, "database") == 0)
		text = xasprintf("database = { name = \"a\";\n"
		                 " password_file = \"%s\"; };\n",
		    secret_path);
	else if (strcmp(key, "smtp") == 0)
		text = xasprintf(
		    "channels = { m = { type = \"smtp\";\n"
		    " url = \"smtps://x\"; from = \"a@b\"; username = \"u\";\n"
		    "\n password_file = \"%s\"; }; };\n",
		    secret_path);
	else
		text = xasprintf("channels = { h = { type = \"http\";\n"
		                 " url = \"http://x/\";\n"
		                 "\n signing_secret_file = \"%s\"; }; };\n",
		    secret_path);
	/* A channel's secret is read only when a command asks for it. */
	if (strcmp(key, "database") == 0)
		ck_assert_int_eq(
		    load_text(text, conf_mode, &c, &err, &path), -1);
	else {
		ck_assert_msg(load_text(text, conf_mode, &c, &err, &path) == 0,
		    "%s", err);
		/* -2: read, but unusable (empty) */
		ck_assert_int_eq(conf_read_secrets(&c, NULL, &err),
		    strstr(want, "is empty") != NULL ? -2 : -1);
		conf_free(&c);
	}
	line =
	    xasprintf("%s:%d: %s", path, strcmp(key, "database") == 0 ? 2 : 4,
	        strcmp(key, "database") == 0 ? "database.password_file: "
	            : strcmp(key, "smtp") == 0
	            ? "channels.m.password_file: "
	            : "channels.h.signing_secret_file: ");
	ck_assert_msg(strncmp(err, line, strlen(line)) == 0, "%s", err);
	ck_assert_msg(
	    strstr(err, want) != NULL, "\"%s\" lacks \"%s\"", err, want);
	free(line);
	free(err);
	free(text);
	tmp_remove(path);
}

START_TEST(test_secret_files)
{
	static const char *const keys[] = { "database", "smtp", "http" };
	char                    *pub, *empty, *group, *text;
	struct conf              c;
	char                    *err = NULL;
	size_t                   i;

	pub = tmp_file("s3cret\n", 0644);
	empty = tmp_file("\n", 0600);
	for (i = 0; i < 3; i++) {
		check_secret_file_error(keys[i], "/nonexistent/secret", 0600,
		    "cannot read /nonexistent/secret: No such file");
		check_secret_file_error(keys[i], pub, 0600,
		    "is readable by others (mode 0644) (chmod o-r");
		/* The config file itself may be public: it holds no secret. */
		check_secret_file_error(
		    keys[i], pub, 0644, "is readable by others");
		check_secret_file_error(keys[i], empty, 0644, "is empty");
	}
	/* Unreadable: only testable when not root. */
	if (geteuid() != 0) {
		ck_assert_int_eq(chmod(pub, 0200), 0);
		for (i = 0; i < 3; i++)
			check_secret_file_error(
			    keys[i], pub, 0600, "Permission denied");
	}
	/* Group-readable secret files are fine (root:cronguard 0640). */
	group = tmp_file("from-file\n", 0640);
	text = xasprintf("database = { name = \"a\";\n"
	                 " password_file = \"%s\"; };\n",
	    group);
	ck_assert_msg(load_text(text, 0644, &c, &err, NULL) == 0, "%s", err);
	ck_assert_str_eq(c.db.password, "from-file");
	conf_free(&c);
	free(text);
	/* Inline and file together are refused. */
	text = xasprintf("database = { name = \"a\"; password = \"x\";\n"
	                 " password_file = \"%s\"; };\n",
	    group);
	ck_assert_int_eq(load_text(text, 0600, &c, &err, NULL), -1);
	ck_assert_msg(strstr(err,
	                  ":2: database.password_file: give the "
	                  "secret inline or in a file, not both") != NULL,
	    "%s", err);
	free(err);
	free(text);
	tmp_remove(group);
	tmp_remove(pub);
	tmp_remove(empty);
}
END_TEST

/* A channel: head (two lines) then tls_ca = path on the third line. */
static char *
tls_ca_text(const char *head, const char *path)
{
	return xasprintf("%s tls_ca = \"%s\"; }; };\n", head, path);
}

/* That configuration must fail at line `line` with want in the message. */
static void
check_tls_ca_error(
    const char *head, const char *path, int line, const char *want)
{
	struct conf c;
	char       *text, *err = NULL, *conf, *prefix;

	text = tls_ca_text(head, path);
	ck_assert_int_eq(load_text(text, 0600, &c, &err, &conf), -1);
	prefix = xasprintf("%s:%d: ", conf, line);
	ck_assert_msg(strncmp(err, prefix, strlen(prefix)) == 0 &&
	        strstr(err, want) != NULL,
	    "\"%s\" lacks %s\"%s\"", err, prefix, want);
	free(prefix);
	free(err);
	free(text);
	tmp_remove(conf);
}

/* tls_ca is a CA bundle checked readable at load time, only where TLS
 * is used, for both channel types. */
START_TEST(test_tls_ca)
{
	static const char smtps[] =
	    "channels = { m = { type = \"smtp\";\n"
	    " url = \"smtps://mail.example.com\"; from = \"a@b\";\n";
	static const char starttls[] =
	    "channels = { m = { type = \"smtp\";\n"
	    " url = \"smtp://mail.example.com:587\"; from = \"a@b\";\n"
	    " tls = \"required\";";
	static const char cleartext[] =
	    "channels = { m = { type = \"smtp\";\n"
	    " url = \"smtp://mail.example.com:25\"; from = \"a@b\";\n";
	static const char https[] = "channels = { h = { type = \"http\";\n"
	                            " url = \"https://hooks.example.com/x\";\n";
	static const char http[] = "channels = { h = { type = \"http\";\n"
	                           " url = \"http://hooks.example.com/x\";\n";
	static const char *const good[] = { smtps, starttls, https };
	struct conf              c;
	char                    *ca, *text, *err = NULL, *out;
	size_t                   i;

	/* A CA bundle is public: any mode will do. */
	ca = tmp_file("-----BEGIN CERTIFICATE-----\n", 0644);
	for (i = 0; i < sizeof good / sizeof good[0]; i++) {
		text = tls_ca_text(good[i], ca);
		ck_assert_msg(
		    load_text(text, 0600, &c, &err, NULL) == 0, "%s", err);
		ck_assert_str_eq(c.channels[0].tls_ca, ca);
		out = conf_print_text(&c);
		ck_assert_ptr_nonnull(strstr(out, "tls_ca = \""));
		ck_assert_ptr_nonnull(strstr(out, ca));
		free(out);
		conf_free(&c);
		free(text);
	}
	check_tls_ca_error(smtps, "/nonexistent/ca.pem", 3,
	    "channels.m.tls_ca: cannot read /nonexistent/ca.pem: No such file");
	check_tls_ca_error(
	    https, "/tmp", 3, "channels.h.tls_ca: /tmp is not a file");
	check_tls_ca_error(cleartext, ca, 3,
	    "channels.m.tls_ca: has no "
	    "effect without smtps:// or tls = \"required\"");
	check_tls_ca_error(http, ca, 3,
	    "channels.h.tls_ca: has no effect without an https:// URL");
	if (geteuid() != 0) {
		ck_assert_int_eq(chmod(ca, 0200), 0);
		check_tls_ca_error(smtps, ca, 3, "Permission denied");
	}
	/* Unset: NULL, libcurl's default store. */
	ck_assert_int_eq(
	    load_text("channels = { m = { type = \"smtp\";\n"
	              " url = \"smtps://x\"; from = \"a@b\"; }; };\n",
	        0600, &c, &err, NULL),
	    0);
	ck_assert_ptr_null(c.channels[0].tls_ca);
	conf_free(&c);
	tmp_remove(ca);
}
END_TEST

/* ------------------------------------------------------------ print */

START_TEST(test_print_masks_secrets)
{
	static const char *const secrets[] = { "db-pass-word", "smtp-pass-word",
		"whsec_c2lnbmluZw==", "tok3n-s3cret", "ops@", "token=abc",
		"hunter2" };
	struct secrets           s;
	struct conf              c, c2;
	char                    *text, *out, *err = NULL, *path;
	size_t                   i;

	text = full_config(&s);
	ck_assert_msg(load_text(text, 0600, &c, &err, NULL) == 0, "%s", err);
	out = conf_print_text(&c);
	for (i = 0; i < sizeof secrets / sizeof secrets[0]; i++)
		ck_assert_msg(strstr(out, secrets[i]) == NULL,
		    "secret \"%s\" printed:\n%s", secrets[i], out);
	/* File paths are shown, their content is not. */
	ck_assert_ptr_nonnull(strstr(out, s.db));
	ck_assert_ptr_nonnull(strstr(out, s.sig));
	ck_assert_ptr_nonnull(strstr(out, "\"Authorization: ********\""));
	ck_assert_ptr_nonnull(
	    strstr(out, "\"Content-Type: application/json\""));
	ck_assert_ptr_nonnull(strstr(out,
	    "url = \"https://********@hooks.example.com/ops?********#x\";"));
	ck_assert_ptr_nonnull(strstr(out,
	    "lock = \"cronguard:app:leave-"
	    "accrual\";"));
	ck_assert_ptr_nonnull(strstr(out, "poll_interval = \"250ms\";"));
	ck_assert_ptr_nonnull(strstr(out, "pending_crit = 6000000000L;"));
	ck_assert_ptr_nonnull(strstr(out, "multiplier = 3.0;"));

	/* The output is itself a valid configuration with the same values. */
	path = tmp_file(out, 0600);
	ck_assert_msg(conf_load(path, &c2, &err) == 0, "%s\n%s", err, out);
	ck_assert_int_eq(c2.outbox.lease_ms, c.outbox.lease_ms);
	ck_assert_int_eq(c2.outbox.pending_crit, c.outbox.pending_crit);
	ck_assert_str_eq(c2.db.password, "db-pass-word");
	ck_assert_str_eq(c2.jobs[0].lock, c.jobs[0].lock);
	ck_assert_uint_eq(c2.nchannels, 2);
	conf_free(&c2);
	tmp_remove(path);
	free(out);
	conf_free(&c);
	free(text);
	secrets_remove(&s);

	/* An inline password is masked too. */
	ck_assert_int_eq(load_text("database = { name = \"a\"; user = \"u\";\n"
	                           " password = \"hunter2\"; };\n",
	                     0600, &c, &err, NULL),
	    0);
	out = conf_print_text(&c);
	ck_assert(strstr(out, "hunter2") == NULL);
	ck_assert_ptr_nonnull(strstr(out, "password = \"********\";"));
	free(out);
	conf_free(&c);
}
END_TEST

/* ------------------------------------------------------------ keys */

/* conf_keys(), for the loop tests (the suite is built before they run). */
static char **keys;

static size_t
nkeys(void)
{
	size_t n = 0;

	while (keys[n] != NULL)
		n++;
	return n;
}

/* Every key in conf_keys is one the parser knows: setting it to a group
 * gives a type error for that key, never "unknown key". */
START_TEST(test_keys_are_accepted)
{
	struct buf  b;
	struct conf c;
	const char *key = keys[_i], *types[] = { "smtp", "http", "amqp" };
	char       *path, *err = NULL, *want, *part, *dup, *save, *p;
	size_t      t, depth;
	int         ok = 0;

	ck_assert_ptr_nonnull(key);
	for (t = 0; t < 3 && !ok; t++) {
		buf_init(&b);
		dup = xstrdup(key);
		depth = 0;
		for (part = dup; part != NULL; part = p) {
			if ((p = strchr(part, '.')) != NULL)
				*p++ = '\0';
			save = part;
			if (strcmp(save, "*") == 0)
				save = "x";
			buf_printf(&b, "%s = {\n", save);
			depth++;
			if (depth == 2 && strncmp(key, "channels.", 9) == 0 &&
			    strcmp(key, "channels.*.type") != 0)
				buf_printf(&b, "type = \"%s\";\n", types[t]);
		}
		while (depth-- > 0)
			buf_adds(&b, "};\n");
		free(dup);
		ck_assert_int_eq(load_text(b.data, 0600, &c, &err, &path), -1);
		want = xstrdup(key);
		while ((p = strchr(want, '*')) != NULL)
			*p = 'x';
		if (strstr(err, "unknown key") == NULL &&
		    strstr(err, "not valid for") == NULL) {
			ck_assert_msg(
			    strstr(err, want) != NULL, "%s: %s", key, err);
			ok = 1;
		}
		free(want);
		free(err);
		err = NULL;
		tmp_remove(path);
		buf_free(&b);
	}
	ck_assert_msg(ok, "%s is not accepted by the parser", key);
}
END_TEST

/* Configurations that, between them, set every key (inline secrets and
 * secret files are alternatives, channel keys depend on the type). */
static const char inline_fmt[] =
    "database = { host = \"db\"; port = 3307; user = \"u\";\n"
    "  password = \"hunter2\"; name = \"app\"; };\n"
    "channels = {\n"
    "  mail = { type = \"smtp\"; url = \"smtps://127.0.0.1:2525\";\n"
    "    from = \"a@b\"; username = \"u\"; password = \"smtp-pw\"; };\n"
    "  hook = { type = \"http\"; url = \"https://127.0.0.1/\";\n"
    "    signing_secret = \"whsec_eA==\"; tls_ca = \"%s\"; };\n"
#ifdef HAVE_AMQP
    "  bus = { type = \"amqp\"; url = \"amqp://127.0.0.1/\";\n"
    "    username = \"u\"; password_file = \"%s\";\n"
    "    exchange = \"events\"; routing_key = \"app.{event_type}\";\n"
    "    mandatory = false; unroutable_retry = true; };\n"
#endif
    "};\n"
    "jobs = { j = { command = [ \"/bin/true\" ]; }; };\n";

/* Load text (a 0600 file), print it, and return the output. */
static char *
print_text(const char *text)
{
	struct conf c;
	char       *err = NULL, *out;

	ck_assert_msg(
	    load_text(text, 0600, &c, &err, NULL) == 0, "%s\n%s", err, text);
	out = conf_print_text(&c);
	conf_free(&c);
	return out;
}

/* Is key ("channels.*.circuit.failures") printed in out as a line
 * "      failures = ..." inside a "    circuit = {" group? */
static int
printed(const char *out, const char *key)
{
	char       *dup = xstrdup(key), *part, *next, *line;
	const char *at = out;
	int         depth = 0, found = 0;

	for (part = dup; part != NULL; part = next, depth++) {
		if ((next = strchr(part, '.')) != NULL)
			*next++ = '\0';
		if (strcmp(part, "*") == 0)
			continue; /* any element: the search goes on in it */
		line = xasprintf("\n%*s%s = %s", depth * 2, "", part,
		    next != NULL ? "{" : "");
		at = strstr(at, line);
		free(line);
		if (at == NULL)
			break;
		at++;
		found = next == NULL;
	}
	free(dup);
	return found;
}

/* Every key of the table is printed by config check (the printer walks
 * the same table as the parser), at its place in the nesting. */
START_TEST(test_every_key_printed)
{
	struct secrets s;
	char          *text, *full, *inl, *amqp_pw;
	size_t         i;

	text = full_config(&s);
	full = print_text(text);
	free(text);
	amqp_pw = tmp_file("amqp-pw\n", 0600);
#ifdef HAVE_AMQP
	text = xasprintf(inline_fmt, amqp_pw, amqp_pw);
#else
	text = xasprintf(inline_fmt, amqp_pw);
#endif
	inl = print_text(text);
	free(text);
	for (i = 0; keys[i] != NULL; i++) {
#ifndef HAVE_AMQP
		if (strstr("channels.*.exchange channels.*.routing_key "
		           "channels.*.mandatory channels.*.unroutable_retry",
		        keys[i]) != NULL)
			continue;
#endif
		ck_assert_msg(printed(full, keys[i]) || printed(inl, keys[i]),
		    "%s is not printed", keys[i]);
	}
	/* The check itself can fail. */
	ck_assert(!printed(full, "outbox.no_such_key"));
	ck_assert(!printed(full, "channels.*.circuit.no_such_key"));
	ck_assert(printed(full, "channels.*.circuit.failures"));
	free(full);
	free(inl);
	tmp_remove(amqp_pw);
	secrets_remove(&s);
}
END_TEST

/* What config check prints reads back as the same configuration: loading
 * and printing it again gives the same text (past the header line).  With
 * the empty file, this is every default. */
START_TEST(test_print_round_trips)
{
	struct secrets s;
	char          *text, *out1, *out2, *amqp_pw;
	const char    *texts[3];
	size_t         i;

	amqp_pw = tmp_file("amqp-pw\n", 0600);
	texts[0] = "";
	texts[1] = full_config(&s);
#ifdef HAVE_AMQP
	texts[2] = xasprintf(inline_fmt, amqp_pw, amqp_pw);
#else
	texts[2] = xasprintf(inline_fmt, amqp_pw);
#endif
	for (i = 0; i < 3; i++) {
		out1 = print_text(texts[i]);
		out2 = print_text(out1);
		ck_assert_str_eq(strchr(out1, '\n'), strchr(out2, '\n'));
		free(out1);
		free(out2);
	}
	text = (char *)texts[1];
	free(text);
	text = (char *)texts[2];
	free(text);
	tmp_remove(amqp_pw);
	secrets_remove(&s);
}
END_TEST

/* The defaults printed for an empty configuration are the table's: the
 * same values conf_defaults fills, spelt as cronguard.conf(5) lists them. */
START_TEST(test_defaults_printed)
{
	static const char *const want[] = { "outbox = {\n  batch_size = 50;\n",
		"  poll_interval = \"1s\";\n", "  lease = \"5m\";\n",
		"  watchdog = \"15m\";\n", "  max_attempts = 8;\n",
		"    initial = \"30s\";\n    multiplier = 2.0;\n"
		"    max = \"1h\";\n    jitter = 0.2;\n",
		"  ordering = \"per_key\";\n  keep_sent = true;\n",
		"    pending_warn = 1000;\n    pending_crit = 10000;\n"
		"    oldest_due_warn = \"5m\";\n    oldest_due_crit = "
		"\"30m\";\n"
		"    failed_warn = 1;\n    failed_crit = 100;\n",
		"alert = {\n  timeout = \"10s\";\n};\n" };
	char                    *out;
	size_t                   i;

	out = print_text("");
	for (i = 0; i < sizeof want / sizeof want[0]; i++)
		ck_assert_msg(strstr(out, want[i]) != NULL, "no \"%s\" in\n%s",
		    want[i], out);
	ck_assert(strstr(out, "database") == NULL); /* not given */
	free(out);

	out = print_text("channels = {\n"
	                 "  m = { type = \"smtp\"; url = \"smtp://x\";\n"
	                 "    from = \"a@b\"; };\n"
	                 "  h = { type = \"http\"; url = \"http://x/\"; };\n"
	                 "};\n");
	ck_assert_ptr_nonnull(strstr(out,
	    "    timeout = \"30s\";\n    rate = 0.0;\n    daily_quota = 0;\n"
	    "    circuit = {\n      failures = 0;\n      cooldown = "
	    "\"1m\";\n"));
	ck_assert_ptr_nonnull(strstr(out,
	    "    tls = \"none\";\n    connections = 4;\n"
	    "    max_size = 10485760;\n"));
	ck_assert_ptr_nonnull(strstr(out, "    timeout = \"10s\";\n"));
	ck_assert_ptr_nonnull(
	    strstr(out, "    method = \"POST\";\n    concurrency = 16;\n"));
	free(out);
}
END_TEST

/* exec's ad-hoc job has exactly the defaults of a configured job. */
START_TEST(test_job_defaults)
{
	struct conf     c;
	struct conf_job d;
	char           *err = NULL;

	conf_job_defaults(&d);
	ck_assert_int_eq(d.max_runtime_ms, 3600000);
	ck_assert_int_eq(d.grace_ms, 600000);
	ck_assert_int_eq(d.heartbeat_ms, 30000);
	ck_assert_int_eq(d.guard, GUARD_NAMED_LOCK);
	ck_assert_int_eq(d.on_lock_lost, LOCK_LOST_TERMINATE);
	ck_assert_ptr_null(d.lock);
	ck_assert_ptr_null(d.command);
	ck_assert_int_eq(load_text("database = { name = \"a\"; };\n"
	                           "jobs = { j = { sql = \"DO 1\"; }; };\n",
	                     0600, &c, &err, NULL),
	    0);
	ck_assert_int_eq(c.jobs[0].max_runtime_ms, d.max_runtime_ms);
	ck_assert_int_eq(c.jobs[0].timeout_ms, d.timeout_ms);
	ck_assert_int_eq(c.jobs[0].expect_every_ms, d.expect_every_ms);
	ck_assert_int_eq(c.jobs[0].grace_ms, d.grace_ms);
	ck_assert_int_eq(c.jobs[0].heartbeat_ms, d.heartbeat_ms);
	ck_assert_int_eq(c.jobs[0].guard, d.guard);
	ck_assert_int_eq(c.jobs[0].on_lock_lost, d.on_lock_lost);
	ck_assert_int_eq(c.jobs[0].busy_exit, d.busy_exit);
	conf_free(&c);
}
END_TEST

/* The key list is the table: no key twice, each a dotted path. */
START_TEST(test_keys_listed_once)
{
	size_t i, j;

	ck_assert_uint_gt(nkeys(), 60);
	for (i = 0; keys[i] != NULL; i++) {
		ck_assert_msg(
		    keys[i][0] != '.' && strstr(keys[i], "..") == NULL, "%s",
		    keys[i]);
		for (j = 0; j < i; j++)
			ck_assert_str_ne(keys[i], keys[j]);
	}
	ck_assert_str_eq(keys[0], "runtime_dir");
	ck_assert_str_eq(keys[1], "database.host");
}
END_TEST

/* A command is an argv with no shell: one string holding a space, naming
 * no file, is almost surely "program --flag" written as one string. */
START_TEST(test_command_space_warning)
{
	struct conf c;
	char       *err = NULL, *path, *want;

	ck_assert_int_eq(load_text("jobs = { j = { guard = \"none\";\n"
	                           "  command = [ \"/nonexistent/x --flag\" ]; "
	                           "}; };\n",
	                     0600, &c, &err, &path),
	    0);
	ck_assert_uint_eq(c.nwarnings, 1);
	want = xasprintf("%s:2: jobs.j.command[0]: \"/nonexistent/x --flag\" "
	                 "does not exist",
	    path);
	ck_assert_msg(strncmp(c.warnings[0], want, strlen(want)) == 0, "%s",
	    c.warnings[0]);
	ck_assert_ptr_nonnull(strstr(c.warnings[0], "separate strings"));
	free(want);
	conf_free(&c);
	tmp_remove(path);
	/* Spaces in arguments, or in a program that exists, are fine. */
	ck_assert_int_eq(load_text("jobs = { j = { guard = \"none\";\n"
	                           "  command = [ \"/bin/echo\", \"a b\" ]; }; "
	                           "};\n",
	                     0600, &c, &err, NULL),
	    0);
	ck_assert_uint_eq(c.nwarnings, 0);
	conf_free(&c);
}
END_TEST

/* The database TLS modes that do not verify the server say so in the
 * printed configuration; the secret files are listed with their readers. */
START_TEST(test_print_notes)
{
	char *out, *text, *pw;

	out = print_text("database = { name = \"a\"; };\n");
	ck_assert_ptr_nonnull(strstr(out,
	    "    mode = \"preferred\";\n    # does not verify the server"));
	free(out);
	out = print_text("database = { name = \"a\"; tls = { mode = "
	                 "\"required\"; }; };\n");
	ck_assert_ptr_nonnull(strstr(out, "# does not verify the server"));
	free(out);
	out = print_text("database = { name = \"a\"; tls = { mode = "
	                 "\"verify_identity\"; }; };\n");
	ck_assert(strstr(out, "does not verify") == NULL);
	free(out);

	pw = tmp_file("pw\n", 0600);
	text =
	    xasprintf("database = { name = \"a\"; password_file = \"%s\"; };\n"
	              "channels = { h = { type = \"http\"; url = "
	              "\"http://x/\";\n signing_secret_file = \"%s\"; }; };\n",
	        pw, pw);
	out = print_text(text);
	ck_assert_ptr_nonnull(
	    strstr(out, "# secret files, and the commands that read them:\n"));
	ck_assert_ptr_nonnull(strstr(out,
	    ": every command that uses the "
	    "database (database.password_file)\n"));
	ck_assert_ptr_nonnull(strstr(out,
	    ": outbox dispatch on channel h "
	    "(channels.h.signing_secret_file)\n"));
	free(out);
	free(text);
	tmp_remove(pw);
}
END_TEST

/* Inline and file secrets are exclusive in either order, also now that a
 * channel's file is not read at load time. */
START_TEST(test_secret_both_ways)
{
	struct conf c;
	char       *err = NULL, *text, *pw;

	pw = tmp_file("pw\n", 0600);
	text = xasprintf("channels = { h = { type = \"http\"; url = "
	                 "\"http://x/\";\n signing_secret_file = \"%s\";\n"
	                 " signing_secret = \"x\"; }; };\n",
	    pw);
	ck_assert_int_eq(load_text(text, 0600, &c, &err, NULL), -1);
	ck_assert_msg(strstr(err,
	                  ":3: channels.h.signing_secret: give the "
	                  "secret inline or in signing_secret_file, "
	                  "not both") != NULL,
	    "%s", err);
	free(err);
	free(text);
	/* A password file needs a username as an inline password does. */
	text = xasprintf("channels = { m = { type = \"smtp\"; url = "
	                 "\"smtp://x\";\n from = \"a@b\"; password_file = "
	                 "\"%s\"; }; };\n",
	    pw);
	ck_assert_int_eq(load_text(text, 0600, &c, &err, NULL), -1);
	ck_assert_msg(
	    strstr(err, "a password needs a username") != NULL, "%s", err);
	free(err);
	free(text);
	tmp_remove(pw);
}
END_TEST

/* The process is made non-dumpable, unless CRONGUARD_DUMPABLE=1. */
START_TEST(test_protect_secrets)
{
	ck_assert_int_eq(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), 0);
	setenv("CRONGUARD_DUMPABLE", "1", 1);
	conf_protect_secrets();
	ck_assert_int_eq(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 1);
	setenv("CRONGUARD_DUMPABLE", "yes", 1); /* only "1" keeps it */
	conf_protect_secrets();
	ck_assert_int_eq(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0);
	ck_assert_int_eq(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), 0);
	unsetenv("CRONGUARD_DUMPABLE");
	conf_protect_secrets();
	ck_assert_int_eq(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0);
	ck_assert_int_eq(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), 0);
}
END_TEST

START_TEST(test_lock_name_valid)
{
	const char *why = NULL;
	char        s[70];

	ck_assert_int_eq(conf_lock_name_valid("cronguard:app:job", &why), 1);
	ck_assert_int_eq(conf_lock_name_valid("with space", &why), 1);
	ck_assert_int_eq(conf_lock_name_valid("", &why), 0);
	ck_assert_ptr_nonnull(why);
	ck_assert_int_eq(conf_lock_name_valid(NULL, &why), 0);
	ck_assert_int_eq(conf_lock_name_valid("tab\there", &why), 0);
	ck_assert_int_eq(conf_lock_name_valid("caf\xc3\xa9", &why), 0);
	ck_assert_str_eq(why, "is not printable ASCII");
	memset(s, 'a', 64);
	s[64] = '\0';
	ck_assert_int_eq(conf_lock_name_valid(s, &why), 1);
	s[64] = 'a';
	s[65] = '\0';
	ck_assert_int_eq(conf_lock_name_valid(s, &why), 0);
	ck_assert_str_eq(why, "longer than 64 characters");
}
END_TEST

START_TEST(test_default_path)
{
	setenv("CRONGUARD_CONFIG", "/x/y.conf", 1);
	ck_assert_str_eq(conf_default_path(), "/x/y.conf");
	setenv("CRONGUARD_CONFIG", "", 1);
	ck_assert_ptr_nonnull(strstr(conf_default_path(), "/cronguard.conf"));
	unsetenv("CRONGUARD_CONFIG");
}
END_TEST

static Suite *
conf_suite(void)
{
	Suite *s = suite_create("conf");
	TCase *tc = tcase_create("conf");

	tcase_add_test(tc, test_minimal_defaults);
	tcase_add_test(tc, test_empty_file);
	tcase_add_test(tc, test_defaults_allocate_nothing);
	tcase_add_test(tc, test_full);
	tcase_add_loop_test(tc, test_bad, 0, sizeof bad / sizeof bad[0]);
	tcase_add_test(tc, test_missing_file);
	tcase_add_test(tc, test_include);
	tcase_add_test(tc, test_nul_refused);
	tcase_add_test(tc, test_not_regular_refused);
	tcase_add_test(tc, test_inline_password_modes);
	tcase_add_test(tc, test_inline_channel_secrets);
	tcase_add_test(tc, test_smtp_auth_needs_tls);
	tcase_add_test(tc, test_url_password);
	tcase_add_test(tc, test_secret_files);
	tcase_add_test(tc, test_file_mode_rule);
#ifdef HAVE_AMQP
	tcase_add_test(tc, test_amqp_url_user);
#endif
	tcase_add_test(tc, test_tls_ca);
	tcase_add_test(tc, test_print_masks_secrets);
	tcase_add_loop_test(tc, test_keys_are_accepted, 0, (int)nkeys());
	tcase_add_test(tc, test_every_key_printed);
	tcase_add_test(tc, test_print_round_trips);
	tcase_add_test(tc, test_defaults_printed);
	tcase_add_test(tc, test_job_defaults);
	tcase_add_test(tc, test_keys_listed_once);
	tcase_add_test(tc, test_command_space_warning);
	tcase_add_test(tc, test_print_notes);
	tcase_add_test(tc, test_secret_both_ways);
	tcase_add_test(tc, test_protect_secrets);
	tcase_add_test(tc, test_lock_name_valid);
	tcase_add_test(tc, test_default_path);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr;
	int      failed;

	keys = conf_keys();
	sr = srunner_create(conf_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	conf_keys_free(keys);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
