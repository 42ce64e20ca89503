/*
 * db-int.h: what db.c (connections, statements, reconnects) and
 * db-txn.c (transactions and checked calls) share; no other module
 * includes it.  doc/architecture.md places both.
 */
#ifndef CRONGUARD_DB_INT_H
#define CRONGUARD_DB_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <mysql.h>

#include "db.h"

/* MySQL 8.0 "disconnected by the server because of inactivity"; not in
 * MariaDB's headers. */
#define DB_ER_CLIENT_INTERACTION_TIMEOUT 4031

/* Longest identifier MySQL accepts (database, table, column). */
#define DB_IDENT_MAX 64

struct db {
	MYSQL *mysql;
	char  *where; /* "127.0.0.1:3306" or "socket /path" */
	const struct conf_database *conf; /* for a reconnect */
	bool        primary;   /* db_connect_primary: refuse a read-only one */
	const char *read_only; /* db_read_only_sql for this server */
	/* The reconnect policy (db_reconnect_enable). */
	bool               reconnect;
	int64_t            reconnect_until; /* monotonic ms, or 0 */
	bool               in_txn;  /* between START TRANSACTION and its end */
	char             **session; /* replayed after a reconnect */
	size_t             nsession;
	unsigned long long conflicts;
	unsigned long long reconnects;
	unsigned long long statements; /* sent by db_run and db_simple */
	unsigned           wait_s;   /* lock waits bounded to this (s), or 0 */
	unsigned           last_err; /* errno of the last db_fail */
};

/* One statement's or transaction's retries so far. */
struct db_retry {
	unsigned attempt;    /* conflicts retried */
	unsigned reconnects; /* reconnects for it */
	int64_t  deadline;   /* of conflict retries; 0 until the first */
	bool     once;       /* never repeat after a lost connection */
};

/* The server's error on db's connection as a status, with *errstr
 * naming what failed; the connection's last error is kept. */
enum db_status db_fail(struct db *, char **errstr, const char *what);
/* A statement without a result, no retry. */
enum db_status db_simple(struct db *, const char *sql, char **errstr);
/* Whether st is a refusal that passes by itself (deadlock, lock wait
 * timeout, a Galera node not ready), read right after the failure. */
bool db_conflict(struct db *, enum db_status st);
/* Open a new session after a lost one, replaying the session settings. */
enum db_status db_reconnect(struct db *, char **errstr);
/* After a statement or transaction failed with *st (conflict: whether
 * db_conflict said so): whether to repeat it, counting in r; false: *st
 * and *errstr are what to return (db.c says when). */
bool db_retry_again(struct db *, struct db_retry *r, enum db_status *st,
    bool conflict, char **errstr);

#endif
