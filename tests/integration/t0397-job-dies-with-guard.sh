#!/bin/sh
# cronguard SIGKILLed while its job runs: its lock goes with its session,
# so the job must not go on unguarded.  The job (cronguard's child) gets
# SIGKILL (PR_SET_PDEATHSIG) and is gone within two seconds; the next run
# takes the lock.
# Cases: setup; output inherit; output captured; the next run.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = {
  long = { command = [ \"sh\", \"-c\",
    \"echo \$\$ > $TEST_TMP/job.pid; trap '' TERM; exec sleep 300\" ];
    lock = \"t0397:long\"; output = \"inherit\"; };
  captured = { command = [ \"sh\", \"-c\",
    \"echo \$\$ > $TEST_TMP/job.pid; exec sleep 300\" ];
    lock = \"t0397:long\"; };
};"
	assert_exit 0 cg db migrate
	at_exit "[ -s $TEST_TMP/job.pid ] && kill -9 \$(cat $TEST_TMP/job.pid) 2>/dev/null"
}
test_expect_success SERVERS 'setup: two long jobs on one lock, db migrate' setup

# dies JOB: JOB's cronguard SIGKILLed, the job is gone within 3s.
dies()
{
	local job=$1 cg_pid pid n=0
	rm -f "$TEST_TMP/job.pid"
	"$CRONGUARD_BIN" -c "$CONF" run "$job" 2> "$ERR" &
	cg_pid=$!
	wait_for 10 test -s "$TEST_TMP/job.pid"
	pid=$(cat "$TEST_TMP/job.pid")
	kill -0 "$pid" || fail "$job: the job is not running"
	kill -9 "$cg_pid"
	wait "$cg_pid" 2>/dev/null || true
	while kill -0 "$pid" 2>/dev/null; do
		[ "$n" -lt 30 ] || fail "$job: job $pid still runs 3s after its cronguard was SIGKILLed"
		sleep 0.1
		n=$((n + 1))
	done
	echo "$job: job gone within $(( (n + 1) * 100 )) ms of the SIGKILL"
}
test_expect_success SERVERS 'output inherit (TERM ignored): the job dies with its cronguard' \
    'dies long'
test_expect_success SERVERS 'output captured: the job dies with its cronguard' \
    'dies captured'

next_run()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = { long = { command = [ \"true\" ]; lock = \"t0397:long\"; }; };"
	assert_exit 0 cg -v run long
	assert_grep 'event=job_finished job=long outcome=success' "$ERR"
}
test_expect_success SERVERS 'the next run takes the lock' next_run

test_done
