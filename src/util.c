/* util.c: small helpers shared by every module. */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <math.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "util.h"

static void
oom(void)
{
	fputs("cronguard: out of memory\n", stderr);
	abort();
}

void *
xmalloc(size_t n)
{
	void *p;

	if ((p = malloc(n == 0 ? 1 : n)) == NULL)
		oom();
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p;

	if ((p = calloc(n == 0 ? 1 : n, size == 0 ? 1 : size)) == NULL)
		oom();
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	if ((p = realloc(p, n == 0 ? 1 : n)) == NULL)
		oom();
	return p;
}

void *
xreallocarray(void *p, size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size)
		oom();
	return xrealloc(p, n * size);
}

char *
xstrdup(const char *s)
{
	char *p;

	if ((p = strdup(s)) == NULL)
		oom();
	return p;
}

char *
xstrndup(const char *s, size_t n)
{
	char *p;

	if ((p = strndup(s, n)) == NULL)
		oom();
	return p;
}

char *
xvasprintf(const char *fmt, va_list ap)
{
	char *s;

	if (vasprintf(&s, fmt, ap) == -1)
		oom();
	return s;
}

char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	char   *s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

int
parse_ll(const char *s, long long min, long long max, long long *out,
    const char **errstr)
{
	char     *end;
	long long v;

	if (s == NULL || *s == '\0' || (*s != '-' && (*s < '0' || *s > '9'))) {
		*errstr = "invalid";
		return -1;
	}
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end != '\0') {
		*errstr = "invalid";
		return -1;
	}
	if ((errno == ERANGE && v == LLONG_MIN) || v < min) {
		*errstr = "too small";
		return -1;
	}
	if ((errno == ERANGE && v == LLONG_MAX) || v > max) {
		*errstr = "too large";
		return -1;
	}
	*out = v;
	return 0;
}

int
parse_ull(const char *s, unsigned long long max, unsigned long long *out,
    const char **errstr)
{
	char              *end;
	unsigned long long v;

	/* strtoull accepts "-1" as a huge value: insist on a digit first. */
	if (s == NULL || *s < '0' || *s > '9') {
		*errstr = "invalid";
		return -1;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end != '\0') {
		*errstr = "invalid";
		return -1;
	}
	if (errno == ERANGE || v > max) {
		*errstr = "too large";
		return -1;
	}
	*out = v;
	return 0;
}

int
parse_double(
    const char *s, double min, double max, double *out, const char **errstr)
{
	char  *end;
	double v;

	if (s == NULL || *s == '\0' || *s == ' ' || *s == '\t') {
		*errstr = "invalid";
		return -1;
	}
	errno = 0;
	v = strtod(s, &end);
	if (*end != '\0' || errno == ERANGE || !isfinite(v)) {
		*errstr = "invalid";
		return -1;
	}
	if (v < min) {
		*errstr = "too small";
		return -1;
	}
	if (v > max) {
		*errstr = "too large";
		return -1;
	}
	*out = v;
	return 0;
}

void
buf_init(struct buf *b)
{
	b->data = NULL;
	b->len = b->cap = 0;
}

void
buf_free(struct buf *b)
{
	free(b->data);
	buf_init(b);
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data != NULL)
		b->data[0] = '\0';
}

static void
buf_grow(struct buf *b, size_t extra)
{
	size_t need;

	if (extra > SIZE_MAX - b->len - 1)
		oom();
	need = b->len + extra + 1;
	if (need <= b->cap)
		return;
	if (b->cap == 0)
		b->cap = 64;
	while (b->cap < need)
		b->cap = b->cap > SIZE_MAX / 2 ? need : b->cap * 2;
	b->data = xrealloc(b->data, b->cap);
}

void
buf_add(struct buf *b, const void *p, size_t n)
{
	buf_grow(b, n);
	if (n != 0)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void
buf_adds(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void
buf_addc(struct buf *b, char c)
{
	buf_add(b, &c, 1);
}

void
buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	int     n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		oom();
	buf_grow(b, (size_t)n);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(b, fmt, ap);
	va_end(ap);
}

void
buf_add_quoted(struct buf *b, const char *s)
{
	const unsigned char *u;

	buf_addc(b, '"');
	for (u = (const unsigned char *)s; *u != '\0'; u++) {
		switch (*u) {
		case '"':
			buf_adds(b, "\\\"");
			break;
		case '\\':
			buf_adds(b, "\\\\");
			break;
		case '\n':
			buf_adds(b, "\\n");
			break;
		case '\r':
			buf_adds(b, "\\r");
			break;
		case '\t':
			buf_adds(b, "\\t");
			break;
		default:
			if (*u < 0x20 || *u == 0x7f)
				buf_printf(b, "\\x%02x", *u);
			else
				buf_addc(b, (char)*u);
		}
	}
	buf_addc(b, '"');
}

const char *
buf_str(const struct buf *b)
{
	return b->data != NULL ? b->data : "";
}

char *
buf_steal(struct buf *b)
{
	char *s;

	if (b->data == NULL)
		return xstrdup("");
	s = b->data;
	buf_init(b);
	return s;
}

int64_t
now_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t util_started_ms;

void
process_mark_start(void)
{
	util_started_ms = now_mono_ms();
}

int64_t
process_started_ms(void)
{
	return util_started_ms != 0 ? util_started_ms : now_mono_ms();
}

int64_t
now_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
sleep_ms(int64_t ms)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000;
	nanosleep(&ts, NULL);
}

