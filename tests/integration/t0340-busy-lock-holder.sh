#!/bin/sh
# A busy lock: a live cronguard holder within max_runtime + grace means
# skip (exit 0, or busy_exit) with event=job_skipped; a holder past
# max_runtime + grace, or a foreign session that no run record accounts
# for past grace, means exit 75 with event=lock_busy_stuck naming it.
# Cases: setup; a live holder; a holder past max_runtime + grace; a
# foreign session.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
mkdir -p "$TEST_TMP/a" "$TEST_TMP/b"
jobs="jobs = {
  live = { command = [ \"sleep\", \"4\" ]; lock = \"t0340:live\"; };
  busy3 = { command = [ \"true\" ]; lock = \"t0340:live\"; busy_exit = 3; };
  short = { command = [ \"sleep\", \"6\" ]; lock = \"t0340:short\";
    max_runtime = \"1s\"; grace = \"1s\"; };
  foreign = { command = [ \"true\" ]; lock = \"t0340:foreign\";
    max_runtime = \"1h\"; grace = \"3s\"; };
};"
CONF=$TEST_TMP/a.conf
kill_sessions()
{
	for id in $(mysql_admin "SELECT ID FROM information_schema.PROCESSLIST
	    WHERE INFO LIKE '%t0340:foreign%' AND ID <> CONNECTION_ID()"); do
		mysql_admin "KILL CONNECTION $id" 2>/dev/null
	done
}
at_exit kill_sessions
# has_runs JOB N: the job has N run records (for wait_for)
has_runs()
{
	test "$(mysql_q "SELECT COUNT(*) FROM cronguard_runs WHERE job = '$1'")" = "$2"
}
lock_taken() { test "$(mysql_q "SELECT IS_FREE_LOCK('$1')")" = 0; }

setup()
{
	write_config "$TEST_TMP/a.conf" "runtime_dir = \"$TEST_TMP/a\"; $jobs"
	write_config "$TEST_TMP/b.conf" "runtime_dir = \"$TEST_TMP/b\"; $jobs"
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: two hosts, db migrate' setup

# --- a live cronguard holder (host a) within max_runtime: host b skips
live()
{
	local live_pid run_id
	"$CRONGUARD_BIN" -c "$CONF" run live 2> "$TEST_TMP/live.err" &
	live_pid=$!
	at_exit "kill $live_pid 2>/dev/null"
	wait_for 10 has_runs live 1
	run_id=$(mysql_q "SELECT id FROM cronguard_runs WHERE job = 'live'")
	CONF=$TEST_TMP/b.conf
	assert_exit 0 cg -v run live
	assert_grep "level=info event=job_skipped job=live lock=t0340:live holder=\"connection [0-9]+ .*run $run_id of live on " "$ERR"
	assert_exit 0 cg run live
	assert_eq "" "$(cat "$ERR")" "quiet when skipping without -v"
	assert_exit 3 cg run busy3
	assert_exit 3 cg exec --lock t0340:live --busy-exit 3 -- true
	assert_exit 0 cg exec --lock t0340:live -- true
	# The same host: the local flock stops it before the database.
	CONF=$TEST_TMP/a.conf
	assert_exit 0 cg -v run live
	assert_grep 'event=job_skipped job=live path=.*holder="pid [0-9]+ on this host"' "$ERR"
	wait "$live_pid"
	assert_eq 1 "$(mysql_q "SELECT COUNT(*) FROM cronguard_runs WHERE job = 'live'")" "only one run"
}
test_expect_success 'a live holder within max_runtime: skip (0, or busy_exit), quiet without -v' \
    live

# --- a cronguard holder past max_runtime + grace: 75 naming the holder
stuck()
{
	local short_pid run_id conn
	"$CRONGUARD_BIN" -c "$CONF" run short 2> /dev/null &
	short_pid=$!
	at_exit "kill $short_pid 2>/dev/null"
	wait_for 10 has_runs short 1
	CONF=$TEST_TMP/b.conf
	assert_exit 0 cg run short
	sleep 3
	run_id=$(mysql_q "SELECT id FROM cronguard_runs WHERE job = 'short'")
	conn=$(mysql_q "SELECT connection_id FROM cronguard_runs WHERE job = 'short'")
	assert_exit 75 cg run short
	assert_grep "level=error event=lock_busy_stuck job=short lock=t0340:short holder=\"connection $conn .*run $run_id of short on [^ ]+ pid [0-9]+ since [0-9-]+ [0-9:.]+ \\([0-9]+s\\)\"" "$ERR"
	kill "$short_pid"
	wait "$short_pid" || true
}
test_expect_success 'a holder past max_runtime + grace: 75 naming it' stuck

# --- a foreign session (no run record) holding the lock
foreign_session()
{
	local foreign
	CONF=$TEST_TMP/b.conf
	mysql_q "SELECT GET_LOCK('t0340:foreign', 0), SLEEP(30)" > /dev/null 2>&1 &
	wait_for 10 lock_taken t0340:foreign
	foreign=$(mysql_q "SELECT IS_USED_LOCK('t0340:foreign')")
	assert_exit 0 cg -v run foreign
	assert_grep 'event=job_skipped.*no cronguard run record' "$ERR"
	sleep 4
	assert_exit 75 cg run foreign
	assert_grep "event=lock_busy_stuck job=foreign lock=t0340:foreign holder=\"connection $foreign from [^ ]+ user [^ ]+, no cronguard run record, in its current state for [0-9]+s\"" "$ERR"
	assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM cronguard_runs WHERE job = 'foreign'")" "no run record when not run"
}
test_expect_success 'a foreign session: skip, then 75 past grace; no run record' \
    foreign_session

test_done
