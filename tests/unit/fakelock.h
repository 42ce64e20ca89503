/*
 * fakelock.h: a fake database behind struct lock_db_ops (lock.h), shared
 * by check_lock.c (the lock's cleanup paths) and check_guard.c
 * (guard_run): it answers what the test scripts in fake and records
 * what it was asked, and catches the incidents reported meanwhile.
 */
#ifndef CRONGUARD_FAKELOCK_H
#define CRONGUARD_FAKELOCK_H

#include "db.h"
#include "lock.h"

/* A value the fake returns: a string, or SQL NULL. */
struct fval {
	int         null;
	const char *s;
};
#define V(x) ((struct fval){ 0, (x) })
#define VNULL ((struct fval){ 1, NULL })

/* What the fake answers, and what it saw. */
struct fake {
	/* script */
	int                connect_fail_from; /* nth connect fails; 0 never */
	struct fval        get_lock;
	const char        *fence; /* cronguard_get_lock's token, or NULL */
	const char        *wsrep;
	enum db_status     release_st;
	struct fval        release;
	int                destroy_fail;
	enum db_status     is_used_st;
	int                is_used_self; /* IS_USED_LOCK = the lock session */
	struct fval        is_used;      /* otherwise this */
	const char        *read_only;    /* lock_check's reasons; NULL none */
	int                lock_checks;
	enum db_status     kill_st;
	enum db_status     finish_st;
	int                finish_fail_once;   /* only the first finish fails */
	int                finish_fail_output; /* a finish with output fails */
	struct lock_holder holder;
	/* observed */
	int                connects;
	int                destroys;
	int                releases;
	int                kills;
	unsigned long long killed;
	int                holder_calls;
	int                run_starts;
	int                finishes;
	int                releases_at_finish; /* at the first finish */
	int                finish_had_output;  /* the last finish */
	char               finish_outcome[32];
	int                finish_status;
	char               finish_error[256];
	unsigned long long lock_session;
};

/* The script and the record; fake_setup resets it. */
extern struct fake              fake;
extern const struct lock_db_ops fake_ops;

/* A private runtime directory for the local lock (fake_setup makes it,
 * fake_teardown removes it). */
extern char fake_rundir[];

/* The incidents reported since fake_setup: how many, how many of event,
 * and the detail of the first of event ("" when none). */
extern int  fake_nseen;
int         fake_seen_event(const char *event);
const char *fake_seen_detail(const char *event);

/* The Check fixture: the fake's defaults (GET_LOCK and RELEASE_LOCK
 * answer "1", not a Galera node, the lock free), errors-only logging,
 * the incident sink, the runtime directory. */
void fake_setup(void);
void fake_teardown(void);

#endif
