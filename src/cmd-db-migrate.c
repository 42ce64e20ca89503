/* cmd-db-migrate.c: apply the pending schema migrations. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "db.h"
#include "log.h"
#include "migrate.h"

/* How long a second "db migrate" waits for the first to finish. */
#define MIGRATE_LOCK_WAIT 60

static int
cmd_db_migrate_exec(struct cmd_ctx *ctx, struct conf *c)
{
	struct migration_set *set = ctx->state;
	struct migration     *m;
	struct db            *db = ctx->db;
	char                 *errstr = NULL;
	enum db_status        st;
	int                   dry_run, locked = 0, rc = EXIT_OK;
	size_t                i, applied = 0;

	dry_run = cmd_opt_count(ctx, "dry-run") > 0;
	if (!dry_run) {
		if ((st = migrate_lock(db, MIGRATE_LOCK_WAIT, &errstr)) !=
		    DB_OK)
			goto fail;
		locked = 1;
	}
	if ((st = migrate_load(db, set, !dry_run, &errstr)) != DB_OK)
		goto fail;

	/* Never build on a migration whose file is not what was applied. */
	for (i = 0; i < set->n; i++) {
		m = &set->v[i];
		if (m->state != MIGRATION_CHANGED)
			continue;
		fprintf(stderr,
		    "cronguard: %s was changed after it was applied (sha256 %s, recorded %s); refusing to migrate\n",
		    m->file, m->checksum, m->recorded_checksum);
		rc = EXIT_DATAERR;
	}
	if (rc != EXIT_OK)
		goto out;

	for (i = 0; i < set->n; i++) {
		m = &set->v[i];
		if (m->state != MIGRATION_PENDING)
			continue;
		if (dry_run) {
			printf("would apply %s\n", m->file);
			applied++;
			continue;
		}
		if ((st = migrate_apply(db, m, &errstr)) != DB_OK) {
			/* A statement the server rejects is a broken
			 * migration, not an unavailable database. */
			fprintf(stderr, "cronguard: db migrate: %s\n", errstr);
			rc = st == DB_ERR_QUERY ? EXIT_SOFTWARE
			                        : exitcode_db(st);
			goto out;
		}
		log_kv(LOG_INFO, "migration_applied", "file", m->file);
		printf("applied %s\n", m->file);
		applied++;
	}
	if (applied == 0 && dry_run)
		printf("nothing to apply\n");
	else if (applied == 0)
		log_kv(LOG_INFO, "schema_up_to_date", "dir", migrate_sqldir());
	goto out;

fail:
	rc = cmd_db_error(ctx, st, errstr);
out:
	if (locked)
		migrate_unlock(db);
	free(errstr);
	fflush(stdout);
	return rc;
}

static const struct cmd_option cmd_db_migrate_options[] = {
	{ "dry-run", 0 },
	{ NULL, 0 },
};

const struct cmd_entry cmd_db_migrate_entry = {
	.name = "db migrate",
	.usage = "[--dry-run]",
	.summary = "Apply the schema migrations not yet applied, in order.",
	.options = cmd_db_migrate_options,
	.flags = CMD_NEEDS_DB | CMD_OPENS_DB,
	.check = cmd_migrations_check,
	.state_size = sizeof(struct migration_set),
	.state_free = cmd_migrations_free,
	.exec = cmd_db_migrate_exec,
};
