/* guard.c: run one job under the local flock, the named lock and a run
 * record; the child process, its heartbeat, timeout and signals. */
#include "config.h"

#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "duration.h"
#include "exitcode.h"
#include "guard.h"
#include "lock.h"
#include "log.h"
#include "output.h"
#include "ping.h"
#include "reaper.h"
#include "runs.h"
#include "schedule.h"
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

/* ----------------------------------------------------- local flock */

/* How taking the local flock went.  A runtime directory or lock file that
 * is not as it must be is a setup problem the operator fixes (exit 78);
 * anything else is an internal error (70). */
enum local_status { LOCAL_OK, LOCAL_BUSY, LOCAL_ERR_CONFIG, LOCAL_ERR };

/* Who holds a busy local flock, as far as the file tells. */
struct local_holder {
	long    pid;     /* -1: unknown, or no such process */
	int64_t held_ms; /* -1: unknown */
};

/* The flock file of a key: characters outside [A-Za-z0-9._-] as %XX, so
 * that two lock names never share a file. */
static char *
local_name(const char *prefix, const char *key)
{
	struct buf  b;
	const char *p;

	buf_init(&b);
	buf_printf(&b, "%s-", prefix);
	for (p = key; *p != '\0'; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' ||
		    *p == '-')
			buf_addc(&b, *p);
		else
			buf_printf(&b, "%%%02X", (unsigned char)*p);
	}
	buf_adds(&b, ".lock");
	return buf_steal(&b);
}

/*
 * The runtime directory must not let another user move this user's
 * private directory out of the way: one that others can write to (group
 * cronguard's /run/cronguard, /tmp) needs the sticky bit, and an owner
 * who is root or this user (the owner of a directory may rename anything
 * in it).  A directory only its owner can write to is not checked, so
 * that a private runtime_dir (a test's, systemd's RuntimeDirectory=) is
 * fine.  Returns 0, or -1 with *errstr.
 */
static int
local_parent_check(
    int pfd, const char *runtime_dir, const char *dir, char **errstr)
{
	struct stat sb;
	uid_t       uid = geteuid();

	if (fstat(pfd, &sb) == -1) {
		*errstr = xasprintf(
		    "cannot stat %s: %s", runtime_dir, strerror(errno));
		return -1;
	}
	if ((sb.st_mode & (S_IWGRP | S_IWOTH)) == 0)
		return 0;
	if ((sb.st_mode & S_ISVTX) == 0) {
		*errstr = xasprintf("runtime_dir %s is writable by group or "
		                    "others (mode %04o) but not sticky: they "
		                    "could rename or replace %s; chmod +t it "
		                    "(the package makes /run/cronguard 3775)",
		    runtime_dir, (unsigned)(sb.st_mode & 07777), dir);
		return -1;
	}
	if (sb.st_uid != 0 && sb.st_uid != uid) {
		*errstr = xasprintf("runtime_dir %s is writable by group or "
		                    "others and owned by uid %lu, who could "
		                    "rename or replace %s: chown root it",
		    runtime_dir, (unsigned long)sb.st_uid, dir);
		return -1;
	}
	return 0;
}

/*
 * Open this user's private directory runtime_dir/cronguard-UID, creating
 * it 0700, as tmux does for its socket directory: the runtime directory
 * may be a shared /tmp where anyone can plant files under predictable
 * names.  Refused unless it is a directory (not a symbolic link) owned by
 * this user with no group or other permissions, in a runtime directory
 * that passes local_parent_check.  Returns the directory's descriptor, or
 * -1 with *errstr (always a configuration problem).
 */
