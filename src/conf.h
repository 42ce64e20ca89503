/* conf.h: the configuration (cronguard.conf(5)), parsed with libconfig. */
#ifndef CRONGUARD_CONF_H
#define CRONGUARD_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output.h"

struct stat;

enum tls_mode {
	TLS_DISABLED,
	TLS_PREFERRED,
	TLS_REQUIRED,
	TLS_VERIFY_IDENTITY
};
enum guard_kind {
	GUARD_NAMED_LOCK,
	GUARD_LOCAL,
	GUARD_NONE,
	GUARD_LEASE, /* a row with an expiry (lease.h) */
	GUARD_AUTO,  /* named lock, or a lease on a Galera node */
};
enum on_lock_lost { LOCK_LOST_TERMINATE, LOCK_LOST_CONTINUE };
enum ordering { ORDERING_PER_KEY, ORDERING_NONE };
/* Which earlier rows of a key hold a row back (cronguard-outbox(7),
 * ORDERING): those of its own channel, or of every channel. */
enum ordering_scope { SCOPE_CHANNEL, SCOPE_GLOBAL };
/* Whether a channel's FAILED row holds its key until retried. */
enum on_failure { ON_FAILURE_BLOCK, ON_FAILURE_SKIP };
/* Which attempts the finalise writes to outbox_attempts. */
enum attempt_log { ATTEMPT_LOG_ALL, ATTEMPT_LOG_FAILURES, ATTEMPT_LOG_NONE };
/*
 * The one list of channel types: X(NAME, name) for each.  The enum, the
 * configuration's `type` names (conf-keys.c), the dispatcher's table of
 * ops (channel.c, CHANNEL_OPS_NAME in channel.h) and `cronguard
 * version`'s list all come from it; doc/architecture.md, "Channels".
 */
#define CHANNEL_TYPES(X) X(SMTP, smtp) X(HTTP, http) X(AMQP, amqp)
#define CHANNEL_TYPE_ENUM_(u, l) CHANNEL_##u,
enum channel_type { CHANNEL_TYPES(CHANNEL_TYPE_ENUM_) CHANNEL_NTYPES };
/* The configuration's name of a channel type ("smtp"). */
const char *conf_channel_type_name(enum channel_type);
/* Which of a scheduled job's slots a launch runs (cronguard.conf(5),
 * "Schedules"). */
enum catch_up { CATCH_UP_LATEST, CATCH_UP_ALL, CATCH_UP_NONE };
/* The status failed slots raise in jobs check: CHECK_WARNING or
 * CHECK_CRITICAL (report.h). */
enum alert_level { ALERT_WARNING, ALERT_CRITICAL };

struct schedule;
struct tzone;

struct conf_database {
	char         *host; /* default "127.0.0.1" unless socket set */
	unsigned      port; /* default 3306 */
	char         *socket;
	char         *user;
	char         *password; /* from password or password_file */
	char         *password_file;
	char         *option_file;
	char         *option_group;
	char         *name;               /* required */
	int64_t       connect_timeout_ms; /* default 5s */
	int64_t       connect_retry_ms;   /* default 30s; 0 = no retry */
	int64_t       read_timeout_ms;    /* default 30s */
	int64_t       write_timeout_ms;   /* default 30s */
	enum tls_mode tls_mode;           /* default preferred */
	char         *tls_ca;
	char         *tls_cert;
	char         *tls_key;
};

struct conf_outbox {
	unsigned  batch_size;      /* 50, 1..1000 */
	unsigned  pipeline;        /* batches in flight per dispatcher, 1..16 */
	long long max_batch_bytes; /* claimed payload bytes in flight per
	                            * dispatcher (outbox_claim_budget) */
	int64_t             poll_interval_ms;             /* 1s */
	int64_t             lease_ms;                     /* 5m */
	int64_t             watchdog_ms;                  /* 15m */
	unsigned            max_attempts;                 /* 8 */
	int64_t             backoff_initial_ms;           /* 30s */
	double              backoff_multiplier;           /* 2.0 */
	int64_t             backoff_max_ms;               /* 1h */
	double              backoff_jitter;               /* 0.2, in [0, 1] */
	enum ordering       ordering;                     /* per_key */
	enum ordering_scope ordering_scope;               /* channel */
	enum attempt_log    attempt_log;                  /* all */
	bool                keep_sent;                    /* true */
	long long           pending_warn, pending_crit;   /* 1000, 10000 */
	int64_t   oldest_due_warn_ms, oldest_due_crit_ms; /* 5m, 30m */
	long long failed_warn, failed_crit;               /* 1, 100 */
	/* Set by conf_load: the configured channels (struct conf's), for
	 * the per-channel keys the outbox statements read (on_failure). */
	const struct conf_channel *chans;
	size_t                     nchans;
};

