#!/bin/sh
# SIGTERM (and SIGINT, SIGHUP) to cronguard reach the job's process group; the job
# exits, cronguard releases the lock, finishes the run record (outcome
# killed, the job's status) and exits with the job's status.
# Cases: setup; then one per signal (TERM, INT, HUP).
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = { trapper = { command = [ \"sh\", \"-c\",
    \"trap 'echo got \$CRONGUARD_SIG > $TEST_TMP/got; exit 143' TERM INT HUP; echo \$\$ > $TEST_TMP/job.pid; while :; do sleep 0.1; done\" ];
    lock = \"t0370:trap\"; }; };"
	assert_exit 0 cg db migrate
}
test_expect_success SERVERS 'setup: a job that traps the signals, db migrate' setup

# forwarded SIG: SIG to cronguard reaches the job, which exits 143; the
# lock is released and the run record finished, with no incident.
forwarded()
{
	local sig=$1 cg_pid job_pid rc
	rm -f "$TEST_TMP/job.pid" "$TEST_TMP/got"
	CRONGUARD_SIG=$sig "$CRONGUARD_BIN" -c "$CONF" run trapper 2> "$ERR" &
	cg_pid=$!
	at_exit "kill $cg_pid 2>/dev/null; [ -s $TEST_TMP/job.pid ] && kill \$(cat $TEST_TMP/job.pid) 2>/dev/null"
	wait_for 10 test -s "$TEST_TMP/job.pid"
	job_pid=$(cat "$TEST_TMP/job.pid")
	assert_eq 0 "$(mysql_q "SELECT IS_FREE_LOCK('t0370:trap')")" "held"
	kill -"$sig" "$cg_pid"
	rc=0
	wait "$cg_pid" || rc=$?
	assert_eq 143 "$rc" "cronguard's exit status after SIG$sig"
	assert_eq "got $sig" "$(cat "$TEST_TMP/got")" "the job saw SIG$sig"
	kill -0 "$job_pid" 2>/dev/null && fail "the job still runs"
	assert_eq 1 "$(mysql_q "SELECT IS_FREE_LOCK('t0370:trap')")" "released"
	assert_eq "killed 143 1" "$(mysql_q "SELECT outcome, exit_status,
	    finished_at IS NOT NULL FROM cronguard_runs ORDER BY id DESC LIMIT 1" |
	    tr '\t' ' ')" "run record after SIG$sig"
	assert_eq 0 "$(grep -c 'incident=1' "$ERR" || true)" "no incident"
}
for sig in TERM INT HUP; do
	test_expect_success SERVERS "SIG$sig reaches the job; lock released, run killed 143" \
	    "forwarded $sig"
done

test_done
