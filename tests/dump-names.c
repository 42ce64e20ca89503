/* dump-names.c: print every command name and configuration key, for the
 * documentation coverage test (t0002). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "conf.h"

int
main(int argc, char **argv)
{
	char **keys;
	size_t i;

	if (argc == 2 && strcmp(argv[1], "commands") == 0) {
		for (i = 0; cmd_table[i] != NULL; i++)
			puts(cmd_table[i]->name);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "usages") == 0) {
		for (i = 0; cmd_table[i] != NULL; i++)
			printf("%s\t%s\n", cmd_table[i]->name,
			    cmd_table[i]->usage);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "keys") == 0) {
		keys = conf_keys();
		for (i = 0; keys[i] != NULL; i++)
			puts(keys[i]);
		conf_keys_free(keys);
		return 0;
	}
	fputs("usage: dump-names commands|usages|keys\n", stderr);
	return 64;
}
