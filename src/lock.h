/* lock.h: the named-lock guard (cronguard(1), GUARDED JOBS); the run records
 * are runs.h. */
#ifndef CRONGUARD_LOCK_H
#define CRONGUARD_LOCK_H

#include <stdint.h>

#include "db.h"
#include "lease.h"
#include "runs.h"

/*
 * Every database operation of the guard goes through this small interface,
 * so that unit tests can replace the database with a fake and force the
 * cleanup paths that never run in normal operation (release failing,
 * returning "0" or NULL, the session that cannot be destroyed).
 *
 * Values come back as the server sent them: an allocated string, or NULL
 * for SQL NULL.  Interpreting them is lock.c's job (db_parse_bool), never
 * the operation's.  Every operation returns a db_status and on failure
 * sets *errstr (allocated).
 */
struct lock_acquire_row {
	char *got;           /* GET_LOCK(name, 0) */
	char *connection_id; /* CONNECTION_ID() */
	char *wait_timeout;  /* @@session.wait_timeout, seconds */
	char *wsrep_on;      /* @@wsrep_on; NULL when the server has none */
	char *fence;         /* the fencing token taken with GET_LOCK's "1"
	                      * (cronguard_get_lock); NULL when none was taken */
};

struct lock_holder {
	unsigned long long connection_id; /* IS_USED_LOCK; 0 = free */
	unsigned long long run_id;        /* running run record; 0 = none */
	char              *run_job;
	char              *run_host;
	long long          run_pid;
	char              *started_at; /* run record start, database clock */
	long long          run_age_s;  /* NOW(6) - started_at; -1 unknown */
	char     *client_host; /* PROCESSLIST.HOST; NULL = not visible */
	char     *client_user;
	long long idle_s; /* PROCESSLIST.TIME; -1 unknown */
};

struct lock_db_ops {
	/* A new session.  ctx is the ops' own (the real one: a const
	 * struct conf_database *). */
	enum db_status (*connect)(void *ctx, void **conn, char **errstr);
	/* Destroy the session (mysql_close): returns 0, or -1 when it could
	 * not be destroyed.  conn is gone either way. */
	int (*destroy)(void *conn, char **errstr);
	/* SELECT GET_LOCK(name, 0), CONNECTION_ID(),
	 * @@session.wait_timeout, @@wsrep_on */
	enum db_status (*get_lock)(void *conn, const char *name,
	    struct lock_acquire_row *, char              **errstr);
	/* SELECT RELEASE_LOCK(name) */
	enum db_status (*release_lock)(
	    void *conn, const char *name, char **value, char **errstr);
	/* SELECT IS_USED_LOCK(name) */
	enum db_status (*is_used_lock)(
	    void *conn, const char *name, char **value, char **errstr);
	/* The heartbeat's check in one round trip: IS_USED_LOCK(name) in
	 * *value, and in *read_only why the server no longer takes writes
	 * (db_read_only_sql), NULL while it does.  NULL in a fake:
	 * is_used_lock alone. */
	enum db_status (*lock_check)(void *conn, const char *name, char **value,
	    char **read_only, char **errstr);
	/* KILL CONNECTION id */
	enum db_status (*kill)(
	    void *conn, unsigned long long id, char **errstr);
	/* Who holds name: IS_USED_LOCK, its running run record, the
	 * process list.  Fills *h (free with lock_holder_free). */
	enum db_status (*holder)(
	    void *conn, const char *name, struct lock_holder *h, char **errstr);
	/* INSERT a run record, outcome "running"; *id its id. */
	enum db_status (*run_start)(void *conn, const struct run_start_info *,
	    unsigned long long *id, char **errstr);
	/* heartbeat_at = NOW(6) */
	enum db_status (*run_heartbeat)(
	    void *conn, unsigned long long id, char **errstr);
	/* finished_at = NOW(6), outcome, exit_status (-1: NULL), error,
	 * output and output_bytes (output NULL: not captured, both NULL). */
	enum db_status (*run_finish)(void *conn, unsigned long long id,
	    const char *outcome, int exit_status, const char *error,
	    const struct run_output *output, char **errstr);
	/* The session's connection id as the client knows it (no query). */
	unsigned long long (*connection_id)(void *conn);
	/* The session's socket, polled while the job runs (lock_watch_fd);
	 * NULL in a fake, or -1: nothing to watch. */
	int (*socket)(void *conn);
	/* KILL QUERY id: stop a statement, keep the session. */
	enum db_status (*kill_query)(
	    void *conn, unsigned long long id, char **errstr);
	/* An SQL job: run sql, discarding any result. */
	enum db_status (*exec_sql)(void *conn, const char *sql, char **errstr);
	/* The lease and the fencing token, as in lease.h.  A fake that
	 * tests only the named lock leaves them NULL (no fence then). */
	enum lease_status (*lease_acquire)(void *conn, const char *name,
	    const char *token, const char *host, long long pid,
	    unsigned long long lease_us, unsigned long long *fence,
	    char **errstr);
	enum lease_status (*lease_extend)(void *conn, const char *name,
	    const char *token, unsigned long long lease_us, char **errstr);
	enum lease_status (*lease_release)(
	    void *conn, const char *name, const char *token, char **errstr);
	enum lease_status (*lease_holder)(void *conn, const char *name,
	    struct lease_holder *h, char **errstr);
	enum lease_status (*fence_next)(void *conn, const char *name,
	    unsigned long long *fence, char **errstr);
	/* keep_runs: delete job's runs beyond the newest keep (runs_prune);
	 * *n how many.  NULL in a fake: nothing is pruned. */
	enum db_status (*run_prune)(void *conn, const char *job, unsigned keep,
	    unsigned long long *n, char **errstr);
	/* once_per: the current slot of job and its success (runs_slot). */
	enum db_status (*run_slot)(void *conn, const char *job,
	    int64_t once_per_ms, const char *tz, struct run_slot *,
	    char **errstr);
	/* schedule: the database clock, the job's latest successful slot,
	 * its first run, the pause in effect and the server's time zone,
	 * in one statement (runs_slot_state).  NULL in a fake: the guard
	 * refuses a schedule. */
	enum db_status (*slot_state)(
	    void *conn, const char *job, struct slot_state *, char **errstr);
};

