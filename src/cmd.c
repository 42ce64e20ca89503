/* cmd.c: the command table and helpers shared by every command. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "incident.h"
#include "log.h"

extern const struct cmd_entry cmd_run_entry;
extern const struct cmd_entry cmd_exec_entry;
extern const struct cmd_entry cmd_jobs_list_entry;
extern const struct cmd_entry cmd_jobs_check_entry;
extern const struct cmd_entry cmd_locks_entry;
extern const struct cmd_entry cmd_outbox_dispatch_entry;
extern const struct cmd_entry cmd_outbox_check_entry;
extern const struct cmd_entry cmd_outbox_list_entry;
extern const struct cmd_entry cmd_outbox_show_entry;
extern const struct cmd_entry cmd_outbox_retry_entry;
extern const struct cmd_entry cmd_outbox_purge_entry;
extern const struct cmd_entry cmd_outbox_enqueue_entry;
extern const struct cmd_entry cmd_db_migrate_entry;
extern const struct cmd_entry cmd_db_status_entry;
extern const struct cmd_entry cmd_config_check_entry;
extern const struct cmd_entry cmd_version_entry;
extern const struct cmd_entry cmd_help_entry;

const struct cmd_entry *const cmd_table[] = {
	&cmd_run_entry,
	&cmd_exec_entry,
	&cmd_jobs_list_entry,
	&cmd_jobs_check_entry,
	&cmd_locks_entry,
	&cmd_outbox_dispatch_entry,
	&cmd_outbox_check_entry,
	&cmd_outbox_list_entry,
	&cmd_outbox_show_entry,
	&cmd_outbox_retry_entry,
	&cmd_outbox_purge_entry,
	&cmd_outbox_enqueue_entry,
	&cmd_db_migrate_entry,
	&cmd_db_status_entry,
	&cmd_config_check_entry,
	&cmd_version_entry,
	&cmd_help_entry,
	NULL,
};

void
cmd_usage(const struct cmd_entry *e, FILE *f)
{
	fprintf(f,
	    "usage: cronguard [-c file] [-v | -q] [--log-format text|json] "
	    "%s%s%s\n",
	    e->name, e->usage[0] != '\0' ? " " : "", e->usage);
}

int
cmd_usage_error(const struct cmd_entry *e, const char *fmt, ...)
{
	va_list ap;

	fputs("cronguard: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cmd_usage(e, stderr);
	return EXIT_USAGE;
}

int
cmd_wants_help(struct cmd_ctx *ctx)
{
	int i;

	for (i = 1; i < ctx->argc; i++) {
		if (strcmp(ctx->argv[i], "--") == 0)
			break;
		if (strcmp(ctx->argv[i], "--help") == 0) {
			cmd_usage(ctx->entry, stdout);
			if (ctx->entry->summary != NULL)
				printf("\n%s\n", ctx->entry->summary);
			return 1;
		}
	}
	return 0;
}

int
cmd_load_conf(struct cmd_ctx *ctx, struct conf *c)
{
	char *errstr = NULL;

	if (conf_load(ctx->conf_path, c, &errstr) != 0) {
		fprintf(stderr, "cronguard: %s\n", errstr);
		free(errstr);
		return EXIT_CONFIG;
	}
	incident_set_alert(c->alert_url, (long)c->alert_timeout_ms);
	return 0;
}

int
cmd_need_db(struct cmd_ctx *ctx, const struct conf *c)
{
	if (c->have_database)
		return 0;
	fprintf(stderr, "cronguard: %s: no database section\n",
	    c->path != NULL ? c->path : ctx->conf_path);
	return EXIT_CONFIG;
}

int
cmd_db_error(struct cmd_ctx *ctx, enum db_status st, const char *errstr)
{
	fprintf(stderr, "cronguard: %s: %s\n", ctx->entry->name,
	    errstr != NULL ? errstr : "failed");
	return db_exitcode(st);
}

int
cmd_db_connect(struct cmd_ctx *ctx, struct conf *c, struct db **db)
{
	enum db_status st;
	char          *errstr = NULL;
	int            rc;

	*db = NULL;
	if ((rc = cmd_need_db(ctx, c)) != 0)
		return rc;
	if ((st = db_connect(&c->db, db, &errstr)) != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		free(errstr);
	}
	return rc;
}
