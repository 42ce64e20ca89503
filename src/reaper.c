/* reaper.c: the job's process tree under a subreaper that holds the lock
 * session until the tree is gone (reaper.h). */
#include "config.h"

#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "exitcode.h"
#include "reaper.h"
#include "util.h"

/* What the reaper reports up its pipe: first the job's pid (or -1 and
 * the errno of a failed fork), at the end the job's wait status. */
struct reaper_start {
	pid_t job;
	int   err;
};
struct reaper_end {
	int status;
	int leftovers;
};

/* While it kills, the reaper sweeps this often for processes reparented
 * to it since the last sweep. */
#define REAPER_SWEEP_MS 100

/* The signals cronguard handles, set back to their defaults in the job
 * (SIG_IGN would survive exec). */
static const int reaper_reset[] = { SIGTERM, SIGINT, SIGHUP, SIGCHLD, SIGPIPE };

/* Everything here after fork runs in a copy of a process that may have
 * had threads: async-signal-safe calls only (no malloc, no stdio). */

static int64_t
reaper_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
reaper_write(int fd, const void *p, size_t n)
{
	ssize_t w;

	do
		w = write(fd, p, n);
	while (w == -1 && errno == EINTR);
}

/* Make fd the descriptor target (dup2 leaves a descriptor that already is
 * target with its close-on-exec flag). */
static int
reaper_dup(int fd, int target)
{
	if (fd == target)
		return fcntl(fd, F_SETFD, 0);
	return dup2(fd, target) == target ? 0 : -1;
}

/* In the job: output, signals, its own group, SIGKILL when the reaper
 * dies (a reaper gone before the prctl: the job must not start), exec.
 * errno goes up errfd on failure. */
