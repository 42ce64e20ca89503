/* guard-child.c: the job itself: a command's process tree under its reaper,
 * its signals, output, heartbeat and timeout; or an SQL statement and the
 * watchdog that stops it (doc/architecture.md, "The guard engine"). */
#include "config.h"

#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "duration.h"
#include "exitcode.h"
#include "guard-int.h"
#include "lock.h"
#include "log.h"
#include "output.h"
#include "reaper.h"
#include "util.h"

/* Signals that cronguard forwards to the job's process group. */
static const int guard_forward[] = { SIGTERM, SIGINT, SIGHUP };

/* Self-pipe: signal handlers write the signal number, the loop polls. */
static int guard_sigpipe[2] = { -1, -1 };

/* The signal mask from before guard_signals_install, while it is changed. */
static sigset_t guard_oldmask;
static int      guard_masked;

/* The running child, its process group and how it ended. */
struct child {
	struct reaper reaper; /* the job's tree ends with it */
	pid_t         pid;    /* the job: its pid and process group */
	int           exited;
	int           status;     /* waitpid status */
	int           exec_errno; /* exec failed in the child */
	int           forwarded;  /* a signal was forwarded */
	int           timed_out;
	int           terminating; /* SIGTERM sent by us */
	int64_t       kill_at;     /* SIGKILL then; 0 none */
	int           outfd;       /* read end of the job's stdout and stderr;
	                            * -1 when not captured or at its end */
	struct output *out;        /* where that goes */
};

/* After the job has exited, its output still in the pipe is read for at
 * most this long: a process it left behind may hold the pipe open and
 * keep writing. */
#define GUARD_DRAIN_MS 100

static void
guard_sighandler(int sig)
{
	unsigned char c = (unsigned char)sig;
	int           saved = errno;

	(void)!write(guard_sigpipe[1], &c, 1);
	errno = saved;
}

/*
 * The handlers, installed before the run's first database write and kept
 * until its record is finished, so that no signal in between kills
 * cronguard by its default action (a run left "running", closed later as
 * abandoned, and a once_per job run twice).  The forwarded signals stay
 * blocked except while the job runs: a signal that interrupts a database
 * read in this thread would cost the lock session.  One that arrives
 * while blocked waits, and is taken at the next guard_signals_take.
 */
int
guard_signals_install(char **errstr)
{
	struct sigaction sa;
	sigset_t         set;
	size_t           i;

	if (pipe2(guard_sigpipe, O_CLOEXEC | O_NONBLOCK) != 0) {
		*errstr = xasprintf("pipe: %s", strerror(errno));
		return -1;
	}
	sigemptyset(&set);
	for (i = 0; i < nitems(guard_forward); i++)
		sigaddset(&set, guard_forward[i]);
	if (sigprocmask(SIG_BLOCK, &set, &guard_oldmask) == 0)
		guard_masked = 1;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = guard_sighandler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
	sa.sa_flags = 0;
	for (i = 0; i < nitems(guard_forward); i++)
		sigaction(guard_forward[i], &sa, NULL);
	return 0;
}

/*
 * Unblock the forwarded signals and SIGCHLD (open 1) while the job runs,
 * or block the forwarded ones again (open 0).  A mask inherited from the
 * parent (it survives exec) would otherwise keep SIGCHLD from ever waking
 * the loop, and SIGTERM from ever reaching the job.
 */
static void
guard_signals_open(int open)
{
	sigset_t set;
	size_t   i;

	sigemptyset(&set);
	for (i = 0; i < nitems(guard_forward); i++)
		sigaddset(&set, guard_forward[i]);
	if (open)
		sigaddset(&set, SIGCHLD);
	sigprocmask(open ? SIG_UNBLOCK : SIG_BLOCK, &set, NULL);
}

/* The first forwarded signal that arrived while they were blocked (it is
 * delivered to the handler now), or 0; SIGCHLD is skipped. */
int
guard_signals_take(void)
{
	unsigned char buf[64];
	ssize_t       n, i;
	int           sig = 0;

	if (guard_sigpipe[0] == -1)
		return 0;
	guard_signals_open(1);
	guard_signals_open(0);
	while ((n = read(guard_sigpipe[0], buf, sizeof buf)) > 0) {
		for (i = 0; i < n; i++) {
			if (buf[i] != SIGCHLD && sig == 0)
				sig = buf[i];
		}
	}
	return sig;
}

