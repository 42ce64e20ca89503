/*
 * conf-fuzzer.c: conf_load on a file holding arbitrary bytes.
 *
 * conf_load reads a path (libconfig parses files), so each input is
 * written to one file in a private directory, mode 0600 so that inline
 * passwords pass the permission check and reach the rest of validation.
 * Never crashes or leaks: conf_free after success, and conf_load frees
 * what it filled on failure.
 */
#include "config.h"

#include <fcntl.h>
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

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct conf	 c;
	char		*errstr = NULL;

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
