/* exitcode.c: the one table from module statuses to exit codes. */
#include "config.h"

#include <stddef.h>

#include "exitcode.h"

enum exitcode_kind { EXITCODE_DB, EXITCODE_LOCK, EXITCODE_CHECK };

static const struct exitcode_map {
	enum exitcode_kind kind;
	int                status;
	int                code;
} exitcode_table[] = {
	/* A database failure is "unavailable", unless the server refused
	 * for want of a privilege (77) or the schema is behind (78). */
	{ EXITCODE_DB, DB_OK, EXIT_OK },
	{ EXITCODE_DB, DB_ERR_CONNECT, EXIT_UNAVAILABLE },
	{ EXITCODE_DB, DB_ERR_LOST, EXIT_UNAVAILABLE },
	{ EXITCODE_DB, DB_ERR_RETRYABLE, EXIT_UNAVAILABLE },
	{ EXITCODE_DB, DB_ERR_QUERY, EXIT_UNAVAILABLE },
	{ EXITCODE_DB, DB_ERR_READ_ONLY, EXIT_UNAVAILABLE },
	{ EXITCODE_DB, DB_ERR_PRIVILEGE, EXIT_NOPERM },
	{ EXITCODE_DB, DB_ERR_SCHEMA, EXIT_CONFIG },

	/* A busy lock is decided by the guard (skip or 75), not here. */
	{ EXITCODE_LOCK, LOCK_OK, EXIT_OK },
	{ EXITCODE_LOCK, LOCK_BUSY, EXIT_OK },
	{ EXITCODE_LOCK, LOCK_ERR_DB, EXIT_UNAVAILABLE },
	{ EXITCODE_LOCK, LOCK_ERR_PRIVILEGE, EXIT_NOPERM },
	{ EXITCODE_LOCK, LOCK_ERR_SCHEMA, EXIT_CONFIG },
	{ EXITCODE_LOCK, LOCK_ERR_NULL, EXIT_UNAVAILABLE },
	{ EXITCODE_LOCK, LOCK_ERR_GALERA, EXIT_CONFIG },
	{ EXITCODE_LOCK, LOCK_ERR_VALUE, EXIT_SOFTWARE },
	{ EXITCODE_LOCK, LOCK_INCIDENT, EXIT_PROTOCOL },
	{ EXITCODE_LOCK, LOCK_SLOT_DONE, EXIT_OK },

	/* The Nagios plugin convention. */
	{ EXITCODE_CHECK, CHECK_OK, EXIT_OK },
	{ EXITCODE_CHECK, CHECK_WARNING, EXIT_WARNING },
	{ EXITCODE_CHECK, CHECK_CRITICAL, EXIT_CRITICAL },
	{ EXITCODE_CHECK, CHECK_UNKNOWN, EXIT_UNKNOWN },
};

static int
exitcode_find(enum exitcode_kind kind, int status)
{
	size_t i;

	for (i = 0; i < sizeof exitcode_table / sizeof exitcode_table[0]; i++) {
		if (exitcode_table[i].kind == kind &&
		    exitcode_table[i].status == status)
			return exitcode_table[i].code;
	}
	return EXIT_SOFTWARE;
}

int
exitcode_db(enum db_status st)
{
	return exitcode_find(EXITCODE_DB, (int)st);
}

int
exitcode_lock(enum lock_result lr)
{
	return exitcode_find(EXITCODE_LOCK, (int)lr);
}

int
exitcode_check(enum check_status cs)
{
	return exitcode_find(EXITCODE_CHECK, (int)cs);
}
