/* guard.c: one launch of a job: the local flock (guard-local.c), the
 * database lock or lease, once_per, the run record, the job itself
 * (guard-child.c) and, for a schedule, each planned slot (guard-plan.c);
 * doc/architecture.md, "The guard engine". */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "duration.h"
#include "exitcode.h"
#include "guard-int.h"
#include "lock.h"
#include "log.h"
#include "output.h"
#include "ping.h"
#include "runs.h"
#include "schedule.h"
#include "util.h"

/* The guards that take a lock in the database. */
int
guard_in_db(enum guard_kind k)
{
	return k == GUARD_NAMED_LOCK || k == GUARD_LEASE || k == GUARD_AUTO;
}

/* A busy lock: skip, or 75 when the holder looks stuck. */
static int
guard_busy(const struct guard_job *gj, const struct lock_holder *h)
{
	char *why = NULL;
	char  busy[16];
	int   code;

	if (lock_holder_stuck(h, gj->max_runtime_ms, gj->grace_ms, &why)) {
		log_kv(LOG_ERROR, "lock_busy_stuck", "job", gj->job, "lock",
		    gj->lock, "holder", why);
		code = EXIT_TEMPFAIL;
	} else {
		snprintf(busy, sizeof busy, "%d", gj->busy_exit);
		log_kv(LOG_INFO, "job_skipped", "job", gj->job, "lock",
		    gj->lock, "holder", why, "exit", busy);
		code = gj->busy_exit;
	}
	free(why);
	return code;
}

static unsigned long long
guard_lease_us(const struct guard_job *gj)
{
	return (unsigned long long)gj->lease_ms * 1000;
}

/* Try the database lock; a holder that is gone by the time we look:
 * try once more. */
static enum lock_result
guard_try(struct lock *l, struct lock_holder *h, char **errstr)
{
	enum lock_result lr = LOCK_ERR_DB;
	int              attempt;

	for (attempt = 0; attempt < 2; attempt++) {
		lock_holder_free(h);
		lr = lock_acquire(l, h, errstr);
		if (lr != LOCK_BUSY || h->connection_id != 0)
			break;
	}
	return lr;
}

/*
 * Take the database lock: the named lock, or the lease.  With guard
 * "auto", a Galera node (where GET_LOCK is local to the node) means the
 * lease instead, on a new session (closing the old one gave back the
 * node-local lock).
 */
static enum lock_result
guard_acquire(const struct guard_job *gj, struct lock *l, struct lock_holder *h,
    char **errstr)
{
	enum lock_result lr;

	if (gj->guard == GUARD_LEASE)
		lock_use_lease(l, guard_lease_us(gj));
	lr = guard_try(l, h, errstr);
	if (lr != LOCK_ERR_GALERA || gj->guard != GUARD_AUTO)
		return lr;
	log_kv(LOG_INFO, "guard_lease_on_galera", "job", gj->job, "lock",
	    gj->lock);
	free(*errstr);
	*errstr = NULL;
	if ((lr = lock_open(l, errstr)) != LOCK_OK)
		return lr;
	lock_use_lease(l, guard_lease_us(gj));
	return guard_try(l, h, errstr);
}

/*
 * once_per, inside the lock: whether a successful run of the job already
 * started in the current slot, by the database clock, so that hosts with
 * skewed clocks agree.  Returns -1 to go on and run, else the exit code
 * (0 or busy_exit when done, 78 for a time zone the server does not
 * know, 69 when the database cannot say).
 */
