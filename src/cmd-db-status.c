/* cmd-db-status.c: list applied and pending schema migrations. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "db.h"
#include "migrate.h"

static const char *
cmd_db_status_word(enum migration_state state)
{
	switch (state) {
	case MIGRATION_PENDING:
		return "pending";
	case MIGRATION_APPLIED:
		return "applied";
	case MIGRATION_CHANGED:
		return "changed";
	case MIGRATION_MISSING:
		return "missing";
	}
	return "?";
}

static int
cmd_db_status_exec(struct cmd_ctx *ctx, struct conf *c)
{
	struct migration_set *set = ctx->state;
	struct migration     *m;
	char                 *errstr = NULL;
	enum db_status        st;
	int                   rc = EXIT_OK;
	size_t                i;

	if ((st = migrate_load(ctx->db, set, 0, &errstr)) != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}

	printf("%-7s  %-8s  %-19s  %s\n", "VERSION", "STATUS", "APPLIED_AT",
	    "NAME");
	for (i = 0; i < set->n; i++) {
		m = &set->v[i];
		printf("%03u      %-8s  %-19s  %s\n", m->version,
		    cmd_db_status_word(m->state),
		    m->applied_at != NULL ? m->applied_at : "-",
		    m->file != NULL ? m->file : m->name);
	}
	printf("%zu applied, %zu pending",
	    migrate_count(set, MIGRATION_APPLIED) +
	        migrate_count(set, MIGRATION_CHANGED) +
	        migrate_count(set, MIGRATION_MISSING),
	    migrate_count(set, MIGRATION_PENDING));
	if (migrate_count(set, MIGRATION_CHANGED) > 0)
		printf(", %zu changed since applied",
		    migrate_count(set, MIGRATION_CHANGED));
	if (migrate_count(set, MIGRATION_MISSING) > 0)
		printf(", %zu without a file",
		    migrate_count(set, MIGRATION_MISSING));
	printf("\n");

out:
	free(errstr);
	fflush(stdout);
	return rc;
}

const struct cmd_entry cmd_db_status_entry = {
	.name = "db status",
	.usage = "",
	.summary = "List the schema migrations, applied and pending.",
	.flags = CMD_NEEDS_DB | CMD_READS_ONLY | CMD_OPENS_DB,
	.check = cmd_migrations_check,
	.state_size = sizeof(struct migration_set),
	.state_free = cmd_migrations_free,
	.exec = cmd_db_status_exec,
};
