/*
 * cmd-status.c: "status", the fleet's jobs and the outbox as a page
 * (cronguard(1), status): --html FILE writes it atomically for a web
 * server's group, --format json prints the same data.
 */
#include "config.h"

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "db.h"
#include "log.h"
#include "migrate.h"
#include "report.h"
#include "status-html.h"
#include "status.h"
#include "util.h"

/* The page's group: the web server's user joins it (doc/nginx-status.conf). */
#define STATUS_GROUP "cronguard"

static const struct cmd_option cmd_status_template[] = {
	{ "html", 1 },
	{ "format", 1 },
	{ "slots", 1 },
	{ NULL, 0 },
};

/* This host's clock, for a page written without the database's. */
static void
status_host_now(char *buf, size_t len)
{
	struct tm tm;
	time_t    t = time(NULL);

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm) == 0)
		snprintf(buf, len, "(unknown time)");
}

static int
status_write_html(struct cmd_ctx *ctx, const char *path, const struct status *s)
{
	char now[64], *page, *errstr = NULL;
	int  rc = 0;

	status_host_now(now, sizeof now);
	page = status_html(s, now, self_hostname());
	if (write_file_atomic_mode(path, page, strlen(page),
	        S_IRUSR | S_IWUSR | S_IRGRP, STATUS_GROUP, &errstr) != 0) {
		fprintf(
		    stderr, "cronguard: %s: %s\n", ctx->entry->name, errstr);
		rc = EXIT_SOFTWARE;
	}
	free(errstr);
	free(page);
	return rc;
}

static int
cmd_status_exec(struct cmd_ctx *ctx, struct conf *c)
{
	struct status  s;
	struct db     *db = NULL;
	const char    *html, *fmt, *v, *e;
	char          *errstr = NULL, *out, n[32], nj[32], nc[32];
	long long      slots = STATUS_SLOTS_DEFAULT;
	enum db_status st;
	int            rc = EXIT_OK, wrc;

	html = cmd_opt_value(ctx, "html");
	if ((fmt = cmd_opt_value(ctx, "format")) != NULL &&
	    strcmp(fmt, "json") != 0)
		return cmd_usage_error(ctx->entry, "--format must be json");
	if (html == NULL && fmt == NULL)
		return cmd_usage_error(
		    ctx->entry, "give --html file, --format json or both");
	if (html != NULL && html[0] == '\0')
		return cmd_usage_error(ctx->entry, "--html: empty file name");
	if ((v = cmd_opt_value(ctx, "slots")) != NULL &&
	    parse_ll(v, 1, STATUS_SLOTS_MAX, &slots, &e) != 0)
		return cmd_usage_error(ctx->entry, "--slots %s: %s (1 to %d)",
		    v, e, STATUS_SLOTS_MAX);

	if ((st = db_connect_check(&c->db, &db, &errstr)) == DB_OK &&
	    (st = migrate_check_pending(db, &errstr)) == DB_OK)
		st = status_collect(db, c, (unsigned)slots, &s, &errstr);
	else
		memset(&s, 0, sizeof s);
	if (st != DB_OK) {
		/* What was read is not shown: a page half current is a
		 * page that lies. */
		status_free(&s);
		s.error = errstr != NULL ? errstr : xstrdup("database failed");
		errstr = NULL;
		fprintf(
		    stderr, "cronguard: %s: %s\n", ctx->entry->name, s.error);
		rc = exitcode_db(st);
	} else {
		/* What reading cost: t1261 holds it bounded. */
		snprintf(n, sizeof n, "%llu", s.statements);
		snprintf(nj, sizeof nj, "%zu", s.njobs);
		snprintf(nc, sizeof nc, "%llu", s.check_statements);
		log_kv(LOG_DEBUG, "status_collected", "jobs", nj, "statements",
		    n, "jobcheck_statements", nc);
	}
	if (html != NULL && (wrc = status_write_html(ctx, html, &s)) != 0 &&
	    rc == EXIT_OK)
		rc = wrc;
	if (fmt != NULL) {
		out = report_status_json(&s);
		fputs(out, stdout);
		free(out);
		if ((wrc = cmd_stdout_done(ctx)) != EXIT_OK && rc == EXIT_OK)
			rc = wrc;
	}
	status_free(&s);
	db_close(db);
	free(errstr);
	return rc;
}

const struct cmd_entry cmd_status_entry = {
	.name = "status",
	.usage = "[--html file] [--format json] [--slots n]",
	.summary =
	    "The jobs (jobs check's state, the last n slots, default 48) and the outbox\n(counts, pauses, circuits, 24 hours of attempts) as one self-contained HTML\npage written atomically (--html), or as JSON on stdout (--format json).\nExit 0, or 69 when the database could not be read (the page says so).",
	.options = cmd_status_template,
	.flags = CMD_NEEDS_DB,
	.exec = cmd_status_exec,
};
