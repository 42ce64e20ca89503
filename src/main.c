/* main.c: global options, command lookup, library set-up. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <mysql.h>

#include "cmd.h"
#include "conf.h"
#include "exitcode.h"
#include "log.h"
#include "util.h"

static void
usage(FILE *f)
{
	size_t i;

	fprintf(
	    f, "usage: %s command [args ...]\n\ncommands:\n", CMD_GLOBAL_USAGE);
	for (i = 0; cmd_table[i] != NULL; i++)
		fprintf(f, "  %s%s%s\n", cmd_table[i]->name,
		    cmd_table[i]->usage[0] != '\0' ? " " : "",
		    cmd_table[i]->usage);
	fputs("\nSee cronguard(1) and cronguard.conf(5).\n", f);
}

/*
 * Find the command named by the longest prefix of argv ("outbox dispatch"
 * before "outbox"), and how many words it used.
 */
static const struct cmd_entry *
find_command(int argc, char **argv, int *words)
{
	size_t i, len;
	int    n;
	char   name[128];

	for (n = argc < 2 ? argc : 2; n > 0; n--) {
		name[0] = '\0';
		len = 0;
		for (int w = 0; w < n; w++) {
			int r = snprintf(name + len, sizeof name - len, "%s%s",
			    w ? " " : "", argv[w]);

			if (r < 0 || (size_t)r >= sizeof name - len)
				return NULL;
			len += (size_t)r;
		}
		for (i = 0; cmd_table[i] != NULL; i++) {
			if (strcmp(cmd_table[i]->name, name) == 0) {
				*words = n;
				return cmd_table[i];
			}
		}
	}
	return NULL;
}

/* "cronguard outbox" alone, or with a word that is none of its
 * subcommands (sub, else NULL): say so and list that family's commands. */
static int
family_usage(const char *word, const char *sub)
{
	size_t i, len = strlen(word);
	int    found = 0;

	for (i = 0; cmd_table[i] != NULL; i++) {
		if (strncmp(cmd_table[i]->name, word, len) == 0 &&
		    cmd_table[i]->name[len] == ' ') {
			if (!found && sub != NULL)
				fprintf(stderr,
				    "cronguard: %s: unknown subcommand '%s'\n",
				    word, sub);
			else if (!found)
				fprintf(stderr,
				    "cronguard: %s needs a subcommand\n", word);
			cmd_usage(cmd_table[i], stderr);
			found = 1;
		}
	}
	return found;
}

/* The options before the command word into *conf_path, *fmt, *quiet and
 * *verbose, optind left at the command word: -1 to go on, else the exit
 * code (--help, a usage error, said on stderr). */
static int
global_options(int argc, char **argv, const char **conf_path,
    enum log_format *fmt, int *quiet, int *verbose)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "log-format", required_argument, NULL, 'L' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	/* "+": stop at the command word, its options are its own. */
	opterr = 0;
	while (
	    (ch = getopt_long(argc, argv, "+:c:hqv", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			*conf_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'L':
			if (log_format_parse(optarg, fmt) != 0) {
				fprintf(stderr,
				    "cronguard: --log-format must be text or json, not '%s'\n",
				    optarg);
				usage(stderr);
				return EXIT_USAGE;
			}
			break;
		case 'q':
			*quiet = 1;
			break;
		case 'v':
			(*verbose)++;
			break;
		default:
			cmd_option_error(ch, argv[optind - 1], optopt);
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (*quiet && *verbose) {
		fputs("cronguard: -q and -v exclude each other\n", stderr);
		usage(stderr);
		return EXIT_USAGE;
	}
	return -1;
}

int
main(int argc, char **argv)
{
	const struct cmd_entry *e;
	const char             *conf_path;
	enum log_format         fmt = LOG_TEXT;
	int                     verbose = 0, quiet = 0, words, rc;

	process_mark_start();
	cmd_signals_hold();
	conf_protect_secrets();
	conf_path = conf_default_path();
	rc = global_options(argc, argv, &conf_path, &fmt, &quiet, &verbose);
	if (rc != -1)
		return rc;
	argc -= optind;
	argv += optind;
	log_init(quiet         ? LOG_ERROR
	        : verbose >= 2 ? LOG_DEBUG
	        : verbose == 1 ? LOG_INFO
	                       : LOG_WARN,
	    fmt);

	if (argc == 0) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if ((e = find_command(argc, argv, &words)) == NULL) {
		if (!family_usage(argv[0],
		        argc > 1 && argv[1][0] != '-' ? argv[1] : NULL)) {
			fprintf(stderr, "cronguard: unknown command '%s'\n",
			    argv[0]);
			usage(stderr);
		}
		return EXIT_USAGE;
	}
	if (!(e->flags & CMD_OWN_SIGNALS))
		cmd_signals_release();

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fputs("cronguard: curl_global_init failed\n", stderr);
		return EXIT_SOFTWARE;
	}
	if (mysql_library_init(0, NULL, NULL) != 0) {
		fputs("cronguard: mysql_library_init failed\n", stderr);
		return EXIT_SOFTWARE;
	}
	rc = cmd_run(e, conf_path, argc - words + 1, argv + words - 1);
	mysql_library_end();
	curl_global_cleanup();
	return rc;
}
