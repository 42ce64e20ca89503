#!/bin/sh
# Every missed slot is seen (cronguard(1), jobs check): a job run every
# minute with grace 90s, one success, then slots with no launch: CRITICAL
# missed, every such slot listed in the JSON and counted in
# cronguard_job_slots_missed; a success afterwards: WARNING, until jobs ack
# or until the slots leave missed_lookback.  A scheduled job without a
# grace gets one from its schedule (30s for every minute).
# Needs the MariaDB test server.
# Cases: setup; missed slots are all CRITICAL and listed; a later success
# leaves WARNING; jobs ack clears; the look-back window ends them; the
# default grace follows the schedule.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

# conf KEYS
conf()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP/run\";
jobs = { j = { command = [ \"true\" ]; schedule = \"* * * * *\";
  timezone = \"UTC\"; $1 }; };"
}
mkdir -p "$TEST_TMP/run"

. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/slot-lib.sh"

setup()
{
	conf 'grace = "90s";'
	assert_exit 0 cg db migrate
}
test_expect_success SERVERS 'setup: db migrate' setup

# One success at slot 6, nothing launched since: slots 5, 4, 3 and 2 are
# past their grace with no run (slot 1 may be too).
all_missed()
{
	early_in_minute
	mysql_q "DELETE FROM cronguard_runs; DELETE FROM cronguard_job_acks"
	run_of 6 success
	assert_exit 2 cg jobs check j
	assert_grep "missed: no run started" "$OUT"
	assert_exit 2 cg jobs check --format json j
	/usr/bin/python3 - "$OUT" "$(slot 5)" "$(slot 2)" <<'PY' || fail "json: $(cat "$OUT")"
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]["schedule"]
m = j["missed"]
want = [sys.argv[2].replace(" ", "T") + "+00:00",
        sys.argv[3].replace(" ", "T") + "+00:00"]
assert isinstance(m, list), m
assert want[0] in m and want[1] in m, (want, m)
assert len(m) in (4, 5) and j["slots_missed"] == len(m), j
assert m == sorted(m, reverse=True), m
PY
	assert_exit 2 cg jobs check --format prometheus j
	assert_grep '^cronguard_job_slots_missed\{job="j"\} [45]$' "$OUT"
	assert_grep '^cronguard_job_slot_missed\{job="j"\} 1$' "$OUT"
}
test_expect_success SERVERS 'every missed slot is CRITICAL, listed and counted' \
    all_missed

# A success afterwards: the older missed slots keep a WARNING.
later_success()
{
	early_in_minute
	# From scratch: a minute may have passed since the last case, which
	# moves every slot's number by one.
	mysql_q "DELETE FROM cronguard_runs; DELETE FROM cronguard_job_acks"
	run_of 6 success
	run_of 1 success
	run_of 0 success
	assert_exit 1 cg jobs check j
	assert_grep "missed slots before the last success" "$OUT"
	assert_exit 1 cg jobs check --format prometheus j
	assert_grep '^cronguard_job_slot_missed\{job="j"\} 0$' "$OUT"
	assert_grep '^cronguard_job_slots_missed\{job="j"\} 4$' "$OUT"
}
test_expect_success SERVERS 'a later success leaves the missed slots at WARNING' \
    later_success

# jobs ack of the newest missed slot covers it and the older ones.
acked()
{
	early_in_minute
	assert_exit 0 cg jobs ack j --slot "$(slot 2)" --reason "cron was down"
	assert_exit 0 cg jobs check j
	assert_exit 0 cg jobs check --format prometheus j
	assert_grep '^cronguard_job_slots_missed\{job="j"\} 0$' "$OUT"
}
test_expect_success SERVERS 'jobs ack clears the missed slots' acked

# Without the ack, a look-back window that ends after them.
lookback()
{
	early_in_minute
	mysql_q "DELETE FROM cronguard_job_acks"
	conf 'grace = "90s"; missed_lookback = "100s";'
	assert_exit 0 cg jobs check j
	conf 'grace = "90s"; missed_lookback = "1d";'
	assert_exit 1 cg jobs check j
}
test_expect_success SERVERS 'missed slots leave at the end of missed_lookback' \
    lookback

# No grace: half the shortest time between slots, at least 30s.
default_grace()
{
	conf ''
	assert_exit 0 cg config check
	assert_grep 'grace *= *"30s"' "$OUT"
	write_config "$CONF" "runtime_dir = \"$TEST_TMP/run\";
jobs = { j = { command = [ \"true\" ]; schedule = \"*/4 * * * *\"; }; };"
	assert_exit 0 cg config check
	assert_grep 'grace *= *"2m"' "$OUT"
	write_config "$CONF" "runtime_dir = \"$TEST_TMP/run\";
jobs = { j = { command = [ \"true\" ]; schedule = \"30 1 * * *\"; }; };"
	assert_exit 0 cg config check
	assert_grep 'grace *= *"10m"' "$OUT"
}
test_expect_success SERVERS 'grace follows the schedule when unset' \
    default_grace

test_done
