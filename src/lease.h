/* lease.h: the lease lock and the fencing token (doc/architecture.md;
 * cronguard(1), Leases and Fencing). */
#ifndef CRONGUARD_LEASE_H
#define CRONGUARD_LEASE_H

/*
 * A lease is a row of cronguard_leases (sql/006_leases.sql) per lock
 * name.  It is held while owner_token is set and expires_at is later than
 * NOW(6) by the database clock; the hosts' clocks are never compared.
 *
 * acquire is one autocommitted statement:
 *   INSERT INTO cronguard_leases (...) VALUES (name, token, ...,
 *     NOW(6) + INTERVAL lease MICROSECOND, LAST_INSERT_ID(0) + 1)
 *   ON DUPLICATE KEY UPDATE
 *     fence = IF(free, LAST_INSERT_ID(fence + 1), fence),
 *     <owner and holder columns> = IF(fence = LAST_INSERT_ID(), new, old)
 * where free is "owner_token IS NULL OR expires_at <= NOW(6)".  The
 * assignments run left to right (documented for MySQL and MariaDB), so
 * only the first one tests the old row; the others test whether it moved
 * the fence (LAST_INSERT_ID() is 0, never a fence, when it did not).
 * Rows affected (1 inserted: fence 1; 2 taken; 0 unchanged: busy; the
 * connection does not set CLIENT_FOUND_ROWS) says whether we own it;
 * LAST_INSERT_ID(expr) hands the new fence back in the same reply
 * (mysql_insert_id), so nothing is read back.  Every acquisition
 * increments fence, which never goes down (release clears the owner,
 * never the fence), so a token is never reused and survives restarts.
 * On Galera or Group Replication a certification conflict (1213) on the
 * statement's commit means another node took the row first: busy.
 *
 * For the named-lock guard, lease_fence_next bumps the same counter with
 * one statement after GET_LOCK returned 1 (no lease columns change).
 *
 * Trade-off.  A session lock (GET_LOCK) frees itself the moment its
 * holder's connection dies; a lease frees itself only when it expires.  A
 * lost holder therefore delays the next run by at most the lease, and a
 * holder that stalls longer than the lease loses it: the next holder gets
 * a larger fence, and a job that fences its writes (UPDATE ... WHERE
 * fence < ?) makes the stale holder's writes no-ops.
 */

#include "db.h"

/* Bytes of an owner token: 32 hex digits and a NUL. */
#define LEASE_TOKEN_SIZE 33

struct lease_holder {
	char              *owner_token; /* NULL: free (or no row) */
	char              *host;
	long long          pid; /* -1 unknown */
	unsigned long long connection_id;
	unsigned long long fence;
	long long          held_s;  /* NOW(6) - acquired_at; -1 unknown */
	int                expired; /* expires_at <= NOW(6) */
	unsigned long long run_id;  /* its running run record; 0 none */
	char              *run_job;
};

enum lease_status {
	LEASE_OK = 0,
	LEASE_BUSY,      /* held by someone else, or a certification conflict */
	LEASE_LOST,      /* extend/release: no longer the owner, or expired */
	LEASE_ERR_DB,    /* the query failed: *errstr */
	LEASE_ERR_VALUE, /* the server answered something impossible */
	LEASE_READ_ONLY, /* extend: the server turned read-only, *errstr why */
	LEASE_ERR_PRIVILEGE, /* refused for want of a privilege (77) */
	LEASE_ERR_SCHEMA,    /* cronguard_leases unknown: db migrate (78) */
};

/* A fresh random owner token (32 hex digits). */
void lease_token(char out[LEASE_TOKEN_SIZE]);

/*
 * Take the lease name for lease_us microseconds when it is free or
 * expired.  LEASE_OK: ours, *fence is its new fencing token.  LEASE_BUSY:
 * someone else's.  LEASE_ERR_DB with *errstr (allocated).
 */
enum lease_status lease_acquire(struct db *, const char *name,
    const char *token, const char *host, long long pid,
    unsigned long long lease_us, unsigned long long *fence, char **errstr);

/* The heartbeat: push expires_at to NOW(6) + lease_us, only while we own
 * it, it has not expired and the server takes writes (db_read_only_sql in
 * the same UPDATE: a user with SUPER writes through read_only).  LEASE_OK,
 * LEASE_LOST, LEASE_READ_ONLY (*errstr the reasons, asked only after
 * the UPDATE changed nothing, or the server's refusal 1290) or
 * LEASE_ERR_DB. */
enum lease_status lease_extend(struct db *, const char *name, const char *token,
    unsigned long long lease_us, char **errstr);

/*
 * Give the lease back: clear the owner only while it is ours.  LEASE_OK
 * when it was ours and unexpired; LEASE_LOST when it was taken (or it had
 * expired: then it is cleared all the same); LEASE_ERR_DB.
 */
enum lease_status lease_release(
    struct db *, const char *name, const char *token, char **errstr);

/* Who holds name (database clock).  Fills *h; lease_holder_free. */
enum lease_status lease_holder(
    struct db *, const char *name, struct lease_holder *h, char **errstr);
void lease_holder_free(struct lease_holder *);

/*
 * The named-lock guard's fencing token: increment name's fence (creating
 * the row) and return the new value in *fence.  Call only while holding
 * the named lock.
 */
enum lease_status lease_fence_next(
    struct db *, const char *name, unsigned long long *fence, char **errstr);

#endif