const char *
self_hostname(void)
{
	static char host[256];
	char       *dot;

	if (host[0] == '\0') {
		if (gethostname(host, sizeof host) != 0 || host[0] == '\0')
			snprintf(host, sizeof host, "%s", "localhost");
		host[sizeof host - 1] = '\0';
		if ((dot = strchr(host, '.')) != NULL)
			*dot = '\0';
	}
	return host;
}

const char *
self_identity(void)
{
	static char  id[300];
	static pid_t pid;

	/* Recomputed after fork: the child is a different claimant. */
	if (pid != getpid()) {
		pid = getpid();
		snprintf(id, sizeof id, "%s:%ld", self_hostname(), (long)pid);
	}
	return id;
}

char *
user_name(unsigned long uid)
{
	struct passwd *pw = getpwuid((uid_t)uid);

	if (pw != NULL && pw->pw_name != NULL)
		return xstrdup(pw->pw_name);
	return xasprintf("%lu", uid);
}

/* Free buf, overwriting its first len bytes first if they are secret. */
static void
util_release(char *buf, size_t len, bool secret)
{
	if (buf != NULL && secret)
		explicit_bzero(buf, len);
	free(buf);
}

/*
 * path whole, at most max bytes, read straight into one growing
 * allocation (NUL-terminated); with secret, every buffer given up on the
 * way (outgrown, or on failure) is overwritten before it is freed, so
 * the result is the only copy left.
 */
static char *
util_read_file(
    const char *path, size_t max, size_t *len, bool secret, char **errstr)
{
	char   *data = NULL, *bigger;
	size_t  cap = 0, n = 0;
	ssize_t r;
	int     fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		*errstr =
		    xasprintf("cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		if (n == cap) {
			cap = cap == 0 ? 4096 : cap * 2;
			if (cap > max + 1)
				cap = max + 1;
			bigger = xmalloc(cap + 1);
			if (n > 0)
				memcpy(bigger, data, n);
			util_release(data, n, secret);
			data = bigger;
		}
		r = read(fd, data + n, cap - n);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			*errstr = xasprintf(
			    "cannot read %s: %s", path, strerror(errno));
			goto fail;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			*errstr =
			    xasprintf("%s: larger than %zu bytes", path, max);
			goto fail;
		}
	}
	close(fd);
	data[n] = '\0';
	if (len != NULL)
		*len = n;
	return data;

fail:
	close(fd);
	util_release(data, n, secret);
	return NULL;
}

char *
read_file(const char *path, size_t max, size_t *len, char **errstr)
{
	return util_read_file(path, max, len, false, errstr);
}

char *
read_secret_file(const char *path, char **errstr)
{
	char  *s;
	size_t len;

	if ((s = util_read_file(path, 64 * 1024, &len, true, errstr)) == NULL)
		return NULL;
	while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == '\r'))
		s[--len] = '\0';
	return s;
}

int
write_file_atomic(const char *path, const void *data, size_t len, char **errstr)
{
	mode_t mask;

	mask = umask(0);
	umask(mask);
	return write_file_atomic_mode(path, data, len,
	    (S_IRUSR | S_IWUSR | S_IRGRP | S_IROTH) & ~mask, NULL, errstr);
}

/* Whether path may be replaced: absent, or a regular file.  Renaming
 * over a device node, FIFO, directory or symbolic link would replace
 * something that was never a file of ours.  0, or -1 with *errstr. */