static int
local_dir_open(const char *runtime_dir, const char *dir, char **errstr)
{
	struct stat sb;
	uid_t       uid = geteuid();
	const char *base = strrchr(dir, '/') + 1;
	int         pfd = -1, fd = -1;

	if ((pfd = open(runtime_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1) {
		*errstr = xasprintf("cannot create %s: %s (runtime_dir %s must "
		                    "exist and be writable by uid %lu: create "
		                    "it, or set runtime_dir)",
		    dir, strerror(errno), runtime_dir, (unsigned long)uid);
		goto fail;
	}
	if (local_parent_check(pfd, runtime_dir, dir, errstr) == -1)
		goto fail;
	if (mkdirat(pfd, base, S_IRWXU) == -1 && errno != EEXIST) {
		*errstr = xasprintf("cannot create %s: %s (runtime_dir %s must "
		                    "exist and be writable by uid %lu: create "
		                    "it, or set runtime_dir)",
		    dir, strerror(errno), runtime_dir, (unsigned long)uid);
		goto fail;
	}
	if ((fd = openat(pfd, base,
	         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		if (errno == ELOOP || errno == ENOTDIR)
			*errstr =
			    xasprintf("%s is not a directory: remove it", dir);
		else
			*errstr = xasprintf("cannot open %s: %s (it must be "
			                    "usable by uid %lu)",
			    dir, strerror(errno), (unsigned long)uid);
		goto fail;
	}
	if (fstat(fd, &sb) == -1) {
		*errstr = xasprintf("cannot stat %s: %s", dir, strerror(errno));
		goto fail;
	}
	if (sb.st_uid != uid) {
		*errstr = xasprintf("%s is owned by uid %lu, not uid %lu: "
		                    "remove it",
		    dir, (unsigned long)sb.st_uid, (unsigned long)uid);
		goto fail;
	}
	if ((sb.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
		*errstr = xasprintf("%s is open to group or others (mode "
		                    "%03o): chmod 700 it",
		    dir, (unsigned)(sb.st_mode & 0777));
		goto fail;
	}
	close(pfd);
	return fd;

fail:
	if (fd != -1)
		close(fd);
	if (pfd != -1)
		close(pfd);
	return -1;
}

/* Parse "pid start_ms" written by the holder; a pid whose process is gone
 * (or never existed) is unknown, as is a start time that is not there,
 * which then comes from the file's modification time. */
static void
local_holder_read(int fd, const struct stat *sb, struct local_holder *h)
{
	char        text[64], *sp;
	const char *e;
	ssize_t     n;
	long long   v;

	h->pid = -1;
	h->held_ms = -1;
	if ((n = pread(fd, text, sizeof text - 1, 0)) > 0) {
		text[n] = '\0';
		text[strcspn(text, "\n")] = '\0';
		if ((sp = strchr(text, ' ')) != NULL) {
			*sp++ = '\0';
			if (parse_ll(text, 1, INT32_MAX, &v, &e) == 0 &&
			    (kill((pid_t)v, 0) == 0 || errno == EPERM))
				h->pid = (long)v;
			if (parse_ll(sp, 0, INT64_MAX, &v, &e) == 0)
				h->held_ms = now_wall_ms() - v;
		}
	}
	if (h->pid == -1 || h->held_ms < 0)
		h->held_ms = now_wall_ms() - (int64_t)sb->st_mtime * 1000;
}

/*
 * Take the flock on dir/name without waiting.  The file is opened without
 * following a symbolic link and must be a regular file owned by this
 * user.  LOCAL_OK: *fdp is the descriptor (close-on-exec: a job's
 * children must not keep it) and the file now holds "pid start_ms";
 * LOCAL_BUSY: another process holds it, *h says who; otherwise *errstr.
 */
static enum local_status
local_lock(int dirfd, const char *dir, const char *name, int *fdp,
    struct local_holder *h, char **errstr)
{
	struct stat       sb;
	char              text[64];
	ssize_t           n;
	int               fd;
	enum local_status ls = LOCAL_ERR_CONFIG;

	*fdp = -1;
	fd = openat(dirfd, name,
	    O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
	    S_IRUSR | S_IWUSR);
	if (fd == -1) {
		if (errno == ELOOP)
			*errstr = xasprintf("%s/%s is a symbolic link: remove "
			                    "it",
			    dir, name);
		else
			*errstr = xasprintf("cannot open %s/%s: %s", dir, name,
			    strerror(errno));
		goto fail;
	}
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode) ||
	    sb.st_uid != geteuid()) {
		*errstr = xasprintf("%s/%s is not a regular file owned by uid "
		                    "%lu: remove it",
		    dir, name, (unsigned long)geteuid());
		goto fail;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		if (errno == EWOULDBLOCK) {
			local_holder_read(fd, &sb, h);
			ls = LOCAL_BUSY;
		} else {
			*errstr = xasprintf("cannot lock %s/%s: %s", dir, name,
			    strerror(errno));
			ls = LOCAL_ERR;
		}
		goto fail;
	}
	n = snprintf(text, sizeof text, "%ld %" PRId64 "\n", (long)getpid(),
	    now_wall_ms());
	if (ftruncate(fd, 0) != 0 || pwrite(fd, text, (size_t)n, 0) != n)
		log_kv(LOG_WARN, "local_lock_write_failed", "path", dir, "file",
		    name, "error", strerror(errno));
	*fdp = fd;
	return LOCAL_OK;

fail:
	if (fd != -1)
		close(fd);
	return ls;
}

/* The guards that take a lock in the database. */
static int
guard_in_db(enum guard_kind k)
{
	return k == GUARD_NAMED_LOCK || k == GUARD_LEASE || k == GUARD_AUTO;
}

/* The local layer of gj: its flock file, keyed like the named lock (so
 * that jobs sharing a lock name also stop each other locally) in this
 * user's private directory.  *path (allocated) names the file. */
static enum local_status
local_take(const struct guard_job *gj, int *fdp, struct local_holder *h,
    char **path, char **errstr)
{
	char             *dir = NULL, *name = NULL;
	int               dirfd;
	enum local_status ls = LOCAL_ERR_CONFIG;

	dir = xasprintf(
	    "%s/cronguard-%lu", gj->runtime_dir, (unsigned long)geteuid());
	name = guard_in_db(gj->guard) ? local_name("lock", gj->lock)
	                              : local_name("job", gj->job);
	*path = xasprintf("%s/%s", dir, name);
	if ((dirfd = local_dir_open(gj->runtime_dir, dir, errstr)) == -1)
		goto out;
	ls = local_lock(dirfd, dir, name, fdp, h, errstr);
	close(dirfd);
out:
	free(name);
	free(dir);
	return ls;
}

/* ------------------------------------------------------ the child */

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
static int
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
static int
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
		if (deadline != 0 && now >= deadline && !ch->timed_out) {
			char d[32];

			duration_format(gj->timeout_ms, d, sizeof d);
			log_kv(LOG_ERROR, "job_timeout", "job", gj->job,
			    "timeout", d);
			ch->timed_out = 1;
			guard_terminate(gj, ch);
		}
		if (ch->kill_at != 0 && now >= ch->kill_at) {
			log_kv(LOG_WARN, "job_killed", "job", gj->job, "msg",
			    "still running after SIGTERM: SIGKILL");
			kill(-ch->pid, SIGKILL);
			ch->kill_at = 0;
		}
		if (next_hb != 0 && now >= next_hb) {
			if (lock_heartbeat(l) != LOCK_OK) {
				next_hb = 0;
				if (gj->on_lock_lost == LOCK_LOST_TERMINATE)
					guard_terminate(gj, ch);
			} else
				next_hb = now + hb;
		}

		until = min_deadline(
		    min_deadline(ch->timed_out ? 0 : deadline, ch->kill_at),
		    next_hb);
		if (until == 0)
			timeout = -1;
		else if (until <= now)
			timeout = 0;
		else if (until - now > INT32_MAX)
			timeout = INT32_MAX;
		else
			timeout = (int)(until - now);
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

/* ------------------------------------------------------- the guard */

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
static int
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

static int
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

/* A busy local flock: skip, or 75 when held too long.  A holder that
 * cannot be identified (no live process wrote the file) is logged at
 * warning level every time it makes a run skip, so that it cannot keep
 * a job from running unnoticed. */
static int
guard_local_busy(
    const struct guard_job *gj, const char *path, const struct local_holder *h)
{
	char           who[64], since[32], busy[16];
	enum log_level level = LOG_INFO;

	if (h->pid > 0)
		snprintf(who, sizeof who, "pid %ld on this host", h->pid);
	else {
		snprintf(who, sizeof who, "unknown process on this host");
		level = LOG_WARN;
	}
	duration_format(h->held_ms, since, sizeof since);
	if (h->held_ms > gj->max_runtime_ms + gj->grace_ms) {
		log_kv(LOG_ERROR, "lock_busy_stuck", "job", gj->job, "path",
		    path, "holder", who, "held_for", since);
		return EXIT_TEMPFAIL;
	}
	snprintf(busy, sizeof busy, "%d", gj->busy_exit);
	log_kv(level, "job_skipped", "job", gj->job, "path", path, "holder",
	    who, "held_for", since, "exit", busy);
	return gj->busy_exit;
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

/* The run record is finished (or was never written): a signal that came
 * after the job ended is too late to change the run, and is only logged;
 * then the default handlers are back. */
static void
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
	struct run_end     end;
	struct run_output  ro;
	struct output      out, *outp = NULL;
	enum lock_result   lr;
	char              *errstr = NULL, errbuf[512], status[16], rid[37];
	int                code, sig, signals = 0;

	memset(&h, 0, sizeof h);
	memset(&end, 0, sizeof end);
	memset(&out, 0, sizeof out);
	*state = GUARD_NOT_RUN;
	/* SQL jobs print nothing: there is no output to capture. */
	if (gj->argv != NULL && gj->output != OUTPUT_INHERIT) {
		output_init(&out,
		    gj->output_max > 0 ? gj->output_max : OUTPUT_MAX_DEFAULT);
		outp = &out;
	}
	uuid_v4(rid);
	if (guard_in_db(gj->guard)) {
		lr = guard_acquire(gj, l, &h, &errstr);
		if (lr == LOCK_BUSY) {
			code = guard_busy(gj, &h);
			goto out;
		}
		if (lr != LOCK_OK) {
			log_kv(LOG_ERROR,
			    lr == LOCK_ERR_GALERA ? "galera_refused"
			                          : "lock_failed",
			    "job", gj->job, "lock", gj->lock, "error", errstr);
			code = exitcode_lock(lr);
			goto out;
		}
	}
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
	guard_signals_done(gj, &signals);
	/* After the release: a slow ping server does not hold the lock. */
	guard_ping(gj, code == 0 ? PING_SUCCESS : PING_FAIL, rid, outp);
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

/* ------------------------------------------------------- schedules */

/* The zone of gj's slots (runs_slot_zone), or -1 having logged why. */
static int
guard_zone(
    const struct guard_job *gj, const struct slot_state *st, struct tzone **z)
{
	char *errstr = NULL;

	if (runs_slot_zone(gj->timezone, st, z, &errstr) == 0)
		return 0;
	log_kv(LOG_ERROR, "config_error", "job", gj->job, "key", "timezone",
	    "msg",
	    gj->timezone != NULL
	        ? errstr
	        : "cannot tell the database server's time zone: set timezone",
	    "error", errstr);
	free(errstr);
	return -1;
}

/* A slot of a launch's plan. */
struct guard_slot {
	int64_t     t;
	const char *kind; /* "schedule", "catch_up", "manual" */
};

/* Log a skip for a paused job; the pause is st's. */
static void
guard_paused(const struct guard_job *gj, const struct slot_state *st)
{
	log_kv(LOG_INFO, "job_paused", "job", gj->job, "paused_by",
	    st->paused_by, "since", st->paused_at, "until",
	    st->until != NULL ? st->until : "resumed", "reason", st->reason,
	    "all", strcmp(st->pause_job, "*") == 0 ? "yes" : "no");
}

/*
 * Which slots this launch runs, oldest first, into plan (at most
 * backfill_limit, or 1): -1 with *n set to run them, else the exit code
 * (0: nothing is due; 64: a bad --slot; 78: a schedule that never
 * matches).  cronguard.conf(5), "Schedules", states the rules.
 */
static int
guard_plan(const struct guard_job *gj, const struct slot_state *st,
    const struct tzone *z, struct guard_slot *plan, size_t *n)
{
	int64_t now = st->now_us / 1000000, latest, t, from;
	char    text[TZONE_RFC3339_MAX], other[TZONE_RFC3339_MAX], *errstr;
	size_t  k, max;

	*n = 0;
	errstr = NULL;
	if (gj->slot_arg != NULL) {
		if (tzone_parse(z, gj->slot_arg, &t, &errstr) != 0) {
			log_kv(LOG_ERROR, "usage_error", "job", gj->job, "slot",
			    gj->slot_arg, "msg", errstr);
			free(errstr);
			return EXIT_USAGE;
		}
		tzone_format(z, t, text, sizeof text);
		if (!schedule_contains(gj->schedule, z, t) || t > now) {
			log_kv(LOG_ERROR, "usage_error", "job", gj->job, "slot",
			    text, "msg",
			    t > now ? "the slot is in the future"
			            : "the schedule has no such slot");
			return EXIT_USAGE;
		}
		plan[0].t = t;
		plan[0].kind = "manual";
		*n = 1;
		return -1;
	}
	if (schedule_prev(gj->schedule, z, now, &latest) != 0) {
		log_kv(LOG_ERROR, "config_error", "job", gj->job, "key",
		    "schedule", "msg", "the schedule has no slot before now");
		return EXIT_CONFIG;
	}
	tzone_format(z, latest, text, sizeof text);
	if (st->last_success >= latest) {
		log_kv(
		    LOG_INFO, "job_already_done", "job", gj->job, "slot", text);
		return EXIT_OK;
	}
	if (gj->catch_up == CATCH_UP_NONE &&
	    (now - latest) * 1000 > gj->starting_deadline_ms) {
		log_kv(LOG_INFO, "job_slot_skipped", "job", gj->job, "slot",
		    text, "msg",
		    "launched after starting_deadline (catch_up = \"none\")");
		return EXIT_OK;
	}
	plan[0].t = latest;
	plan[0].kind = "schedule";
	*n = 1;
	if (gj->catch_up != CATCH_UP_ALL || st->first_run < 0)
		return -1;
	/* Every slot since the last success, never one before the job's
	 * first run or the end of its latest pause, newest backfill_limit of
	 * them, oldest first. */
	from = st->last_success > st->first_run - 1 ? st->last_success
	                                            : st->first_run - 1;
	/* Nor one of a pause, or before it: after jobs resume, only the
	 * operator's run --slot runs those. */
	if (st->pause_ended > from)
		from = st->pause_ended;
	max = gj->backfill_limit > 0 ? gj->backfill_limit : 1;
	t = latest;
	while (*n < max && schedule_prev(gj->schedule, z, t - 1, &t) == 0 &&
	    t > from) {
		plan[*n].t = t;
		plan[*n].kind = "catch_up";
		(*n)++;
	}
	if (*n == max &&
	    schedule_prev(gj->schedule, z, plan[*n - 1].t - 1, &t) == 0 &&
	    t > from) {
		tzone_format(z, t, other, sizeof other);
		log_kv(LOG_WARN, "job_slots_skipped", "job", gj->job, "newest",
		    other, "msg",
		    "older slots without a success are beyond backfill_limit:"
		    " not run (run them with run --slot)");
	}
	for (k = 0; k < *n / 2; k++) {
		struct guard_slot tmp = plan[k];

		plan[k] = plan[*n - 1 - k];
		plan[*n - 1 - k] = tmp;
	}
	return -1;
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
	struct tm             tm;
	time_t                tt;
	char                  utc[32], text[TZONE_RFC3339_MAX], *errstr = NULL;
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
		tt = (time_t)plan[i].t;
		gmtime_r(&tt, &tm);
		strftime(utc, sizeof utc, "%Y-%m-%d %H:%M:%S", &tm);
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
	l->slot = l->slot_kind = l->slot_text = NULL;
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