static int
guard_once_per(const struct guard_job *gj, struct lock *l)
{
	struct run_slot rs;
	char           *errstr = NULL, id[32], busy[16], per[32];
	const char     *tz = gj->timezone != NULL ? gj->timezone : "SYSTEM";
	int             code = -1;

	if (l->ops->run_slot(l->conn, gj->job, gj->once_per_ms, gj->timezone,
	        &rs, &errstr) != DB_OK) {
		log_kv(LOG_ERROR, "db_unavailable", "job", gj->job, "error",
		    errstr);
		code = EXIT_UNAVAILABLE;
		goto out;
	}
	if (rs.tz_unknown) {
		log_kv(LOG_ERROR, "config_error", "job", gj->job, "key",
		    "timezone", "timezone", tz, "msg",
		    rs.tz_tables
		        ? "the database server does not know this time zone"
		        : "the database server has no time-zone tables: load them with mariadb-tzinfo-to-sql /usr/share/zoneinfo | mariadb mysql");
		code = EXIT_CONFIG;
		goto out;
	}
	if (rs.done_id == 0)
		goto out;
	snprintf(id, sizeof id, "%llu", rs.done_id);
	snprintf(busy, sizeof busy, "%d", gj->busy_exit);
	duration_format(gj->once_per_ms, per, sizeof per);
	log_kv(LOG_INFO, "job_already_done", "job", gj->job, "run_id", id,
	    "once_per", per, "slot", rs.start, "exit", busy);
	code = gj->busy_exit;
out:
	runs_slot_free(&rs);
	free(errstr);
	return code;
}

/* Ping gj's ping URL, if any; the fail ping carries the output's tail
 * (out NULL: not captured, a GET).  A failure is logged, nothing else:
 * the ping never changes the run's exit status. */
static void
guard_ping(const struct guard_job *gj, enum ping_kind kind, const char *rid,
    struct output *out)
{
	static const char *const names[] = { "start", "success", "fail" };
	const char              *body = NULL;
	char                    *errstr = NULL;
	size_t                   len = 0;

	if (gj->ping_url == NULL)
		return;
	if (kind == PING_FAIL && out != NULL &&
	    (body = output_tail(out, &len)) == NULL)
		body = "";
	if (ping_send(gj->ping_url, kind, rid, body, len, &errstr) != 0)
		log_kv(LOG_WARN, "ping_failed", "job", gj->job, "ping",
		    names[kind], "rid", rid, "error", errstr);
	free(errstr);
}

/* A signal came after the run record was written but before the job
 * started: the job is not started, and the record says why. */
static int
guard_cancelled(const struct guard_job *gj, int sig, struct run_end *end,
    char *errbuf, size_t errlen)
{
	snprintf(errbuf, errlen, "terminated by %s before the job started",
	    signal_name(sig));
	log_kv(LOG_WARN, "job_cancelled", "job", gj->job, "signal",
	    signal_name(sig), "msg", errbuf);
	end->outcome = "error";
	end->exit_status = -1;
	end->error = errbuf;
	return 128 + sig;
}

void
guard_job_from_conf(
    struct guard_job *gj, const struct conf *c, const struct conf_job *j)
{
	memset(gj, 0, sizeof *gj);
	gj->job = j->name;
	gj->argv = j->command;
	gj->sql = j->sql;
	gj->guard = j->guard;
	gj->lock = j->lock;
	gj->runtime_dir = c->runtime_dir;
	gj->max_runtime_ms = j->max_runtime_ms;
	gj->grace_ms = j->grace_ms;
	gj->timeout_ms = j->timeout_ms;
	gj->heartbeat_ms = j->heartbeat_ms;
	gj->lease_ms = j->lease_ms;
	gj->kill_after_ms = GUARD_KILL_AFTER_MS;
	gj->on_lock_lost = j->on_lock_lost;
	gj->busy_exit = j->busy_exit;
	gj->once_per_ms = j->once_per_ms;
	gj->timezone = j->timezone;
	gj->keep_runs = j->keep_runs;
	gj->output = j->output;
	gj->output_max = (size_t)j->output_max;
	gj->ping_url = j->ping_url;
	gj->schedule = j->schedule;
	gj->catch_up = j->catch_up;
	gj->backfill_limit = j->backfill_limit;
	gj->starting_deadline_ms = j->starting_deadline_ms;
	gj->pausable = 1;
}

void
guard_result_free(struct guard_result *res)
{
	output_free(&res->output);
	memset(res, 0, sizeof *res);
}

/* Take the database lock when the guard has one: 0 when held (or there
 * is none to take), else -1 with *code the exit (busy, or it failed). */
static int
guard_take_lock(const struct guard_job *gj, struct lock *l,
    struct lock_holder *h, int *code, char **errstr)
{
	enum lock_result lr;

