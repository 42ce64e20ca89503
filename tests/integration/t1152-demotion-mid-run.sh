#!/bin/sh
# Demotion mid-run: the server a guarded job holds its lock on turns
# read-only (SET GLOBAL read_only = 1, as a failover tool demotes the old
# primary) while the job runs.  The next heartbeat sees it (the check
# rides on the IS_USED_LOCK statement, or on the lease's UPDATE), treats
# it as a lost lock: the job is stopped, one incident (lock_lost or
# lease_lost, naming read_only), exit 76 within a few heartbeats, and
# nothing more is written to the demoted server (the run record is left
# running).  The user is root, with SUPER: read_only alone would not
# stop its writes.
# Cases: setup; a named lock demoted; a lease demoted.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
db_private_start

setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = {
  n = { command = [ \"sh\", \"-c\", \"echo \$\$ > $TEST_TMP/pid.n; exec sleep 30\" ];
        heartbeat = \"1s\"; };
  l = { command = [ \"sh\", \"-c\", \"echo \$\$ > $TEST_TMP/pid.l; exec sleep 30\" ];
        guard = \"lease\"; lease = \"5s\"; heartbeat = \"1s\"; };
};"
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: a named-lock job and a lease job, db migrate' setup

demote()
{
	local job=$1 event=$2 rc=0 t0 ms pid
	rm -f "$TEST_TMP/pid.$job"
	mysql_admin "SET GLOBAL read_only = 0"
	cg run "$job" > "$TEST_TMP/out.$job" 2> "$TEST_TMP/err.$job" &
	bg=$!
	wait_for 10 test -s "$TEST_TMP/pid.$job"
	pid=$(cat "$TEST_TMP/pid.$job")
	mysql_admin "SET GLOBAL read_only = 1"
	t0=$(date +%s%N)
	wait "$bg" || rc=$?
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	echo "$job: exit $rc ${ms} ms after read_only = 1"
	cat "$TEST_TMP/err.$job"
	assert_eq 76 "$rc" "exit status of $job"
	[ "$ms" -lt 5000 ] || fail "$job stopped only after $ms ms"
	! kill -0 "$pid" 2> /dev/null || fail "the job of $job still runs"
	assert_eq 1 "$(grep -c 'level=error' "$TEST_TMP/err.$job")" "error lines of $job"
	assert_grep "event=$event .*read-only \(read_only\)" "$TEST_TMP/err.$job"
	assert_eq "running" "$(mysql_q "SELECT outcome FROM cronguard_runs
	    WHERE job = '$job' ORDER BY id DESC LIMIT 1")" "$job's run record on the demoted server"
}
test_expect_success 'a named lock'"'"'s server demoted mid-run: lock_lost, exit 76' \
    'demote n lock_lost'
test_expect_success 'a lease'"'"'s server demoted mid-run: lease_lost, exit 76' \
    'demote l lease_lost'
mysql_admin "SET GLOBAL read_only = 0"

test_done
