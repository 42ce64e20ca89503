/*
 * no-cloexec.c: an LD_PRELOAD shim for t0350's control run.  It drops
 * FD_CLOEXEC from every fcntl(F_SETFD), so cronguard runs without the guard
 * that keeps its lock session out of the job's children.  Test-only: it
 * shows the test fails without the guard.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>

static int
shim(const char *name, int fd, int cmd, long arg)
{
	int (*real)(int, int, ...);

	real = (int (*)(int, int, ...))dlsym(RTLD_NEXT, name);
	if (cmd == F_SETFD)
		arg &= ~(long)FD_CLOEXEC;
	return real(fd, cmd, arg);
}

int
fcntl(int fd, int cmd, ...)
{
	va_list ap;
	long    arg;

	va_start(ap, cmd);
	arg = va_arg(ap, long);
	va_end(ap);
	return shim("fcntl", fd, cmd, arg);
}

int
fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	long    arg;

	va_start(ap, cmd);
	arg = va_arg(ap, long);
	va_end(ap);
	return shim("fcntl64", fd, cmd, arg);
}
