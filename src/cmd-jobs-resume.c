/* cmd-jobs-resume.c: "jobs resume", the end of a pause. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "db.h"
#include "jobctl.h"
#include "util.h"

/* v appended to list b, ", " between. */
static void
names_add(struct buf *b, const char *v)
{
	if (b->len > 0)
		buf_adds(b, ", ");
	buf_adds(b, v);
}

/* A part of the one line, "; " between. */
static void
line_part(struct buf *b, const char *what, const struct buf *list)
{
	if (list->len == 0)
		return;
	if (b->len > 0)
		buf_adds(b, "; ");
	buf_printf(b, "%s%s", what, list->data);
}

static int
resume_all(struct cmd_ctx *ctx, struct db *db)
{
	unsigned long long n = 0;
	char              *errstr = NULL;
	enum db_status     st;
	int                rc = EXIT_OK;

	if ((st = jobctl_resume_all(db, &n, &errstr)) != DB_OK)
		rc = cmd_db_error(ctx, st, errstr);
	else if (n == 0)
		printf("resumed every job (none was paused)\n");
	else
		printf("resumed every job (%llu pause%s ended)\n", n,
		    n == 1 ? "" : "s");
	free(errstr);
	return rc;
}

static int
cmd_jobs_resume_check(struct cmd_ctx *ctx, const struct conf *c)
{
	if (cmd_opt_count(ctx, "all") > 0 && ctx->nargs > 0)
		return cmd_usage_error(
		    ctx->entry, "--all and job names exclude each other");
	if (cmd_opt_count(ctx, "all") == 0 && ctx->nargs == 0)
		return cmd_usage_error(ctx->entry, "no job named (or --all)");
	return cmd_jobs_known(ctx, c);
}

static int
cmd_jobs_resume_exec(struct cmd_ctx *ctx, struct conf *c)
{
	struct job_pause p = { 0 };
	struct db       *db = ctx->db;
	struct buf       done, not, line;
	char            *errstr = NULL;
	enum db_status   st;
	int              rc = EXIT_OK, i, was;

	buf_init(&done);
	buf_init(&not );
	buf_init(&line);
	if (ctx->nargs == 0) {
		rc = resume_all(ctx, db);
		goto out;
	}
	for (i = 0; i < ctx->nargs; i++) {
		if ((st = jobctl_resume(db, ctx->args[i], &was, &errstr)) !=
		    DB_OK) {
			rc = cmd_db_error(ctx, st, errstr);
			goto out;
		}
		names_add(was ? &done : &not, ctx->args[i]);
	}
	/* A job's own resume does not end the pause of every job. */
	if ((st = jobctl_pause_get(db, ctx->args[0], &p, &errstr)) != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	line_part(&line, "resumed ", &done);
	line_part(&line, "not paused: ", &not );
	if (p.paused && strcmp(p.job, JOBCTL_ALL) == 0) {
		buf_reset(&done);
		buf_printf(&done, "%s (jobs resume --all)", p.paused_by);
		line_part(&line, "every job stays paused by ", &done);
	}
	printf("%s\n", line.data);
out:
	jobctl_pause_free(&p);
	buf_free(&done);
	buf_free(&not );
	buf_free(&line);
	free(errstr);
	return rc;
}

static const struct cmd_option cmd_jobs_resume_options[] = {
	{ "all", 0 },
	{ NULL, 0 },
};

const struct cmd_entry cmd_jobs_resume_entry = {
	.name = "jobs resume",
	.usage = "job... | --all",
	.summary =
	    "End the pause of jobs on every host; --all ends every pause, that of jobs pause --all too.  A job that was not paused is reported, not an error.",
	.options = cmd_jobs_resume_options,
	.max_args = -1,
	.flags = CMD_NEEDS_DB | CMD_OPENS_DB,
	.check = cmd_jobs_resume_check,
	.exec = cmd_jobs_resume_exec,
};
