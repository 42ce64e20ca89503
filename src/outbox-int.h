/*
 * outbox-int.h: what outbox.c (the claim) and outbox-finalise.c (the
 * finalise) share; not for other modules.
 */
#ifndef CRONGUARD_OUTBOX_INT_H
#define CRONGUARD_OUTBOX_INT_H

#include <stddef.h>

#include "db.h"
#include "outbox.h"
#include "util.h"

/* The ids as text for messages (SQL takes them with %L). */
void outbox_idlist(struct buf *b, const unsigned long long *ids, size_t n);

/* The ids of the claim's messages, in order (allocated; SQL takes them
 * with %L). */
unsigned long long *claim_id_array(const struct claim *c);

/* last_error of a row that expired before it was sent (claimed or not). */
extern const char outbox_expired_sql[];

/* How many rows of table (outbox_messages, outbox_attempts) carry the
 * claim's token, among its rows (col: id, or outbox_id), into *n: how a
 * statement whose COMMIT reply was lost is told done. */
enum db_status outbox_token_rows(struct db *db, const char *table,
    const char *col, const struct claim *c, long long *n, char **errstr);

#endif