/* Back to the old mask and the default handlers.  The old mask is set
 * while the handlers are still ours, so that a signal still pending goes
 * to the pipe (lost with it: the caller took what it needed), not to the
 * default action. */
static void
guard_signals_restore(void)
{
	struct sigaction sa;
	size_t           i;

	if (guard_masked) {
		sigprocmask(SIG_SETMASK, &guard_oldmask, NULL);
		guard_masked = 0;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	for (i = 0; i < nitems(guard_forward); i++)
		sigaction(guard_forward[i], &sa, NULL);
	if (guard_sigpipe[0] != -1)
		close(guard_sigpipe[0]);
	if (guard_sigpipe[1] != -1)
		close(guard_sigpipe[1]);
	guard_sigpipe[0] = guard_sigpipe[1] = -1;
}

/* Start the job under its reaper (reaper.h), its output into a pipe when
 * ch->out is set (ch->outfd its read end, non-blocking); returns 0
 * (ch->pid set, or ch->exec_errno when exec failed) or -1 with *errstr. */
static int
guard_spawn(const struct guard_job *gj, struct child *ch, char **errstr)
{
	int o[2] = { -1, -1 }, rc;

	ch->outfd = -1;
	if (ch->out != NULL && pipe2(o, O_CLOEXEC) != 0) {
		*errstr = xasprintf("pipe: %s", strerror(errno));
		return -1;
	}
	rc = reaper_spawn(
	    gj->argv, o[1], gj->kill_after_ms, &ch->reaper, errstr);
	if (o[0] != -1) {
		close(o[1]);
		if (rc == 0) {
			(void)fcntl(o[0], F_SETFL, O_NONBLOCK);
			ch->outfd = o[0];
		} else
			close(o[0]);
	}
	if (rc != 0)
		return -1;
	ch->pid = ch->reaper.job;
	ch->exec_errno = ch->reaper.exec_errno;
	return 0;
}

static void
guard_terminate(const struct guard_job *gj, struct child *ch)
{
	if (ch->terminating || ch->exited)
		return;
	ch->terminating = 1;
	kill(-ch->pid, SIGTERM);
	ch->kill_at = now_mono_ms() + gj->kill_after_ms;
}

/* The job has ended when its reaper has: then no process of it is left
 * (reaper.h).  wait 1: block until then. */
static void
guard_reap(const struct guard_job *gj, struct child *ch, int wait)
{
	pid_t r;
	int   rs;

	if (ch->exited)
		return;
	do
		r = waitpid(ch->reaper.pid, &rs, wait ? 0 : WNOHANG);
	while (r == -1 && errno == EINTR);
	if (r != ch->reaper.pid)
		return;
	ch->exited = 1;
	if (reaper_done(&ch->reaper, rs) != 0)
		log_kv(LOG_ERROR, "job_reaper_died", "job", gj->job, "msg",
		    "the job's reaper died: the job was killed");
	else if (ch->reaper.leftovers)
		log_kv(LOG_WARN, "job_leftovers_killed", "job", gj->job, "msg",
		    "the job exited and left processes behind: they were "
		    "killed before the lock was given up");
	ch->status = ch->reaper.status;
}

/* Handle what the signal handlers wrote. */
static void
guard_drain_signals(struct child *ch)
{
	unsigned char buf[64];
	ssize_t       n, i;
	char          name[16];

	while ((n = read(guard_sigpipe[0], buf, sizeof buf)) > 0) {
		for (i = 0; i < n; i++) {
			if (buf[i] == SIGCHLD || ch->exited)
				continue;
			snprintf(name, sizeof name, "%d", buf[i]);
			log_kv(LOG_INFO, "signal_forwarded", "signal", name);
			ch->forwarded = 1;
			kill(-ch->pid, buf[i]);
		}
	}
}

/* Read what the job wrote until EAGAIN or the pipe's end (then closed),
 * but stop after the first read when until is 0, so that a job printing
 * without pause cannot keep the wait loop from its heartbeat and timeout,
 * else at until (now_mono_ms). */
static void
guard_read_output(struct child *ch, int64_t until)
{
	char    buf[65536];
	ssize_t n;

	while (ch->outfd != -1) {
		n = read(ch->outfd, buf, sizeof buf);
		if (n > 0) {
			output_add(ch->out, buf, (size_t)n);
			if (until == 0 || now_mono_ms() >= until)
				return;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		close(ch->outfd);
		ch->outfd = -1;
	}
}

/* Once the job has exited, what it wrote is all in the pipe. */
static void
guard_drain_output(struct child *ch)
{
	guard_read_output(ch, now_mono_ms() + GUARD_DRAIN_MS);
	if (ch->outfd != -1)
		close(ch->outfd);
	ch->outfd = -1;
}

static int64_t
min_deadline(int64_t a, int64_t b)
{
	if (a == 0)
		return b;
	if (b == 0)
		return a;
	return a < b ? a : b;
}

/* What is due at now while waiting for the child: the timeout's
 * SIGTERM (deadline, 0 none), the SIGKILL after it, the heartbeat
 * (*next_hb, 0 none; then every hb ms). */
static void
guard_wait_due(const struct guard_job *gj, struct lock *l, struct child *ch,
    int64_t now, int64_t deadline, int64_t hb, int64_t *next_hb)
{
	if (deadline != 0 && now >= deadline && !ch->timed_out) {
		char d[32];

		duration_format(gj->timeout_ms, d, sizeof d);
		log_kv(LOG_ERROR, "job_timeout", "job", gj->job, "timeout", d);
		ch->timed_out = 1;
		guard_terminate(gj, ch);
	}
	if (ch->kill_at != 0 && now >= ch->kill_at) {
		log_kv(LOG_WARN, "job_killed", "job", gj->job, "msg",
		    "still running after SIGTERM: SIGKILL");
		kill(-ch->pid, SIGKILL);
		ch->kill_at = 0;
	}
	if (*next_hb != 0 && now >= *next_hb) {
		if (lock_heartbeat(l) != LOCK_OK) {
			*next_hb = 0;
			if (gj->on_lock_lost == LOCK_LOST_TERMINATE)
				guard_terminate(gj, ch);
		} else
			*next_hb = now + hb;
	}
}

/* poll's timeout (ms) from now until until (0: none, wait for ever). */
static int
guard_poll_timeout(int64_t until, int64_t now)
{
	if (until == 0)
		return -1;
	if (until <= now)
		return 0;
	if (until - now > INT32_MAX)
		return INT32_MAX;
	return (int)(until - now);
}

/* Wait for the child, heartbeating the lock, enforcing the timeout. */
static void
guard_wait(const struct guard_job *gj, struct lock *l, struct child *ch)
{
	struct pollfd pfd[3];
	int64_t       now, deadline = 0, next_hb = 0, until, hb;
	int           timeout, nfd, out = -1, watch = -1, wfd;

	now = now_mono_ms();
	if (gj->timeout_ms > 0)
		deadline = now + gj->timeout_ms;
	if ((hb = lock_heartbeat_interval(l, gj->heartbeat_ms)) > 0)
		next_hb = now + hb;

	for (;;) {
		guard_reap(gj, ch, 0);
		if (ch->exited)
			break;
		now = now_mono_ms();
		guard_wait_due(gj, l, ch, now, deadline, hb, &next_hb);

		until = min_deadline(
		    min_deadline(ch->timed_out ? 0 : deadline, ch->kill_at),
		    next_hb);
		timeout = guard_poll_timeout(until, now);
		pfd[0].fd = guard_sigpipe[0];
		pfd[0].events = POLLIN;
		pfd[0].revents = 0;
		nfd = 1;
		if (ch->outfd != -1) {
			out = nfd++;
			pfd[out].fd = ch->outfd;
			pfd[out].events = POLLIN;
			pfd[out].revents = 0;
		}
		/* The lock session's socket: the server closing it is seen
		 * at once, not at the next heartbeat (lock.h). */
		if ((wfd = lock_watch_fd(l)) != -1) {
			watch = nfd++;
			pfd[watch].fd = wfd;
			pfd[watch].events = POLLIN;
			pfd[watch].revents = 0;
		}
		if (poll(pfd, (nfds_t)nfd, timeout) <= 0)
			continue;
		if (pfd[0].revents != 0)
			guard_drain_signals(ch);
		if (out != -1 && pfd[out].revents != 0)
			guard_read_output(ch, 0);
		if (watch != -1 && pfd[watch].revents != 0) {
			lock_session_closed(l);
			next_hb = 0;
			if (gj->on_lock_lost == LOCK_LOST_TERMINATE)
				guard_terminate(gj, ch);
		}
		out = watch = -1;
	}
	guard_drain_output(ch);
}

static void
guard_setenv(const struct guard_job *gj, const struct lock *l)
{
	char id[32];

	setenv("CRONGUARD_JOB", gj->job, 1);
	if (l != NULL && l->run_id != 0) {
		snprintf(id, sizeof id, "%llu", l->run_id);
		setenv("CRONGUARD_RUN_ID", id, 1);
	} else
		unsetenv("CRONGUARD_RUN_ID");
	if (guard_in_db(gj->guard))
		setenv("CRONGUARD_LOCK", gj->lock, 1);
	else
		unsetenv("CRONGUARD_LOCK");
	if (l != NULL && l->fence != 0) {
		snprintf(id, sizeof id, "%llu", l->fence);
		setenv("CRONGUARD_FENCE", id, 1);
	} else
		unsetenv("CRONGUARD_FENCE");
	if (l != NULL && l->slot_text != NULL)
		setenv("CRONGUARD_SLOT", l->slot_text, 1);
	else
		unsetenv("CRONGUARD_SLOT");
}

/* Run the command, its output into out (NULL: inherited); fill end
 * (strings static or in errbuf). */
int
guard_command(const struct guard_job *gj, struct lock *l, struct output *out,
    struct run_end *end, char *errbuf, size_t errlen)
{
	struct child ch;
	char        *errstr = NULL;
	int          code, sig;

	memset(&ch, 0, sizeof ch);
	ch.out = out;
	guard_setenv(gj, l);
	if (guard_spawn(gj, &ch, &errstr) != 0) {
		snprintf(errbuf, errlen, "%s", errstr);
		end->outcome = "error";
		end->exit_status = -1;
		end->error = errbuf;
		free(errstr);
		return EXIT_SOFTWARE;
	}
	if (ch.exec_errno != 0) {
		/* The child exits at once, and its reaper after it. */
		guard_reap(gj, &ch, 1);
		guard_drain_output(&ch);
		code = ch.exec_errno == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC;
		snprintf(errbuf, errlen, "cannot execute %s: %s", gj->argv[0],
		    strerror(ch.exec_errno));
		log_kv(LOG_ERROR, "job_exec_failed", "job", gj->job, "error",
		    errbuf);
		end->outcome = "error";
		end->exit_status = code;
		end->error = errbuf;
		return code;
	}
	log_kv(LOG_DEBUG, "job_started", "job", gj->job);
	guard_signals_open(1);
	guard_wait(gj, l, &ch);
	guard_signals_open(0);

	if (WIFSIGNALED(ch.status)) {
		sig = WTERMSIG(ch.status);
		code = 128 + sig;
		snprintf(errbuf, errlen, "killed by %s (signal %d)",
		    signal_name(sig), sig);
		end->error = errbuf;
	} else
		code = WEXITSTATUS(ch.status);
	end->exit_status = code;
	if (ch.timed_out) {
		end->outcome = "timeout";
		snprintf(errbuf, errlen, "killed after timeout");
		end->error = errbuf;
		return EXIT_TIMEOUT;
	}
	/* Died of a signal, whoever sent it (the OOM killer, an operator):
	 * killed, not a failure, so that jobs runs can name the signal. */
	if (ch.forwarded || WIFSIGNALED(ch.status))
		end->outcome = "killed";
	else
		end->outcome = code == 0 ? "success" : "failure";
	if (code != 0 && end->error == NULL) {
		snprintf(errbuf, errlen, "exited with status %d", code);
		end->error = errbuf;
	}
	return code;
}

/*
 * The timeout and the signals of an SQL job: the job blocks the lock
 * session, so a thread waits for the deadline or a signal (the self-pipe)
 * and then stops the statement from a second session with KILL QUERY,
 * which keeps the lock session (and the lock) for the release.  Only this
 * thread takes the signals: an interrupted read in the main thread would
 * cost the lock session.  The thread does not log; the main thread
 * reports for it.
 */
struct sql_watchdog {
	pthread_t       thread;
	pthread_mutex_t mu;
	int             wake[2];  /* written when the statement returned */
	int             done;     /* the statement returned */
	int             fired;    /* KILL QUERY was sent */
	int             signo;    /* ...for this signal; 0 the timeout */
	int64_t         deadline; /* now_mono_ms(); 0 none */
	const struct lock_db_ops *ops;
	void                     *ctx;
	unsigned long long        id;
	char                     *error; /* the kill failed: why */
};

static void
guard_forward_set(sigset_t *set)
{
	size_t i;

	sigemptyset(set);
	for (i = 0; i < nitems(guard_forward); i++)
		sigaddset(set, guard_forward[i]);
}

/* Wait for the deadline, a signal or the statement's end: the signal, 0
 * for the deadline, -1 when the statement returned. */
static int
sql_watchdog_wait(struct sql_watchdog *w)
{
	struct pollfd pfd[2];
	unsigned char buf[64];
	ssize_t       n, i;
	int64_t       now;
	int           timeout, rc, sig = 0;

	for (;;) {
		timeout = -1;
		if (w->deadline != 0) {
			now = now_mono_ms();
			if (now >= w->deadline)
				return 0;
			if (w->deadline - now > INT32_MAX)
				timeout = INT32_MAX;
			else
				timeout = (int)(w->deadline - now);
		}
		pfd[0].fd = w->wake[0];
		pfd[0].events = POLLIN;
		pfd[1].fd = guard_sigpipe[0];
		pfd[1].events = POLLIN;
		/* An interrupted poll leaves revents unset: poll again. */
		if ((rc = poll(pfd, 2, timeout)) == -1 && errno == EINTR)
			continue;
		if (rc == -1)
			return -1;
		if (pfd[0].revents != 0)
			return -1;
		if (pfd[1].revents == 0)
			continue;
		while ((n = read(guard_sigpipe[0], buf, sizeof buf)) > 0) {
			for (i = 0; i < n; i++) {
				if (buf[i] != SIGCHLD && sig == 0)
					sig = buf[i];
			}
		}
		if (sig != 0)
			return sig;
	}
}

static void *
sql_watchdog_main(void *arg)
{
	struct sql_watchdog *w = arg;
	struct pollfd        pfd;
	sigset_t             set;
	void                *conn = NULL;
	char                *errstr = NULL;
	int                  sig, n;

	guard_forward_set(&set);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	if ((sig = sql_watchdog_wait(w)) == -1)
		return NULL;

	pthread_mutex_lock(&w->mu);
	if (w->done) {
		pthread_mutex_unlock(&w->mu);
		return NULL;
	}
	w->fired = 1;
	w->signo = sig;
	pthread_mutex_unlock(&w->mu);

	/* Again every second until the statement returns: a KILL QUERY
	 * that reaches the session before the statement is forgotten. */
	for (;;) {
		if ((conn == NULL &&
		        w->ops->connect(w->ctx, &conn, &errstr) != DB_OK) ||
		    w->ops->kill_query(conn, w->id, &errstr) != DB_OK) {
			w->error = errstr;
			break;
		}
		free(errstr);
		errstr = NULL;
		pfd.fd = w->wake[0];
		pfd.events = POLLIN;
		while ((n = poll(&pfd, 1, 1000)) == -1 && errno == EINTR)
			;
		if (n != 0)
			break;
	}
	if (conn != NULL)
		w->ops->destroy(conn, NULL);
	return NULL;
}

/* Start the watchdog with the signal handlers installed; ms 0: no
 * timeout.  Returns -1 (nothing installed) when it cannot. */
static int
sql_watchdog_start(struct sql_watchdog *w, struct lock *l, int64_t ms)
{
	sigset_t set;

	memset(w, 0, sizeof *w);
	w->ops = l->ops;
	w->ctx = l->ctx;
	w->id = l->connection_id;
	if (ms > 0)
		w->deadline = now_mono_ms() + ms;
	if (pipe2(w->wake, O_CLOEXEC) != 0)
		return -1;
	/* Blocked here since guard_signals_install; the new thread
	 * inherits the mask and unblocks them itself. */
	guard_forward_set(&set);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_mutex_init(&w->mu, NULL);
	if (pthread_create(&w->thread, NULL, sql_watchdog_main, w) != 0) {
		pthread_mutex_destroy(&w->mu);
		goto fail;
	}
	return 0;

fail:
	close(w->wake[0]);
	close(w->wake[1]);
	return -1;
}

/* Stop the watchdog; returns whether it fired (*signo: for which signal,
 * 0 the timeout). */
static int
sql_watchdog_stop(struct sql_watchdog *w, const char *job, int *signo)
{
	int fired;

	pthread_mutex_lock(&w->mu);
	w->done = 1;
	pthread_mutex_unlock(&w->mu);
	(void)!write(w->wake[1], "", 1);
	pthread_join(w->thread, NULL);
	fired = w->fired;
	*signo = w->signo;
	if (w->error != NULL)
		log_kv(LOG_ERROR,
		    w->signo != 0 ? "job_signal_kill_failed"
		                  : "job_timeout_kill_failed",
		    "job", job, "error", w->error);
	free(w->error);
	pthread_mutex_destroy(&w->mu);
	close(w->wake[0]);
	close(w->wake[1]);
	return fired;
}

int
guard_sql(const struct guard_job *gj, struct lock *l, struct run_end *end,
    char *errbuf, size_t errlen)
{
	struct sql_watchdog w;
	char               *errstr = NULL, d[32], name[16];
	int                 watching = 0, fired = 0, signo = 0, rc;

	log_kv(LOG_DEBUG, "job_started", "job", gj->job);
	if (sql_watchdog_start(&w, l, gj->timeout_ms) == 0)
		watching = 1;
	else
		log_kv(LOG_WARN, "job_watchdog_unavailable", "job", gj->job,
		    "msg",
		    "cannot start the watchdog thread: no timeout, signals not handled");
	rc = lock_exec_sql(l, gj->sql, &errstr);
	if (watching)
		fired = sql_watchdog_stop(&w, gj->job, &signo);
	/* Stopped by a signal: killed, 128 + signal, like a command job
	 * that died of it; whatever the statement says (an interrupted
	 * SLEEP() reports no error). */
	if (fired && signo != 0) {
		snprintf(name, sizeof name, "%d", signo);
		log_kv(LOG_INFO, "job_signalled", "job", gj->job, "signal",
		    name, "msg", "statement stopped with KILL QUERY");
		snprintf(errbuf, errlen, "stopped by signal %d: %s", signo,
		    rc != 0 ? errstr : "no error from the statement");
		free(errstr);
		end->outcome = "killed";
		end->exit_status = 128 + signo;
		end->error = errbuf;
		return 128 + signo;
	}
	/* Fired means the deadline passed: a timeout even when the
	 * statement reports no error (an interrupted SLEEP() does not). */
	if (fired) {
		duration_format(gj->timeout_ms, d, sizeof d);
		log_kv(LOG_ERROR, "job_timeout", "job", gj->job, "timeout", d);
		snprintf(errbuf, errlen, "killed after timeout: %s",
		    rc != 0 ? errstr : "no error from the statement");
		free(errstr);
		end->outcome = "timeout";
		end->exit_status = 1;
		end->error = errbuf;
		return EXIT_TIMEOUT;
	}
	if (rc != 0) {
		snprintf(errbuf, errlen, "%s", errstr);
		free(errstr);
		end->outcome = "failure";
		end->exit_status = 1;
		end->error = errbuf;
		log_kv(
		    LOG_ERROR, "job_failed", "job", gj->job, "error", errbuf);
		return 1;
	}
	end->outcome = "success";
	end->exit_status = 0;
	end->error = NULL;
	return 0;
}

/* The run record is finished (or was never written): a signal that came
 * after the job ended is too late to change the run, and is only logged;
 * then the default handlers are back. */
void
guard_signals_done(const struct guard_job *gj, int *installed)
{
	int sig;

	if (!*installed)
		return;
	*installed = 0;
	if ((sig = guard_signals_take()) != 0)
		log_kv(LOG_INFO, "signal_after_job", "job", gj->job, "signal",
		    signal_name(sig), "msg",
		    "the run was over and its record finished: its outcome and exit status stand");
	guard_signals_restore();
}
