/*
 * completion.c: the bash (and zsh) completion script, written from the
 * command table at run time: the command names, each entry's option
 * template, and its usage string for what follows an option or stands as
 * an operand ("--format nagios|json" offers nagios and json, "job" the
 * configured jobs).  A new command or option is completed without a
 * change here; tests/integration/t1204 checks every one through bash.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "completion.h"
#include "conf.h"
#include "util.h"

/* What a placeholder word of a usage string is completed with, as a
 * bash expression; NULL: nothing (a number, a duration, free text). */
static const char *
completion_word(const char *opt, const char *word, size_t len)
{
	static const struct {
		const char *opt; /* NULL: any option, or an operand */
		const char *word;
		const char *bash;
	} table[] = {
		{ "channel", "name", "$(_cronguard_names channels)" },
		{ "lock", "name", "$(_cronguard_names locks)" },
		{ NULL, "job", "$(_cronguard_names jobs)" },
		{ NULL, "status", "PENDING PROCESSING SENT FAILED CANCELLED" },
		{ NULL, "path", "@files" },
		{ NULL, "file", "@files" },
		{ NULL, "command", "@commands" },
	};
	size_t i;

	for (i = 0; i < nitems(table); i++) {
		if (table[i].opt != NULL &&
		    (opt == NULL || strcmp(table[i].opt, opt) != 0))
			continue;
		if (strlen(table[i].word) == len &&
		    strncmp(table[i].word, word, len) == 0)
			return table[i].bash;
	}
	return NULL;
}

/* The word after "--name " in usage: its start and length (0: none). */
static size_t
completion_value(const char *usage, const char *name, const char **start)
{
	const char *p = usage;
	size_t      n = strlen(name);

	while ((p = strstr(p, "--")) != NULL) {
		p += 2;
		if (strncmp(p, name, n) == 0 && p[n] == ' ') {
			*start = p + n + 1;
			return strcspn(*start, " ]).");
		}
	}
	return 0;
}

/* Append word (len bytes) to b as bash completion words: "a|b|c" as
 * "a b c", a placeholder by completion_word. */
static void
completion_words(struct buf *b, const char *opt, const char *w, size_t len)
{
	const char *bash;

	if (memchr(w, '|', len) != NULL) {
		for (; len > 0; w++, len--)
			buf_addc(b, *w == '|' ? ' ' : *w);
		return;
	}
	if ((bash = completion_word(opt, w, len)) != NULL)
		buf_adds(b, bash);
}

/* The operands of usage: its words that are neither an option nor an
 * option's value; "-- command" (exec) is marked by "@exec". */
static void
completion_operands(struct buf *b, const struct cmd_entry *e)
{
	const char *p = e->usage, *w;
	size_t      len, i;
	int         value = 0;

	while (*p != '\0') {
		p += strspn(p, " []().|");
		len = strcspn(p, " []().|");
		if (len == 0)
			break;
		w = p;
		p += len;
		/* "a|b" alternatives as one word */
		while (*p == '|' && p[1] != ' ') {
			len += strcspn(p + 1, " []().") + 1;
			p = w + len;
		}
		if (len == 2 && strncmp(w, "--", 2) == 0) {
			buf_adds(b, " @exec");
			return;
		}
		if (strncmp(w, "--", 2) == 0) {
			value = 0;
			for (i = 0; e->options != NULL && e->options[i].name;
			     i++) {
				if (strlen(e->options[i].name) == len - 2 &&
				    strncmp(e->options[i].name, w + 2,
				        len - 2) == 0)
					value = e->options[i].has_arg;
			}
			continue;
		}
		if (value) {
			value = 0;
			continue;
		}
		buf_addc(b, ' ');
		completion_words(b, NULL, w, len);
	}
}

/* One "case" arm of _cronguard_command for e. */
static void
completion_entry(struct buf *b, const struct cmd_entry *e)
{
	const struct cmd_option *o;
	const char              *v;
	size_t                   len;

	buf_printf(b, "\t\"%s\")\n\t\topts=\"--help", e->name);
	for (o = e->options; o != NULL && o->name != NULL; o++)
		buf_printf(b, " --%s", o->name);
	buf_adds(b, "\"\n\t\tcase $prev in\n");
	for (o = e->options; o != NULL && o->name != NULL; o++) {
		if (!o->has_arg)
			continue;
		buf_printf(b, "\t\t--%s) _cronguard_reply \"", o->name);
		if ((len = completion_value(e->usage, o->name, &v)) > 0)
			completion_words(b, o->name, v, len);
		buf_adds(b, "\"; done=1 ;;\n");
	}
	buf_adds(b, "\t\tesac\n\t\toperands=\"");
	completion_operands(b, e);
	buf_adds(b, "\" ;;\n");
}

