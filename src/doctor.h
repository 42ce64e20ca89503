/*
 * doctor.h: the preflight checks of "cronguard doctor": the database
 * server, the claim index, session settings, migrations, file
 * permissions and each channel's TCP connect.  Each check is one result with a
 * status, a finding and a one-line fix; nothing here prints.
 */
#ifndef CRONGUARD_DOCTOR_H
#define CRONGUARD_DOCTOR_H

#include <stddef.h>

#include "conf.h"
#include "db.h"
#include "report.h"

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
 * says why; the result "database" is UNKNOWN and only the file checks
 * run.
 */
void doctor_run(struct db *db, const char *db_error, const struct conf *c,
    struct doctor_report *r);
void doctor_report_free(struct doctor_report *);

#endif
