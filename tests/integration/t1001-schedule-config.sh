#!/bin/sh
# The schedule keys in config check (no server): a valid scheduled job
# prints every key; each mistake is exit 78, "file:line: key: message",
# naming what is wrong.
. "${CRONGUARD_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

# job KEYS...: a configuration with one job "nightly", its keys on line 3.
# A case's body is a function when it is long (shellcheck reads a
# function, not a string) or a string when it is short.
job()
{
	printf 'database = { name = "app"; };\njobs = { nightly = {\n  command = [ "/bin/true" ]; %s\n}; };\n' "$1" > "$CONF"
}

scheduled_keys()
{
	job 'schedule = "30 1 * * Mon-Fri"; timezone = "Europe/Berlin"; catch_up = "all"; backfill_limit = 20; alert_after_failures = 3; alert_level = "critical";'
	assert_exit 0 cg config check
	assert_grep '^    schedule = "30 1 \* \* Mon-Fri";' "$OUT"
	assert_grep '^    timezone = "Europe/Berlin";' "$OUT"
	assert_grep '^    catch_up = "all";' "$OUT"
	assert_grep '^    backfill_limit = 20;' "$OUT"
	assert_grep '^    starting_deadline = "10m";' "$OUT" # the grace
	assert_grep '^    alert_after_failures = 3;' "$OUT"
	assert_grep '^    alert_level = "critical";' "$OUT"
	# The printed configuration is itself valid.
	cp "$OUT" "$TEST_TMP/printed.conf"
	assert_exit 0 "$CRONGUARD_BIN" -c "$TEST_TMP/printed.conf" config check
}
test_expect_success 'a scheduled job prints every schedule key' scheduled_keys

scheduled_defaults()
{
	job 'schedule = "@daily"; timezone = "+09:00"; grace = "2m";'
	assert_exit 0 cg config check
	assert_grep '^    catch_up = "latest";' "$OUT"
	assert_grep '^    backfill_limit = 10;' "$OUT"
	assert_grep '^    starting_deadline = "2m";' "$OUT"
	assert_grep '^    alert_after_failures = 1;' "$OUT"
	assert_grep '^    alert_level = "warning";' "$OUT"
}
test_expect_success 'the defaults, and a fixed offset needs no tzdata' \
    scheduled_defaults

unscheduled()
{
	job 'expect_every = "1d";'
	assert_exit 0 cg config check
	if grep -qE 'catch_up|backfill_limit|alert_level' "$OUT"; then
		fail "schedule keys printed for a job without a schedule"
	fi
}
test_expect_success 'a job without a schedule prints none of them' unscheduled

starting_deadline_warning()
{
	job 'schedule = "@hourly"; starting_deadline = "5m";'
	assert_exit 0 cg config check
	assert_grep 'nightly.starting_deadline: applies to catch_up = "none" only' "$ERR"
}
test_expect_success 'starting_deadline without catch_up = "none": a warning, not an error' \
    starting_deadline_warning

# expect_error NAME REGEX KEYS: a case: exit 78 naming the key on line 3,
# nothing on stdout.
expect_error()
{
	# shellcheck disable=SC2034 # read by the case body
	error=$2 keys=$3
	test_expect_success "$1" '
		job "$keys"
		assert_exit 78 cg config check
		assert_grep "^cronguard: $CONF:3: jobs\\.nightly\\.$error" "$ERR"
		test ! -s "$OUT" || fail "stdout not empty on error"
	'
}
expect_error 'an hour out of range' 'schedule: hour: 24 is out of range 0-23' 'schedule = "0 24 * * *";'
expect_error 'a day of the week out of range' 'schedule: day-of-week: 8 is out of range 0-7' 'schedule = "0 0 * * 8";'
expect_error 'a month that is no month' 'schedule: month: "foo" is not a number or a month name' 'schedule = "0 0 * foo *";'
expect_error 'four fields' 'schedule: expected 5 fields .*not 4' 'schedule = "0 0 * *";'
expect_error 'a step without a range' 'schedule: minute: a step needs a range' 'schedule = "5/15 * * * *";'
expect_error 'a day that never comes' 'schedule: day-of-month: no selected day occurs' 'schedule = "0 0 30 2 *";'
expect_error 'an unknown macro' 'schedule: unknown macro "@fortnightly"' 'schedule = "@fortnightly";'
expect_error '@reboot' 'schedule: @reboot has no slots' 'schedule = "@reboot";'
expect_error 'backfill_limit 0' 'backfill_limit: .*1' 'schedule = "@daily"; backfill_limit = 0;'
expect_error 'backfill_limit too large' 'backfill_limit: .*1000' 'schedule = "@daily"; backfill_limit = 1000000;'
expect_error 'alert_after_failures 0' 'alert_after_failures: ' 'schedule = "@daily"; alert_after_failures = 0;'
expect_error 'an unknown catch_up' 'catch_up: ' 'schedule = "@daily"; catch_up = "some";'
expect_error 'an unknown alert_level' 'alert_level: ' 'schedule = "@daily"; alert_level = "info";'
expect_error 'an unknown zone' 'timezone: unknown time zone "Mars/Olympus_Mons"' 'schedule = "@daily"; timezone = "Mars/Olympus_Mons";'
expect_error 'an offset out of range' 'timezone: time zone "\+25:00"' 'schedule = "@daily"; timezone = "+25:00";'
expect_error 'schedule and once_per' 'schedule: give schedule or once_per, not both' 'schedule = "@daily"; once_per = "1d";'
expect_error 'catch_up without a schedule' 'catch_up: applies to a schedule' 'catch_up = "all";'
expect_error 'timezone without a schedule' 'timezone: timezone applies to schedule and once_per' 'timezone = "UTC";'

needs_database()
{
	printf 'jobs = { nightly = {\n  command = [ "/bin/true" ]; guard = "local";\n  schedule = "@daily"; }; };\n' > "$CONF"
	assert_exit 78 cg config check
	assert_grep "$CONF:3: jobs\\.nightly\\.schedule: schedule needs a database section" "$ERR"
}
test_expect_success 'a schedule needs the run records (a database section)' \
    needs_database

zone_missing()
{
	job 'schedule = "@daily"; timezone = "Europe/Berlin";'
	assert_exit 78 env TZDIR="$TEST_TMP" "$CRONGUARD_BIN" -c "$CONF" config check
	assert_grep "jobs\\.nightly\\.timezone: unknown time zone \"Europe/Berlin\": no $TEST_TMP/Europe/Berlin" "$ERR"
}
test_expect_success "a zone the host's tzdata lacks is an error, not silently UTC" \
    zone_missing

test_done
