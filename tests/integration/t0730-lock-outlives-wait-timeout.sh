#!/bin/sh
# A server whose wait_timeout is shorter than the heartbeat closes an idle
# lock session, and the named lock goes with it.  cronguard reads the
# session's wait_timeout when it takes the lock and heartbeats at least
# three times within it, whatever `heartbeat` says: a job that runs for
# several wait_timeouts keeps its lock and ends cleanly.  A lock lost
# meanwhile is noticed by the next heartbeat, within the wait_timeout.
# Cases: setup; a long job keeps its lock; a lock killed mid-job.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
db_private_start	# SET GLOBAL must not reach the other tests' sessions
lock=$TEST_ID
held() { mysql_admin "SELECT IS_USED_LOCK('$1') IS NOT NULL"; }
is_held() { [ "$(held "$1")" = 1 ]; }

setup()
{
	mysql_admin "SET GLOBAL wait_timeout = 2"
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
	jobs = {
	  long = { command = [ \"sleep\", \"7\" ]; lock = \"$lock\"; };
	  killed = { command = [ \"sh\", \"-c\", \"sleep 20; echo survived > $TEST_TMP/survived\" ];
	    lock = \"$lock:k\"; };
	};"
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: the server'"'"'s wait_timeout 2 s; two jobs' setup

# Heartbeat 30 s (the default) against a 2 s wait_timeout: still held
# after twice the wait_timeout, and released cleanly at the end.
kept()
{
	local pid rc
	cg run long > "$OUT" 2> "$ERR" &
	pid=$!
	at_exit "kill $pid 2>/dev/null"
	wait_for 5 is_held "$lock"
	sleep 5
	assert_eq 1 "$(held "$lock")" "lock held past wait_timeout"
	rc=0
	wait "$pid" || rc=$?
	[ "$rc" -eq 0 ] || { cat "$ERR"; fail "run exited $rc, expected 0"; }
	assert_eq "success" "$(mysql_q "SELECT outcome FROM cronguard_runs
	    WHERE job = 'long' ORDER BY id DESC LIMIT 1")" "run outcome"
	assert_eq 0 "$(held "$lock")" "released"
}
test_expect_success 'a job of several wait_timeouts keeps its lock and ends cleanly' \
    kept

# The lock session killed mid-job: the heartbeat (well within the 2 s
# wait_timeout, not after the configured 30 s) notices and ends the job.
lost()
{
	local start pid rc took
	start=$(date +%s)
	cg run killed > "$OUT" 2> "$ERR" &
	pid=$!
	at_exit "kill $pid 2>/dev/null"
	wait_for 5 is_held "$lock:k"
	mysql_admin "KILL CONNECTION $(mysql_admin "SELECT IS_USED_LOCK('$lock:k')")"
	rc=0
	wait "$pid" || rc=$?
	took=$(($(date +%s) - start))
	[ "$rc" -eq 76 ] || { cat "$ERR"; fail "run exited $rc, expected 76"; }
	assert_grep 'event=lock_lost' "$ERR"
	[ "$took" -le 8 ] || fail "lock loss noticed after ${took}s"
	[ ! -e "$TEST_TMP/survived" ] || fail "job not terminated"
}
test_expect_success 'the lock session killed: noticed within the wait_timeout, 76' \
    lost


mysql_admin "SET GLOBAL wait_timeout = 28800"

test_done
