#!/bin/sh
# jobs check knows once_per slots (database clock, the job's time zone):
# the last completed slot with no successful run is CRITICAL once grace
# has passed after its end (WARNING when a later run caught up), a slot
# with two successful runs is a WARNING "ran twice" (a second host with
# the guard off), a normal history is OK.  History is inserted directly.
# Cases: setup; missed; caught up; ran twice; OK; all jobs; JSON.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
# UTC days, so that the inserted times (UTC_DATE) line up with the slots.
job() { echo "$1 = { command = [ \"true\" ]; once_per = \"1d\"; timezone = \"UTC\"; grace = \"1s\"; };"; }
# ok JOB 'UTC time': a successful run record that started then.
ok()
{
	mysql_q "INSERT INTO cronguard_runs (job, host, pid, started_at,
	    finished_at, outcome, exit_status) VALUES ('$1', 'h', 1, $2,
	    $2 + INTERVAL 1 SECOND, 'success', 0)"
}
TODAY="UTC_DATE()"
YDAY="UTC_DATE() - INTERVAL 1 DAY"
setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
	jobs = {
	  $(job missed)
	  $(job caught)
	  $(job twice)
	  $(job today2)
	  $(job normal)
	  $(job fresh)
	  berlin = { command = [ \"true\" ]; once_per = \"1d\"; timezone = \"Europe/Berlin\"; };
	};"
	assert_exit 0 cg db migrate

	ok missed "$TODAY - INTERVAL 2 DAY + INTERVAL 6 HOUR"
	ok caught "$TODAY - INTERVAL 2 DAY + INTERVAL 6 HOUR"
	ok caught "$TODAY"
	ok twice "$YDAY + INTERVAL 3 HOUR"
	ok twice "$YDAY + INTERVAL 5 HOUR"
	ok today2 "$YDAY + INTERVAL 3 HOUR"
	ok today2 "$TODAY"
	ok today2 "$TODAY + INTERVAL 1 MICROSECOND"
	ok normal "$YDAY + INTERVAL 3 HOUR"
	# A failure in a slot is not a success, and not a second one.
	mysql_q "INSERT INTO cronguard_runs (job, host, pid, started_at, finished_at,
	    outcome, exit_status) VALUES ('normal', 'h', 2, $YDAY + INTERVAL 4 HOUR,
	    $YDAY + INTERVAL 4 HOUR, 'failure', 1)"
	ok normal "$TODAY"
}
test_expect_success 'setup: seven once_per jobs, db migrate, their history' \
    setup

missed()
{
	local y t
	y=$(mysql_q "SELECT $YDAY")
	t=$(mysql_q "SELECT $TODAY")
	assert_exit 2 cg jobs check missed
	assert_grep "^JOBS CRITICAL - missed CRITICAL: slot $y 00:00:00 ended at $t 00:00:00 with no successful run" "$OUT"
}
test_expect_success 'the last completed slot with no success: CRITICAL' missed

caught()
{
	local y caught
	y=$(mysql_q "SELECT $YDAY")
	t=$(mysql_q "SELECT $TODAY")
	caught=$(mysql_q "SELECT MAX(id) FROM cronguard_runs WHERE job = 'caught'")
	assert_exit 1 cg jobs check caught
	assert_grep "^JOBS WARNING - caught WARNING: slot $y 00:00:00 had no successful run \(caught up by run $caught\)" "$OUT"
}
test_expect_success 'a missed slot caught up by a later run: WARNING' caught

twice()
{
	local y t
	y=$(mysql_q "SELECT $YDAY")
	t=$(mysql_q "SELECT $TODAY")
	assert_exit 1 cg jobs check twice
	assert_grep "^JOBS WARNING - twice WARNING: ran twice: 2 successful runs in slot $y 00:00:00 \(runs [0-9]+ and [0-9]+\)" "$OUT"
	assert_exit 1 cg jobs check today2
	assert_grep "today2 WARNING: ran twice: 2 successful runs in slot $t 00:00:00" "$OUT"
}
test_expect_success 'two successes in a slot: WARNING, ran twice' twice

normal()
{
	assert_exit 0 cg jobs check normal
	assert_grep '^JOBS OK - 1 job ok' "$OUT"
	# No run before the slot: a new job has missed nothing.
	assert_exit 0 cg jobs check fresh
	assert_exit 0 cg jobs check berlin
}
test_expect_success 'a normal history, a new job, another zone: OK' normal

all_jobs()
{
	assert_exit 2 cg jobs check
	assert_grep 'missed CRITICAL: .*; twice WARNING: ran twice' "$OUT"
}
test_expect_success 'all jobs: CRITICAL, naming each' all_jobs

json()
{
	assert_exit 1 cg jobs check --format json twice normal
	/usr/bin/python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
j = {x["job"]: x for x in d["jobs"]}
s = j["twice"]["slots"]
assert len(s) == 2 and s[0]["successes"] == 2 and s[0]["completed"], s
assert s[1]["successes"] == 0 and not s[1]["completed"], s
assert s[0]["end"] == s[1]["start"], s
n = j["normal"]["slots"]
assert [x["successes"] for x in n] == [1, 1] and j["normal"]["status"] == "OK", n
assert j["twice"]["status"] == "WARNING" and "ran twice" in j["twice"]["message"], j' "$OUT" || fail "json: $(cat "$OUT")"
}
test_expect_success 'slots in JSON' json

test_done
