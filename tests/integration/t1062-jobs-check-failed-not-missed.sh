#!/bin/sh
# A failed slot is a failure, never also missed (cronguard(1), jobs
# check): with grace 5s and alert_after_failures = 3, two failed slots
# leave the check OK; the third is at alert_level (warning here).
# Needs the MariaDB test server.
# Cases: setup; two failed slots; three.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/slot-lib.sh"

mkdir -p "$TEST_TMP/run"
setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP/run\";
jobs = { j = { command = [ \"false\" ]; schedule = \"* * * * *\";
  timezone = \"UTC\"; grace = \"5s\"; alert_after_failures = 3;
  alert_level = \"warning\"; }; };"
	assert_exit 0 cg db migrate
}
test_expect_success SERVERS 'setup: db migrate' setup

two_failed()
{
	early_in_minute
	run_of 1 failure
	run_of 0 failure
	assert_exit 0 cg jobs check j
	assert_exit 0 cg jobs check --format json j
	/usr/bin/python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["jobs"][0]["schedule"]
assert s["failed_slots"] == 2 and s["missed"] == [], s' "$OUT" ||
	    fail "json: $(cat "$OUT")"
}
test_expect_success SERVERS 'two failed slots are below alert_after_failures' \
    two_failed

three_failed()
{
	early_in_minute
	run_of 2 failure
	assert_exit 1 cg jobs check j
	assert_grep '3 consecutive failed slots' "$OUT"
	if grep -q missed "$OUT"; then
		fail "a failed slot was reported missed: $(cat "$OUT")"
	fi
}
test_expect_success SERVERS 'the third is at alert_level, not missed' \
    three_failed

test_done
