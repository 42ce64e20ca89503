/* migrate.c: the schema migrations shipped in sql/NNN_name.sql. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mysqld_error.h>
#include <openssl/evp.h>

#include "db.h"
#include "migrate.h"
#include "util.h"

/* A migration file is small; anything bigger is not one of ours. */
#define MIGRATE_FILE_MAX (1024 * 1024)
#define MIGRATE_VERSION_MAX 999999

/* Kept in step with sql/001_schema.sql, which documents the table: the
 * table must exist before the first migration can be recorded in it. */
static const char migrate_schema_table[] =
    "CREATE TABLE IF NOT EXISTS cronguard_schema ("
    " version INT UNSIGNED NOT NULL PRIMARY KEY,"
    " name VARCHAR(255) NOT NULL,"
    " checksum CHAR(64) NOT NULL,"
    " applied_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)"
    ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4";

const char *
migrate_sqldir(void)
{
	const char *dir;

	if ((dir = getenv("CRONGUARD_SQLDIR")) != NULL && *dir != '\0')
		return dir;
	return PKGDATADIR "/sql";
}

/* "002_outbox.sql" gives version 2 and name "outbox"; -1 if the file
 * name is not a migration's. */
static int
migrate_parse_name(const char *file, unsigned *version, char **name)
{
	size_t             digits, len, rest;
	unsigned long long v;
	const char        *errstr;
	char              *tmp;

	len = strlen(file);
	digits = strspn(file, "0123456789");
	if (digits == 0 || digits > 6 || file[digits] != '_' || len < 5 ||
	    strcmp(file + len - 4, ".sql") != 0)
		return -1;
	rest = len - digits - 1 - 4;
	if (rest == 0 ||
	    strspn(file + digits + 1,
	        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") !=
	        rest)
		return -1;
	tmp = xstrndup(file, digits);
	if (parse_ull(tmp, MIGRATE_VERSION_MAX, &v, &errstr) != 0 || v == 0) {
		free(tmp);
		return -1;
	}
	free(tmp);
	*version = (unsigned)v;
	*name = xstrndup(file + digits + 1, rest);
	return 0;
}

static int
migrate_checksum(const char *data, size_t len, char out[65], char **errstr)
{
	unsigned char     md[EVP_MAX_MD_SIZE];
	unsigned int      mdlen = 0, i;
	static const char hex[] = "0123456789abcdef";

	if (EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) != 1 ||
	    mdlen != 32) {
		*errstr = xstrdup("sha256 failed");
		return -1;
	}
	for (i = 0; i < mdlen; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 0xf];
	}
	out[64] = '\0';
	return 0;
}

static int
migrate_cmp(const void *a, const void *b)
{
	const struct migration *ma = a, *mb = b;

	return ma->version < mb->version ? -1 : ma->version > mb->version;
}

/* By version.  An empty set has no array (v is NULL), which qsort may not
 * be given even with a count of 0. */
static void
migrate_sort(struct migration_set *set)
{
	if (set->n > 0)
		qsort(set->v, set->n, sizeof *set->v, migrate_cmp);
}

static struct migration *
migrate_add(struct migration_set *set)
{
	struct migration *m;

	set->v = xreallocarray(set->v, set->n + 1, sizeof *set->v);
	m = &set->v[set->n++];
	memset(m, 0, sizeof *m);
	return m;
}

/* Read the file and compute its checksum. */
static int
migrate_file_sum(struct migration *m, char **errstr)
{
	char  *data, *err = NULL;
	size_t len;

	if ((data = read_file(m->path, MIGRATE_FILE_MAX, &len, &err)) == NULL) {
		*errstr = xasprintf("%s: %s", m->path, err);
		free(err);
		return -1;
	}
	if (migrate_checksum(data, len, m->checksum, errstr) != 0) {
		free(data);
		return -1;
	}
	free(data);
	return 0;
}

