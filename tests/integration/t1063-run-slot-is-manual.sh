#!/bin/sh
# An operator's re-run is manual (cronguard(1), run --slot): run --slot of
# a slot that already succeeded is recorded with slot_kind 'manual' and
# jobs check stays OK (no "ran twice"); two launched successes of one slot
# still are.  Needs the MariaDB test server.
# Cases: setup; run --slot of a done slot; two launched successes.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/slot-lib.sh"

mkdir -p "$TEST_TMP/run"
setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP/run\";
jobs = { j = { command = [ \"true\" ]; schedule = \"* * * * *\";
  timezone = \"UTC\"; grace = \"1h\"; }; };"
	assert_exit 0 cg db migrate
}
test_expect_success SERVERS 'setup: db migrate' setup

rerun()
{
	early_in_minute
	run_of 1 success
	run_of 0 success
	assert_exit 0 cg run --slot "$(slot 1)" j
	assert_eq manual "$(mysql_q "SELECT slot_kind FROM cronguard_runs
	    ORDER BY id DESC LIMIT 1")" "the re-run's kind"
	assert_eq 2 "$(mysql_q "SELECT COUNT(*) FROM cronguard_runs
	    WHERE slot = '$(slot 1)' AND outcome = 'success'")" "two successes"
	assert_exit 0 cg jobs check j
	assert_exit 0 cg jobs check --format prometheus j
	assert_grep '^cronguard_job_ran_twice\{job="j"\} 0$' "$OUT"
}
test_expect_success SERVERS 'run --slot of a done slot: jobs check OK' rerun

launched_twice()
{
	early_in_minute
	run_of 1 success
	assert_exit 1 cg jobs check j
	assert_grep 'ran twice: 2 successful runs' "$OUT"
}
test_expect_success SERVERS 'two launched successes of a slot still ran twice' \
    launched_twice

test_done
