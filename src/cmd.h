/* cmd.h: the command table. */
#ifndef CRONGUARD_CMD_H
#define CRONGUARD_CMD_H

#include <stdio.h>

#include "conf.h"

/* Exit codes: CONTRACT section 3.  Never renumber. */
#define EXIT_OK		0
#define EXIT_WARNING	1
#define EXIT_CRITICAL	2
#define EXIT_UNKNOWN	3
#define EXIT_USAGE	64
#define EXIT_DATAERR	65
#define EXIT_UNAVAILABLE 69
#define EXIT_SOFTWARE	70
#define EXIT_TEMPFAIL	75
#define EXIT_PROTOCOL	76
#define EXIT_CONFIG	78
#define EXIT_TIMEOUT	124
#define EXIT_NOEXEC	126
#define EXIT_NOTFOUND	127

struct cmd_ctx {
	const char	*conf_path;	/* -c, or the default */
	int		 argc;		/* arguments after the command words */
	char		**argv;		/* argv[0] is the command name */
	const struct cmd_entry *entry;
};

/* Flags for cmd_entry. */
#define CMD_NEEDS_CONF	0x1	/* load configuration before exec */

struct cmd_entry {
	const char	*name;		/* "outbox dispatch" */
	const char	*usage;		/* arguments after the name */
	const char	*summary;	/* one line for --help */
	int		 flags;
	int		(*exec)(struct cmd_ctx *, struct conf *);
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

#endif
