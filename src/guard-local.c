/* guard-local.c: the local flock of a guarded job, keyed like its database
 * lock, in the invoking user's private runtime directory (cronguard(1),
 * GUARDED JOBS; doc/architecture.md, "The guard engine"). */
#include "config.h"

#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "duration.h"
#include "exitcode.h"
#include "guard-int.h"
#include "log.h"
#include "util.h"

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

/* The local layer of gj: its flock file, keyed like the named lock (so
 * that jobs sharing a lock name also stop each other locally) in this
 * user's private directory.  *path (allocated) names the file. */
enum local_status
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

/* A busy local flock: skip, or 75 when held too long.  A holder that
 * cannot be identified (no live process wrote the file) is logged at
 * warning level every time it makes a run skip, so that it cannot keep
 * a job from running unnoticed. */
int
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
