/*
 * conf-int.h: what the configuration's files (conf.c, conf-keys.c,
 * conf-value.c, conf-check.c, conf-secret.c, conf-print.c) share and
 * nothing else includes: the key table's descriptors and the tables
 * themselves.  doc/howto.md says how to add a key.
 */
#ifndef CRONGUARD_CONF_INT_H
#define CRONGUARD_CONF_INT_H

#include <stddef.h>
#include <stdarg.h>

#include <libconfig.h>

#include "conf.h"

/*
 * The key table (conf-keys.c): each configuration key is written once,
 * there, with its place in struct conf, its bounds and its default.
 * Parsing, defaults and freeing (conf.c), `config check` printing
 * (conf-print.c) and the list of known keys (conf_keys, checked against
 * cronguard.conf(5)) all walk these tables.
 */
enum key_kind {
	K_STR,   /* non-empty string, no control characters */
	K_TEXT,  /* non-empty string, newlines allowed (SQL) */
	K_SENUM, /* string from values[], stored as a string */
	K_ENUM,  /* string from values[], stored as its index (an int) */
	K_DUR,   /* duration string or bare seconds, stored in ms */
	K_UINT,
	K_INT,
	K_LL,
	K_DBL,
	K_BOOL,
	K_STRV,       /* array of strings; count at off2 */
	K_SECRET,     /* inline secret; the path of its _file key at off2 */
	K_SECRETFILE, /* path at off, the secret read from it at off2 */
	K_GROUP,      /* nested group: its struct at off (0: the same one) */
	K_NAMED,      /* group of named groups: array at off, count at off2 */
};

/* Channel types a key is valid for (0: every type). */
#define CH_SMTP (1u << CHANNEL_SMTP)
#define CH_HTTP (1u << CHANNEL_HTTP)
#define CH_AMQP (1u << CHANNEL_AMQP)

#define KF_URL 0x1     /* printed with userinfo and query masked */
#define KF_HEADERS 0x2 /* "Name: value" strings, values masked in print */
#define KF_EMPTY 0x4   /* K_STR: "" is a meaningful value */
#define KF_SIZE 0x10   /* K_LL: bytes, or a string with a K or M suffix */
/* K_SECRET, K_SECRETFILE: a Standard Webhooks signing secret, checked by
 * whsec_keys when it is read (inline: parsed; a file: conf_read_secrets) */
#define KF_SIGNING 0x20
#define KF_PRESENT \
	0x8 /* K_GROUP: bool at off2 says it was given; printed \
	     * only then */

struct parse;

struct key {
	const char        *name;
	enum key_kind      kind;
	size_t             off;
	size_t             off2;
	long long          min, max; /* integers; durations in ms */
	double             dmin, dmax;
	const char *const *values;
	const struct key  *sub;
	unsigned           types; /* CH_*: channel types it is valid for */
	unsigned           flags; /* KF_* */
	/* The default: def for integers, durations (ms), enumerations (the
	 * index) and booleans, ddef for numbers, sdef for strings (copied).
	 * A key valid for some channel types only may appear once per type
	 * with its own default. */
	long long   def;
	double      ddef;
	const char *sdef;
	/* K_NAMED: element size, how to parse one, its channel types. */
	size_t size;
	int (*parse)(struct parse *, const config_setting_t *, void *);
	unsigned (*types_of)(const void *);
	/* Printed only when this says so (NULL: always, when set). */
	int (*shown)(const void *);
	/* A comment printed after the value, or NULL. */
	const char *(*note)(const void *);
};

/* The field of key k in the struct at base, and its second field. */
#define KEY_FIELD(base, k) ((void *)((char *)(base) + (k)->off))
#define KEY_FIELD2(base, k) ((void *)((char *)(base) + (k)->off2))

/* Durations in the table are in milliseconds. */
#define DUR_S(s) ((long long)(s)*1000)
#define DUR_M(m) (DUR_S(m) * 60)
#define DUR_H(h) (DUR_M(h) * 60)

/* The top-level table (in the order config check prints it), and the
 * tables of one channel and of one job. */
extern const struct key conf_top_keys[];
extern const struct key conf_channel_keys[];
extern const struct key conf_job_keys[];

/* The values of the type, guard and catch_up keys, in their enums' order
 * (NULL-terminated). */
extern const char *const conf_channel_type_names[];
extern const char *const conf_guard_names[];
extern const char *const conf_catch_up_names[];

/* A key applies to a channel of these types (0: not in a channel). */
int conf_key_applies(const struct key *, unsigned types);
/* The same name appeared earlier in its table keys (a per-type twin). */
int conf_key_repeated(const struct key *keys, const struct key *k);
/* The CH_* type of a channel (struct conf_channel *). */
unsigned conf_channel_types(const void *);

