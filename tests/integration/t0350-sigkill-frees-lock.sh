#!/bin/sh
# cronguard SIGKILLed while its job runs, the job having started a
# background child: both are killed by the job's reaper, the named lock
# is free within a second (the lock session's socket is close-on-exec, so
# no process of the job holds it; the reaper's copy goes when the tree is
# gone), and so is the local flock; the next run is not blocked.
# Cases: setup; cronguard SIGKILLed; the next run.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
	jobs = { bg = { command = [ \"sh\", \"-c\",
	    \"sleep 30 & echo \$! > $TEST_TMP/bg.pid; echo \$\$ > $TEST_TMP/job.pid; wait\" ];
	    lock = \"t0350:bg\"; }; };"
	assert_exit 0 cg db migrate
	at_exit "for f in $TEST_TMP/bg.pid $TEST_TMP/job.pid; do [ -s \$f ] && kill \$(cat \$f) 2>/dev/null; done"
}
test_expect_success 'setup: a job with a background child, db migrate' setup

sigkilled()
{
	local cg_pid free n
	"$CRONGUARD_BIN" -c "$CONF" run bg 2> "$ERR" &
	cg_pid=$!
	wait_for 10 test -s "$TEST_TMP/bg.pid"
	wait_for 10 test -s "$TEST_TMP/job.pid"
	assert_eq 0 "$(mysql_q "SELECT IS_FREE_LOCK('t0350:bg')")" "held while running"

	kill -9 "$cg_pid"
	wait "$cg_pid" 2>/dev/null || true
	# "At once": the server sees the socket close as the process dies.
	free=0 n=0
	while [ "$n" -lt 10 ]; do
		free=$(mysql_q "SELECT IS_FREE_LOCK('t0350:bg')")
		[ "$free" = 1 ] && break
		sleep 0.1
		n=$((n + 1))
	done
	assert_eq 1 "$free" "IS_FREE_LOCK within a second of SIGKILL"
	echo "lock free within $(( (n + 1) * 100 )) ms"
	if kill -0 "$(cat "$TEST_TMP/bg.pid")" 2>/dev/null; then
		fail "the background child outlived the guard"
	fi
	# The job and the child it started in the background die with the guard:
	# its reaper (src/reaper.h) kills the whole tree, and only then closes
	# the last copy of the lock session (t1108).
	flock -n "$(ls "$TEST_TMP"/cronguard-*/*.lock)" true || fail "the local flock is still held"
}
test_expect_success 'cronguard SIGKILLed: job and child killed, both locks free at once' \
    sigkilled

# The next run starts.
next_run()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
	jobs = { bg = { command = [ \"true\" ]; lock = \"t0350:bg\"; }; };"
	assert_exit 0 cg -v run bg
	assert_grep 'event=job_finished job=bg outcome=success' "$ERR"
}
test_expect_success 'the next run is not blocked' next_run

test_done
