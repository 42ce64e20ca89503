/*
 * doctor.h: the preflight checks of "cronguard doctor": the database
 * server, the claim index, session settings, migrations, file
 * permissions, and each channel's and the alert URL's name resolution,
 * TCP connect, TLS handshake and protocol greeting (SMTP EHLO and AUTH,
 * HTTP HEAD), sending nothing.  Each check is one result with a
 * status, a finding and a one-line fix; nothing here prints.
 */
#ifndef CRONGUARD_DOCTOR_H
#define CRONGUARD_DOCTOR_H

#include <stddef.h>

#include "conf.h"
#include "db.h"
#include "check.h"

struct doctor_result {
	enum check_status status;
	char             *name;    /* "skip_locked" */
	char             *finding; /* what was found */
	char             *fix;     /* one line; NULL when OK */
};

struct doctor_report {
	struct doctor_result *v;
	size_t                n;
	enum check_status     worst;
};

/*
 * Run every check of c into r (the caller frees it with
 * doctor_report_free).  db NULL: the database is unreachable, db_error
 * says why; the result "database" is UNKNOWN and only the file and
 * channel checks run.  The channels' secrets are read into c
 * (conf_read_secrets) for their probes.  Each channel probe and the
 * alert URL's gives up after DOCTOR_CHECK_MS (or the channel's timeout
 * when shorter).
 */
#define DOCTOR_CHECK_MS 5000
void doctor_run(struct db *db, const char *db_error, struct conf *c,
    struct doctor_report *r);
void doctor_report_free(struct doctor_report *);

#endif
