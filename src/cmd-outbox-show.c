/* cmd-outbox-show.c: one outbox row, every column, payload pretty-printed. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd.h"
#include "db.h"
#include "outbox-admin.h"
#include "util.h"

static void
show_payload(const char *text, size_t len)
{
	json_t      *j;
	json_error_t err;
	char        *pretty = NULL;

	if (text == NULL) {
		puts("payload: NULL");
		return;
	}
	j = json_loadb(text, len, JSON_DECODE_ANY, &err);
	if (j != NULL)
		pretty = json_dumps(
		    j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
	printf("payload:\n%s\n", pretty != NULL ? pretty : text);
	free(pretty);
	json_decref(j);
}

/* "blocked_by: ID (channel C): LAST_ERROR" when a FAILED row holds it. */
static enum db_status
show_blocker(
    struct db *db, const struct conf *c, unsigned long long id, char **errstr)
{
	struct db_result *res = NULL;
	enum db_status    st;
	const char       *err;

	st = outbox_show_blocker(db, &c->outbox, id, &res, errstr);
	if (st == DB_OK && res->nrows == 1) {
		err = db_cell(res, 0, 2);
		printf("blocked_by: %s (channel %s, FAILED): %s\n",
		    db_cell(res, 0, 0) != NULL ? db_cell(res, 0, 0) : "?",
		    db_cell(res, 0, 1) != NULL ? db_cell(res, 0, 1) : "?",
		    err != NULL ? err : "");
	}
	db_result_free(res);
	return st;
}

/* "attempts logged: N" (with "(the newest M shown; ...)" when that is
 * not all of them), then one line each, newest first: "  2 2026-12-01
 * 21:00:00.123456 45ms RETRY 503 web1:42: http: 503 ..." (a NULL status
 * is "-"). */
static enum db_status
show_attempts(
    struct db *db, unsigned long long id, unsigned limit, char **errstr)
{
	struct db_result  *res = NULL;
	enum db_status     st;
	unsigned long long total;
	const char        *v[7];
	size_t             i, j;

	if ((st = outbox_show_attempts(db, id, limit, &res, &total, errstr)) !=
	    DB_OK)
		goto out;
	printf("attempts logged: %llu", total);
	if (total > res->nrows)
		printf(" (the newest %zu shown; --attempts N for more)",
		    res->nrows);
	putchar('\n');
	for (i = 0; i < res->nrows; i++) {
		for (j = 0; j < nitems(v); j++)
			v[j] = db_cell(res, i, j) != NULL ? db_cell(res, i, j)
			                                  : "-";
		printf("  %s %s %sms %s %s %s%s%s\n", v[0], v[1], v[2], v[3],
		    v[4], v[5], db_cell(res, i, 6) != NULL ? ": " : "",
		    db_cell(res, i, 6) != NULL ? v[6] : "");
	}
out:
	db_result_free(res);
	return st;
}

static int
cmd_outbox_show_exec(struct cmd_ctx *ctx, struct conf *c)
{
	struct db_result  *res = NULL;
	struct db         *db = NULL;
	unsigned long long id;
	long long          limit = OUTBOX_SHOW_ATTEMPTS;
	const char        *e, *v;
	char              *errstr = NULL;
	enum db_status     st;
	size_t             j;
	int                rc = EXIT_OK;

	if (parse_ull(ctx->args[0], UINT64_MAX, &id, &e) != 0)
		return cmd_usage_error(
		    ctx->entry, "bad id %s: %s", ctx->args[0], e);
	if ((v = cmd_opt_value(ctx, "attempts")) != NULL &&
	    parse_ll(v, 0, OUTBOX_SHOW_ATTEMPTS_MAX, &limit, &e) != 0)
		return cmd_usage_error(ctx->entry, "--attempts %s: %s", v, e);
	if ((rc = cmd_db_connect(ctx, c, &db)) != 0)
		goto out;
	if ((st = outbox_show(db, id, &res, &errstr)) != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	if (res->nrows == 0) {
		fprintf(
		    stderr, "cronguard: outbox show: no message %llu\n", id);
		rc = EXIT_DATAERR;
		goto out;
	}
	for (j = 0; j + 1 < res->ncols; j++) {
		v = db_cell(res, 0, j);
		printf("%s: %s\n", res->names[j], v != NULL ? v : "NULL");
	}
	show_payload(db_cell(res, 0, j), res->lengths[0][j]);
	if ((st = show_blocker(db, c, id, &errstr)) != DB_OK ||
	    (st = show_attempts(db, id, (unsigned)limit, &errstr)) != DB_OK)
		rc = cmd_db_error(ctx, st, errstr);
out:
	db_result_free(res);
	db_close(db);
	free(errstr);
	return rc;
}

static const struct cmd_option cmd_outbox_show_options[] = {
	{ "attempts", 1 },
	{ NULL, 0 },
};

const struct cmd_entry cmd_outbox_show_entry = {
	.name = "outbox show",
	.usage = "[--attempts n] id",
	.summary =
	    "Show one outbox row, every column, the payload pretty-printed, and the newest --attempts entries of its attempt log (default 20) with their count.  Exit 65 if there is no such row.",
	.options = cmd_outbox_show_options,
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_NEEDS_DB | CMD_READS_ONLY | CMD_OPTIONS_ANYWHERE,
	.exec = cmd_outbox_show_exec,
};
