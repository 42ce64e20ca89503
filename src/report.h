/* report.h: the three monitoring output formats (CONTRACT section 7). */
#ifndef CRONGUARD_REPORT_H
#define CRONGUARD_REPORT_H

enum check_status {
	CHECK_OK = 0, /* exit codes, Nagios plugin convention */
	CHECK_WARNING = 1,
	CHECK_CRITICAL = 2,
	CHECK_UNKNOWN = 3,
};

enum report_format { REPORT_NAGIOS = 0, REPORT_JSON, REPORT_PROMETHEUS };

/* "nagios", "json", "prometheus"; -1 otherwise. */
int report_format_parse(const char *, enum report_format *);
/* "OK", "WARNING", "CRITICAL", "UNKNOWN". */
const char *check_status_name(enum check_status);
/* The worse of two statuses (UNKNOWN ranks below CRITICAL, above WARNING). */
enum check_status check_status_worst(enum check_status, enum check_status);

#endif