static void __attribute__((noreturn))
reaper_job(char *const *argv, int errfd, int outfd, pid_t reaper)
{
	sigset_t none;
	size_t   i;
	int      err;

	if ((outfd != -1 &&
	        (reaper_dup(outfd, STDOUT_FILENO) == -1 ||
	            reaper_dup(outfd, STDERR_FILENO) == -1)) ||
	    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1) {
		err = errno;
		reaper_write(errfd, &err, sizeof err);
		_exit(EXIT_NOEXEC);
	}
	if (getppid() != reaper)
		_exit(EXIT_NOEXEC);
	for (i = 0; i < nitems(reaper_reset); i++)
		signal(reaper_reset[i], SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setpgid(0, 0);
	execvp(argv[0], argv);
	err = errno;
	reaper_write(errfd, &err, sizeof err);
	_exit(err == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC);
}

/* Signal the job's group and every child of the reaper (the processes
 * reparented to it); 1 when any was there. */
static int
reaper_kill_all(pid_t job, int sig)
{
	char    path[64], buf[4096];
	ssize_t n, i;
	int     fd, any = 0;
	long    pid = 0;
	int     in = 0;

	if (kill(-job, sig) == 0)
		any = 1;
	snprintf(
	    path, sizeof path, "/proc/self/task/%ld/children", (long)getpid());
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return any;
	/* "pid pid pid ": a process's children, read in one go (a job
	 * leaves at most a few hundred; the rest is found next time). */
	n = read(fd, buf, sizeof buf);
	close(fd);
	for (i = 0; i < n; i++) {
		if (buf[i] >= '0' && buf[i] <= '9') {
			pid = pid * 10 + (buf[i] - '0');
			in = 1;
			continue;
		}
		if (in && pid > 1 && kill((pid_t)pid, sig) == 0)
			any = 1;
		pid = 0;
		in = 0;
	}
	return any;
}

/* Make this process the reaper: the signals cronguard forwards ignored,
 * SIGCHLD read from a signalfd (returned, or -1), the job's orphans
 * reparented here. */
static int
reaper_become(void)
{
	sigset_t chld;
	size_t   i;
	int      sfd;

	/* cronguard forwards signals to the job's group; the reaper stays
	 * until the tree is gone, whoever signals it. */
	for (i = 0; i < nitems(reaper_reset); i++)
		signal(reaper_reset[i], SIG_IGN);
	signal(SIGCHLD, SIG_DFL);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	return sfd;
}

/* Sleep until a SIGCHLD (sfd), the lifeline's end, or while signalling
 * (sig) the next sweep; the lifeline is not watched once at SIGKILL.
 * Returns 1 when cronguard is gone. */
static int
reaper_sleep(int sfd, int life, int sig)
{
	struct pollfd           pfd[2];
	struct signalfd_siginfo si;
	char                    c;

	pfd[0].fd = sfd;
	pfd[0].events = POLLIN;
	pfd[1].fd = sig == SIGKILL ? -1 : life;
	pfd[1].events = POLLIN;
	pfd[0].revents = pfd[1].revents = 0;
	if (poll(pfd, 2, sig != 0 ? REAPER_SWEEP_MS : -1) <= 0)
		return 0;
	while (read(sfd, &si, sizeof si) > 0)
		;
	/* cronguard never writes the lifeline: readable is its end,
	 * cronguard gone (a kill -9): everything dies at once. */
	return pfd[1].revents != 0 && read(life, &c, 1) <= 0;
}

/* The reaper's life: start the job, reap whatever ends up its child, and
 * once the job has exited (or cronguard is gone) kill what is left, then
 * report and exit.  life: the lifeline's read end; rep: the report pipe. */
static void __attribute__((noreturn)) reaper_main(char *const *argv, int errfd,
    int outfd, int life, int rep, int64_t kill_after_ms)
{
	struct reaper_start start;
	struct reaper_end   end;
	int64_t             kill_at = 0, now;
	pid_t               w;
	int                 sfd, status, done = 0, sig = 0;

	sfd = reaper_become();

	memset(&start, 0, sizeof start);
	memset(&end, 0, sizeof end);
	if (sfd == -1 || (start.job = fork()) == -1) {
		start.job = -1;
		start.err = errno;
		reaper_write(rep, &start, sizeof start);
		_exit(1);
	}
	if (start.job == 0)
		reaper_job(argv, errfd, outfd, getppid());
	setpgid(start.job, start.job);
	close(errfd);
	if (outfd != -1)
		close(outfd);
	reaper_write(rep, &start, sizeof start);

	for (;;) {
		while ((w = waitpid(-1, &status, WNOHANG)) > 0) {
			if (w != start.job || done)
				continue;
			done = 1;
			end.status = status;
			end.leftovers = reaper_kill_all(start.job, SIGTERM);
			if (end.leftovers && sig != SIGKILL) {
				sig = SIGTERM;
				kill_at = reaper_now_ms() + kill_after_ms;
			}
		}
		if (w == -1 && errno == ECHILD)
			break; /* the job and all it left are gone */
		now = reaper_now_ms();
		if (kill_at != 0 && now >= kill_at)
			sig = SIGKILL;
		/* Again at every wake: a process reparented since the last
		 * sweep is found in the next. */
		if (sig != 0)
			reaper_kill_all(start.job, sig);
		if (reaper_sleep(sfd, life, sig))
			sig = SIGKILL;
	}
	if (!done) /* the job vanished unreaped: it cannot, but say so */
		end.status = SIGKILL;
	reaper_write(rep, &end, sizeof end);
	_exit(0);
}

int
reaper_spawn(char *const *argv, int outfd, int64_t kill_after_ms,
    struct reaper *r, char **errstr)
{
	struct reaper_start start;
	int                 p[2] = { -1, -1 }, lf[2] = { -1, -1 };
	int                 rp[2] = { -1, -1 }, err, ret = -1;
	ssize_t             n;

	memset(r, 0, sizeof *r);
	r->fd = r->life = -1;
	if (pipe2(p, O_CLOEXEC) != 0 || pipe2(lf, O_CLOEXEC) != 0 ||
	    pipe2(rp, O_CLOEXEC) != 0) {
		*errstr = xasprintf("pipe: %s", strerror(errno));
		goto out;
	}
	fflush(NULL);
	if ((r->pid = fork()) == -1) {
		*errstr = xasprintf("fork: %s", strerror(errno));
		r->pid = 0;
		goto out;
	}
	if (r->pid == 0) {
		close(p[0]);
		close(lf[1]);
		close(rp[0]);
		reaper_main(argv, p[1], outfd, lf[0], rp[1], kill_after_ms);
	}
	close(p[1]);
	close(lf[0]);
	close(rp[1]);
	p[1] = lf[0] = rp[1] = -1;
	r->life = lf[1];
	r->fd = rp[0];
	lf[1] = rp[0] = -1;
	do
		n = read(r->fd, &start, sizeof start);
	while (n == -1 && errno == EINTR);
	if (n != (ssize_t)sizeof start || start.job == -1) {
		*errstr = xasprintf("fork: %s",
		    n == (ssize_t)sizeof start ? strerror(start.err)
		                               : "the reaper died");
		/* It exits at once, or has: wait for it here. */
		while (waitpid(r->pid, NULL, 0) == -1 && errno == EINTR)
			;
		r->pid = 0;
		goto out;
	}
	r->job = start.job;
	/* EOF when the job has exec'd (close-on-exec), errno when not. */
	do
		n = read(p[0], &err, sizeof err);
	while (n == -1 && errno == EINTR);
	if (n == (ssize_t)sizeof err)
		r->exec_errno = err;
	ret = 0;
out:
	if (ret != 0) {
		if (r->fd != -1)
			close(r->fd);
		if (r->life != -1)
			close(r->life);
		r->fd = r->life = -1;
	}
	if (p[0] != -1)
		close(p[0]);
	if (p[1] != -1)
		close(p[1]);
	if (lf[0] != -1)
		close(lf[0]);
	if (lf[1] != -1)
		close(lf[1]);
	if (rp[0] != -1)
		close(rp[0]);
	if (rp[1] != -1)
		close(rp[1]);
	return ret;
}

int
reaper_done(struct reaper *r, int reaper_status)
{
	struct reaper_end end;
	ssize_t           n;
	int               ret = 0;

	do
		n = read(r->fd, &end, sizeof end);
	while (n == -1 && errno == EINTR);
	if (n == (ssize_t)sizeof end && WIFEXITED(reaper_status) &&
	    WEXITSTATUS(reaper_status) == 0) {
		r->status = end.status;
		r->leftovers = end.leftovers;
	} else {
		/* The reaper was killed: take the job down with it. */
		kill(-r->job, SIGKILL);
		r->status = SIGKILL;
		ret = -1;
	}
	close(r->fd);
	close(r->life);
	r->fd = r->life = -1;
	r->pid = 0;
	return ret;
}
