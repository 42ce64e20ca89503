#!/bin/sh
# jobs pause stops every job (cronguard(1), jobs pause): a plain job, an
# SQL job and a once_per job launched while paused run nothing and exit 0,
# and run again after jobs resume; pause --all keeps the ended pauses of
# single jobs (their history, for jobs check); after resume, catch_up =
# "all" runs no slot of the pause (run --slot runs one when asked).
# Needs the MariaDB test server.
# Cases: setup; paused jobs run nothing; resumed they run; pause --all
# keeps the history; catch_up all after resume.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/slot-lib.sh"

mkdir -p "$TEST_TMP/run"
setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP/run\";
jobs = {
  plain = { command = [ \"touch\", \"$TEST_TMP/plain\" ]; };
  daily = { command = [ \"touch\", \"$TEST_TMP/daily\" ]; once_per = \"1d\"; };
  q = { sql = \"DO 1\"; };
  j = { command = [ \"true\" ]; schedule = \"* * * * *\"; timezone = \"UTC\";
    grace = \"1h\"; catch_up = \"all\"; };
};"
	assert_exit 0 cg db migrate
}
test_expect_success SERVERS 'setup: db migrate' setup

runs() { mysql_q "SELECT COUNT(*) FROM cronguard_runs WHERE job = '$1'"; }

paused()
{
	assert_exit 0 cg jobs pause plain daily q --reason test
	for job in plain daily q; do
		assert_exit 0 cg run "$job"
		assert_eq 0 "$(runs "$job")" "runs of paused $job"
	done
	[ ! -e "$TEST_TMP/plain" ] || fail "the paused plain job ran"
	[ ! -e "$TEST_TMP/daily" ] || fail "the paused once_per job ran"
}
test_expect_success SERVERS 'paused plain, SQL and once_per jobs run nothing' \
    paused

resumed()
{
	assert_exit 0 cg jobs resume plain daily q
	for job in plain daily q; do
		assert_exit 0 cg run "$job"
		assert_eq 1 "$(runs "$job")" "runs of resumed $job"
	done
	[ -e "$TEST_TMP/plain" ] || fail "the resumed plain job did not run"
}
test_expect_success SERVERS 'resumed, they run' resumed

history()
{
	assert_exit 0 cg jobs pause --all
	assert_eq 3 "$(mysql_q "SELECT COUNT(*) FROM cronguard_job_pauses
	    WHERE job IN ('plain', 'daily', 'q') AND until_at <= NOW(6)")" \
	    "single jobs' ended pauses"
	assert_exit 0 cg jobs resume --all
}
test_expect_success SERVERS 'pause --all keeps the single pauses history' \
    history

# A success 6 slots ago, a pause from before slot 5 that ended just now:
# the launch runs the latest slot only, no slot of the pause.
catch_up_after_resume()
{
	early_in_minute
	mysql_q "DELETE FROM cronguard_job_pauses"
	run_of 6 success
	mysql_q "INSERT INTO cronguard_job_pauses (job, paused_by, paused_at,
	    until_at) VALUES ('j', 'ops@test:1',
	    '$(slot 5)' - INTERVAL 1 SECOND, NOW(6) - INTERVAL 1 SECOND)"
	assert_exit 0 cg run j
	assert_eq 2 "$(runs j)" "runs of j (the success, the latest slot)"
	assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM cronguard_runs
	    WHERE job = 'j' AND slot_kind = 'catch_up'")" "slots caught up"
	# Asked for, one slot of the pause runs.
	assert_exit 0 cg run --slot "$(slot 3)" j
	assert_eq 3 "$(runs j)" "runs of j after run --slot"
}
test_expect_success SERVERS 'catch_up all after resume runs no slot of the pause' \
    catch_up_after_resume

test_done