/*
 * conf-secret.c: the authority of a URL ("user:pw@host:25" in
 * "smtp://user:pw@host:25/"), or NULL when it has no "://".  *at is set to
 * the '@' that ends the userinfo (the last one in the authority), or NULL
 * when there is none; *end to the end of the authority.
 */
const char *conf_url_authority(
    const char *url, const char **at, const char **end);

/* Parser state: the first error wins. */
struct parse {
	const char  *path;
	char        *abspath;  /* path, absolute (as libconfig names it) */
	char        *dir;      /* of path: the include directory */
	char       **includes; /* every @include'd file, resolved */
	size_t       nincludes;
	int          relative; /* an @include names a relative path */
	const char  *channel;  /* the channel being parsed, or NULL */
	const char  *job;      /* the job being parsed, or NULL */
	struct conf *c;
	config_t     cfg;
	char        *err;
};

/* conf-check.c: how one named channel or job is parsed (K_NAMED's parse). */
int conf_parse_channel(struct parse *, const config_setting_t *, void *);
int conf_parse_job(struct parse *, const config_setting_t *, void *);

/* conf-value.c: one setting, where it is and its value as a type. */
/* The file a setting came from (allocated): the configuration itself, or
 * an @include'd file, which libconfig names relative to the include
 * directory. */
char *conf_resolve(struct parse *, const char *file);
char *conf_source_file(struct parse *, const config_setting_t *);
/* "file:line" of setting s (allocated). */
char *conf_where(struct parse *, const config_setting_t *);
/* Record "file:line: msg" for setting s, the first error only: -1. */
int conf_error(struct parse *, const config_setting_t *, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same with the setting's key path: "file:line: jobs.x.lock: msg". */
int conf_key_error(struct parse *, const config_setting_t *, const char *fmt,
    ...) __attribute__((format(printf, 3, 4)));
/* A warning for config check, in the same form. */
void conf_key_warn(struct parse *, const config_setting_t *, const char *fmt,
    ...) __attribute__((format(printf, 3, 4)));
/* "jobs.x.lock: expected WANT, not an integer": -1. */
int conf_wrong_type(struct parse *, const config_setting_t *, const char *want);
/* A value as its key's type: 0 (or the string), or -1 (NULL) with the
 * error recorded in p. */
const char *conf_get_string(
    struct parse *, const config_setting_t *, int multiline);
int conf_get_enum(
    struct parse *, const config_setting_t *, const char *const *values);
int conf_get_duration(
    struct parse *, const config_setting_t *, const struct key *, int64_t *out);
int conf_get_integer(struct parse *, const config_setting_t *,
    const struct key *, long long *out);
int conf_get_size(struct parse *, const config_setting_t *, const struct key *,
    long long *out);
int conf_get_number(
    struct parse *, const config_setting_t *, const struct key *, double *out);
int conf_get_strv(
    struct parse *, const config_setting_t *, char ***outv, size_t *outn);

/* conf-check.c: a channel's and a job's own checks, and those across
 * keys. */
/* "http://" and "https://" (NULL-terminated), for conf_url_has_scheme. */
extern const char *const conf_http_schemes[];
/* Whether url starts with one of schemes (case-insensitive) and goes on
 * after it. */
int conf_url_has_scheme(const char *url, const char *const *schemes);
/* The member name of group g, or NULL (g NULL too). */
const config_setting_t *conf_member(
    const config_setting_t *g, const char *name);
/* The checks across keys, after every key parsed: 0 or -1. */
int conf_check(struct parse *);

/* conf-secret.c: what the checks and the parse use of it. */
/* The user of an amqp:// URL is the channel's username; a username key
 * that names another is an error (-1). */
int conf_amqp_url_user(
    struct parse *, const config_setting_t *, struct conf_channel *ch);
/* A URL with a password in it: only in a file only its owner reads
 * (conf_check_private); -1 with the error recorded otherwise. */
int conf_check_url_secret(
    struct parse *, const config_setting_t *, const char *url);
/* conf_file_problem's verdict on path: NULL, or "reason (fix)"
 * (allocated). */
char *conf_file_error(const char *path, const struct stat *st, int secret);
/* A K_SECRET and a K_SECRETFILE key of the table, into base: 0 or -1. */
int conf_parse_secret(
    struct parse *, const config_setting_t *, const struct key *, void *base);
int conf_parse_secret_file(
    struct parse *, const config_setting_t *, const struct key *, void *base);
/* Overwrite a secret before freeing it (NULL: nothing). */
void conf_secret_free(char *);

/* conf.c: parsing by the key table, and what the checks use of it. */
/* Parse group g by keys into base (channel types: which keys apply). */
int conf_parse_group(struct parse *, const config_setting_t *g,
    const struct key *keys, void *base, unsigned types);
/* Fill base with the defaults of keys for channel types. */
void conf_key_defaults(const struct key *keys, void *base, unsigned types);

#endif