static int
file_replaceable(const char *path, char **errstr)
{
	struct stat sb;

	if (lstat(path, &sb) == 0) {
		if (!S_ISREG(sb.st_mode)) {
			*errstr = xasprintf(
			    "%s is not a regular file: not replacing it", path);
			return -1;
		}
	} else if (errno != ENOENT) {
		*errstr =
		    xasprintf("cannot stat %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Write the len bytes of data to fd (the file name), then fsync it.  0,
 * or -1 with *errstr. */
static int
write_synced(
    int fd, const void *data, size_t len, const char *name, char **errstr)
{
	const char *p = data;
	ssize_t     n;

	while (len > 0) {
		if ((n = write(fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			*errstr = xasprintf(
			    "cannot write %s: %s", name, strerror(errno));
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	if (fsync(fd) == -1) {
		*errstr =
		    xasprintf("cannot write %s: %s", name, strerror(errno));
		return -1;
	}
	return 0;
}

int
write_file_atomic_mode(const char *path, const void *data, size_t len,
    mode_t mode, const char *group, char **errstr)
{
	struct group *gr;
	char         *tmp = NULL;
	int           fd = -1, n, rc = -1;

	if (file_replaceable(path, errstr) != 0)
		goto out;
	/* A fresh name (O_EXCL) beside the target: nothing planted under
	 * a predictable name is followed, and rename stays within one file
	 * system.  Not *.prom, so the textfile collector skips it. */
	tmp = xasprintf("%s.XXXXXX", path);
	if ((fd = mkostemp(tmp, O_CLOEXEC)) == -1) {
		*errstr =
		    xasprintf("cannot create %s: %s", tmp, strerror(errno));
		free(tmp);
		tmp = NULL;
		goto out;
	}
	/* mkstemp creates 0600; the file is for another reader (the
	 * metrics collector, the web server's group). */
	if (group != NULL && (gr = getgrnam(group)) != NULL &&
	    fchown(fd, (uid_t)-1, gr->gr_gid) == -1) {
		*errstr = xasprintf("cannot give %s to group %s: %s", tmp,
		    group, strerror(errno));
		goto out;
	}
	if (fchmod(fd, mode) == -1) {
		*errstr =
		    xasprintf("cannot chmod %s: %s", tmp, strerror(errno));
		goto out;
	}
	if (write_synced(fd, data, len, tmp, errstr) != 0)
		goto out;
	n = close(fd);
	fd = -1;
	if (n == -1) {
		*errstr =
		    xasprintf("cannot write %s: %s", tmp, strerror(errno));
		goto out;
	}
	if (rename(tmp, path) == -1) {
		*errstr = xasprintf(
		    "cannot rename %s to %s: %s", tmp, path, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (fd != -1)
		close(fd);
	if (rc != 0 && tmp != NULL)
		unlink(tmp);
	free(tmp);
	return rc;
}

void
uuid_v4(char out[37])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char     r[16];
	size_t            i, o;

	if (RAND_bytes(r, sizeof r) != 1) {
		fputs("cronguard: no randomness available\n", stderr);
		abort();
	}
	r[6] = (r[6] & 0x0f) | 0x40;
	r[8] = (r[8] & 0x3f) | 0x80;
	for (i = 0, o = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hex[r[i] >> 4];
		out[o++] = hex[r[i] & 0xf];
	}
	out[o] = '\0';
}

/* The length of the UTF-8 sequence a lead byte c starts, or 0 when c
 * cannot lead one of two or more bytes. */
static size_t
utf8_lead_len(unsigned char c)
{
	if (c >= 0xc2 && c <= 0xdf)
		return 2;
	if (c >= 0xe0 && c <= 0xef)
		return 3;
	if (c >= 0xf0 && c <= 0xf4)
		return 4;
	return 0;
}

size_t
utf8_seq_len(const unsigned char *s, size_t avail)
{
	size_t n, i;

	if (avail == 0)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if ((n = utf8_lead_len(s[0])) == 0)
		return 0;
	for (i = 1; i < n; i++) {
		if (i >= avail || (s[i] & 0xc0) != 0x80)
			return 0;
	}
	/* RFC 3629: no overlong form, no surrogate, nothing past U+10FFFF
	 * (jansson refuses them too). */
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] > 0x8f))
		return 0;
	return n;
}

int
utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t               n;

	while (*p != '\0') {
		if ((n = utf8_seq_len(p, SIZE_MAX)) == 0)
			return 0;
		p += n;
	}
	return 1;
}

/* Whether s[0..avail) is the start of a UTF-8 sequence longer than
 * avail: a lead byte and continuation bytes only. */
static int
utf8_cut(const unsigned char *s, size_t avail)
{
	size_t need, i;

	if ((need = utf8_lead_len(s[0])) == 0 || avail >= need)
		return 0;
	for (i = 1; i < avail; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	}
	return 1;
}

char *
peer_text(const char *s, size_t len, size_t max)
{
	const unsigned char *u = (const unsigned char *)s;
	struct buf           b;
	unsigned char        c[2];
	size_t               i, n;
	unsigned             cp;

	buf_init(&b);
	buf_adds(&b, "");
	for (i = 0; i < len; i += n) {
		if ((n = utf8_seq_len(u + i, len - i)) == 0) {
			if (utf8_cut(u + i, len - i))
				break; /* a sequence cut by len */
			/* Not UTF-8: Latin-1 for its letters, else "?". */
			n = 1;
			cp = u[i] >= 0xa0 ? u[i] : '?';
		} else if (n == 1) {
			cp = u[i];
		} else if (n == 2 && u[i] == 0xc2 && u[i + 1] < 0xa0) {
			cp = ' '; /* C1 control */
		} else {
			if (b.len + n > max)
				break;
			buf_add(&b, s + i, n);
			continue;
		}
		if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0))
			cp = ' ';
		if (cp < 0x80) {
			if (b.len + 1 > max)
				break;
			buf_addc(&b, (char)cp);
			continue;
		}
		if (b.len + 2 > max)
			break;
		c[0] = (unsigned char)(0xc0 | (cp >> 6));
		c[1] = (unsigned char)(0x80 | (cp & 0x3f));
		buf_add(&b, c, 2);
	}
	while (b.len > 0 && b.data[b.len - 1] == ' ')
		b.data[--b.len] = '\0';
	return buf_steal(&b);
}

void
line_copy(char *dst, size_t dstlen, const char *src, size_t len)
{
	size_t i, j = 0;

	for (i = 0; i < len && j + 1 < dstlen; i++) {
		if (src[i] == '\r' || src[i] == '\n')
			break;
		dst[j++] = ((unsigned char)src[i] < 0x20 || src[i] == 0x7f)
		    ? ' '
		    : src[i];
	}
	dst[j] = '\0';
}

size_t
discard_write(char *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
}

const char *
signal_name(int sig)
{
	static const struct {
		int         sig;
		const char *name;
	} names[] = {
		{ SIGHUP, "SIGHUP" },
		{ SIGINT, "SIGINT" },
		{ SIGQUIT, "SIGQUIT" },
		{ SIGILL, "SIGILL" },
		{ SIGTRAP, "SIGTRAP" },
		{ SIGABRT, "SIGABRT" },
		{ SIGBUS, "SIGBUS" },
		{ SIGFPE, "SIGFPE" },
		{ SIGKILL, "SIGKILL" },
		{ SIGUSR1, "SIGUSR1" },
		{ SIGSEGV, "SIGSEGV" },
		{ SIGUSR2, "SIGUSR2" },
		{ SIGPIPE, "SIGPIPE" },
		{ SIGALRM, "SIGALRM" },
		{ SIGTERM, "SIGTERM" },
		{ SIGCHLD, "SIGCHLD" },
		{ SIGCONT, "SIGCONT" },
		{ SIGSTOP, "SIGSTOP" },
		{ SIGTSTP, "SIGTSTP" },
		{ SIGTTIN, "SIGTTIN" },
		{ SIGTTOU, "SIGTTOU" },
		{ SIGURG, "SIGURG" },
		{ SIGXCPU, "SIGXCPU" },
		{ SIGXFSZ, "SIGXFSZ" },
		{ SIGVTALRM, "SIGVTALRM" },
		{ SIGPROF, "SIGPROF" },
		{ SIGWINCH, "SIGWINCH" },
		{ SIGIO, "SIGIO" },
		{ SIGSYS, "SIGSYS" },
	};
	static char other[32];
	size_t      i;

	for (i = 0; i < nitems(names); i++) {
		if (names[i].sig == sig)
			return names[i].name;
	}
	snprintf(other, sizeof other, "signal %d", sig);
	return other;
}

struct name_index_ent {
	const char *name;
	size_t      i;
};

static int
name_index_cmp(const void *a, const void *b)
{
	const struct name_index_ent *x = a, *y = b;

	return strcasecmp(x->name, y->name);
}

void
name_index_init(struct name_index *ni, const char *const *names, size_t n)
{
	size_t i;

	ni->ent = xcalloc(n + 1, sizeof *ni->ent);
	ni->n = n;
	for (i = 0; i < n; i++) {
		ni->ent[i].name = names[i];
		ni->ent[i].i = i;
	}
	qsort(ni->ent, n, sizeof *ni->ent, name_index_cmp);
}

long
name_index_find(const struct name_index *ni, const char *name)
{
	struct name_index_ent key, *e;

	if (name == NULL || ni->n == 0)
		return -1;
	key.name = name;
	key.i = 0;
	e = bsearch(&key, ni->ent, ni->n, sizeof *ni->ent, name_index_cmp);
	return e != NULL ? (long)e->i : -1;
}

void
name_index_free(struct name_index *ni)
{
	free(ni->ent);
	ni->ent = NULL;
	ni->n = 0;
}
