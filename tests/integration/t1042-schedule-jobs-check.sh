#!/bin/sh
# jobs check from the schedule: with alert_after_failures = 3, two failed
# slots leave the check OK, the third makes it leave OK at alert_level;
# an acknowledged slot ends the count.  A slot past grace without a
# success is CRITICAL (missed); a slot that ran twice is reported.
# Cases: setup; three failed slots; an acknowledged slot; missed; ran
# twice.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

# conf KEYS
conf()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP/run\";
jobs = { j = { command = [ \"false\" ]; schedule = \"*/5 * * * *\";
  timezone = \"+00:00\"; $1 }; };"
}
mkdir -p "$TEST_TMP/run"
setup()
{
	conf 'grace = "1d"; alert_after_failures = 3; alert_level = "critical";'
	assert_exit 0 cg db migrate
}
test_expect_success SERVERS 'setup: db migrate' setup

# slot N: the Nth slot of */5 before now, UTC.
slot()
{
	mysql_q "SELECT DATE_FORMAT(FROM_UNIXTIME(FLOOR(UNIX_TIMESTAMP(NOW())
	    / 300) * 300 - 300 * $1), '%Y-%m-%d %H:%i:00')"
}

# Failed runs for three slots, oldest first, through run --slot.
three_failed_slots()
{
	local n=0 k
	for k in 3 2 1; do
		assert_exit 1 cg run --slot "$(slot "$k")" j
		n=$((n + 1))
		if [ "$n" -lt 3 ]; then
			assert_exit 0 cg jobs check j
			echo "after $n failed slots: $(cat "$OUT")"
		fi
	done
	assert_exit 2 cg jobs check j
	assert_grep '3 consecutive failed slots' "$OUT"
	assert_exit 2 cg jobs check --format prometheus j
	assert_grep '^cronguard_job_failed_slots\{job="j"\} 3$' "$OUT"
	assert_grep '^cronguard_job_alert_level\{job="j"\} 2$' "$OUT"
}
test_expect_success SERVERS 'two failed slots leave the check OK, the third is critical' \
    three_failed_slots

# An acknowledged slot ends the count.
acked_slot()
{
	mysql_q "INSERT INTO cronguard_job_acks (job, slot, acked_by, reason)
	    VALUES ('j', '$(slot 1)', 'ops@test:1', 'known outage')"
	assert_exit 0 cg jobs check j
	assert_exit 0 cg jobs check --format json j
	assert_grep '"failed_slots": 0' "$OUT"
}
test_expect_success SERVERS 'an acknowledged slot ends the count' acked_slot

# Missed: with a short grace, the latest slot without a success.
missed()
{
	mysql_q "DELETE FROM cronguard_job_acks"
	conf 'grace = "1s";'
	if [ "$(mysql_q "SELECT MOD(UNIX_TIMESTAMP(NOW()), 300) > 2")" = 1 ]; then
		assert_exit 2 cg jobs check j
		assert_grep 'missed' "$OUT"
		assert_exit 2 cg jobs check --format prometheus j
		assert_grep '^cronguard_job_slot_missed\{job="j"\} 1$' "$OUT"
		# A slot that fell in a pause is not missed, resumed since or not
		# (the failed slots still are what they are: WARNING).
		mysql_q "INSERT INTO cronguard_job_pauses (job, paused_by, paused_at,
		    until_at) VALUES ('j', 'ops@test:1', NOW(6) - INTERVAL 1 DAY,
		    NOW(6) - INTERVAL 1 SECOND)"
		assert_exit 1 cg jobs check j
		if grep -q missed "$OUT"; then
			cat "$OUT"
			fail "a slot of a resumed pause was reported missed"
		fi
		mysql_q "DELETE FROM cronguard_job_pauses"
	fi
}
test_expect_success SERVERS 'missed: a slot past grace without a success; not within a pause' \
    missed

# Ran twice: two successes recorded for one slot.
ran_twice()
{
	conf 'grace = "1d";'
	mysql_q "DELETE FROM cronguard_runs;
	    INSERT INTO cronguard_runs (job, host, pid, started_at, finished_at,
	    outcome, slot, slot_kind) VALUES
	    ('j', 'a', 1, '$(slot 1)', '$(slot 1)', 'success', '$(slot 1)', 'schedule'),
	    ('j', 'b', 2, '$(slot 1)', '$(slot 1)', 'success', '$(slot 1)', 'schedule'),
	    ('j', 'a', 3, NOW(), NOW(), 'success', '$(slot 0)', 'schedule')"
	assert_exit 1 cg jobs check j
	assert_grep 'ran twice' "$OUT"
}
test_expect_success SERVERS 'a slot that ran twice is reported' ran_twice

test_done
