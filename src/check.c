/* check.c: check statuses (check.h). */
#include "config.h"

#include "check.h"

const char *
check_status_name(enum check_status s)
{
	switch (s) {
	case CHECK_OK:
		return "OK";
	case CHECK_WARNING:
		return "WARNING";
	case CHECK_CRITICAL:
		return "CRITICAL";
	case CHECK_UNKNOWN:
		break;
	}
	return "UNKNOWN";
}

static int
rank(enum check_status s)
{
	switch (s) {
	case CHECK_OK:
		return 0;
	case CHECK_WARNING:
		return 1;
	case CHECK_UNKNOWN:
		return 2;
	case CHECK_CRITICAL:
		break;
	}
	return 3;
}

enum check_status
check_status_worst(enum check_status a, enum check_status b)
{
	return rank(a) >= rank(b) ? a : b;
}
