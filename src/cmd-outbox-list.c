/* cmd-outbox-list.c: outbox rows, newest first. */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "cmd.h"
#include "db.h"
#include "outbox-admin.h"
#include "util.h"

static const char *const list_statuses[] = { "PENDING", "PROCESSING", "SENT",
	"FAILED", "CANCELLED" };

/* Width of LAST_ERROR in the narrow listing. */
#define LIST_ERROR_WIDTH 60

/* Print last_error on one line: control characters as spaces; unless
 * wide, at most LIST_ERROR_WIDTH bytes, cut at a space (else at a UTF-8
 * character boundary) and marked with "...". */
static void
list_error(const char *err, int wide)
{
	size_t len, cut, i;

	if (err == NULL) {
		putchar('-');
		return;
	}
	len = cut = strlen(err);
	if (!wide && len > LIST_ERROR_WIDTH) {
		cut = LIST_ERROR_WIDTH - 3;
		while (cut > 0 && err[cut] != ' ')
			cut--;
		if (cut == 0) {
			cut = LIST_ERROR_WIDTH - 3;
			while (
			    cut > 0 && ((unsigned char)err[cut] & 0xc0) == 0x80)
				cut--;
		}
	}
	for (i = 0; i < cut; i++)
		putchar((unsigned char)err[i] < 0x20 || err[i] == 0x7f
		        ? ' '
		        : err[i]);
	if (cut < len)
		fputs("...", stdout);
}

static void
list_text(const struct db_result *r, int wide)
{
	size_t i;

	printf("%-10s %-10s %-12s %-24s %3s %-26s %s\n", "ID", "STATUS",
	    "CHANNEL", "EVENT_TYPE", "ATT", "NEXT_ATTEMPT_AT", "LAST_ERROR");
	for (i = 0; i < r->nrows; i++) {
		printf("%-10s %-10s %-12s %-24s %3s %-26s ", db_cell(r, i, 0),
		    db_cell(r, i, 2), db_cell(r, i, 3), db_cell(r, i, 4),
		    db_cell(r, i, 6), db_cell(r, i, 7));
		list_error(db_cell(r, i, 10), wide);
		putchar('\n');
	}
}

static int
list_json(const struct db_result *r)
{
	json_t     *arr, *o;
	const char *v, *e;
	long long   n;
	size_t      i, j;
	char       *text;

	arr = json_array();
	for (i = 0; i < r->nrows; i++) {
		o = json_object();
		for (j = 0; j < r->ncols; j++) {
			v = db_cell(r, i, j);
			if (v == NULL)
				json_object_set_new(
				    o, r->names[j], json_null());
			else if ((j == 0 || j == 6) &&
			    parse_ll(v, 0, LLONG_MAX, &n, &e) == 0)
				json_object_set_new(
				    o, r->names[j], json_integer(n));
			else
				json_object_set_new(
				    o, r->names[j], json_string(v));
		}
		json_array_append_new(arr, o);
	}
	text = json_dumps(arr, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(arr);
	if (text == NULL)
		return -1;
	puts(text);
	free(text);
	return 0;
}

static int
cmd_outbox_list_exec(struct cmd_ctx *ctx, struct conf *c)
{
	struct db_result *res = NULL;
	struct db        *db = NULL;
	const char       *status = NULL, *channel, *e, *v;
	char             *errstr = NULL;
	long long         limit = 50;
	int               json = 0, rc = EXIT_OK;
	size_t            i;
	enum db_status    st;

	if ((v = cmd_opt_value(ctx, "status")) != NULL) {
		for (i = 0; i < nitems(list_statuses); i++) {
			if (strcasecmp(v, list_statuses[i]) == 0)
				status = list_statuses[i];
		}
		if (status == NULL)
			return cmd_usage_error(ctx->entry,
			    "--status must be pending, processing, sent, failed or cancelled");
	}
	channel = cmd_opt_value(ctx, "channel");
	if ((v = cmd_opt_value(ctx, "limit")) != NULL &&
	    parse_ll(v, 1, 1000000, &limit, &e) != 0)
		return cmd_usage_error(ctx->entry, "--limit %s: %s", v, e);
	if ((v = cmd_opt_value(ctx, "format")) != NULL) {
		if (strcmp(v, "json") == 0)
			json = 1;
		else if (strcmp(v, "text") != 0)
			return cmd_usage_error(
			    ctx->entry, "--format must be text or json");
	}
	if ((rc = cmd_db_connect(ctx, c, &db)) != 0)
		goto out;
	if ((st = outbox_list(db, status, channel, (unsigned)limit, &res,
	         &errstr)) != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	if (json) {
		if (list_json(res) != 0)
			rc = EXIT_SOFTWARE;
	} else
		list_text(res, cmd_opt_count(ctx, "wide") > 0);
out:
	db_result_free(res);
	db_close(db);
	free(errstr);
	return rc;
}

static const struct cmd_option cmd_outbox_list_options[] = {
	{ "status", 1 },
	{ "channel", 1 },
	{ "limit", 1 },
	{ "format", 1 },
	{ "wide", 0 },
	{ NULL, 0 },
};

const struct cmd_entry cmd_outbox_list_entry = {
	.name = "outbox list",
	.usage =
	    "[--status status] [--channel name] [--limit n] [--format text|json] [--wide]",
	.summary =
	    "List outbox rows, newest first (default limit 50); --wide prints last_error whole.",
	.options = cmd_outbox_list_options,
	.flags = CMD_NEEDS_DB | CMD_READS_ONLY,
	.exec = cmd_outbox_list_exec,
};
