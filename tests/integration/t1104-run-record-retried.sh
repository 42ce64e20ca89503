#!/bin/sh
# The job's own outcome survives a failed write of its run record: the
# final UPDATE on the lock session waits behind LOCK TABLES cronguard_runs
# WRITE and is stopped with KILL QUERY; cronguard writes it again on a new
# session (incident run_record_retried), and once the table is unlocked
# the record says failure 1, never abandoned.  And a KILL of the lock
# session while the job runs: the record says lock_lost with the job's
# status, and a later jobs list does not close it as abandoned.
# Cases: setup; the final UPDATE killed; the lock session killed.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers

in_processlist() {
	[ -n "$(mysql_admin "SELECT ID FROM information_schema.PROCESSLIST
	    WHERE INFO LIKE '$1'")" ]
}
setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
	jobs = {
	  fails = { command = [ \"sh\", \"-c\",
	    \"echo \$\$ > $TEST_TMP/job.pid; while [ ! -e $TEST_TMP/go ]; do sleep 0.05; done; exit 1\" ]; };
	  long = { command = [ \"sh\", \"-c\",
	    \"echo \$\$ > $TEST_TMP/long.pid; sleep 1; exit 3\" ];
	    heartbeat = \"200ms\"; on_lock_lost = \"continue\"; };
	};"
	sed -i 's/connect_timeout = "5s";/connect_timeout = "5s"; read_timeout = "15s"; write_timeout = "15s";/' "$CONF"
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: two jobs, db migrate' setup

retried()
{
	local cg_pid lock_conn locker locker_id rc
	"$CRONGUARD_BIN" -c "$CONF" run fails > "$OUT" 2> "$ERR" &
	cg_pid=$!
	at_exit "kill -9 $cg_pid 2>/dev/null"
	wait_for 10 test -s "$TEST_TMP/job.pid"
	lock_conn=$(mysql_q "SELECT connection_id FROM cronguard_runs WHERE job = 'fails'")
	mysql_q "LOCK TABLES cronguard_runs WRITE; SELECT SLEEP(60)" > /dev/null 2>&1 &
	locker=$!
	at_exit "kill $locker 2>/dev/null"
	wait_for 10 in_processlist 'SELECT SLEEP(60)%'
	locker_id=$(mysql_admin "SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP(60)%'")

	touch "$TEST_TMP/go"
	wait_for 10 in_processlist 'UPDATE cronguard_runs%'
	mysql_admin "KILL QUERY $lock_conn"
	# The retry, on another session, waits for the table too.
	wait_for 10 in_processlist "UPDATE cronguard_runs%' AND ID <> '$lock_conn"
	mysql_admin "KILL CONNECTION $locker_id"
	rc=0
	wait "$cg_pid" || rc=$?
	cat "$ERR"
	assert_eq 1 "$rc" "exit status: the job's own"
	assert_grep 'event=run_record_retried incident=1 job=fails .*finished on a new session \(job failure, status 1' "$ERR"
	assert_eq "failure 1" "$(mysql_q "SELECT outcome, exit_status FROM cronguard_runs WHERE job = 'fails'" | tr '\t' ' ')" "run record"
	assert_exit 0 cg jobs list
	assert_eq "failure 1" "$(mysql_q "SELECT outcome, exit_status FROM cronguard_runs WHERE job = 'fails'" | tr '\t' ' ')" "run record after jobs list"
}
test_expect_success 'the final UPDATE killed: written again on a new session, failure 1' \
    retried

# The lock session killed while the job runs: lock_lost with the job's 3.
lock_lost()
{
	local cg_pid conn rc
	"$CRONGUARD_BIN" -c "$CONF" run long > "$OUT" 2> "$ERR" &
	cg_pid=$!
	wait_for 10 test -s "$TEST_TMP/long.pid"
	conn=$(mysql_q "SELECT connection_id FROM cronguard_runs WHERE job = 'long' AND outcome = 'running'")
	mysql_admin "KILL CONNECTION $conn"
	rc=0
	wait "$cg_pid" || rc=$?
	assert_eq 76 "$rc" "exit status after the lock was lost"
	assert_eq "lock_lost 3" "$(mysql_q "SELECT outcome, exit_status FROM cronguard_runs WHERE job = 'long'" | tr '\t' ' ')" "run record"
	assert_exit 0 cg jobs list
	assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM cronguard_runs WHERE outcome IN ('running', 'abandoned')")" "runs left running or abandoned"
}
test_expect_success 'the lock session killed: lock_lost with the job'"'"'s 3, not abandoned' \
    lock_lost

test_done