	if (!guard_in_db(gj->guard))
		return 0;
	lr = guard_acquire(gj, l, h, errstr);
	if (lr == LOCK_BUSY) {
		*code = guard_busy(gj, h);
		return -1;
	}
	if (lr != LOCK_OK) {
		log_kv(LOG_ERROR,
		    lr == LOCK_ERR_GALERA ? "galera_refused" : "lock_failed",
		    "job", gj->job, "lock", gj->lock, "error", *errstr);
		*code = exitcode_lock(lr);
		return -1;
	}
	return 0;
}

/* The job, its run record started (dbl NULL: no database): the start
 * ping, the command (its output into outp) or the statement, the
 * record's end, and the end ping once the signals are restored.
 * Returns the exit code. */
static int
guard_run_recorded(const struct guard_job *gj, struct lock *l, struct lock *dbl,
    const char *rid, struct output *outp, int *signals)
{
	struct run_end    end;
	struct run_output ro;
	char              errbuf[512], status[16];
	int               code, sig;

	memset(&end, 0, sizeof end);
	guard_ping(gj, PING_START, rid, NULL);
	if ((sig = guard_signals_take()) != 0)
		code = guard_cancelled(gj, sig, &end, errbuf, sizeof errbuf);
	else if (gj->argv != NULL)
		code =
		    guard_command(gj, dbl, outp, &end, errbuf, sizeof errbuf);
	else
		code = guard_sql(gj, dbl, &end, errbuf, sizeof errbuf);
	if (outp != NULL) {
		ro.data = output_tail(outp, &ro.len);
		ro.total = outp->total;
		end.output = &ro;
	}
	if (code != 0 && end.exit_status > 0 && code != EXIT_NOEXEC &&
	    code != EXIT_NOTFOUND) {
		snprintf(status, sizeof status, "%d", end.exit_status);
		log_kv(LOG_WARN, "job_failed", "job", gj->job, "outcome",
		    end.outcome, "status", status);
	}
	if (dbl != NULL && lock_finish(l, &end) != LOCK_OK)
		code = EXIT_PROTOCOL;
	else
		log_kv(LOG_INFO, "job_finished", "job", gj->job, "outcome",
		    end.outcome, "slot", l->slot_text);
	guard_signals_done(gj, signals);
	/* After the release: a slow ping server does not hold the lock. */
	guard_ping(gj, code == 0 ? PING_SUCCESS : PING_FAIL, rid, outp);
	return code;
}

/*
 * One run under the lock session l (open): take the database lock, look
 * at once_per, write the run record (for l->slot: only when the slot has
 * no success yet), run the job, release and finish.  *done is set when
 * nothing ran because the slot or period was done meanwhile.  Returns
 * the exit code and in *state what happened; l is closed.
 */
enum guard_once_state {
	GUARD_RAN,     /* the job ran */
	GUARD_DONE,    /* its slot or period was done: nothing to run */
	GUARD_NOT_RUN, /* busy, or it could not start */
};

static int
guard_once(const struct guard_job *gj, struct lock *l, struct guard_result *res,
    enum guard_once_state *state)
{
	/* Without a database there is no session, lock or record. */
	struct lock       *dbl = l->ops != NULL ? l : NULL;
	struct lock_holder h;
	struct output      out, *outp = NULL;
	enum lock_result   lr;
	char              *errstr = NULL, rid[37];
	int                code, signals = 0;

	memset(&h, 0, sizeof h);
	memset(&out, 0, sizeof out);
	*state = GUARD_NOT_RUN;
	/* SQL jobs print nothing: there is no output to capture. */
	if (gj->argv != NULL && gj->output != OUTPUT_INHERIT) {
		output_init(&out,
		    gj->output_max > 0 ? gj->output_max : OUTPUT_MAX_DEFAULT);
		outp = &out;
	}
	uuid_v4(rid);
	if (guard_take_lock(gj, l, &h, &code, &errstr) != 0)
		goto out;
	if (dbl != NULL && gj->once_per_ms > 0 &&
	    (code = guard_once_per(gj, l)) != -1) {
		*state = GUARD_DONE;
		goto give_back;
	}
	if (guard_signals_install(&errstr) != 0) {
		log_kv(LOG_ERROR, "internal_error", "job", gj->job, "error",
		    errstr);
		code = EXIT_SOFTWARE;
		goto out;
	}
	signals = 1;
	if (dbl != NULL &&
	    (lr = lock_run_start(l, self_hostname(), (long)getpid(), rid,
	         &errstr)) != LOCK_OK) {
		if (lr == LOCK_SLOT_DONE) {
			log_kv(LOG_INFO, "job_already_done", "job", gj->job,
			    "slot", l->slot_text, "msg",
			    "another host finished the slot meanwhile");
			*state = GUARD_DONE;
			code = EXIT_OK;
			goto give_back;
		}
		log_kv(LOG_ERROR, "db_unavailable", "job", gj->job, "error",
		    errstr);
		code = exitcode_lock(lr);
		goto out;
	}

