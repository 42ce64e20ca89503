/*
 * completion.h: shell completion generated from the command table
 * (cmd_table: each entry's name, option template and usage string), so
 * that it cannot drift from the commands.  See cronguard(1), completion.
 */
#ifndef CRONGUARD_COMPLETION_H
#define CRONGUARD_COMPLETION_H

struct conf;

/* The bash completion script for cronguard; allocated, the caller frees
 * it.  Job, channel and lock names come at completion time from
 * "cronguard [-c FILE] completion names KIND". */
char *completion_bash(void);
/* The same for zsh, through its bashcompinit. */
char *completion_zsh(void);

/*
 * The names of kind ("jobs", "channels" or "locks": the configured jobs,
 * channels, and the lock names of the jobs that take a database lock) in
 * c, one a line; allocated.  NULL when kind is none of these.
 */
char *completion_names(const struct conf *c, const char *kind);

#endif