struct conf_channel {
	char             *name;
	int               line; /* where it was defined, for messages */
	enum channel_type type;
	char             *url;
	int64_t           timeout_ms; /* 30s smtp, 10s http */
	double            rate; /* messages/s across all hosts; 0 = none */
	long long         daily_quota;         /* per UTC day; 0 = none */
	unsigned          circuit_failures;    /* 0 = no circuit breaker */
	int64_t           circuit_cooldown_ms; /* 1m */
	enum on_failure   on_failure;          /* block */
	int64_t           ttl_ms; /* a row without expires_at expires this
	                           * long after created_at; 0 = never */
	char *tls_ca;             /* CA bundle (CURLOPT_CAINFO); NULL =
	                           * libcurl's default store */
	/* smtp */
	char     *username;
	char     *password; /* from password or password_file */
	char     *password_file;
	char     *from;
	char     *tls; /* smtp://: "none" (default) | "required" */
	bool      allow_plaintext_auth; /* credentials without TLS */
	unsigned  connections;          /* 4 */
	long long max_size;             /* bytes, default 10 MiB */
	/* http */
	char    *method;  /* POST */
	char   **headers; /* "Name: value" */
	size_t   nheaders;
	char    *signing_secret; /* from signing_secret(_file) */
	char    *signing_secret_file;
	unsigned concurrency; /* 16 */
	/* amqp (username, password, password_file shared with smtp) */
	char *exchange;         /* "" = the default exchange */
	char *routing_key;      /* template; NULL = "{event_type}" */
	bool  mandatory;        /* true: unroutable = basic.return */
	bool  unroutable_retry; /* false: unroutable is permanent */
};

/* The default lease: three heartbeats, so that two may fail before
 * another host can take it. */
#define CONF_LEASE_BEATS 3

struct conf_job {
	char   *name;
	int     line;
	char  **command; /* argv, NULL-terminated; or NULL */
	size_t  ncommand;
	char   *sql;             /* or NULL; exactly one of command/sql */
	int64_t max_runtime_ms;  /* 1h */
	int64_t timeout_ms;      /* 0 = none */
	int64_t expect_every_ms; /* 0 = not monitored */
	int64_t grace_ms;        /* 10m; with a schedule,
	                          * conf_schedule_grace */
	int64_t           heartbeat_ms; /* 30s */
	int64_t           lease_ms;     /* CONF_LEASE_BEATS heartbeats */
	enum guard_kind   guard;
	char             *lock; /* default "cronguard:<db name>:<job>" */
	enum on_lock_lost on_lock_lost;
	int               busy_exit;   /* 0 */
	int64_t           once_per_ms; /* 0 = every launch runs */
	char             *timezone;    /* of the slots (once_per's or the
	                                * schedule's); NULL: the database's */
	/* schedule: the expression as given, parsed; NULL: none.  tzone is
	 * timezone opened in the host's tzdata when a schedule is set
	 * (NULL: no timezone key, the database's zone). */
	char            *schedule_text;
	struct schedule *schedule;
	struct tzone    *tzone;
	enum catch_up    catch_up;             /* latest */
	unsigned         backfill_limit;       /* 10, 1..1000 (catch_up all) */
	int64_t          starting_deadline_ms; /* catch_up none; default:
	                                        * grace */
	int64_t missed_lookback_ms;            /* 24h: jobs check's window
	                                        * of missed slots */
	unsigned         alert_after_failures; /* 1, 1..1000 */
	enum alert_level alert_level;          /* warning */
	unsigned         keep_runs;  /* CONF_KEEP_RUNS; 0 = keep all */
	enum output_mode output;     /* on_failure */
	long long        output_max; /* bytes; OUTPUT_MAX_DEFAULT */
	char            *ping_url;   /* NULL: none; from ping_url_file
	                              * once conf_read_job_secrets ran */
	char *ping_url_file;
};

/* The runs kept per job by default (keep_runs): three years of a daily
 * job, a week of one every ten minutes. */
#define CONF_KEEP_RUNS 1000

/* A secret file (password_file, signing_secret_file) and where its
 * content goes. */
struct conf_secret {
	char       *where;   /* "file:line: channels.mail.password_file" */
	const char *path;    /* the key's value, owned by its struct */
	const char *channel; /* the channel's name; NULL: the database's */
	const char *job;     /* or the job's (ping_url_file) */
	char      **dest;    /* the secret, once read */
	int         signing; /* a signing secret: whsec_keys must read it */
};

