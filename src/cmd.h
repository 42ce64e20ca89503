/* cmd.h: the command table. */
#ifndef CRONGUARD_CMD_H
#define CRONGUARD_CMD_H

#include <stddef.h>
#include <stdio.h>

#include "conf.h"
#include "db.h"
#include "exitcode.h"
#include "report.h"

/* The global options, before every command's own. */
#define CMD_GLOBAL_USAGE \
	"cronguard [-c file] [-v | -q] [--log-format text|json]"

/* One long option of a command, in the entry's template. */
struct cmd_option {
	const char *name;    /* "channel": given as --channel */
	int         has_arg; /* 1: takes a value (--channel NAME) */
};

/* The most options one command has, and the values one option keeps. */
#define CMD_OPTIONS_MAX 8

/* The values an option was given, in command-line order. */
struct cmd_optval {
	const char **v; /* borrowed from argv; a flag's entries are NULL */
	size_t       n; /* how often it was given; 0: not */
};

struct cmd_ctx {
	const char             *conf_path; /* -c, or the default */
	int                     argc;  /* the words after the command name, */
	char                  **argv;  /* argv[0] its last word */
	int                     nargs; /* the operands, options taken out */
	char                  **args;  /* borrowed strings, cmd_run's array */
	const struct cmd_entry *entry;
	struct cmd_optval       opts[CMD_OPTIONS_MAX]; /* by template index */
	char *conf_error; /* CMD_CHECK_CONF: why it was not loaded; NULL */
	/* CMD_OPENS_DB: the session cmd_run opened for exec and closes
	 * after it; NULL without a database section. */
	struct db *db;
	/* The entry's state_size bytes, zeroed: what its check found, for
	 * its exec; NULL when state_size is 0. */
	void *state;
};

/* Flags for cmd_entry. */
#define CMD_NEEDS_CONF 0x1 /* load configuration before exec */
/* Needs a database section (else exit 78 before exec). */
#define CMD_NEEDS_DB (0x2 | CMD_NEEDS_CONF)
/* Handles SIGTERM, SIGINT and SIGHUP itself (see cmd_signals_hold). */
#define CMD_OWN_SIGNALS 0x4
/* Options only before the first operand: for a command whose operands
 * are a command line of its own ("exec --lock x -- cmd --verbose").
 * Without it options may also follow the operands ("jobs runs JOB
 * --limit 5"), as cronguard(1), COMMANDS, says. */
#define CMD_OPTIONS_FIRST 0x8
/* Only reads: CMD_OPENS_DB takes any server, a replica too.  Without
 * it a command writes, and the session is opened with
 * db_connect_primary (a read-only server is exit 69, db_read_only). */
#define CMD_READS_ONLY 0x10
/* A monitoring check (jobs check, outbox check): a configuration it
 * cannot load is the check's UNKNOWN (3), not exit 78, so that Nagios
 * shows the reason.  exec is called with ctx->conf_error set and c as
 * conf_defaults left it (no path, no jobs, no database). */
#define CMD_CHECK_CONF 0x20
/*
 * The framework owns the session: once the entry's check has passed (so
 * that a bad argument is its exit code before any connection), cmd_run
 * connects to the configuration's database, gives the session to exec
 * as ctx->db and closes it after.  A failed connect is "cronguard:
 * COMMAND: errstr" and exitcode_db's code, and exec is not called.
 * Without a database section (a command that is not CMD_NEEDS_DB)
 * ctx->db is NULL.
 */
#define CMD_OPENS_DB 0x40

struct cmd_entry {
	const char *name;    /* "outbox dispatch" */
	const char *usage;   /* arguments after the name */
	const char *summary; /* one line for --help */
	/* Options, terminated by a NULL name; NULL for none.  Before or
	 * after the operands, unless CMD_OPTIONS_FIRST. */
	const struct cmd_option *options;
	int                      min_args; /* operands */
	int                      max_args; /* -1: any number */
	int                      flags;
	/* The checks of the arguments that need no database, before
	 * CMD_OPENS_DB opens it: what they find goes in ctx->state for
	 * exec.  Returns 0, or the exit code having said why (exec is not
	 * called).  NULL: none. */
	int (*check)(struct cmd_ctx *, const struct conf *);
	size_t state_size; /* bytes of ctx->state; 0: none */
	/* Releases what check left in ctx->state (not the state itself),
	 * after exec or when exec was not called; NULL: nothing to. */
	void (*state_free)(void *state);
	int (*exec)(struct cmd_ctx *, struct conf *);
};

extern const struct cmd_entry *const cmd_table[];

/*
 * Run e with the arguments after its name (argv[0] is the last word of
 * the name): --help, options and operand count per the template, the
 * configuration and database section per the flags, then exec.  Prints
 * why it fails; returns the exit code.
 */
int cmd_run(
    const struct cmd_entry *e, const char *conf_path, int argc, char **argv);

/*
 * The stop signals (SIGTERM, SIGINT, SIGHUP) and SIGUSR1, SIGUSR2 and
 * SIGPIPE are blocked from the first line of main until the command is
 * known, so that one arriving before a command installs its handlers is
 * held rather than fatal (an operator's ssh session dropping while
 * outbox dispatch reads its configuration or connects).  A command with
 * CMD_OWN_SIGNALS installs its handlers, then calls cmd_signals_release,
 * which delivers what came meanwhile to them; for every other command
 * main releases them at once, and they act as they always did.
 */
