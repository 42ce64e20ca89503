/* lease.h: the lease lock and the fencing token (issue 10, draft). */
#ifndef CRONGUARD_LEASE_H
#define CRONGUARD_LEASE_H

/*
 * DRAFT: declarations only, not yet built (no lease.c yet).
 *
 * Design.  A lease is a row of cronguard_leases (sql/006_leases.sql) per
 * lock name.  It is held while owner_token is set and expires_at is later
 * than NOW(6) by the database clock; the hosts' clocks are never compared.
 *
 * acquire is one statement:
 *   INSERT INTO cronguard_leases (name, owner_token, holder_host,
 *     holder_pid, holder_conn, acquired_at, expires_at, fence)
 *   VALUES (?, ?, ?, ?, CONNECTION_ID(), NOW(6),
 *     NOW(6) + INTERVAL ? MICROSECOND, 1)
 *   ON DUPLICATE KEY UPDATE
 *     fence = IF(owner_token IS NULL OR expires_at <= NOW(6), fence + 1,
 *       fence), ... (each holder column with the same IF, fence first so
 *       that the others still see the old expires_at)
 * then the caller reads the row back in the same transaction: it owns
 * the lease exactly when owner_token is its own random token; the fence
 * read there is its token.  Every acquisition increments fence, which
 * never goes down (release clears the owner, never the fence), so a token
 * is never reused and survives restarts.  On Galera or Group Replication
 * a certification conflict (1213) on the acquire's commit means another
 * node took the row first: "busy", never an error.
 *
 * extend (the heartbeat) moves expires_at only WHERE owner_token = ours
 * AND expires_at > NOW(6); zero rows affected = the lease is lost (exit
 * 76 at the command layer).  release clears owner_token only WHERE
 * owner_token = ours.
 *
 * Checked by hand on MariaDB 10.11 (01:37 UTC, throwaway server): A takes
 * the lease (fence 1), B is busy, after expiry B takes it (fence 2), C is
 * busy.  The assignments rely on left-to-right evaluation (owner_token is
 * assigned before expires_at tests it), which MySQL documents for
 * single-table UPDATE too; MySQL 8.0.20+ warns that VALUES() is deprecated,
 * so lease.c should pass the values twice through db_format instead.
 *
 * For the named-lock guard the fence comes from the same row, in the
 * same round trip as GET_LOCK (one multi-statement, checked on MariaDB:
 * fence 1 then 2):
 *   SELECT GET_LOCK(?, 0) INTO @got;
 *   INSERT INTO cronguard_leases (name, fence) SELECT ?, 1 FROM DUAL
 *     WHERE @got = 1 ON DUPLICATE KEY UPDATE fence = fence + 1;
 *   SELECT @got, fence FROM cronguard_leases WHERE name = ?;
 * (plain SQL, no vendor-only syntax; not yet run on MySQL 8).
 *
 * Trade-off.  A session lock (GET_LOCK) frees itself the moment its
 * holder's connection dies; a lease frees itself only when it expires.  A
 * lost holder therefore delays the next run by at most the lease, and a
 * holder that stalls longer than the lease loses it: the next holder gets
 * a larger fence, and a job that fences its writes (UPDATE ... WHERE
 * fence < ?) makes the stale holder's writes no-ops.
 */

#include "db.h"

struct lease_holder {
	char              *owner_token; /* NULL: free or expired */
	char              *host;
	unsigned long long pid;
	unsigned long long connection_id;
	unsigned long long fence;
	int                expired; /* expires_at <= NOW(6) */
};

enum lease_status {
	LEASE_OK = 0,
	LEASE_BUSY, /* held by someone else, or a certification conflict */
	LEASE_LOST, /* extend/release: no longer the owner */
	LEASE_ERR_DB,
};

enum lease_status lease_acquire(struct db *, const char *name,
    const char *token, const char *host, unsigned long long pid,
    unsigned long long lease_us, unsigned long long *fence, char **errstr);
enum lease_status lease_extend(struct db *, const char *name, const char *token,
    unsigned long long lease_us, char **errstr);
enum lease_status lease_release(
    struct db *, const char *name, const char *token, char **errstr);
enum lease_status lease_holder(
    struct db *, const char *name, struct lease_holder *, char **errstr);
void lease_holder_free(struct lease_holder *);

#endif
