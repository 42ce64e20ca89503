#!/bin/sh
# SQL jobs run on the lock's own session.  One that calls RELEASE_LOCK on
# its own lock makes cronguard's release return NULL: the lock was not
# held to the end, so lock_release_unexpected and exit 76.  A plain SQL
# job runs on the same session (CONNECTION_ID() is the lock holder's).  An
# SQL job past its timeout is stopped with KILL QUERY: exit 124, and the
# lock session survives to release the lock cleanly.
# Cases: setup; a job releasing its own lock; the lock session; an SQL
# error; the timeout.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
	jobs = {
	  rogue = { sql = \"DO RELEASE_LOCK('t0330:rogue')\"; lock = \"t0330:rogue\"; };
	  mark = { sql = \"INSERT INTO t0330_marks SELECT CONNECTION_ID(), IS_USED_LOCK('t0330:mark')\";
	    lock = \"t0330:mark\"; };
	  broken = { sql = \"SELEC 1\"; };
	  slow = { sql = \"SELECT SLEEP(20) FROM (SELECT 1 UNION SELECT 2) t\";
	    timeout = \"1s\"; lock = \"t0330:slow\"; };
	};"
	assert_exit 0 cg db migrate
	mysql_q "CREATE TABLE t0330_marks (conn BIGINT, holder BIGINT)"
}
test_expect_success 'setup: four SQL jobs, db migrate, a table of marks' setup

rogue()
{
	assert_exit 76 cg run rogue
	assert_grep 'level=error event=lock_release_unexpected incident=1 job=rogue' "$ERR"
	assert_grep 'RELEASE_LOCK returned NULL' "$ERR"
	assert_eq "incident 0" "$(mysql_q "SELECT outcome, exit_status FROM cronguard_runs
	    WHERE job = 'rogue'" | tr '\t' ' ')" "run record keeps the job's status"
}
test_expect_success 'a job that releases its own lock: lock_release_unexpected, 76' \
    rogue

mark()
{
	assert_exit 0 cg run mark
	assert_eq 1 "$(mysql_q "SELECT COUNT(*) FROM t0330_marks m JOIN cronguard_runs r
	    ON r.connection_id = m.conn AND m.holder = m.conn WHERE r.job = 'mark'")" \
	    "the SQL job ran on the lock session"
}
test_expect_success 'an SQL job runs on the lock session' mark

broken()
{
	assert_exit 1 cg run broken
	assert_grep 'event=job_failed' "$ERR"
	assert_eq "failure 1" "$(mysql_q "SELECT outcome, exit_status FROM cronguard_runs
	    WHERE job = 'broken'" | tr '\t' ' ')"
	assert_eq 1 "$(mysql_q "SELECT error LIKE '%syntax%' FROM cronguard_runs WHERE job = 'broken'")"
}
test_expect_success 'an SQL error: job_failed, 1, the error recorded' broken

slow()
{
	local start
	start=$(date +%s)
	assert_exit 124 cg run slow
	[ $(( $(date +%s) - start )) -lt 8 ] || fail "the SQL timeout took too long"
	assert_grep 'event=job_timeout job=slow timeout=1s' "$ERR"
	[ "$(grep -c 'incident=1' "$ERR" || true)" = 0 ] || fail "incident after KILL QUERY: $(cat "$ERR")"
	assert_eq "timeout 1" "$(mysql_q "SELECT outcome, exit_status FROM cronguard_runs
	    WHERE job = 'slow'" | tr '\t' ' ')"
	assert_eq 1 "$(mysql_q "SELECT IS_FREE_LOCK('t0330:slow')")"
}
test_expect_success 'past its timeout: KILL QUERY, 124, the lock released cleanly' \
    slow

test_done
