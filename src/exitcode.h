/* exitcode.h: the exit codes (cronguard(1), EXIT STATUS) and the one map from
 * module statuses to them. */
#ifndef CRONGUARD_EXITCODE_H
#define CRONGUARD_EXITCODE_H

#include "db.h"
#include "lock.h"
#include "check.h"

/* Never renumber: monitoring reads them.  cronguard(1) lists them. */
#define EXIT_OK 0
#define EXIT_WARNING 1
#define EXIT_CRITICAL 2
#define EXIT_UNKNOWN 3
#define EXIT_USAGE 64
#define EXIT_DATAERR 65
#define EXIT_UNAVAILABLE 69
#define EXIT_SOFTWARE 70
#define EXIT_TEMPFAIL 75
#define EXIT_PROTOCOL 76
#define EXIT_NOPERM 77
#define EXIT_CONFIG 78
#define EXIT_TIMEOUT 124
#define EXIT_NOEXEC 126
#define EXIT_NOTFOUND 127

/*
 * The exit code for a module's status.  Modules return their own status
 * and never exit; these look it up in one table (exitcode.c).  A status
 * the table does not know is EXIT_SOFTWARE.
 */
int exitcode_db(enum db_status);
int exitcode_lock(enum lock_result);
int exitcode_check(enum check_status);

#endif
