/*
 * check.h: the verdict of a monitoring check (jobs check, outbox check,
 * doctor): the Nagios plugin convention, which is also their exit code
 * (exitcode.c).  Below the checks and the writers, so that a module that
 * judges includes no writer.
 */
#ifndef CRONGUARD_CHECK_H
#define CRONGUARD_CHECK_H

enum check_status {
	CHECK_OK = 0, /* exit codes, Nagios plugin convention */
	CHECK_WARNING = 1,
	CHECK_CRITICAL = 2,
	CHECK_UNKNOWN = 3,
};

/* "OK", "WARNING", "CRITICAL", "UNKNOWN". */
const char *check_status_name(enum check_status);
/* The worse of two statuses (UNKNOWN ranks below CRITICAL, above WARNING). */
enum check_status check_status_worst(enum check_status, enum check_status);

#endif