static const char completion_head[] =
    "# bash completion for cronguard(1), written by `cronguard completion bash`\n"
    "# from the command table of cronguard " PACKAGE_VERSION ": do not edit.\n"
    "\n"
    "# _cronguard_names KIND: the configured jobs, channels or locks.\n"
    "_cronguard_names()\n"
    "{\n"
    "\t\"${_cronguard_cmd[@]}\" completion names \"$1\" 2> /dev/null\n"
    "}\n"
    "\n"
    "# _cronguard_reply WORDS: those of WORDS that start with $cur; @files\n"
    "# adds file names, @commands the command names.\n"
    "_cronguard_reply()\n"
    "{\n"
    "\tlocal words=\" $1 \"\n"
    "\tCOMPREPLY=()\n"
    "\tcase $words in *\" @files \"*)\n"
    "\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n"
    "\t\twords=${words//@files/} ;;\n"
    "\tesac\n"
    "\tcase $words in *\" @commands \"*)\n"
    "\t\twords=\"${words//@commands/} $_cronguard_first\" ;;\n"
    "\tesac\n"
    "\twords=${words//@exec/}\n"
    "\tCOMPREPLY+=($(compgen -W \"$words\" -- \"$cur\"))\n"
    "}\n"
    "\n"
    "# _cronguard_command NAME: its options and operand words into opts and\n"
    "# operands, and the values of the option $prev (done=1); 1 if unknown.\n"
    "_cronguard_command()\n"
    "{\n"
    "\tcase $1 in\n";

static const char completion_tail[] =
    "\t*) return 1 ;;\n"
    "\tesac\n"
    "}\n"
    "\n"
    "_cronguard()\n"
    "{\n"
    "\t[ -n \"${ZSH_VERSION:-}\" ] && setopt localoptions ksharrays\n"
    "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev= i=1 w cmd opts= operands= done=0\n"
    "\tlocal -a _cronguard_cmd\n"
    "\t_cronguard_cmd=(\"${COMP_WORDS[0]}\")\n"
    "\t[ \"$COMP_CWORD\" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}\n"
    "\twhile [ \"$i\" -lt \"$COMP_CWORD\" ]; do\n"
    "\t\tcase ${COMP_WORDS[i]} in\n"
    "\t\t-c | --config)\n"
    "\t\t\t_cronguard_cmd+=(-c \"${COMP_WORDS[i + 1]}\")\n"
    "\t\t\ti=$((i + 2)) ;;\n"
    "\t\t--log-format) i=$((i + 2)) ;;\n"
    "\t\t-*) i=$((i + 1)) ;;\n"
    "\t\t*) break ;;\n"
    "\t\tesac\n"
    "\tdone\n"
    "\tif [ \"$i\" -ge \"$COMP_CWORD\" ]; then\n"
    "\t\tcase $prev in\n"
    "\t\t-c | --config) _cronguard_reply @files ;;\n"
    "\t\t--log-format) _cronguard_reply \"text json\" ;;\n"
    "\t\t*) case $cur in\n"
    "\t\t\t-*) _cronguard_reply \"-c -v -q --config --verbose --quiet --log-format --help\" ;;\n"
    "\t\t\t*) _cronguard_reply \"$_cronguard_first\" ;;\n"
    "\t\t\tesac ;;\n"
    "\t\tesac\n"
    "\t\treturn\n"
    "\tfi\n"
    "\tw=${COMP_WORDS[i]}\n"
    "\tif [ \"$((i + 1))\" -eq \"$COMP_CWORD\" ] && [ -n \"${_cronguard_sub[$w]:-}\" ] &&\n"
    "\t    [ \"${cur#-}\" = \"$cur\" ]; then\n"
    "\t\t_cronguard_command \"$w\" || operands=\n"
    "\t\t_cronguard_reply \"${_cronguard_sub[$w]} $operands\"\n"
    "\t\treturn\n"
    "\tfi\n"
    "\tcmd=$w\n"
    "\ti=$((i + 1))\n"
    "\tif [ \"$i\" -lt \"$COMP_CWORD\" ] && [ -n \"${_cronguard_sub[$w]:-}\" ]; then\n"
    "\t\tcase \" ${_cronguard_sub[$w]} \" in\n"
    "\t\t*\" ${COMP_WORDS[i]} \"*) cmd=\"$w ${COMP_WORDS[i]}\"; i=$((i + 1)) ;;\n"
    "\t\tesac\n"
    "\tfi\n"
    "\t_cronguard_command \"$cmd\" || return 0\n"
    "\t[ \"$done\" = 1 ] && return 0\n"
    "\twhile [ \"$i\" -lt \"$COMP_CWORD\" ]; do\n"
    "\t\tif [ \"${COMP_WORDS[i]}\" = -- ]; then\n"
    "\t\t\tcase $operands in *@exec*)\n"
    "\t\t\t\tif [ \"$((i + 1))\" -eq \"$COMP_CWORD\" ]; then\n"
    "\t\t\t\t\tCOMPREPLY=($(compgen -c -- \"$cur\"))\n"
    "\t\t\t\telse\n"
    "\t\t\t\t\t_cronguard_reply @files\n"
    "\t\t\t\tfi\n"
    "\t\t\t\treturn 0 ;;\n"
    "\t\t\tesac\n"
    "\t\tfi\n"
    "\t\ti=$((i + 1))\n"
    "\tdone\n"
    "\tcase $cur in\n"
    "\t-*) _cronguard_reply \"$opts\" ;;\n"
    "\t*) operands=${operands//@exec/}\n"
    "\t\tif [ -n \"${operands// /}\" ]; then\n"
    "\t\t\t_cronguard_reply \"$operands\"\n"
    "\t\telse\n"
    "\t\t\t_cronguard_reply \"$opts\"\n"
    "\t\tfi ;;\n"
    "\tesac\n"
    "}\n"
    "complete -F _cronguard cronguard\n";

