#!/bin/sh
# once_per = "1d": two "hosts" (separate runtime directories) launch the
# job one after the other; it runs once, the second launch exits 0 (or
# busy_exit) with event=job_already_done naming the run that did it.  A
# failed run does not count.  With the success moved into yesterday (a
# missed slot) the next launch runs it: catch-up.  A time zone the server
# does not know is a configuration error naming the job and the key.
# Cases: setup; a failed run is not done; done for today; a missed slot;
# the database's time zone; an unknown zone; configuration checks.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

COUNT=$TEST_TMP/count
export COUNT

# host_config FILE DIR: the same jobs on one more host.
host_config()
{
	mkdir -p "$2"
	write_config "$1" "runtime_dir = \"$2\";
jobs = {
  daily = { command = [ \"sh\", \"-c\", \"echo ran >> \\\"\$COUNT\\\"; exit \${FAIL:-0}\" ];
            once_per = \"1d\"; timezone = \"Europe/Berlin\"; busy_exit = 3; };
  local_tz = { command = [ \"true\" ]; once_per = \"1d\"; };
  bad_tz = { command = [ \"true\" ]; once_per = \"1d\"; timezone = \"Mars/Olympus\"; };
};"
}
A=$TEST_TMP/a.conf
B=$TEST_TMP/b.conf
CONF=$A

setup()
{
	host_config "$A" "$TEST_TMP/a"
	host_config "$B" "$TEST_TMP/b"
	assert_exit 0 cg db migrate
}
test_expect_success SERVERS 'setup: two hosts, db migrate' setup

ran() { if [ -f "$COUNT" ]; then wc -l < "$COUNT" | tr -d ' '; else echo 0; fi; }
# success_id NAME: the newest success of daily, kept in $TEST_TMP/NAME
success_id() { cat "$TEST_TMP/$1"; }

# A failed run is not done: the next launch runs again.
failed_not_done()
{
	FAIL=1 assert_exit 1 "$CRONGUARD_BIN" -c "$A" run daily
	assert_eq 1 "$(ran)" "runs after a failure"
	assert_exit 0 "$CRONGUARD_BIN" -c "$B" run daily
	assert_eq 2 "$(ran)" "a failed run counted as done"
	mysql_q "SELECT MAX(id) FROM cronguard_runs WHERE job = 'daily' AND outcome = 'success'" > "$TEST_TMP/first"
}
test_expect_success SERVERS 'a failed run is not done: the next launch runs' \
    failed_not_done

# Done for today: host A and host B skip, exit busy_exit, naming the run.
done_for_today()
{
	local first
	first=$(success_id first)
	assert_exit 3 "$CRONGUARD_BIN" -c "$A" -v run daily
	assert_grep "level=info event=job_already_done job=daily run_id=$first once_per=1d slot=\"?20[0-9-]+ [0-9:.]+\"? exit=3" "$ERR"
	assert_exit 3 "$CRONGUARD_BIN" -c "$B" -v run daily
	assert_grep "event=job_already_done job=daily run_id=$first " "$ERR"
	assert_eq 2 "$(ran)" "ran twice in one slot"
	assert_eq 1 "$(mysql_q "SELECT COUNT(*) FROM cronguard_runs WHERE job = 'daily' AND outcome = 'success'")" "successes"
}
test_expect_success SERVERS 'done for today: both hosts skip with busy_exit, naming the run' \
    done_for_today

# A missed slot: the last success started yesterday (Berlin), so the next
# launch, whichever host, catches up; the one after it skips again.
missed_slot()
{
	local first second
	first=$(success_id first)
	mysql_q "UPDATE cronguard_runs SET started_at = started_at - INTERVAL 1 DAY,
	    finished_at = finished_at - INTERVAL 1 DAY WHERE job = 'daily'"
	assert_exit 0 "$CRONGUARD_BIN" -c "$B" run daily
	assert_eq 3 "$(ran)" "no catch-up after a missed slot"
	second=$(mysql_q "SELECT MAX(id) FROM cronguard_runs WHERE job = 'daily' AND outcome = 'success'")
	[ "$second" -gt "$first" ] || fail "no new run record"
	assert_exit 3 "$CRONGUARD_BIN" -c "$A" -v run daily
	assert_grep "event=job_already_done job=daily run_id=$second " "$ERR"
	assert_eq 3 "$(ran)" "ran twice after catching up"
}
test_expect_success SERVERS 'a missed slot: the next launch catches up, once' \
    missed_slot

# The database's own time zone (no timezone key): once, then skipped (0).
local_tz()
{
	assert_exit 0 "$CRONGUARD_BIN" -c "$A" run local_tz
	assert_exit 0 "$CRONGUARD_BIN" -c "$B" -v run local_tz
	assert_grep "event=job_already_done job=local_tz " "$ERR"
}
test_expect_success SERVERS "the database's time zone: once, then skipped (0)" \
    local_tz

# A zone the server does not know: 78, naming the job and the key; no run.
bad_tz()
{
	assert_exit 78 "$CRONGUARD_BIN" -c "$A" run bad_tz
	assert_grep "event=config_error job=bad_tz key=timezone timezone=Mars/Olympus " "$ERR"
	assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM cronguard_runs WHERE job = 'bad_tz'")" "bad_tz runs"
}
test_expect_success SERVERS 'an unknown time zone: 78, naming the job and the key; no run' \
    bad_tz

# Configuration: a period that does not divide a day, timezone alone.
config_checks()
{
	write_config "$TEST_TMP/c.conf" "jobs = { j = { command = [ \"true\" ]; once_per = \"7h\"; }; };"
	assert_exit 78 "$CRONGUARD_BIN" -c "$TEST_TMP/c.conf" config check
	assert_grep 'jobs\.j\.once_per: must divide a day' "$ERR"
	write_config "$TEST_TMP/c.conf" "jobs = { j = { command = [ \"true\" ]; once_per = \"36h\"; }; };"
	assert_exit 78 "$CRONGUARD_BIN" -c "$TEST_TMP/c.conf" config check
	write_config "$TEST_TMP/c.conf" "jobs = { j = { command = [ \"true\" ]; timezone = \"UTC\"; }; };"
	assert_exit 78 "$CRONGUARD_BIN" -c "$TEST_TMP/c.conf" config check
	assert_grep 'jobs\.j\.timezone: timezone applies to schedule and once_per slots only' "$ERR"
	write_config "$TEST_TMP/c.conf" "jobs = { j = { command = [ \"true\" ]; once_per = \"15m\"; timezone = \"Europe/Berlin\"; }; k = { command = [ \"true\" ]; once_per = \"7d\"; }; };"
	assert_exit 0 "$CRONGUARD_BIN" -c "$TEST_TMP/c.conf" config check
}
test_expect_success SERVERS 'configuration: once_per must divide a day; timezone alone refused' \
    config_checks

test_done