	*state = GUARD_RAN;
	code = guard_run_recorded(gj, l, dbl, rid, outp, &signals);
	if (res != NULL) {
		guard_result_free(res);
		res->ran = 1;
		res->failed = code != 0;
		if (outp != NULL) {
			res->captured = 1;
			res->output = out;
			memset(&out, 0, sizeof out);
		}
	}
	goto out;

give_back:
	/* Nothing ran: hand the lock or lease back at once, so that the
	 * next period's launch on another host is not kept waiting. */
	if (lock_give_back(l) != LOCK_OK)
		code = EXIT_PROTOCOL;
out:
	guard_signals_done(gj, &signals);
	output_free(&out);
	lock_holder_free(&h);
	lock_close(l);
	free(errstr);
	return code;
}

/*
 * A job with a schedule: one statement on the lock session l (open) for
 * the clock, the pause and the last success, then each planned slot as
 * its own run (its own session, lock and record), oldest first, stopping
 * at the first that does not succeed.  Returns the exit code of the last
 * run, or of the skip; l is closed.
 */
static int
guard_scheduled(
    const struct guard_job *gj, struct lock *l, struct guard_result *res)
{
	struct slot_state     st;
	struct tzone         *z = NULL;
	struct guard_slot    *plan = NULL;
	int64_t               prev;
	char                  utc[32], before[32], text[TZONE_RFC3339_MAX];
	char                 *errstr = NULL;
	size_t                n = 0, i;
	enum guard_once_state state;
	enum db_status        dst;
	int                   code;

	memset(&st, 0, sizeof st);
	if (l->ops->slot_state == NULL) {
		log_kv(LOG_ERROR, "config_error", "job", gj->job, "msg",
		    "a schedule needs the run records");
		code = EXIT_CONFIG;
		goto out;
	}
	if ((dst = l->ops->slot_state(l->conn, gj->job, &st, &errstr)) !=
	    DB_OK) {
		log_kv(LOG_ERROR, "db_unavailable", "job", gj->job, "error",
		    errstr);
		code = exitcode_db(dst);
		goto out;
	}
	if (st.pause_job != NULL && gj->slot_arg == NULL) {
		guard_paused(gj, &st);
		code = EXIT_OK;
		goto out;
	}
	if (guard_zone(gj, &st, &z) != 0) {
		code = EXIT_CONFIG;
		goto out;
	}
	plan = xcalloc(
	    gj->backfill_limit > 0 ? gj->backfill_limit : 1, sizeof *plan);
	if ((code = guard_plan(gj, &st, z, plan, &n)) != -1)
		goto out;
	for (i = 0; i < n; i++) {
		tzone_utc(plan[i].t, utc, sizeof utc);
		/* The slot before, for the record's flags (sql/016). */
		l->slot_prev =
		    schedule_prev(gj->schedule, z, plan[i].t - 1, &prev) == 0
		    ? tzone_utc(prev, before, sizeof before)
		    : NULL;
		tzone_format(z, plan[i].t, text, sizeof text);
		l->slot = utc;
		l->slot_kind = plan[i].kind;
		l->slot_text = text;
		if (l->conn == NULL && lock_open(l, &errstr) != LOCK_OK) {
			log_kv(LOG_ERROR, "db_unavailable", "job", gj->job,
			    "error", errstr);
			code = EXIT_UNAVAILABLE;
			goto out;
		}
		code = guard_once(gj, l, res, &state);
		if (state == GUARD_NOT_RUN || (state == GUARD_RAN && code != 0))
			break;
	}
out:
	l->slot = l->slot_prev = l->slot_kind = l->slot_text = NULL;
	lock_close(l);
	runs_slot_state_free(&st);
	tzone_free(z);
	free(plan);
	free(errstr);
	return code;
}

