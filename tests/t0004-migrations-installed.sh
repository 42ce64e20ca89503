#!/bin/sh
# Every migration in sql/ is in the list `make install` installs
# (dist_sql_DATA in Makefile.am, passed as CRONGUARD_SQL_FILES), and the
# list names nothing that is not there.
set -eu
top=${CRONGUARD_SRCDIR:?}
: "${CRONGUARD_SQL_FILES:?}"
status=0
listed=$(printf '%s\n' $CRONGUARD_SQL_FILES | sort)
present=$(cd "$top" && printf '%s\n' sql/*.sql | sort)
[ -n "$present" ] || { echo "no migrations in $top/sql"; exit 1; }
for f in $present; do
	printf '%s\n' "$listed" | grep -qx "$f" ||
	    { echo "$f is not installed: add it to dist_sql_DATA in Makefile.am"; status=1; }
done
for f in $listed; do
	[ -f "$top/$f" ] ||
	    { echo "Makefile.am installs $f, which does not exist"; status=1; }
done
exit $status
