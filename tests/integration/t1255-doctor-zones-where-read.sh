#!/bin/sh
# doctor checks a job's time zone where it is read (cronguard(1), doctor,
# timezone): a job with a schedule computes its slots from this host's
# tzdata, so a zone the server's tables lack is no problem for it (before,
# doctor said CRITICAL "its first run would exit 78" and the run worked);
# a once_per job converts in SQL, so the same zone is CRITICAL there.  The
# zone is one only this host has: Test/Berlin, a copy of Europe/Berlin
# under a TZDIR of the test's own.
# Servers: MariaDB.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
: "${CRONGUARD_SQLDIR:=$CRONGUARD_SRCDIR/sql}"
export CRONGUARD_SQLDIR
TZDIR=$TEST_TMP/zoneinfo
export TZDIR

setup()
{
	mkdir -p "$TEST_TMP/zoneinfo/Test"
	cp /usr/share/zoneinfo/Europe/Berlin "$TEST_TMP/zoneinfo/Test/Berlin" ||
	    fail "no Europe/Berlin in /usr/share/zoneinfo"
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = { sched = { command = [ \"/bin/true\" ]; schedule = \"*/5 * * * *\";
    timezone = \"Test/Berlin\"; }; };"
	assert_exit 0 cg db migrate
}
test_expect_success SERVERS 'setup: a zone only this host has' setup

schedule_job()
{
	[ "$(mysql_q "SELECT CONVERT_TZ('2001-01-01', '+00:00', 'Test/Berlin') IS NULL")" = 1 ] ||
	    fail "the server knows Test/Berlin"
	assert_exit 0 cg doctor
	assert_grep "^OK timezone: job sched: its schedule reads Test/Berlin from this host's tzdata" "$OUT"
	assert_exit 0 cg run sched
	assert_eq success "$(mysql_q "SELECT outcome FROM cronguard_runs WHERE job = 'sched'")" "the run"
}
test_expect_success SERVERS 'a schedule: the host tzdata, doctor OK, the run works' schedule_job

once_per_job()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = { daily = { command = [ \"/bin/true\" ]; once_per = \"1d\";
    timezone = \"Test/Berlin\"; }; };"
	assert_exit 2 cg doctor
	assert_grep "^CRITICAL timezone: job daily: the server does not know the time zone Test/Berlin.*: its first run would exit 78; fix: " "$OUT"
	head -n 1 "$OUT" | grep -q '^DOCTOR CRITICAL - timezone: job daily' ||
	    fail "the verdict: $(head -n 1 "$OUT")"
	assert_exit 78 cg run daily
}
test_expect_success SERVERS 'once_per: the server must know it, CRITICAL' once_per_job

test_done
