/*
 * conf-fuzzer.c: conf_load on a file holding arbitrary bytes.
 *
 * conf_load reads a path (libconfig parses files), so each input is
 * written to one file in a private directory, mode 0600 so that inline
 * passwords pass the permission check and reach the rest of validation.
 * Never crashes or leaks: conf_free after success, and conf_load frees
 * what it filled on failure.
 *
 * Inputs with "@include" are skipped: libconfig 1.5 exit()s the process
 * ("input in flex scanner failed", status 2) when an include names a
 * directory (@include "."; hyperrealm/libconfig issue #292), and an
 * include could name any file on this machine.
 */
#include "config.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static char	conf_fuzz_dir[] = "/tmp/cronguard-conf-fuzz.XXXXXX";
static char	conf_fuzz_path[sizeof conf_fuzz_dir + 32];

static void
conf_fuzz_cleanup(void)
{
	unlink(conf_fuzz_path);
	rmdir(conf_fuzz_dir);
}

static int
conf_fuzz_write(const uint8_t *data, size_t size)
{
	ssize_t	n;
	int	fd;

	if (conf_fuzz_path[0] == '\0') {
		if (mkdtemp(conf_fuzz_dir) == NULL)
			abort();
		snprintf(conf_fuzz_path, sizeof conf_fuzz_path,
		    "%s/cronguard.conf", conf_fuzz_dir);
		atexit(conf_fuzz_cleanup);
	}
	fd = open(conf_fuzz_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600);
	if (fd == -1)
		abort();
	while (size > 0) {
		if ((n = write(fd, data, size)) <= 0)
			abort();
		data += n;
		size -= (size_t)n;
	}
	if (close(fd) == -1)
		abort();
	return 0;
}

static bool
conf_fuzz_has_include(const uint8_t *data, size_t size)
{
	static const char	word[] = "@include";

	return memmem(data, size, word, sizeof word - 1) != NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct conf	 c;
	char		*errstr = NULL;

	if (conf_fuzz_has_include(data, size))
		return -1;	/* not added to the corpus */
	conf_fuzz_write(data, size);
	if (conf_load(conf_fuzz_path, &c, &errstr) != 0) {
		if (errstr == NULL)
			abort();	/* failure without a reason */
		free(errstr);
		return 0;
	}
	if (errstr != NULL)
		abort();
	conf_free(&c);
	return 0;
}
