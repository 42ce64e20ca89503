/*
 * reaper.h: a job's whole process tree, and the lock held until it is
 * gone (doc/architecture.md, "The job's process tree").
 *
 * cronguard forks a small reaper, which becomes a child subreaper
 * (PR_SET_CHILD_SUBREAPER) and forks the job in a process group of its
 * own.  The reaper inherits every descriptor cronguard has, the lock
 * session's socket among them, and never execs: the server frees a named
 * lock only when the last copy of its socket is closed, so the lock lasts
 * until the reaper exits, and the reaper exits only when no process of the
 * job is left:
 *
 *  - the job exits: its group and every process reparented to the reaper
 *    get SIGTERM, then SIGKILL after kill_after_ms;
 *  - cronguard dies (kill -9 included: the reaper sees its lifeline pipe
 *    close): they all get SIGKILL at once.
 *
 * What escapes: a process that leaves the tree altogether, that is one
 * started through another service (systemd-run, at, ssh) or below a
 * subreaper of the job's own.  Run cronguard in a cgroup of its own
 * (systemd's KillMode=control-group, the default) to contain those.
 *
 * Linux only (prctl, signalfd), as the rest of the guard.
 */
#ifndef CRONGUARD_REAPER_H
#define CRONGUARD_REAPER_H

#include <sys/types.h>

#include <stdint.h>

struct reaper {
	pid_t pid;        /* the reaper; 0 when gone */
	pid_t job;        /* the job: its pid and process group */
	int   exec_errno; /* the job's exec failed: why; 0 it ran */
	int   status;     /* the job's wait status, once reaper_done */
	int   leftovers;  /* processes killed after the job exited */
	int   fd;         /* reaper to cronguard: reports; -1 closed */
	int   life;       /* cronguard's end of the lifeline; -1 closed */
};

/*
 * Start argv under a reaper: the job in its own process group, with
 * default signal dispositions and an empty mask, outfd (-1: inherited) on
 * its stdout and stderr, SIGKILL if the reaper dies.  kill_after_ms is
 * the grace between SIGTERM and SIGKILL for what the job leaves behind.
 * Returns 0 (r->job set, or r->exec_errno when the job could not be
 * executed) or -1 with *errstr.  The caller reaps r->pid (waitpid) and
 * then calls reaper_done.
 */
int reaper_spawn(char *const *argv, int outfd, int64_t kill_after_ms,
    struct reaper *r, char **errstr);

/*
 * After waitpid(r->pid) returned: read the job's wait status into
 * r->status and r->leftovers, close the pipes.  0, or -1 when the reaper
 * died before it reported (r->status is then a SIGKILL death).
 */
int reaper_done(struct reaper *r, int reaper_status);

#endif
