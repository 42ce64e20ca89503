/*
 * guard-int.h: what the rooms of the guard engine share, and nothing
 * else includes.  guard.c is the run (the database lock, once_per, the
 * record, pings); guard-local.c the local flock; guard-child.c the job
 * itself (its process tree, signals and output, or its statement and the
 * watchdog); guard-plan.c which slots a launch runs.  doc/architecture.md,
 * "The guard engine", walks a launch through them.
 */
#ifndef CRONGUARD_GUARD_INT_H
#define CRONGUARD_GUARD_INT_H

#include <stddef.h>
#include <stdint.h>

#include "guard.h"
#include "lock.h"
#include "runs.h"

struct output;
struct tzone;

/* guard.c: whether the guard takes a lock in the database. */
int guard_in_db(enum guard_kind);

/* ------------------------------------------- guard-local.c: the flock */

/* How taking the local flock went.  A runtime directory or lock file that
 * is not as it must be is a setup problem the operator fixes (exit 78);
 * anything else is an internal error (70). */
enum local_status { LOCAL_OK, LOCAL_BUSY, LOCAL_ERR_CONFIG, LOCAL_ERR };

/* Who holds a busy local flock, as far as the file tells. */
struct local_holder {
	long    pid;     /* -1: unknown, or no such process */
	int64_t held_ms; /* -1: unknown */
};

enum local_status local_take(const struct guard_job *, int *fdp,
    struct local_holder *, char **path, char **errstr);
int               guard_local_busy(
                  const struct guard_job *, const char *path, const struct local_holder *);

/* ------------------------------------------- guard-child.c: the job */

int  guard_signals_install(char **errstr);
int  guard_signals_take(void);
void guard_signals_done(const struct guard_job *, int *installed);
int  guard_command(const struct guard_job *, struct lock *, struct output *,
     struct run_end *, char *errbuf, size_t errlen);
int  guard_sql(const struct guard_job *, struct lock *, struct run_end *,
     char *errbuf, size_t errlen);

/* -------------------------------------------- guard-plan.c: the slots */

/* A slot of a launch's plan. */
struct guard_slot {
	int64_t     t;
	const char *kind; /* "schedule", "catch_up", "manual" */
};

int guard_zone(
    const struct guard_job *, const struct slot_state *, struct tzone **);
void guard_paused(const struct guard_job *, const struct slot_state *);
int  guard_plan(const struct guard_job *, const struct slot_state *,
     const struct tzone *, struct guard_slot *plan, size_t *n);

#endif