/* The implementation over db.h; ctx is a const struct conf_database *. */
extern const struct lock_db_ops lock_db_real;

enum lock_result {
	LOCK_OK = 0,        /* acquired; or released cleanly */
	LOCK_BUSY,          /* another session holds it */
	LOCK_ERR_DB,        /* connect or query failed: exit 69 */
	LOCK_ERR_NULL,      /* GET_LOCK returned NULL: exit 69 */
	LOCK_ERR_GALERA,    /* @@wsrep_on: not cluster-wide, exit 78 */
	LOCK_ERR_VALUE,     /* a value that is not "0"/"1"/NULL: exit 70 */
	LOCK_INCIDENT,      /* cleanup failed or lock lost: exit 76 */
	LOCK_ERR_PRIVILEGE, /* a statement refused for a privilege: 77 */
	LOCK_ERR_SCHEMA,    /* a cronguard table or column unknown: 78 */
	LOCK_SLOT_DONE,     /* lock_run_start: the slot succeeded meanwhile */
};

/* LOCK_ERR_DB for a failed statement, or the refusals that have exit
 * codes of their own (DB_ERR_PRIVILEGE, DB_ERR_SCHEMA). */
enum lock_result lock_result_of_db(enum db_status);

/* One guarded run: the session, the lock and the run record. */
struct lock {
	const struct lock_db_ops *ops;
	void                     *ctx;
	void                     *conn; /* the lock session; NULL when none */
	const char               *job;
	const char               *name; /* lock name; NULL: run records only */
	unsigned long long        connection_id;
	int64_t wait_timeout_ms;      /* the session's idle limit; 0 unknown */
	unsigned long long run_id;    /* 0: no run record */
	int                held;      /* GET_LOCK returned "1" */
	int                dead;      /* the session is known to be gone */
	int                lost;      /* lock_lost was reported */
	int                incidents; /* incidents reported for this run */
	unsigned long long fence;     /* the fencing token; 0 none */
	unsigned long long lease_us;  /* a lease, this long; 0 GET_LOCK */
	char               token[LEASE_TOKEN_SIZE]; /* the lease's owner */
	unsigned keep_runs; /* runs of job kept after the run; 0 all */
	/* The run's slot (run_start_info), and as the job sees it in
	 * CRONGUARD_SLOT (RFC 3339 in the job's zone); NULL: none. */
	const char *slot;
	const char *slot_prev; /* the schedule's slot before it, UTC; NULL */
	const char *slot_kind;
	const char *slot_text;
	/* The heartbeat found the server read-only (a demotion): lost, and
	 * nothing more is written there (no run record end, no lease
	 * release: it expires by itself). */
	int read_only;
	/* The run record could not be finished (run_record_failed). */
	int record_failed;
};

/* Set up l; nothing is connected yet.  job and name are borrowed. */
void lock_init(struct lock *l, const struct lock_db_ops *ops, void *ctx,
    const char *job, const char *name);

/* Guard with a lease of lease_us (lease.h) instead of GET_LOCK: acquire,
 * heartbeat and release then take, extend and give back the lease row,
 * and a lost lease is reported as lease_lost.  Before lock_acquire. */
void lock_use_lease(struct lock *l, unsigned long long lease_us);

/* Give back a lock taken for a run that did not start (the slot turned
 * out done): RELEASE_LOCK or the lease's release, checked as after a
 * run, then close the session.  LOCK_OK or LOCK_INCIDENT. */
enum lock_result lock_give_back(struct lock *l);

/* Open the session.  LOCK_OK or LOCK_ERR_DB with *errstr. */
enum lock_result lock_open(struct lock *l, char **errstr);

