#!/bin/sh
# A lock session whose wait_timeout is 2 s and a job of 6 s: the heartbeat
# (every 1 s) keeps the session, and so the lock, alive: no incident,
# exit 0.  With a configured heartbeat slower than the job (20 s) the
# guard still heartbeats within the session's wait_timeout:
# before that fix the server closed the session mid-job and
# the release failed with exit 76 (t0730 shows the same with a global
# wait_timeout).  wait_timeout is set for cronguard's sessions only
# (init-command in its option file), not globally on the shared server.
# Cases: setup; a 1 s heartbeat; a 20 s heartbeat.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
printf '[client]\ninit-command=SET SESSION wait_timeout = 2\n' > "$TEST_TMP/my.cnf"
write_config "$TEST_TMP/migrate.conf"
# conf DB_EXTRA JOB_EXTRA
conf()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = { six = { command = [ \"sleep\", \"6\" ]; lock = \"t0360:six\"; $1 };
  wt = { sql = \"INSERT INTO t0360 SELECT @@session.wait_timeout\"; }; };"
	# the option file goes into the database section
	sed -i "s|^database = {|database = { option_file = \"$TEST_TMP/my.cnf\";|" "$CONF"
}
CONF=$TEST_TMP/migrate.conf
setup()
{
	assert_exit 0 cg db migrate
	mysql_q "CREATE TABLE t0360 (w INT)"
}
test_expect_success 'setup: db migrate, a table for the session'"'"'s wait_timeout' \
    setup

one_second()
{
	conf 'heartbeat = "1s";'
	assert_exit 0 cg run wt
	assert_eq 2 "$(mysql_q "SELECT w FROM t0360")" "the session's wait_timeout"

	assert_exit 0 cg run six
	assert_eq "" "$(cat "$ERR")" "no incident, nothing logged"
	assert_eq "success 0 1" "$(mysql_q "SELECT outcome, exit_status,
	    heartbeat_at > started_at FROM cronguard_runs WHERE job = 'six'" |
	    tr '\t' ' ')" "run record with heartbeats"
}
test_expect_success 'wait_timeout 2 s, a 6 s job, a 1 s heartbeat: no incident' \
    one_second

# A configured heartbeat slower than the job: the guard heartbeats within
# the session's wait_timeout anyway, so the lock is kept.
twenty_seconds()
{
	mysql_q "DELETE FROM cronguard_runs"
	conf 'heartbeat = "20s";'
	assert_exit 0 cg run six
	assert_eq "success 0 1" "$(mysql_q "SELECT outcome, exit_status,
	    heartbeat_at > started_at FROM cronguard_runs WHERE job = 'six'" |
	    tr '\t' ' ')" "heartbeats within wait_timeout, not every 20 s"
}
test_expect_success 'a 20 s heartbeat: the guard heartbeats within wait_timeout anyway' \
    twenty_seconds

test_done
