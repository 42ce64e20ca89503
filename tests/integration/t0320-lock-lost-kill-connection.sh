#!/bin/sh
# The lock's session killed from outside (KILL CONNECTION) mid-job: the
# heartbeat notices, reports lock_lost through the incident reporter,
# terminates the job, and cronguard exits 76; the run record says
# lock_lost and keeps the job's own status.
# Cases: setup; the session killed; on_lock_lost = "continue".
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
	jobs = { long = { command = [ \"sh\", \"-c\",
	    \"echo \$\$ > $TEST_TMP/job.pid; exec sleep 30\" ];
	    heartbeat = \"300ms\"; }; };"
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: a long job with a 300 ms heartbeat, db migrate' \
    setup

killed()
{
	local rc cg_pid job_pid conn start
	rc=0
	"$CRONGUARD_BIN" -c "$CONF" run long > "$OUT" 2> "$ERR" &
	cg_pid=$!
	at_exit "kill $cg_pid 2>/dev/null; [ -s $TEST_TMP/job.pid ] && kill \$(cat $TEST_TMP/job.pid) 2>/dev/null"
	wait_for 10 test -s "$TEST_TMP/job.pid"
	job_pid=$(cat "$TEST_TMP/job.pid")
	conn=$(mysql_q "SELECT connection_id FROM cronguard_runs WHERE job = 'long' AND outcome = 'running'")
	[ -n "$conn" ] || fail "no running run record"
	assert_eq "$conn" "$(mysql_q "SELECT IS_USED_LOCK('cronguard:$TEST_DB:long')")" "holder"

	start=$(date +%s)
	mysql_admin "KILL CONNECTION $conn"
	wait "$cg_pid" || rc=$?
	cat "$ERR"
	assert_eq 76 "$rc" "exit status after the session was killed"
	[ $(( $(date +%s) - start )) -lt 8 ] || fail "took too long to notice"
	assert_grep 'level=error event=lock_lost incident=1 job=long' "$ERR"
	kill -0 "$job_pid" 2>/dev/null && fail "the job still runs after the lock was lost"
	assert_eq "lock_lost 143" "$(mysql_q "SELECT outcome, exit_status FROM cronguard_runs
	    WHERE job = 'long'" | tr '\t' ' ')" "run record"
	assert_eq 1 "$(mysql_q "SELECT IS_FREE_LOCK('cronguard:$TEST_DB:long')")"
}
test_expect_success 'the session killed: lock_lost, the job terminated, 76' \
    killed

# on_lock_lost = "continue": reported, the job left to finish, still 76.
continued()
{
	local rc cg_pid conn
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
	jobs = { long = { command = [ \"sh\", \"-c\",
	    \"echo \$\$ > $TEST_TMP/job.pid; sleep 2; echo finished\" ];
	    heartbeat = \"300ms\"; on_lock_lost = \"continue\"; }; };"
	rm -f "$TEST_TMP/job.pid"
	"$CRONGUARD_BIN" -c "$CONF" run long > "$OUT" 2> "$ERR" &
	cg_pid=$!
	wait_for 10 test -s "$TEST_TMP/job.pid"
	sleep 0.3
	conn=$(mysql_q "SELECT connection_id FROM cronguard_runs WHERE job = 'long' AND outcome = 'running'")
	mysql_admin "KILL CONNECTION $conn"
	rc=0
	wait "$cg_pid" || rc=$?
	assert_eq 76 "$rc" "exit status with on_lock_lost = continue"
	assert_grep 'event=lock_lost' "$ERR"
	assert_eq finished "$(cat "$OUT")" "the job ran to its end"
}
test_expect_success 'on_lock_lost = "continue": reported, the job finishes, 76' \
    continued

test_done
