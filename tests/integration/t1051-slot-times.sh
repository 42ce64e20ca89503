#!/bin/sh
# The one rule for slot times (cronguard(1), "Slot times"): jobs ack --slot
# reads an offset as given and a local time in the job's zone, prints the
# slot with the zone's offset, and refuses a time that is no slot of the
# schedule (exit 64, nothing written); run --slot reads the same forms.
# Needs the database server.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

mkdir -p "$TEST_TMP/run"
setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP/run\";
jobs = {
  accrual = { command = [ \"true\" ]; schedule = \"30 1 * * *\";
    timezone = \"Europe/Berlin\"; };
  plain = { command = [ \"true\" ]; };
};"
	assert_exit 0 cg db migrate
}
test_expect_success SERVERS 'setup: db migrate' setup

acks() { mysql_q "SELECT COUNT(*) FROM cronguard_job_acks"; }

ack_forms()
{
	# 00:30 UTC is 01:30 CET: the slot, printed with Berlin's offset.
	assert_exit 0 cg jobs ack accrual --slot 2026-12-03T00:30:00Z --reason utc
	assert_grep '^acknowledged accrual slot 2026-12-03T01:30:00\+01:00 by ' "$OUT"
	# A local time is Berlin's, in summer too.
	assert_exit 0 cg jobs ack accrual --slot "2026-07-03 01:30" --reason local
	assert_grep '^acknowledged accrual slot 2026-07-03T01:30:00\+02:00 by ' "$OUT"
	assert_exit 0 cg jobs ack accrual --slot 2026-12-04T01:30:00+01:00 --reason offset
	assert_eq "2026-07-02 23:30:00	local
2026-12-03 00:30:00	utc
2026-12-04 00:30:00	offset" "$(mysql_q "SELECT DATE_FORMAT(slot, '%Y-%m-%d %H:%i:%s'), reason
	    FROM cronguard_job_acks WHERE job = 'accrual' ORDER BY slot")" "stored in UTC"
}
test_expect_success SERVERS 'jobs ack --slot: UTC, local and offset forms of one rule' ack_forms

no_slot()
{
	n=$(acks)
	# The local time read as UTC would be 02:30 in Berlin: no slot.
	assert_exit 64 cg jobs ack accrual --slot 2026-12-03T01:30:00Z --reason x
	assert_grep '^cronguard: --slot: 2026-12-03T02:30:00\+01:00 is no slot of "30 1 \* \* \*" in Europe/Berlin \(the slots around it: 2026-12-03T01:30:00\+01:00 and 2026-12-04T01:30:00\+01:00\)$' "$ERR"
	assert_exit 64 cg jobs ack accrual --slot "2026-12-03 07:07:07" --reason x
	assert_grep 'is no slot of' "$ERR"
	[ ! -s "$OUT" ] || fail "stdout: $(cat "$OUT")"
	assert_eq "$n" "$(acks)" "no ack written"
	# run --slot refuses the same time by the same rule.
	assert_exit 64 cg run accrual --slot "2026-12-03 07:07:07"
}
test_expect_success SERVERS 'a time that is no slot is exit 64, nothing written' no_slot

unscheduled()
{
	# A job without a schedule has no slots to check: any time, in the
	# database server's zone, printed with its offset.
	assert_exit 0 cg jobs ack plain --slot 2026-12-03T07:07:07Z --reason x
	assert_grep '^acknowledged plain slot 2026-12-03T[0-9:]+[+-][0-9]{2}:[0-9]{2} by ' "$OUT"
}
test_expect_success SERVERS 'a job without a schedule: any time' unscheduled

test_done