/*
 * A job without a schedule on the lock session l (open): one statement for
 * the pause in effect (cronguard(1), jobs pause), before its lock is
 * taken.  -1 to run it, else the exit code (0: paused, skipped).
 */
static int
guard_unscheduled_paused(const struct guard_job *gj, struct lock *l)
{
	struct slot_state st;
	char             *errstr = NULL;
	enum db_status    dst;
	int               code = -1;

	if (l->ops->slot_state == NULL)
		return -1;
	if ((dst = l->ops->slot_state(l->conn, gj->job, &st, &errstr)) !=
	    DB_OK) {
		log_kv(LOG_ERROR, "db_unavailable", "job", gj->job, "error",
		    errstr);
		code = exitcode_db(dst);
	} else if (st.pause_job != NULL) {
		guard_paused(gj, &st);
		code = EXIT_OK;
	}
	runs_slot_state_free(&st);
	free(errstr);
	return code;
}

int
guard_run(const struct guard_job *gj, const struct lock_db_ops *ops, void *ctx,
    struct guard_result *res)
{
	struct lock           lk, *l = NULL;
	struct guard_result   scratch;
	enum lock_result      lr;
	char                 *path = NULL, *errstr = NULL;
	struct local_holder   lh;
	enum local_status     ls;
	enum guard_once_state state;
	int                   fd = -1, code;

	memset(&scratch, 0, sizeof scratch);
	if (res != NULL)
		memset(res, 0, sizeof *res);
	else
		res = &scratch;
	if (guard_in_db(gj->guard) && ops == NULL) {
		log_kv(LOG_ERROR, "config_error", "job", gj->job, "msg",
		    "the database lock needs a database");
		return EXIT_CONFIG;
	}
	if (gj->schedule != NULL && ops == NULL) {
		log_kv(LOG_ERROR, "config_error", "job", gj->job, "msg",
		    "a schedule needs a database (the run records)");
		return EXIT_CONFIG;
	}
	if (gj->argv == NULL && ops == NULL) {
		log_kv(LOG_ERROR, "config_error", "job", gj->job, "msg",
		    "an sql job needs a database");
		return EXIT_CONFIG;
	}
	if (gj->guard != GUARD_NONE) {
		ls = local_take(gj, &fd, &lh, &path, &errstr);
		if (ls == LOCAL_BUSY) {
			code = guard_local_busy(gj, path, &lh);
			goto out;
		}
		if (ls != LOCAL_OK) {
			log_kv(LOG_ERROR, "local_lock_failed", "job", gj->job,
			    "error", errstr);
			code = ls == LOCAL_ERR_CONFIG ? EXIT_CONFIG
			                              : EXIT_SOFTWARE;
			goto out;
		}
	}

	l = &lk;
	lock_init(
	    l, ops, ctx, gj->job, guard_in_db(gj->guard) ? gj->lock : NULL);
	l->keep_runs = gj->keep_runs;
	if (ops != NULL && (lr = lock_open(l, &errstr)) != LOCK_OK) {
		log_kv(LOG_ERROR, "db_unavailable", "job", gj->job, "error",
		    errstr);
		code = exitcode_lock(lr);
		goto out;
	}
	if (gj->schedule != NULL)
		code = guard_scheduled(gj, l, res);
	else if (ops != NULL && gj->pausable &&
	    (code = guard_unscheduled_paused(gj, l)) != -1)
		lock_close(l);
	else if (ops != NULL && gj->once_per_ms > 0 &&
	    (code = guard_once_per(gj, l)) != -1)
		/* Done: looked at before the lock, so that a no-op launch
		 * takes no lock and no fencing token. */
		lock_close(l);
	else
		code = guard_once(gj, l, res, &state);

out:
	guard_result_free(&scratch);
	if (fd >= 0)
		close(fd);
	free(path);
	free(errstr);
	return code;
}
