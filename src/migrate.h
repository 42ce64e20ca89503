/* migrate.h: the schema migrations shipped in sql/NNN_name.sql. */
#ifndef CRONGUARD_MIGRATE_H
#define CRONGUARD_MIGRATE_H

#include <stddef.h>

#include "db.h"

/* Where each migration stands. */
enum migration_state {
	MIGRATION_PENDING, /* file present, not recorded */
	MIGRATION_APPLIED, /* recorded, file unchanged */
	MIGRATION_CHANGED, /* recorded, but the file's checksum differs */
	MIGRATION_MISSING, /* recorded, no file for it any more */
};

struct migration {
	unsigned             version; /* NNN */
	char                *name;    /* "outbox" from 002_outbox.sql */
	char                *file;    /* "002_outbox.sql", NULL if MISSING */
	char                *path;    /* full path, NULL if MISSING */
	char                 checksum[65]; /* hex SHA-256 of the file, or "" */
	char                *recorded_checksum; /* from cronguard_schema */
	char                *applied_at;        /* from cronguard_schema, UTC */
	enum migration_state state;
};

/* Every migration in the directory and in the database, by version. */
struct migration_set {
	struct migration *v;
	size_t            n;
};

/* $CRONGUARD_SQLDIR if set and not empty, else PKGDATADIR "/sql". */
const char *migrate_sqldir(void);

/*
 * List dir's NNN_name.sql files (other names are ignored) into set, with
 * their checksums, all PENDING.  Two files with the same version are an
 * error.  Returns 0, or -1 with *errstr allocated.
 */
int migrate_scan(const char *dir, struct migration_set *set, char **errstr);

/*
 * Read cronguard_schema and set each migration's state; recorded versions
 * without a file are added as MISSING.  With create, the table is created
 * first when it does not exist; without, a missing table means nothing is
 * applied (dry runs and status change nothing).
 */
enum db_status migrate_load(
    struct db *, struct migration_set *, int create, char **errstr);

/* Number of migrations in the given state. */
size_t migrate_count(const struct migration_set *, enum migration_state);

/*
 * Apply one PENDING migration: run its file as a script, then record
 * version, name, checksum and applied_at.  MySQL commits DDL implicitly,
 * so a script that fails half-way may leave part of it applied: *errstr
 * says so.
 */
enum db_status migrate_apply(struct db *, struct migration *, char **errstr);

/* Serialise concurrent "db migrate" runs on one database with a named
 * lock (waits up to timeout_s seconds).  Returns DB_OK when held. */
enum db_status migrate_lock(struct db *, unsigned timeout_s, char **errstr);
void           migrate_unlock(struct db *);

void migrate_set_free(struct migration_set *);

/* For the monitoring checks: DB_ERR_SCHEMA with *errstr "N migration(s)
 * pending: run cronguard db migrate" when migrations in migrate_sqldir()
 * are not applied, else DB_OK (also when the directory cannot be read:
 * a host without it cannot tell).  Other database errors as they are. */
enum db_status migrate_check_pending(struct db *, char **errstr);

#endif
