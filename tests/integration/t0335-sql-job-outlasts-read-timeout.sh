#!/bin/sh
# An SQL job is one long read on the lock session: a statement that runs
# longer than database.read_timeout (meant for short queries) must not be
# cut off as a lost session, an incident and a KILL of the job.  With a
# job timeout, KILL QUERY still stops it (124) and the lock is released
# cleanly.
# Cases: setup; a statement longer than read_timeout; a job timeout.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = {
  long = { sql = \"DO SLEEP(3)\"; lock = \"t0335:long\"; };
  capped = { sql = \"DO SLEEP(20)\"; lock = \"t0335:capped\"; timeout = \"2s\"; };
};"
	assert_exit 0 cg db migrate
	sed -i 's|^database = {|database = { read_timeout = "1s";|' "$CONF"
}
test_expect_success SERVERS 'setup: read_timeout 1s, db migrate' setup

outlasts()
{
	assert_exit 0 cg run long
	assert_eq "" "$(cat "$ERR")" "no incident, nothing logged"
	assert_eq "success 0" "$(mysql_q "SELECT outcome, exit_status FROM cronguard_runs
	    WHERE job = 'long'" | tr '\t' ' ')" "run record"
}
test_expect_success SERVERS 'a statement longer than read_timeout succeeds, no incident' \
    outlasts

capped()
{
	local start
	start=$(date +%s)
	assert_exit 124 cg run capped
	[ $(( $(date +%s) - start )) -lt 10 ] || fail "the SQL timeout took too long"
	[ "$(grep -c 'incident=1' "$ERR" || true)" = 0 ] || fail "incident: $(cat "$ERR")"
	assert_eq "timeout" "$(mysql_q "SELECT outcome FROM cronguard_runs
	    WHERE job = 'capped'")" "run record of the timeout"
	assert_eq 1 "$(mysql_q "SELECT IS_FREE_LOCK('t0335:capped')")"
}
test_expect_success SERVERS 'a job timeout stops the statement (124), the lock released' \
    capped

test_done