int
migrate_scan(const char *dir, struct migration_set *set, char **errstr)
{
	DIR              *d;
	struct dirent    *de;
	struct migration *m;
	unsigned          version;
	char             *name;
	size_t            i;

	set->v = NULL;
	set->n = 0;
	if ((d = opendir(dir)) == NULL) {
		*errstr = xasprintf("cannot open migrations directory %s: %s",
		    dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		if (migrate_parse_name(de->d_name, &version, &name) != 0)
			continue;
		m = migrate_add(set);
		m->version = version;
		m->name = name;
		m->file = xstrdup(de->d_name);
		m->path = xasprintf("%s/%s", dir, de->d_name);
		m->state = MIGRATION_PENDING;
	}
	closedir(d);

	migrate_sort(set);
	for (i = 0; i < set->n; i++) {
		if (i > 0 && set->v[i].version == set->v[i - 1].version) {
			*errstr = xasprintf("%s: %s and %s have the same "
			                    "version",
			    dir, set->v[i - 1].file, set->v[i].file);
			goto fail;
		}
		if (migrate_file_sum(&set->v[i], errstr) != 0)
			goto fail;
	}
	return 0;

fail:
	migrate_set_free(set);
	return -1;
}

static struct migration *
migrate_find(struct migration_set *set, unsigned version)
{
	size_t i;

	for (i = 0; i < set->n; i++)
		if (set->v[i].version == version)
			return &set->v[i];
	return NULL;
}

enum db_status
migrate_load(
    struct db *db, struct migration_set *set, int create, char **errstr)
{
	struct db_result  *r = NULL;
	struct migration  *m;
	unsigned long long v;
	const char        *cell, *perr;
	enum db_status     st;
	size_t             i;

	if (create &&
	    (st = db_exec_script(db, migrate_schema_table, errstr)) != DB_OK)
		return st;
	st = db_query(db, &r, errstr,
	    "SELECT version, name, checksum, "
	    "DATE_FORMAT(applied_at, '%%Y-%%m-%%d %%H:%%i:%%s') "
	    "FROM cronguard_schema ORDER BY version");
	if (st != DB_OK) {
		if (!create && db_errno(db) == ER_NO_SUCH_TABLE) {
			free(*errstr);
			*errstr = NULL;
			return DB_OK;
		}
		return st;
	}
	for (i = 0; i < r->nrows; i++) {
		cell = db_cell(r, i, 0);
		if (cell == NULL ||
		    parse_ull(cell, MIGRATE_VERSION_MAX, &v, &perr) != 0) {
			*errstr = xasprintf("cronguard_schema: bad version "
			                    "\"%s\"",
			    cell != NULL ? cell : "NULL");
			st = DB_ERR_QUERY;
			goto out;
		}
		if ((m = migrate_find(set, (unsigned)v)) == NULL) {
			m = migrate_add(set);
			m->version = (unsigned)v;
			m->name = xstrdup(
			    db_cell(r, i, 1) != NULL ? db_cell(r, i, 1) : "");
			m->state = MIGRATION_MISSING;
		} else if (db_cell(r, i, 2) != NULL &&
		    strcmp(db_cell(r, i, 2), m->checksum) == 0)
			m->state = MIGRATION_APPLIED;
		else
			m->state = MIGRATION_CHANGED;
		cell = db_cell(r, i, 2);
		m->recorded_checksum = xstrdup(cell != NULL ? cell : "");
		cell = db_cell(r, i, 3);
		m->applied_at = xstrdup(cell != NULL ? cell : "");
	}
	migrate_sort(set);
out:
	db_result_free(r);
	return st;
}

size_t
migrate_count(const struct migration_set *set, enum migration_state state)
{
	size_t i, n = 0;

	for (i = 0; i < set->n; i++)
		if (set->v[i].state == state)
			n++;
	return n;
}

enum db_status
migrate_apply(struct db *db, struct migration *m, char **errstr)
{
	char          *sql = NULL, *err = NULL, sum[65];
	size_t         len;
	enum db_status st = DB_ERR_QUERY;

	if ((sql = read_file(m->path, MIGRATE_FILE_MAX, &len, &err)) == NULL) {
		*errstr = xasprintf("%s: %s", m->path, err);
		goto out;
	}
	/* The file is what was checksummed when the set was scanned. */
	if (migrate_checksum(sql, len, sum, errstr) != 0)
		goto out;
	if (strcmp(sum, m->checksum) != 0) {
		*errstr = xasprintf("%s changed while migrating", m->path);
		goto out;
	}
	if (memchr(sql, '\0', len) != NULL) {
		*errstr = xasprintf("%s: contains a NUL byte", m->path);
		goto out;
	}
	if ((st = db_exec_script(db, sql, &err)) != DB_OK) {
		*errstr = xasprintf(
		    "%s: %s (statements before the failing one stay applied: MySQL commits DDL implicitly)",
		    m->file, err);
		goto out;
	}
	st = db_query(db, NULL, &err,
	    "INSERT INTO cronguard_schema "
	    "(version, name, checksum, applied_at) "
	    "VALUES (%u, %s, %s, NOW(6))",
	    m->version, m->name, m->checksum);
	if (st != DB_OK) {
		*errstr =
		    xasprintf("%s applied but not recorded: %s", m->file, err);
		goto out;
	}
	m->state = MIGRATION_APPLIED;

out:
	free(err);
	free(sql);
	return st;
}

enum db_status
migrate_lock(struct db *db, unsigned timeout_s, char **errstr)
{
	char          *v = NULL;
	enum db_status st;

	/* At most 64 characters, MySQL's limit for lock names. */
	st = db_query_value(db, &v, errstr,
	    "SELECT GET_LOCK(CONCAT("
	    "'cronguard:migrate:', LEFT(DATABASE(), 40)), %u)",
	    timeout_s);
	if (st != DB_OK)
		return st;
	switch (db_parse_bool(v)) {
	case 1:
		break;
	case 0:
		*errstr = xasprintf("another db migrate is running (waited "
		                    "%us)",
		    timeout_s);
		st = DB_ERR_QUERY;
		break;
	default:
		*errstr =
		    xasprintf("GET_LOCK returned %s", v != NULL ? v : "NULL");
		st = DB_ERR_QUERY;
		break;
	}
	free(v);
	return st;
}

void
migrate_unlock(struct db *db)
{
	char *err = NULL;

	/* Closing the connection releases it too; this is a courtesy. */
	(void)db_query(db, NULL, &err,
	    "DO RELEASE_LOCK(CONCAT("
	    "'cronguard:migrate:', LEFT(DATABASE(), 40)))");
	free(err);
}

void
migrate_set_free(struct migration_set *set)
{
	size_t i;

	for (i = 0; i < set->n; i++) {
		free(set->v[i].name);
		free(set->v[i].file);
		free(set->v[i].path);
		free(set->v[i].recorded_checksum);
		free(set->v[i].applied_at);
	}
	free(set->v);
	set->v = NULL;
	set->n = 0;
}

enum db_status
migrate_check_pending(struct db *db, char **errstr)
{
	struct migration_set set;
	char                *err = NULL;
	enum db_status       st;
	size_t               pending;

	memset(&set, 0, sizeof set);
	if (migrate_scan(migrate_sqldir(), &set, &err) != 0) {
		free(err);
		migrate_set_free(&set);
		return DB_OK;
	}
	if ((st = migrate_load(db, &set, 0, errstr)) == DB_OK &&
	    (pending = migrate_count(&set, MIGRATION_PENDING)) > 0) {
		*errstr = xasprintf(
		    "%zu migration(s) pending: run cronguard db migrate",
		    pending);
		st = DB_ERR_SCHEMA;
	}
	migrate_set_free(&set);
	return st;
}
