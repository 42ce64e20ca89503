#!/bin/sh
# locks shows every lock cronguard holds, from its run records: the
# configured jobs' locks and those of `exec --lock NAME`, which no
# configuration names.
# Cases: setup; a held exec lock is listed; a finished one is not.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = { nightly = { command = [ \"true\" ]; lock = \"t0383:nightly\"; }; };"
	assert_exit 0 cg db migrate
}
test_expect_success SERVERS 'setup: one configured job, db migrate' setup

# The exec runs on across the cases: its pid in $TEST_TMP/exec.pid, its
# job's in $TEST_TMP/job.pid.
held()
{
	local run_id
	"$CRONGUARD_BIN" -c "$CONF" exec --lock t0383:reindex -- \
	    sh -c "echo \$\$ > $TEST_TMP/job.pid; exec sleep 30" 2> "$TEST_TMP/exec.err" &
	echo $! > "$TEST_TMP/exec.pid"
	at_exit "[ -s $TEST_TMP/job.pid ] && kill \$(cat $TEST_TMP/job.pid) 2>/dev/null; kill $! 2>/dev/null"
	wait_for 10 test -s "$TEST_TMP/job.pid"
	run_id=$(mysql_q "SELECT id FROM cronguard_runs WHERE lock_name = 't0383:reindex'")
	assert_exit 0 cg locks
	assert_grep '^LOCK +JOB +STATE +FENCE +HOLDER$' "$OUT"
	assert_grep '^t0383:nightly +nightly +free +- +-$' "$OUT"
	assert_grep "^t0383:reindex +t0383:reindex +held +[0-9]+ +connection [0-9]+, run $run_id on [^ ]+ pid [0-9]+.*, since " "$OUT"
}
test_expect_success SERVERS 'a held exec lock is listed with its run, beside the configured one' \
    held

finished()
{
	[ -s "$TEST_TMP/job.pid" ] || fail "no exec running (the case before failed)"
	kill "$(cat "$TEST_TMP/job.pid")"
	wait_for 10 sh -c "! kill -0 $(cat "$TEST_TMP/exec.pid")"
	assert_exit 0 cg locks
	assert_grep '^t0383:nightly +nightly +free +- +-$' "$OUT"
	if grep -q 't0383:reindex' "$OUT"; then
		fail "a released exec lock is still listed: $(cat "$OUT")"
	fi
}
test_expect_success SERVERS 'a finished exec lock is gone, the configured one stays' \
    finished

test_done
