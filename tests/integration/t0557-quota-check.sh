#!/bin/sh
# An exhausted daily quota is visible in `outbox check`: WARNING naming the
# channel and when the quota resets (midnight UTC by the database clock),
# CRITICAL when due rows of the channel wait behind it; in the nagios,
# json and prometheus formats.
# Cases: setup; not used up; used up; rows waiting; a new day.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
export CRONGUARD_SQLDIR="${CRONGUARD_SQLDIR:-$CRONGUARD_SRCDIR/sql}"
enqueue() {
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'mail', 'q', JSON_OBJECT('to', CONCAT('u', seq, '@$MAIL_DOMAIN'), 'text', 'x')
	    FROM seq_1_to_$1"
}
setup()
{
	write_config "$CONF" "outbox = { batch_size = 10; poll_interval = \"100ms\"; };
	channels = { mail = { type = \"smtp\"; url = \"$SMTP_URL\"; from = \"noreply@example.com\";
	  daily_quota = 3; }; };"
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: daily_quota 3, db migrate' setup

resets=$(mysql_q "SELECT CONCAT(UTC_DATE() + INTERVAL 1 DAY, 'T00:00:00Z')")

# Quota not used up: OK.
not_used_up()
{
	enqueue 2
	assert_exit 0 cg outbox dispatch
	assert_exit 0 cg outbox check
	assert_grep '^OUTBOX OK - ' "$OUT"
	if grep -q quota_exhausted "$OUT"; then fail "quota reported exhausted: $(cat "$OUT")"; fi
}
test_expect_success 'quota not used up: OK' not_used_up

# Used up, nothing waiting: WARNING naming the channel and the reset.
used_up()
{
	enqueue 1
	assert_exit 0 cg outbox dispatch
	assert_eq 3 "$(mysql_q "SELECT quota_used FROM cronguard_channels WHERE name = 'mail'")" "quota_used"
	assert_exit 1 cg outbox check
	assert_grep "^OUTBOX WARNING - .* quota_exhausted=mail quota_resets=$resets \\| .* quota_used_mail=3\$" "$OUT"
	assert_exit 1 cg outbox check --format json
	"$LIB_PY" - "$OUT" "$resets" <<'PY' || fail "json: $(cat "$OUT")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["status"] == "WARNING", j
m = j["channels"]["mail"]
assert m["quota_exhausted"] is True and m["due"] == 0, m
assert m["quota_resets_at"] == sys.argv[2], m
assert 0 < m["quota_resets_in_seconds"] <= 86400, m
PY
	assert_exit 1 cg outbox check --format prometheus
	assert_grep '^cronguard_outbox_quota_exhausted\{channel="mail"\} 1$' "$OUT"
	assert_grep '^cronguard_outbox_quota_resets_seconds\{channel="mail"\} [1-9][0-9]*$' "$OUT"
	assert_grep '^cronguard_outbox_check_status 1$' "$OUT"
}
test_expect_success 'used up, nothing waiting: WARNING naming the channel and the reset' \
    used_up

# A due row waits behind it: CRITICAL.
waiting()
{
	enqueue 2
	assert_exit 0 cg outbox dispatch
	assert_exit 2 cg outbox check
	assert_grep "^OUTBOX CRITICAL - .* quota_exhausted=mail\\(due=2\\) quota_resets=$resets \\| " "$OUT"
	assert_exit 2 cg outbox check --format json
	"$LIB_PY" - "$OUT" <<'PY' || fail "json: $(cat "$OUT")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["status"] == "CRITICAL", j
assert j["channels"]["mail"]["quota_exhausted"] is True, j
assert j["channels"]["mail"]["due"] == 2, j
PY
	assert_exit 2 cg outbox check --format prometheus
	assert_grep '^cronguard_outbox_quota_exhausted\{channel="mail"\} 2$' "$OUT"
}
test_expect_success 'a due row waits behind it: CRITICAL' waiting

# The day moves on (quota_day yesterday): OK again for the quota.
new_day()
{
	mysql_q "UPDATE cronguard_channels SET quota_day = UTC_DATE() - INTERVAL 1 DAY WHERE name = 'mail'"
	assert_exit 0 cg outbox check --format json
	assert_grep '"mail":\{[^}]*"quota_exhausted":false' "$OUT"
}
test_expect_success 'the day moves on: OK again for the quota' new_day

test_done
