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

static int
cmd_outbox_show_exec(struct cmd_ctx *ctx, struct conf *c)
{
	struct db_result  *res = NULL;
	struct db         *db = NULL;
	unsigned long long id;
	const char        *e, *v;
	char              *errstr = NULL;
	enum db_status     st;
	size_t             j;
	int                rc = EXIT_OK;

	if (parse_ull(ctx->args[0], UINT64_MAX, &id, &e) != 0)
		return cmd_usage_error(
		    ctx->entry, "bad id %s: %s", ctx->args[0], e);
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
out:
	db_result_free(res);
	db_close(db);
	free(errstr);
	return rc;
}

const struct cmd_entry cmd_outbox_show_entry = {
	.name = "outbox show",
	.usage = "id",
	.summary =
	    "Show one outbox row, every column, the payload pretty-printed.  Exit 65 if there is no such row.",
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_NEEDS_DB | CMD_READS_ONLY,
	.exec = cmd_outbox_show_exec,
};
