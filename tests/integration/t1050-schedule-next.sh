#!/bin/sh
# schedule next (no server, no configuration file): the next slots of an
# expression as RFC 3339 with the zone's offset, the extensions L, NL and
# N#K across a leap year and Berlin's spring transition, JSON, and a bad
# expression is exit 64 naming the field.  Also the extensions in a job's
# schedule (config check) and in jobs crontab's covering line.
. "${CRONGUARD_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

# next ARGS...: schedule next with no configuration file at all (-c of a
# file that does not exist).
next()
{
	"$CRONGUARD_BIN" -c "$TEST_TMP/no-such.conf" schedule next "$@"
}

# out_is LINE...: the output of the last command is exactly LINE...
out_is()
{
	assert_eq "$(printf '%s\n' "$@")" "$(cat "$OUT")" "schedule next"
}

last_day()
{
	assert_exit 0 next --tz UTC --from 2027-10-15T00:00:00Z --count 6 '0 0 L * *'
	out_is \
	    2027-10-31T00:00:00+00:00 2027-11-30T00:00:00+00:00 \
	    2027-12-31T00:00:00+00:00 2028-01-31T00:00:00+00:00 \
	    2028-02-29T00:00:00+00:00 2028-03-31T00:00:00+00:00
	assert_exit 0 next --tz UTC --from 2027-01-01T00:00:00Z --count 4 '0 0 L 2 *'
	out_is \
	    2027-02-28T00:00:00+00:00 2028-02-29T00:00:00+00:00 \
	    2029-02-28T00:00:00+00:00 2030-02-28T00:00:00+00:00
}
test_expect_success 'L is the last day of the month, 29 February in a leap year' last_day

weekdays()
{
	assert_exit 0 next --tz UTC --from 2027-01-01T00:00:00Z --count 4 '0 18 * * 5L'
	out_is \
	    2027-01-29T18:00:00+00:00 2027-02-26T18:00:00+00:00 \
	    2027-03-26T18:00:00+00:00 2027-04-30T18:00:00+00:00
	assert_exit 0 next --tz UTC --from 2027-01-01T00:00:00Z --count 4 '0 9 * * 1#2'
	out_is \
	    2027-01-11T09:00:00+00:00 2027-02-08T09:00:00+00:00 \
	    2027-03-08T09:00:00+00:00 2027-04-12T09:00:00+00:00
}
test_expect_success '5L is the last Friday, 1#2 the second Monday' weekdays

berlin_spring()
{
	# 02:30 does not exist on 29 March 2026: the slot is 03:00 CEST.
	assert_exit 0 next --tz Europe/Berlin --from '2026-03-27 12:00' --count 4 \
	    '30 2 * * *'
	out_is \
	    2026-03-28T02:30:00+01:00 2026-03-29T03:00:00+02:00 \
	    2026-03-30T02:30:00+02:00 2026-03-31T02:30:00+02:00
	# The last Sunday of March at 02:30 is in the gap, every year.
	assert_exit 0 next --tz Europe/Berlin --from 2026-01-01T00:00:00Z --count 2 \
	    '30 2 * 3 0L'
	out_is \
	    2026-03-29T03:00:00+02:00 2027-03-28T03:00:00+02:00
}
test_expect_success 'a Berlin schedule across the spring transition' berlin_spring

json_output()
{
	assert_exit 0 next --format json --tz Europe/Berlin \
	    --from 2026-03-29T00:00:00Z --count 2 '0 9 * * 1#2'
	"$LIB_PY" - "$OUT" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d == {"schedule": "0 9 * * 1#2", "timezone": "Europe/Berlin",
             "from": "2026-03-29T01:00:00+01:00",
             "slots": ["2026-04-13T09:00:00+02:00",
                       "2026-05-11T09:00:00+02:00"]}, d
PY
}
test_expect_success '--format json' json_output

default_zone()
{
	# Without --tz, the host's zone as cron reads it: TZ first.
	TZ=America/New_York assert_exit 0 next --from 2026-07-01T12:00:00Z '@daily'
	assert_eq 2026-07-02T00:00:00-04:00 "$(cat "$OUT")" "TZ=America/New_York"
	TZ=:Asia/Kathmandu assert_exit 0 next --from 2026-07-01T12:00:00Z '0 * * * *'
	assert_eq 2026-07-01T18:00:00+05:45 "$(cat "$OUT")" "TZ=:Asia/Kathmandu"
	# Without --from, after now: one slot, in the future.
	assert_exit 0 next --tz UTC '* * * * *'
	[ "$(wc -l < "$OUT")" -eq 1 ] || fail "not one line"
	now=$(date +%s)
	slot=$(date -d "$(cat "$OUT")" +%s)
	[ "$slot" -gt "$now" ] && [ "$slot" -le $((now + 60)) ] ||
		fail "not the next minute after $now: $(cat "$OUT")"
}
test_expect_success 'the host zone and now by default' default_zone

bad_input()
{
	assert_exit 64 next '0 0 * * 8'
	assert_grep 'day-of-week: 8 is out of range 0-7' "$ERR"
	assert_exit 64 next -- '-1 * * * *'
	assert_grep 'minute: "-1" is not a number' "$ERR"
	assert_exit 64 next '0 0 15W * *'
	assert_grep 'day-of-month: unexpected "W"' "$ERR"
	assert_exit 64 next '0 0 * * 1#6'
	assert_grep 'day-of-week: "#6"' "$ERR"
	assert_exit 64 next '0 0 * *'
	assert_grep 'expected 5 fields' "$ERR"
	assert_exit 64 next --tz Mars/Olympus '@daily'
	assert_grep 'unknown time zone "Mars/Olympus"' "$ERR"
	assert_exit 64 next --from tomorrow '@daily'
	assert_grep '--from: bad time "tomorrow"' "$ERR"
	assert_exit 64 next --count 0 '@daily'
	assert_exit 64 next --count 10001 '@daily'
	assert_exit 64 next --format yaml '@daily'
	assert_exit 64 next
	[ ! -s "$OUT" ] || fail "output on a usage error"
}
test_expect_success 'bad input is exit 64 naming what is wrong' bad_input

in_a_job()
{
	printf 'database = { name = "app"; };\njobs = {\n  eom = { command = [ "/bin/true" ]; schedule = "0 0 L * *"; timezone = "UTC"; };\n  fri = { command = [ "/bin/true" ]; schedule = "0 18 * * 5L"; timezone = "UTC"; };\n  plain = { command = [ "/bin/true" ]; schedule = "0 1 * * *"; timezone = "UTC"; };\n};\n' > "$CONF"
	assert_exit 0 cg config check
	assert_grep 'schedule = "0 0 L \* \*";' "$OUT"
	assert_exit 0 cg jobs crontab
	assert_grep '^# eom: "0 0 L \* \*" is beyond cron\(5\)' "$OUT"
	assert_grep '^0 0 28-31 \* \* cronguard .* run eom$' "$OUT"
	assert_grep '^0 18 \* \* 5 cronguard .* run fri$' "$OUT"
	assert_grep '^0 1 \* \* \* cronguard .* run plain$' "$OUT"
	if grep -q '^# plain: .*beyond' "$OUT"; then
		fail "a cron(5) schedule commented as beyond it"
	fi
	printf 'database = { name = "app"; };\njobs = { bad = { command = [ "/bin/true" ]; schedule = "0 0 LW * *"; }; };\n' > "$CONF"
	assert_exit 78 cg config check
	assert_grep 'day-of-month: "LW" is not a number' "$ERR"
}
test_expect_success 'the extensions in a job, config check and jobs crontab' in_a_job

test_done