void cmd_signals_hold(void);
void cmd_signals_release(void);

/* Print "usage: cronguard NAME USAGE" to f. */
void cmd_usage(const struct cmd_entry *, FILE *f);

/* run and exec: guard_run, then the job's captured output on stdout as
 * gj->output says (capture: always; on_failure: when the exit code is
 * not 0).  Returns guard_run's exit code. */
struct guard_job;
struct lock_db_ops;
int cmd_run_job(
    const struct guard_job *gj, const struct lock_db_ops *ops, void *ctx);
/* After a command printed its answer: EXIT_OK, or EXIT_SOFTWARE having
 * said "cronguard: COMMAND: cannot write to stdout" (a full disk, a
 * closed pipe). */
int cmd_stdout_done(struct cmd_ctx *);
/* Print "cronguard: message", then usage, to stderr and return
 * EXIT_USAGE: for bad arguments. */
int cmd_usage_error(const struct cmd_entry *, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Print the one wording for an option getopt_long rejected: ch is its
 * '?' (unknown) or ':' (no value), opt the argv element, optopt getopt's;
 * the caller prints the usage. */
void cmd_option_error(int ch, const char *opt, int optopt);

/* How often option name (from the entry's template) was given. */
size_t cmd_opt_count(const struct cmd_ctx *, const char *name);
/* Its last value, or NULL when not given. */
const char *cmd_opt_value(const struct cmd_ctx *, const char *name);
/* All of its values, in order; *n of them. */
const char *const *cmd_opt_values(
    const struct cmd_ctx *, const char *name, size_t *n);

/* The options of the monitoring checks (jobs check, outbox check):
 * --format nagios|json|prometheus and --metrics-file path. */
extern const struct cmd_option cmd_check_template[];
/* Read them into *fmt (default nagios) and *metrics (NULL: none).
 * Returns 0, or EXIT_USAGE after printing why. */
int cmd_check_options(
    struct cmd_ctx *, enum report_format *fmt, const char **metrics);

/* The template of a command whose one option is --format text|json. */
extern const struct cmd_option cmd_format_template[];
/* The listings' --format text|json (a "format" entry in the template):
 * *json 1 for json.  Returns 0, or EXIT_USAGE after printing why. */
int cmd_format_option(struct cmd_ctx *, int *json);
/* An entry's check for a command whose one option is --format
 * text|json: its state an int, 1 for json (state_size sizeof(int)). */
int cmd_format_check(struct cmd_ctx *, const struct conf *);
/* The check of db migrate and db status: migrate_sqldir()'s files
 * scanned into the state, a struct migration_set (state_size its size);
 * EXIT_SOFTWARE having said why they cannot be read.  And its
 * state_free. */
int  cmd_migrations_check(struct cmd_ctx *, const struct conf *);
void cmd_migrations_free(void *set);

/*
 * Report a failed database call the one way, "cronguard: COMMAND:
 * errstr", and return its exit code (exitcode_db: 69).
 */
int cmd_db_error(struct cmd_ctx *, enum db_status st, const char *errstr);

/* The filters of outbox retry --failed and outbox cancel (--channel,
 * --event-type, --since, --error) into *f, *any when one is given, and
 * --dry-run into *dry_run.  Returns 0, or EXIT_USAGE having said why. */
struct outbox_filter;
int cmd_outbox_filter(
    struct cmd_ctx *, struct outbox_filter *f, int *any, int *dry_run);

/* Parse the operands as message ids, dropping repeats ("5 5" is one id).
 * Returns 0 with *ids allocated (the caller frees it) and *nids (0 when
 * there are none), or EXIT_USAGE having printed which operand is not an
 * id. */
int cmd_parse_ids(struct cmd_ctx *, unsigned long long **ids, size_t *nids);
/* After a change by id that changed n of nids rows: 0 when it changed
 * them all, else EXIT_DATAERR having printed how many ids are not rows
 * in one of states (e.g. "PENDING or FAILED"). */
int cmd_ids_changed(
    struct cmd_ctx *, unsigned long long n, size_t nids, const char *states);

/* Every operand is a job of the configuration: 0, or EXIT_USAGE having
 * printed the first that is not (jobs pause, resume, ack). */
int cmd_jobs_known(struct cmd_ctx *, const struct conf *);
/* Option name's value in *value (NULL when not given); with required,
 * it must be given.  At most max bytes of well-formed UTF-8 (no
 * surrogate, no overlong form), not empty: the one validator of an
 * operator's text (reasons, the filters, outbox list --channel), so
 * that a bad one is exit 64 before any statement.  Returns 0, or
 * EXIT_USAGE after printing why. */
int cmd_text_option(struct cmd_ctx *, const char *name, int required,
    size_t max, const char **value);
/* The longest filter text in bytes (--channel, --event-type, --error):
 * longer than any value of the columns they match. */
#define CMD_FILTER_MAX 1024
/* --reason: *reason the value (NULL when not given); with required, it
 * must be given.  At most max bytes of well-formed UTF-8 (no surrogate,
 * no overlong form), not empty: the one validator of a reason (jobs
 * pause, jobs ack, outbox pause, outbox cancel).
 * Returns 0, or EXIT_USAGE after printing why. */
int cmd_reason_option(
    struct cmd_ctx *, int required, size_t max, const char **reason);

#endif
