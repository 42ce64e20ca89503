#!/bin/sh
# jobs crontab keeps a job's zone: on a host whose clock is in UTC, the
# lines of a Europe/Berlin (or New York, or Kathmandu) job launch it at
# every one of its slots for a whole year, across both transitions and a
# gap, checked by evaluating the generated lines with python3-croniter
# (UTC, where it has no daylight saving time to get wrong) against
# schedule next.  A job in the host's own zone keeps its line.  Needs no
# server.
. "${CRONGUARD_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

if ! "$LIB_PY" -c 'import croniter' 2> /dev/null; then
	[ "${CI:-}" = true ] && fail "python3-croniter is not installed"
	echo "python3-croniter missing: skipped"
	exit 77
fi

cat > "$CONF" <<'CONF'
database = { name = "app"; };
jobs = {
  accrual = { command = [ "/bin/true" ]; schedule = "30 1 * * *"; timezone = "Europe/Berlin"; };
  gap = { command = [ "/bin/true" ]; schedule = "30 2 * * *"; timezone = "Europe/Berlin"; };
  weekdays = { command = [ "/bin/true" ]; schedule = "0 0 * * mon-fri"; timezone = "Europe/Berlin"; };
  monthly = { command = [ "/bin/true" ]; schedule = "@monthly"; timezone = "Europe/Berlin"; };
  eom = { command = [ "/bin/true" ]; schedule = "0 18 * * 5L"; timezone = "Europe/Berlin"; };
  newyork = { command = [ "/bin/true" ]; schedule = "15 22 * * *"; timezone = "America/New_York"; };
  kathmandu = { command = [ "/bin/true" ]; schedule = "0,30 9 * * *"; timezone = "Asia/Kathmandu"; };
  utc = { command = [ "/bin/true" ]; schedule = "30 1 * * *"; timezone = "UTC"; };
};
CONF

# covers JOB EXPR ZONE: every slot of EXPR in ZONE in the coming year is
# a time at which one of JOB's lines fires (to the minute, in UTC).
covers()
{
	assert_exit 0 "$CRONGUARD_BIN" -c "$TEST_TMP/none.conf" schedule next \
	    --tz "$3" --count 10000 "$2"
	cp "$OUT" "$TEST_TMP/slots"
	grep " run $1\$" "$TEST_TMP/crontab" | cut -d' ' -f1-5 > "$TEST_TMP/lines"
	[ -s "$TEST_TMP/lines" ] || fail "no line for $1"
	"$LIB_PY" - "$TEST_TMP/lines" "$TEST_TMP/slots" "$1" <<'PY' || fail "lines of $1 miss slots"
import sys, time
from datetime import datetime, timezone, timedelta
from croniter import croniter
lines = [l.strip() for l in open(sys.argv[1]) if l.strip()]
start = datetime.fromtimestamp(int(time.time()) // 60 * 60, timezone.utc)
end = start + timedelta(days=365)
slots = [datetime.fromisoformat(l.strip()) for l in open(sys.argv[2])]
slots = [s for s in slots if s < end]
fires = set()
for line in lines:
    it = croniter(line, start - timedelta(minutes=1))
    while True:
        t = it.get_next(datetime)
        if t >= end:
            break
        fires.add(t)
missed = [s.isoformat() for s in slots if s.astimezone(timezone.utc) not in fires]
print("%s: %d slots in a year, %d launches, %d slots missed %s" % (
    sys.argv[3], len(slots), len(fires), len(missed), missed[:5]))
sys.exit(1 if missed or len(slots) < 12 else 0)
PY
	cat "$OUT" 2> /dev/null || true
}

setup()
{
	TZ=UTC assert_exit 0 cg jobs crontab
	cp "$OUT" "$TEST_TMP/crontab"
	cat "$TEST_TMP/crontab"
}
test_expect_success 'jobs crontab on a UTC host' setup

lines()
{
	# One line per offset Berlin takes: 01:30 is 00:30Z in winter and
	# 23:30Z in summer.
	assert_grep "^30 0 \\* \\* \\* cronguard .* run accrual\$" "$TEST_TMP/crontab"
	assert_grep "^30 23 \\* \\* \\* cronguard .* run accrual\$" "$TEST_TMP/crontab"
	assert_grep '^# accrual: "30 1 \* \* \*" in Europe/Berlin on a host clock in UTC' "$TEST_TMP/crontab"
	# Berlin's weekdays at midnight are the day before in UTC in summer
	# and winter alike: Sunday to Thursday.
	assert_grep "^0 23 \\* \\* 0-4 cronguard .* run weekdays\$" "$TEST_TMP/crontab"
	# The gap: 02:30 on the last Sunday of March is 03:00 CEST, 01:00Z.
	assert_grep "^0 1 \\* 3 0 cronguard .* run gap\$" "$TEST_TMP/crontab"
	# A job in the host's zone keeps its line.
	assert_grep "^30 1 \\* \\* \\* cronguard .* run utc\$" "$TEST_TMP/crontab"
	[ "$(grep -c ' run utc$' "$TEST_TMP/crontab")" -eq 1 ] || fail "utc: more than one line"
}
test_expect_success 'a line per offset, a gap line, the host zone unchanged' lines

test_expect_success 'Berlin 01:30: every slot of a year launched' \
    'covers accrual "30 1 * * *" Europe/Berlin'
test_expect_success 'Berlin 02:30, in the gap on the last Sunday of March' \
    'covers gap "30 2 * * *" Europe/Berlin'
test_expect_success 'Berlin weekdays at midnight' \
    'covers weekdays "0 0 * * mon-fri" Europe/Berlin'
test_expect_success 'Berlin @monthly' 'covers monthly "@monthly" Europe/Berlin'
test_expect_success 'Berlin last Friday' 'covers eom "0 18 * * 5L" Europe/Berlin'
test_expect_success 'New York 22:15, the next day in UTC' \
    'covers newyork "15 22 * * *" America/New_York'
test_expect_success 'Kathmandu, a quarter-hour offset' \
    'covers kathmandu "0,30 9 * * *" Asia/Kathmandu'

test_done
