/* report.c: the three monitoring output formats (CONTRACT section 7). */
#include "config.h"

#include <string.h>

#include "report.h"

int
report_format_parse(const char *s, enum report_format *out)
{
	if (strcmp(s, "nagios") == 0)
		*out = REPORT_NAGIOS;
	else if (strcmp(s, "json") == 0)
		*out = REPORT_JSON;
	else if (strcmp(s, "prometheus") == 0)
		*out = REPORT_PROMETHEUS;
	else
		return -1;
	return 0;
}

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