struct conf {
	char *path;        /* the file that was read */
	char *runtime_dir; /* flock files; default $RUNTIME_DIRECTORY,
	                    * else /run/cronguard if writable, else
	                    * $TMPDIR or /tmp */
	bool                 have_database;
	struct conf_database db;
	struct conf_outbox   outbox;
	struct conf_channel *channels;
	size_t               nchannels;
	struct conf_job     *jobs;
	size_t               njobs;
	char                *alert_url;        /* NULL = no alert channel */
	int64_t              alert_timeout_ms; /* 10s */
	struct conf_secret  *secrets;          /* every secret file */
	size_t               nsecrets;
	char               **warnings; /* "file:line: key: message", for
	                                * config check */
	size_t nwarnings;
};

/* Fill every field with its documented default (no database name).
 * Allocates nothing: conf_load() may be called over the result. */
void conf_defaults(struct conf *);

/* Fill a job with the defaults of a configured job that sets no keys
 * (exec uses them for its ad-hoc job).  Allocates nothing. */
void conf_job_defaults(struct conf_job *);

/*
 * Read and validate path.  On success returns 0 with *c filled.  On failure
 * returns -1 and *errstr is an allocated "file:line: message" (exit 78).
 * Validation is strict: unknown keys, wrong types, bad durations, lock
 * names over 64 characters or not ASCII, a lease not longer than a channel
 * timeout, a password in a file readable by group or others, an unreadable
 * password_file.
 */
int  conf_load(const char *path, struct conf *c, char **errstr);
void conf_free(struct conf *);

/*
 * conf_load reads the database's secret file, which every command that
 * uses the database needs, but not the channels' (password_file,
 * signing_secret_file): a host that only runs jobs need not have them.
 * A command that sends reads them here first, for the channel named
 * channel (every channel when NULL).  Returns 0, or with *errstr an
 * allocated "file:line: key: message" (exit 78): -1 when a file cannot
 * be read (a host that does not send may lack it), -2 when it was read
 * but the channel cannot use it: empty, or a signing secret that
 * whsec_keys refuses (base64 that does not decode, more than WHSEC_MAX
 * secrets).  conf_free wipes them.
 */
int conf_read_secrets(struct conf *, const char *channel, char **errstr);

/* The same for job's secret files (ping_url_file), read when the job
 * runs: 0, or -1 with *errstr (exit 78): -1 when a file cannot be read,
 * -2 when it was read but is empty or holds no http:// or https://
 * URL. */
int conf_read_job_secrets(struct conf *, const char *job, char **errstr);

/*
 * The one rule for the configuration and secret files (cronguard.conf(5),
 * FILES), for conf_load, config check, doctor and run alike: path (whose
 * stat is st) must be owned by root or by this user, written by its
 * owner only, and (secret != 0) not read by others; every directory on
 * its way (as given and resolved) must be owned by root or this user and
 * writable by no one else, unless sticky and root's.  0 when it is so,
 * else -1 with an allocated *reason and *fix ("chmod go-w PATH").
 */
int conf_file_problem(const char *path, const struct stat *st, int secret,
    char **reason, char **fix);

/* The whole check of a secret file: it exists, obeys the mode rule, can
 * be read and is not empty.  0 with the secret in *out (when out is not
 * NULL; else it is wiped), or with an allocated *reason and *fix: -1
 * when it cannot be read, -2 when it was read and is empty. */
int conf_secret_problem(
    const char *path, char **out, char **reason, char **fix);

/* Make the process non-dumpable (prctl PR_SET_DUMPABLE 0): the secrets
 * it reads reach no core file, and other processes of the same user
 * cannot ptrace it or read its memory.  CRONGUARD_DUMPABLE=1 in the
 * environment leaves it dumpable, for debugging (cronguard(1)). */
void conf_protect_secrets(void);

/* The default path: $CRONGUARD_CONFIG, else
 * SYSCONFDIR/cronguard/cronguard.conf. */
const char *conf_default_path(void);

const struct conf_channel *conf_channel_find(
    const struct conf *, const char *name);
const struct conf_job *conf_job_find(const struct conf *, const char *name);

/* Every configuration key the parser accepts, as "section.key" paths with
 * "*" for a user-chosen name ("channels.*.url"), in the order config check
 * prints them: an allocated NULL-terminated array, freed with
 * conf_keys_free.  The man-page test checks each appears in
 * cronguard.conf(5). */
char **conf_keys(void);
void   conf_keys_free(char **);

/* Shared validators, also used by the command line: 1 if valid, else 0
 * with *why set to a static reason. */
int conf_lock_name_valid(const char *name, const char **why);

#endif