/* The first words, and each family's second words. */
static void
completion_tables(struct buf *b)
{
	const char *sp, *name;
	size_t      i, j, len;
	int         seen;

	buf_adds(b, "_cronguard_first=\"");
	for (i = 0; cmd_table[i] != NULL; i++) {
		name = cmd_table[i]->name;
		len = strcspn(name, " ");
		for (seen = 0, j = 0; j < i; j++)
			seen |= strncmp(cmd_table[j]->name, name, len) == 0 &&
			    (cmd_table[j]->name[len] == ' ' ||
			        cmd_table[j]->name[len] == '\0');
		if (!seen)
			buf_printf(
			    b, "%s%.*s", i > 0 ? " " : "", (int)len, name);
	}
	buf_adds(b, "\"\ndeclare -gA _cronguard_sub\n");
	for (i = 0; cmd_table[i] != NULL; i++) {
		if ((sp = strchr(cmd_table[i]->name, ' ')) == NULL)
			continue;
		len = (size_t)(sp - cmd_table[i]->name);
		buf_printf(b, "_cronguard_sub[%.*s]+=\" %s\"\n", (int)len,
		    cmd_table[i]->name, sp + 1);
	}
	buf_addc(b, '\n');
}

char *
completion_bash(void)
{
	struct buf b;
	size_t     i;

	buf_init(&b);
	buf_adds(&b, completion_head);
	for (i = 0; cmd_table[i] != NULL; i++)
		completion_entry(&b, cmd_table[i]);
	buf_adds(&b, completion_tail);
	completion_tables(&b);
	return buf_steal(&b);
}

char *
completion_zsh(void)
{
	char *bash = completion_bash(), *s;

	s = xasprintf("# zsh: the bash completion through bashcompinit\n"
	              "autoload -U +X bashcompinit && bashcompinit\n%s",
	    bash);
	free(bash);
	return s;
}

char *
completion_names(const struct conf *c, const char *kind)
{
	struct buf b;
	size_t     i;

	buf_init(&b);
	buf_adds(&b, "");
	if (strcmp(kind, "jobs") == 0) {
		for (i = 0; i < c->njobs; i++)
			buf_printf(&b, "%s\n", c->jobs[i].name);
	} else if (strcmp(kind, "channels") == 0) {
		for (i = 0; i < c->nchannels; i++)
			buf_printf(&b, "%s\n", c->channels[i].name);
	} else if (strcmp(kind, "locks") == 0) {
		for (i = 0; i < c->njobs; i++) {
			if (c->jobs[i].lock != NULL &&
			    c->jobs[i].guard != GUARD_LOCAL &&
			    c->jobs[i].guard != GUARD_NONE)
				buf_printf(&b, "%s\n", c->jobs[i].lock);
		}
	} else {
		buf_free(&b);
		return NULL;
	}
	return buf_steal(&b);
}
