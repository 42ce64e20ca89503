/*
 * conf-fuzzer.c: conf_load on a file holding arbitrary bytes.
 *
 * conf_load reads a path (libconfig parses files), so each input is
 * written to one file in a private directory, mode 0600 so that inline
 * passwords pass the permission check and reach the rest of validation.
 * Never crashes or leaks: conf_print_text and conf_free after success, and
 * conf_load frees what it filled on failure.
 *
 * Inputs with "@include" are skipped: libconfig 1.5 exit()s the process
 * ("input in flex scanner failed", status 2) when an include names a
 * directory (@include "."; hyperrealm/libconfig issue #292), and an
 * include could name any file on this machine.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf-print.h"
#include "conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static char conf_fuzz_dir[] = "/tmp/cronguard-conf-fuzz.XXXXXX";
static char conf_fuzz_path[sizeof conf_fuzz_dir + 32];

/* Files inputs may name (fuzz/corpus/conf/secrets.conf does), so that
 * the secret and CA checks get past "cannot read".  A fixed directory,
 * not a chdir: libFuzzer's corpus and artifact paths may be relative.
 * The process that created it removes it at exit. */
#define CONF_FUZZ_FILES "/tmp/cronguard-conf-fuzz-files"
static const struct {
	const char *name;
	mode_t      mode;
	const char *text;
} conf_fuzz_files[] = {
	{ CONF_FUZZ_FILES "/secret", 0600, "s3cret\n" },
	{ CONF_FUZZ_FILES "/ca.pem", 0644, "-----BEGIN CERTIFICATE-----\n" },
	{ CONF_FUZZ_FILES "/open-secret", 0644, "s3cret\n" },
	{ CONF_FUZZ_FILES "/empty-secret", 0600, "" },
};

static bool conf_fuzz_made_files;

static void
conf_fuzz_cleanup(void)
{
	size_t i;

	unlink(conf_fuzz_path);
	rmdir(conf_fuzz_dir);
	if (!conf_fuzz_made_files)
		return;
	for (i = 0; i < sizeof conf_fuzz_files / sizeof conf_fuzz_files[0]; i++)
		unlink(conf_fuzz_files[i].name);
	rmdir(CONF_FUZZ_FILES);
}

static void
conf_fuzz_write(const char *path, mode_t mode, const void *data, size_t size)
{
	const char *p = data;
	ssize_t     n;
	int         fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd == -1)
		abort();
	while (size > 0) {
		if ((n = write(fd, p, size)) <= 0)
			abort();
		p += n;
		size -= (size_t)n;
	}
	if (fchmod(fd, mode) == -1 || close(fd) == -1)
		abort();
}

/* A private directory for the input, and the files above (shared by
 * concurrent fuzzers, same contents; removed by the one that made the
 * directory). */
static void
conf_fuzz_init(void)
{
	size_t i;

	if (mkdtemp(conf_fuzz_dir) == NULL)
		abort();
	if (mkdir(CONF_FUZZ_FILES, 0755) == 0)
		conf_fuzz_made_files = true;
	else if (errno != EEXIST)
		abort();
	snprintf(conf_fuzz_path, sizeof conf_fuzz_path, "%s/cronguard.conf",
	    conf_fuzz_dir);
	for (i = 0; i < sizeof conf_fuzz_files / sizeof conf_fuzz_files[0]; i++)
		conf_fuzz_write(conf_fuzz_files[i].name,
		    conf_fuzz_files[i].mode, conf_fuzz_files[i].text,
		    strlen(conf_fuzz_files[i].text));
	atexit(conf_fuzz_cleanup);
}

static bool
conf_fuzz_has_include(const uint8_t *data, size_t size)
{
	static const char word[] = "@include";

	return memmem(data, size, word, sizeof word - 1) != NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct conf c;
	char       *errstr = NULL;

	if (conf_fuzz_has_include(data, size))
		return -1; /* not added to the corpus */
	if (conf_fuzz_path[0] == '\0')
		conf_fuzz_init();
	conf_fuzz_write(conf_fuzz_path, 0600, data, size);
	if (conf_load(conf_fuzz_path, &c, &errstr) != 0) {
		if (errstr == NULL)
			abort(); /* failure without a reason */
		free(errstr);
		return 0;
	}
	if (errstr != NULL)
		abort();
	free(conf_print_text(&c));
	conf_free(&c);
	return 0;
}
