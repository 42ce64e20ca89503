/* util.h: small helpers shared by every module. */
#ifndef CRONGUARD_UTIL_H
#define CRONGUARD_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define nitems(a) (sizeof(a) / sizeof((a)[0]))

/* Allocation that aborts on failure: out of memory in a short-lived
 * cron binary is not a condition worth a recovery path in every caller. */
void *xmalloc(size_t);
void *xcalloc(size_t, size_t);
void *xrealloc(void *, size_t);
void *xreallocarray(void *, size_t, size_t);
char *xstrdup(const char *);
char *xstrndup(const char *, size_t);
/* Allocated, formatted string (vasprintf that aborts on failure). */
char *xasprintf(const char *, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *, va_list) __attribute__((format(printf, 1, 0)));

/*
 * Bounded integer parse in the spirit of OpenBSD strtonum(3): the whole of
 * s must be a base-10 integer in [min, max].  Returns 0 and sets *out, or -1
 * with *errstr set to a static string ("invalid", "too small", "too large").
 */
int parse_ll(const char *s, long long min, long long max, long long *out,
    const char **errstr);
int parse_ull(const char *s, unsigned long long max, unsigned long long *out,
    const char **errstr);
/* Same for a finite double in [min, max]. */
int parse_double(
    const char *s, double min, double max, double *out, const char **errstr);

/* A growable byte buffer, always NUL-terminated. */
struct buf {
	char  *data;
	size_t len;
	size_t cap;
};
void buf_init(struct buf *);
void buf_free(struct buf *);
void buf_reset(struct buf *);
void buf_add(struct buf *, const void *, size_t);
void buf_adds(struct buf *, const char *);
void buf_addc(struct buf *, char);
void buf_printf(struct buf *, const char *, ...)
    __attribute__((format(printf, 2, 3)));
void buf_vprintf(struct buf *, const char *, va_list)
    __attribute__((format(printf, 2, 0)));
/* s in double quotes, with \" \\ \n \r \t and \xHH for the other control
 * bytes: a libconfig string (config check) and a logfmt value (log.c). */
void buf_add_quoted(struct buf *, const char *s);
/* Detach the data (caller frees); the buffer is left empty. */
char *buf_steal(struct buf *);
/* b's text, or "" while it is empty; stays b's. */
const char *buf_str(const struct buf *b);

/*
 * Names looked up by name: the index of a row that a statement over a
 * table returns by its name column among the n names asked for, when the
 * statement filters with a list of literals (db_format's %A) instead of
 * joining a table of them (%K).  Compared as the schema's utf8mb4
 * general collation compares the names cronguard allows (ASCII letters,
 * digits, '-', '_'): without case.  The names stay the caller's.
 */
struct name_index {
	struct name_index_ent *ent;
	size_t                 n;
};
void name_index_init(struct name_index *, const char *const *names, size_t n);
/* The index of name among the names, or -1 when it is none of them. */
long name_index_find(const struct name_index *, const char *name);
void name_index_free(struct name_index *);

/* Monotonic and wall clocks in milliseconds. */
int64_t now_mono_ms(void);
int64_t now_wall_ms(void);
/* The monotonic time main() started (process_mark_start, called first
 * thing), from which outbox dispatch --for counts; now_mono_ms() when it
 * was never marked. */
void    process_mark_start(void);
int64_t process_started_ms(void);
/* Sleep for ms milliseconds, returning early (EINTR) is allowed. */
void sleep_ms(int64_t);

/* "host:pid" of this process, static storage. */
const char *self_identity(void);
/* The short host name, static storage. */
const char *self_hostname(void);
/* The name of user uid, or its number when it has none (allocated). */
char *user_name(unsigned long uid);

/* Read a whole (small) file; returns NULL and sets *errstr (allocated). */
char *read_file(const char *path, size_t max, size_t *len, char **errstr);
/* Read a secret file: whole file (at most 64 KiB), trailing newline
 * stripped; the returned string is the only copy left in memory. */
char *read_secret_file(const char *path, char **errstr);

/* Write data to path atomically: a temporary file made by mkstemp in the
 * same directory (mode 0644 less the umask), fsync, rename.  Refuses to
 * replace anything but a regular file (a symbolic link, device, FIFO).
 * Returns 0 or -1 with *errstr allocated. */
int write_file_atomic(
    const char *path, const void *data, size_t len, char **errstr);
/* The same with the file's mode, and its group when group is not NULL
 * and names a group of the system (none such: the file keeps the
 * process's group; a group the process cannot give it to: -1). */
int write_file_atomic_mode(const char *path, const void *data, size_t len,
    mode_t mode, const char *group, char **errstr);

/* A fresh random UUID (version 4) as 36 characters plus NUL. */
void uuid_v4(char out[37]);

/* The length of the well-formed UTF-8 sequence at s (at most avail bytes;
 * SIZE_MAX for a NUL-terminated string: the NUL ends any sequence), or 0
 * when it is not one. */
size_t utf8_seq_len(const unsigned char *s, size_t avail);
/* Whether the NUL-terminated s is well-formed UTF-8. */
int utf8_valid(const char *s);

/* The most bytes of a peer's text that the relay stores (last_error,
 * an attempt's detail, a channel's error). */
#define PEER_TEXT_MAX 1024

/* A text that came from a peer (a server's reply, a response body, a
 * library's error), made storable and printable: well-formed UTF-8 (a
 * byte that is not, A0-FF read as Latin-1, else "?"), control characters
 * (C0, DEL, C1) as spaces, a sequence cut short at the end and trailing
 * spaces dropped, cut on a character boundary to at most max bytes.  s[0..len);
 * allocated. */
char *peer_text(const char *s, size_t len, size_t max);

/* "SIGTERM" for SIGTERM: the name of a signal (static), or "signal N"
 * (in a static buffer) for one without a name here. */
const char *signal_name(int sig);

/* Copy a protocol line (a server's reply from a libcurl trace) into dst
 * (dstlen > 0 bytes): up to its line end, control characters as spaces,
 * truncated, NUL-terminated. */
void line_copy(char *dst, size_t dstlen, const char *src, size_t len);

/* A libcurl CURLOPT_WRITEFUNCTION that drops a response body (the alert
 * hook, ping URLs, doctor's probes). */
size_t discard_write(char *p, size_t size, size_t n, void *arg);

#endif
