#!/bin/sh
# The status page stays cheap (cronguard(1), status): 1,000 hourly jobs with
# a run in each of their last 48 slots (48,000 runs) give a page under 2 MB,
# and the statements that read it do not grow with the number of jobs:
# jobs check's own (jobcheck_run_all) and the page's are the same count for
# 1 job and for 1,000.  The figures (size, time, statements) are printed.
# Needs the MariaDB test server.
# Cases: setup; one job; 1,000 jobs.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

NJOBS=1000
PAGE=$TEST_TMP/status.html

# conf N: the first N jobs, hourly, in UTC.
conf()
{
	"$LIB_PY" - "$1" > "$TEST_TMP/jobs.conf" <<'PY'
import sys
print("jobs = {")
for i in range(int(sys.argv[1])):
    print('  job-%04d = { command = [ "true" ]; schedule = "@hourly";'
          ' timezone = "UTC"; };' % i)
print("};")
PY
	write_config "$CONF" "runtime_dir = \"$TEST_TMP/run\";
channels = { mail = { type = \"smtp\"; url = \"$SMTP_URL\"; from = \"a@$MAIL_DOMAIN\"; }; };
$(cat "$TEST_TMP/jobs.conf")"
}
mkdir -p "$TEST_TMP/run"

setup()
{
	conf 1
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO cronguard_runs (job, host, pid, started_at,
	    finished_at, outcome, exit_status, slot, slot_kind)
	    WITH RECURSIVE j AS (SELECT 0 AS i UNION ALL SELECT i + 1 FROM j
	      WHERE i < $NJOBS - 1),
	    k AS (SELECT 0 AS h UNION ALL SELECT h + 1 FROM k WHERE h < 47),
	    s AS (SELECT FROM_UNIXTIME(FLOOR(UNIX_TIMESTAMP(NOW()) / 3600)
	      * 3600) AS now_slot)
	    SELECT CONCAT('job-', LPAD(j.i, 4, '0')), 'web1.example.com', 1,
	      s.now_slot - INTERVAL k.h HOUR + INTERVAL 1 SECOND,
	      s.now_slot - INTERVAL k.h HOUR + INTERVAL 3 SECOND, 'success', 0,
	      s.now_slot - INTERVAL k.h HOUR, 'schedule'
	    FROM j JOIN k JOIN s"
	assert_eq $((NJOBS * 48)) "$(mysql_q 'SELECT COUNT(*) FROM cronguard_runs')"
}
test_expect_success SERVERS 'setup: 48 runs of each of 1,000 jobs' setup

# measure N: the page for the first N jobs; sets SIZE, MS, STMTS, CHECK.
measure()
{
	local t0 t1
	conf "$1"
	t0=$(date +%s%N)
	assert_exit 0 cg -vv status --html "$PAGE"
	t1=$(date +%s%N)
	MS=$(((t1 - t0) / 1000000))
	SIZE=$(stat -c %s "$PAGE")
	STMTS=$(sed -n 's/.*event=status_collected .* statements=\([0-9]*\) .*/\1/p' "$ERR")
	CHECK=$(sed -n 's/.*jobcheck_statements=\([0-9]*\).*/\1/p' "$ERR")
	[ -n "$STMTS" ] && [ -n "$CHECK" ] || fail "no status_collected line: $(cat "$ERR")"
	echo "figures: $1 jobs: page $SIZE bytes, $MS ms (this build), $STMTS statements, $CHECK of them jobs check's, $((STMTS - CHECK)) the page's own"
}

one()
{
	measure 1
	echo "$((STMTS - CHECK))" > "$TEST_TMP/own1"
	echo "$CHECK" > "$TEST_TMP/check1"
	[ "$(grep -o '<td title="success ' "$PAGE" | wc -l)" -eq 48 ] ||
	    fail "not 48 success cells"
}
test_expect_success SERVERS 'one job: the figures' one

thousand()
{
	measure $NJOBS
	[ "$SIZE" -lt 2000000 ] || fail "page of $SIZE bytes, 2 MB or more"
	[ "$(grep -o '<td title="success ' "$PAGE" | wc -l)" -eq $((NJOBS * 48)) ] ||
	    fail "not $((NJOBS * 48)) success cells"
	assert_eq "$(cat "$TEST_TMP/own1")" "$((STMTS - CHECK))" \
	    "the page's own statements, 1 job and $NJOBS jobs"
	assert_eq "$(cat "$TEST_TMP/check1")" "$CHECK" \
	    "jobs check's statements, 1 job and $NJOBS jobs"
}
test_expect_success SERVERS '1,000 jobs x 48 slots: under 2 MB, statements bounded' \
    thousand

test_done
