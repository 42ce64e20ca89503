#!/bin/sh
# The server's zone, for real (cronguard.conf(5), Schedules): a job
# without timezone follows the database server's zone with its
# daylight-saving rules, or is refused with a message naming timezone;
# never an hour off.  A private MariaDB started with TZ=America/New_York
# says @@system_time_zone "EST" (a fixed UTC-05:00 zone in tzdata): a job
# "30 1 * * *" without timezone, slot 2026-07-15 01:30, is refused by run,
# doctor says so and config check notes it, where it used to run at 06:30
# UTC.  With timezone = "America/New_York", or the server's time_zone set
# to a name (tz tables loaded), the slot is 05:30 UTC; Europe/Berlin's is
# 23:30 UTC the day before.  Needs the test servers (MariaDB binaries).
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
: "${CRONGUARD_SQLDIR:=$CRONGUARD_SRCDIR/sql}"
export CRONGUARD_SQLDIR

# mariadbd takes its zone from the environment testenv starts it in.
export TZ=America/New_York
db_private_start
unset TZ
RAN=$TEST_TMP/ran

# zone_conf [TIMEZONE]: the job, with timezone = TIMEZONE when given.
zone_conf()
{
	write_config "$CONF" "jobs = { j = {
  command = [ \"/usr/bin/touch\", \"$RAN\" ]; schedule = \"30 1 * * *\";
  ${1:+timezone = \"$1\";} }; };"
}
# last_slot: the slot of the newest run, UTC, or none.
last_slot()
{
	mysql_q "SELECT COALESCE((SELECT DATE_FORMAT(slot, '%Y-%m-%d %H:%i')
	    FROM cronguard_runs WHERE job = 'j' ORDER BY id DESC LIMIT 1),
	    'none')"
}

setup()
{
	assert_eq SYSTEM "$(mysql_admin 'SELECT @@global.time_zone')" time_zone
	mysql_admin 'SELECT @@system_time_zone' | grep -Eq '^E[SD]T$' ||
	    fail "system_time_zone: $(mysql_admin 'SELECT @@system_time_zone')"
	zone_conf
	assert_exit 0 cg db migrate
}
test_expect_success 'a server started with TZ=America/New_York says EST' setup

# July, 01:30 in New York is 05:30 UTC (EDT); EST would make it 06:30.
july_never_an_hour_off()
{
	local rc=0
	cg run --slot "2026-07-15 01:30" j > "$OUT" 2> "$ERR" || rc=$?
	cat "$ERR"
	[ "$(last_slot)" != "2026-07-15 06:30" ] ||
	    fail "the July slot ran at 06:30 UTC, an hour off"
	case $rc in
	0)	assert_eq "2026-07-15 05:30" "$(last_slot)" "slot" ;;
	78)	assert_grep 'timezone' "$ERR"
		[ ! -e "$RAN" ] || fail "the job ran" ;;
	*)	fail "run exited $rc" ;;
	esac
}
test_expect_success 'July 01:30 without timezone: 05:30 UTC or refused, never 06:30' \
    july_never_an_hour_off

refused()
{
	assert_exit 78 cg run j
	assert_grep 'event=config_error .*key=timezone' "$ERR"
	assert_grep 'SYSTEM.*\\"E[SD]T\\".*timezone = \\"America/New_York\\"' "$ERR"
	[ ! -e "$RAN" ] || fail "the job ran"
	assert_eq none "$(last_slot)" "run records"
}
test_expect_success 'run without timezone: 78, naming timezone and the fix' \
    refused

doctor_says_so()
{
	cg doctor > "$OUT" 2>&1 || true
	assert_grep '^CRITICAL time_zone: job j has no timezone.*SYSTEM.*"E[SD]T".*; fix: .*timezone = "America/New_York"' "$OUT"
}
test_expect_success 'doctor says so, and names the fix' doctor_says_so

config_check_notes()
{
	assert_exit 0 cg config check
	assert_grep '^ *# no timezone: slots follow the database server.s time_zone' "$OUT"
}
test_expect_success 'config check notes a job without timezone' \
    config_check_notes

with_timezone()
{
	zone_conf America/New_York
	assert_exit 0 cg run --slot "2026-07-15 01:30" j
	assert_eq "2026-07-15 05:30" "$(last_slot)" "slot"
	cg doctor > "$OUT" 2>&1 || true
	! grep -q '^CRITICAL time_zone' "$OUT" || fail "doctor: time_zone"
}
test_expect_success 'timezone = "America/New_York": July 01:30 is 05:30 UTC' \
    with_timezone

# The server's time_zone set to a name (its tz tables are loaded): a job
# without timezone follows it, daylight saving included.
server_named()
{
	zone_conf
	mysql_admin "SET GLOBAL time_zone = 'America/New_York'"
	assert_exit 0 cg run --slot "2026-07-16 01:30" j
	assert_eq "2026-07-16 05:30" "$(last_slot)" "slot"
	mysql_admin "SET GLOBAL time_zone = 'Europe/Berlin'"
	assert_exit 0 cg run --slot "2026-07-17 01:30" j
	assert_eq "2026-07-16 23:30" "$(last_slot)" "slot (Berlin, CEST)"
	assert_exit 0 cg run --slot "2026-01-17 01:30" j
	assert_eq "2026-01-17 00:30" "$(last_slot)" "slot (Berlin, CET)"
	cg doctor > "$OUT" 2>&1 || true
	! grep -q '^CRITICAL time_zone' "$OUT" || fail "doctor: time_zone"
	mysql_admin "SET GLOBAL time_zone = 'SYSTEM'"
}
test_expect_success 'the server'"'"'s time_zone a name: Europe/Berlin, America/New_York' \
    server_named

test_done
