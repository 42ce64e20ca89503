/* cmd.h: the command table. */
#ifndef CRONGUARD_CMD_H
#define CRONGUARD_CMD_H

#include <stdio.h>

#include "conf.h"
#include "db.h"

/* Exit codes: CONTRACT section 3.  Never renumber. */
#define EXIT_OK 0
#define EXIT_WARNING 1
#define EXIT_CRITICAL 2
#define EXIT_UNKNOWN 3
#define EXIT_USAGE 64
#define EXIT_DATAERR 65
#define EXIT_UNAVAILABLE 69
#define EXIT_SOFTWARE 70
#define EXIT_TEMPFAIL 75
#define EXIT_PROTOCOL 76
#define EXIT_CONFIG 78
#define EXIT_TIMEOUT 124
#define EXIT_NOEXEC 126
#define EXIT_NOTFOUND 127

struct cmd_ctx {
	const char             *conf_path; /* -c, or the default */
	int                     argc; /* arguments after the command words */
	char                  **argv; /* argv[0] is the command name */
	const struct cmd_entry *entry;
};

/* Flags for cmd_entry. */
#define CMD_NEEDS_CONF 0x1 /* load configuration before exec */

struct cmd_entry {
	const char *name;    /* "outbox dispatch" */
	const char *usage;   /* arguments after the name */
	const char *summary; /* one line for --help */
	int         flags;
	int (*exec)(struct cmd_ctx *, struct conf *);
};

extern const struct cmd_entry *const cmd_table[];

/* Print "usage: cronguard NAME USAGE" to f. */
void cmd_usage(const struct cmd_entry *, FILE *f);
/* Print usage to stderr and return EXIT_USAGE: for bad arguments. */
int cmd_usage_error(const struct cmd_entry *, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Returns 1 if argv contains --help before "--" (then prints usage). */
int cmd_wants_help(struct cmd_ctx *);

/* Load the configuration at ctx->conf_path into c, printing the error.
 * Returns 0 or EXIT_CONFIG. */
int cmd_load_conf(struct cmd_ctx *, struct conf *);

/* For a command that needs the database: unless c has a database section,
 * print "cronguard: FILE: no database section" and return EXIT_CONFIG;
 * else return 0. */
int cmd_need_db(struct cmd_ctx *, const struct conf *);
/* Print "cronguard: COMMAND: errstr" for a failed database call and
 * return its exit code, db_exitcode(st). */
int cmd_db_error(struct cmd_ctx *, enum db_status st, const char *errstr);
/* Connect to c's database.  Returns 0 with *db connected (the caller
 * closes it), or, having printed why (cmd_need_db, cmd_db_error), the
 * exit code: EXIT_CONFIG without a database section, else 69. */
int cmd_db_connect(struct cmd_ctx *, struct conf *, struct db **db);

#endif