/*
 * Try GET_LOCK(name, 0) once (or the lease, see lock_use_lease); when it
 * is held, take the next fencing token into l->fence.  LOCK_OK: held.
 * LOCK_BUSY: *holder filled (lock_holder_free).  LOCK_ERR_NULL,
 * LOCK_ERR_GALERA, LOCK_ERR_VALUE, LOCK_ERR_DB: *errstr says why; the session
 * is then closed (a lock taken on a Galera node is given back by closing it).
 */
enum lock_result lock_acquire(
    struct lock *l, struct lock_holder *holder, char **errstr);

/*
 * Decide about a busy lock: 1 when the holder looks stuck (its run record
 * is older than max_runtime + grace, or no run record accounts for it and
 * its session has been idle or busy longer than grace), 0 when it looks
 * like a live run that we should skip.  *why is an allocated description
 * of the holder for the log either way.
 */
int  lock_holder_stuck(const struct lock_holder *, int64_t max_runtime_ms,
     int64_t grace_ms, char **why);
void lock_holder_free(struct lock_holder *);
/* Who holds the lock name now: IS_USED_LOCK, its running run record, the
 * process list (the real ops' holder).  Fills *h (lock_holder_free). */
enum db_status lock_holder_get(
    struct db *, const char *name, struct lock_holder *h, char **errstr);
/* lock_holder_get for names[0..n) into h[0..n) (lock_holder_free each), in
 * one statement. */
enum db_status lock_holders_get(struct db *, const char *const *names, size_t n,
    struct lock_holder *h, char **errstr);
/* Who holds the lease name now (guard "lease"): its row, and the running
 * run with the lease's fencing token.  connection_id 0 = free or
 * expired.  Fills *h (lock_holder_free). */
enum db_status lock_lease_holder_get(
    struct db *, const char *name, struct lock_holder *h, char **errstr);

/* Report an incident of l's run (incident_report with the job, lock, run
 * and connection) and count it in l->incidents. */
void lock_incident(struct lock *l, const char *event, const char *detail);

/*
 * Heartbeat: IS_USED_LOCK(name) must still be our connection id (a query
 * also keeps the session from idling into wait_timeout), then the run
 * record's heartbeat_at.  Returns LOCK_OK, or LOCK_INCIDENT after
 * reporting lock_lost once.
 */
enum lock_result lock_heartbeat(struct lock *l);

/*
 * How often to heartbeat l: every heartbeat_ms (0: never), but at least
 * three times within the session's wait_timeout read at acquire time,
 * whatever heartbeat_ms says: the server closes a session idle that long,
 * and the named lock goes with it.  Returns 0 for no heartbeat.
 */
int64_t lock_heartbeat_interval(const struct lock *l, int64_t heartbeat_ms);

/* An SQL job on the lock's own session: 0 ok, -1 with *errstr.  A lost
 * session is reported as lock_lost. */
int lock_exec_sql(struct lock *l, const char *sql, char **errstr);

/* Insert the run record of l's run (l->run_id), uuid its run_uuid (NULL:
 * none).  LOCK_OK or LOCK_ERR_DB with *errstr. */
enum lock_result lock_run_start(struct lock *l, const char *host, long pid,
    const char *uuid, char **errstr);

/*
 * Finish the run record of l's run with the job's end; with incident set
 * the outcome is lock_lost (l->lost) or incident, and the error says to
 * look at the log.  Written on the lock session when it is usable, else
 * on a fresh one, and when that write fails for any reason, once more on
 * a fresh one: a failed write must not lose the job's result (the record
 * would be closed as abandoned).  A write that needed the retry is the
 * incident run_record_retried, one that failed both times
 * run_record_failed; the detail ends with jobtext.
 */
void lock_run_end(struct lock *l, const struct run_end *end, int incident,
    const char *jobtext);

/*
 * End the run: RELEASE_LOCK checked exactly ("1" fine; "0"/NULL: incident
 * lock_release_unexpected); when the release query fails, the session is
 * destroyed (session_destroy_failed if that fails), a fresh session checks
 * IS_USED_LOCK(name) against the old connection id and KILLs it if it
 * still holds the lock (lock_verify_failed if any of that fails).  Then
 * the run record is finished with the job's own exit status and error
 * (run_record_failed if that fails).  Every failure goes through
 * incident_report() and names the job's status.  Returns LOCK_OK, or
 * LOCK_INCIDENT when any lock incident happened during the run.  The
 * session is closed afterwards.
 */
enum lock_result lock_finish(struct lock *l, const struct run_end *end);

/*
 * While the job runs no statement is in flight on the lock session, so
 * anything the socket says (data, end of file, an error) means the server
 * is closing the session, and the lock goes with it: the guard polls
 * lock_watch_fd (-1: nothing to watch, as for a lease, whose row outlives
 * its session) and calls lock_session_closed when it fires, which marks
 * the session dead and reports lock_lost.
 */
int  lock_watch_fd(const struct lock *l);
void lock_session_closed(struct lock *l);

/* Close whatever is open, without releasing (closing gives the lock
 * back). */
void lock_close(struct lock *l);

#endif
