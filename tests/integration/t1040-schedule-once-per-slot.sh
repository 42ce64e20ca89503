#!/bin/sh
# A job with a schedule runs once per slot across hosts, by default: two
# "hosts" (their own runtime directories) launched one second apart on
# "* * * * *" run it once; the second logs job_already_done.  The job sees
# CRONGUARD_SLOT in its zone's offset, and the run record keeps the slot.
# A no-op launch takes no fencing token.  (Without the slot check the
# second host runs the job again: the test then fails on the count.)
# Cases: setup; two hosts, one run; no token for a no-op; jobs list; jobs
# runs; run --slot.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers

SLOTS=$TEST_TMP/slots
export SLOTS
# shellcheck disable=SC2034 # cg reads it
CONF=$TEST_TMP/a.conf

# host_config FILE DIR EXTRA
host_config()
{
	mkdir -p "$2"
	write_config "$1" "runtime_dir = \"$2\";
jobs = { accrual = {
  command = [ \"sh\", \"-c\", \"echo \\\"\$CRONGUARD_SLOT \$CRONGUARD_FENCE\\\" >> \\\"\$SLOTS\\\"\" ];
  schedule = \"* * * * *\"; timezone = \"+01:00\"; grace = \"1h\"; $3 }; };"
}

# Wait until the database clock is early in its minute, so that what
# follows stays in one slot.
early_in_minute()
{
	local s
	while :; do
		s=$(mysql_q "SELECT SECOND(UTC_TIMESTAMP())")
		[ "$s" -le "${1:-40}" ] && [ "$s" -ge 1 ] && return 0
		sleep 1
	done
}

setup()
{
	host_config "$TEST_TMP/a.conf" "$TEST_TMP/run-a" ""
	host_config "$TEST_TMP/b.conf" "$TEST_TMP/run-b" ""
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: two hosts'"'"' configurations, db migrate' setup

once()
{
	local want
	early_in_minute 45
	want=$(mysql_q "SELECT DATE_FORMAT(UTC_TIMESTAMP() + INTERVAL 1 HOUR,
	    '%Y-%m-%dT%H:%i:00+01:00')")
	assert_exit 0 "$CRONGUARD_BIN" -c "$TEST_TMP/a.conf" -v run accrual
	sleep 1
	assert_exit 0 "$CRONGUARD_BIN" -c "$TEST_TMP/b.conf" -v run accrual
	assert_grep 'event=job_already_done' "$ERR"
	assert_grep "slot=$(printf "%s" "$want" | sed "s/+/[+]/")" "$ERR"
	echo "host A ran, host B: $(grep -o 'event=job_already_done' "$ERR")"
	assert_eq 1 "$(wc -l < "$SLOTS")" "runs of the job in one slot"
	assert_eq "$want" "$(cut -d' ' -f1 "$SLOTS")" "CRONGUARD_SLOT"
	assert_eq "1 success $want" "$(mysql_q "SELECT COUNT(*), MIN(outcome),
	    DATE_FORMAT(MIN(slot) + INTERVAL 1 HOUR, '%Y-%m-%dT%H:%i:%s+01:00')
	    FROM cronguard_runs WHERE job = 'accrual'" | tr '\t' ' ')" \
	    "the run record's slot"
}
test_expect_success 'two hosts one second apart in one slot: one run, the slot recorded' \
    once

# The skip took no lock and no token.
no_token()
{
	local fence
	fence=$(mysql_q "SELECT fence FROM cronguard_leases")
	assert_exit 0 "$CRONGUARD_BIN" -c "$TEST_TMP/b.conf" run accrual
	assert_eq "$fence" "$(mysql_q "SELECT fence FROM cronguard_leases")" \
	    "the fencing counter after a no-op launch"
}
test_expect_success 'a no-op launch takes no fencing token' no_token

# jobs list shows the schedule, the latest slot done and the next one.
listed()
{
	assert_exit 0 cg jobs list
	assert_grep '^  schedule "\* \* \* \* \*" \(\+01:00\): latest slot .*\+01:00 done, next ' "$OUT"
	assert_exit 0 cg jobs list --format json
	assert_grep '"latest_done": true' "$OUT"
}
test_expect_success 'jobs list shows the schedule, the latest slot done and the next' \
    listed

# jobs runs prints the slot (UTC).
runs()
{
	assert_exit 0 cg jobs runs accrual
	assert_grep 'SLOT' "$OUT"
	assert_grep "$(mysql_q "SELECT DATE_FORMAT(MIN(slot), '%Y-%m-%dT%H:%i:%s[+]00:00')
	    FROM cronguard_runs")" "$OUT"
	assert_exit 0 cg jobs runs --format json accrual
	assert_grep '"slot_kind": "schedule"' "$OUT"
}
test_expect_success 'jobs runs prints the slot' runs

# --slot: one that the schedule does not have is refused; a past one
# runs again on purpose and is recorded as manual.
manual()
{
	host_config "$TEST_TMP/five.conf" "$TEST_TMP/run-a" ""
	sed -i 's|schedule = "\* \* \* \* \*"|schedule = "*/5 * * * *"|' \
	    "$TEST_TMP/five.conf"
	assert_exit 64 "$CRONGUARD_BIN" -c "$TEST_TMP/five.conf" run --slot \
	    "2026-01-01T00:03:00+01:00" accrual
	assert_grep 'no such slot' "$ERR"
	assert_exit 64 "$CRONGUARD_BIN" -c "$TEST_TMP/five.conf" run --slot \
	    "yesterday" accrual
	assert_exit 0 "$CRONGUARD_BIN" -c "$TEST_TMP/five.conf" run --slot \
	    "2026-01-01T00:05:00+01:00" accrual
	assert_eq "2026-01-01T00:05:00+01:00" "$(tail -n 1 "$SLOTS" | cut -d' ' -f1)" \
	    "the manual run's CRONGUARD_SLOT"
	assert_eq 1 "$(mysql_q "SELECT COUNT(*) FROM cronguard_runs
	    WHERE slot_kind = 'manual' AND slot = '2025-12-31 23:05:00'")" \
	    "the manual run's record"
	assert_exit 0 cg run --slot "2026-01-01 00:06" accrual
	# As README.md and cronguard(1) write it: the option after the job.
	assert_exit 0 cg run accrual --slot "2026-01-01 00:07"
	assert_eq 1 "$(mysql_q "SELECT COUNT(*) FROM cronguard_runs
	    WHERE slot_kind = 'manual' AND slot = '2025-12-31 23:07:00'")" \
	    "run JOB --slot TIME"
}
test_expect_success 'run --slot: a slot the schedule lacks refused, a past one manual' \
    manual

test_done
