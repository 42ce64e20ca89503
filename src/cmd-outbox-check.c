/*
 * cmd-outbox-check.c: the outbox watchdog as a monitoring check
 * (cronguard(1), jobs check; cronguard-outbox(7), MONITORING): counts, a
 * verdict, and the exit status of a Nagios plugin.  With the counts, the
 * circuit breaker and quota state of the configured channels
 * (cronguard_channels): an open circuit is a WARNING.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "db.h"
#include "incident.h"
#include "log.h"
#include "migrate.h"
#include "outbox-admin.h"
#include "report.h"
#include "util.h"

/* The metrics file is always Prometheus text, replaced atomically so the
 * node_exporter textfile collector never reads half a file. */
static int
check_write_metrics(const char *path, const struct outbox_counts *k,
    const struct conf_outbox *c, enum check_status s)
{
	char *text, *errstr = NULL;
	int   rc = 0;

	text = report_outbox(REPORT_PROMETHEUS, k, c, s, NULL);
	if (write_file_atomic(path, text, strlen(text), &errstr) != 0) {
		fprintf(
		    stderr, "cronguard: metrics file %s: %s\n", path, errstr);
		rc = -1;
	}
	free(errstr);
	free(text);
	return rc;
}

static void
check_report_stuck(const struct outbox_counts *k)
{
	struct incident inc = { 0 };
	char           *d;

	d = xasprintf(
	    "%lld outbox rows PROCESSING longer than the watchdog: no dispatcher is recovering them",
	    k->stuck);
	inc.event = "outbox_stuck";
	inc.detail = d;
	incident_report(&inc);
	free(d);
}

static int
cmd_outbox_check_exec(struct cmd_ctx *ctx, struct conf *c)
{
	enum report_format   fmt = REPORT_NAGIOS;
	struct outbox_counts k;
	enum check_status    s;
	struct db           *db = NULL;
	const char          *metrics = NULL;
	char                *errstr = NULL, *out = NULL;
	enum db_status       st;
	int                  rc;

	if (cmd_check_options(ctx, &fmt, &metrics) != 0)
		return EXIT_USAGE;
	memset(&k, 0, sizeof k);

	if (ctx->conf_error != NULL) {
		errstr = xasprintf(
		    "cannot load the configuration: %s", ctx->conf_error);
		st = DB_ERR_CONNECT;
	} else if (!c->have_database) {
		errstr = xasprintf("%s: no database section", c->path);
		st = DB_ERR_CONNECT;
	} else if ((st = db_connect_check(&c->db, &db, &errstr)) == DB_OK &&
	    (st = migrate_check_pending(db, &errstr)) == DB_OK &&
	    (st = outbox_count(db, c, &k, &errstr)) == DB_OK)
		st = outbox_count_channels(db, c, &k, &errstr);
	if (st != DB_OK) {
		s = CHECK_UNKNOWN;
		out = report_outbox(fmt, NULL, &c->outbox, s, errstr);
		if (metrics != NULL)
			check_write_metrics(metrics, NULL, &c->outbox, s);
	} else {
		s = outbox_verdict(&k, &c->outbox);
		if (k.stuck > 0)
			check_report_stuck(&k);
		out = report_outbox(fmt, &k, &c->outbox, s, NULL);
		if (metrics != NULL &&
		    check_write_metrics(metrics, &k, &c->outbox, s) != 0)
			s = check_status_worst(s, CHECK_UNKNOWN);
	}
	fputs(out, stdout);
	rc = exitcode_check(s);
	outbox_counts_free(&k);
	db_close(db);
	free(out);
	free(errstr);
	return rc;
}

const struct cmd_entry cmd_outbox_check_entry = {
	.name = "outbox check",
	.usage = "[--format nagios|json|prometheus] [--metrics-file path]",
	.summary =
	    "Count pending, due, processing, stale, stuck, failed, unknown-channel, blocked and expired rows, show open circuits, quota use and paused channels, and give a monitoring verdict (exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN).",
	.options = cmd_check_template,
	.flags = CMD_NEEDS_CONF | CMD_CHECK_CONF,
	.exec = cmd_outbox_check_exec,
};
