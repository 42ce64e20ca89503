#!/bin/sh
# daily_quota = 100 holds across processes: two dispatchers on 300 rows
# send exactly 100; the other 200 stay PENDING with no attempt counted.
# Cases: setup; two dispatchers; a new day; idle polling.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
export CRONGUARD_SQLDIR="${CRONGUARD_SQLDIR:-$CRONGUARD_SRCDIR/sql}"
setup()
{
	write_config "$CONF" "outbox = { batch_size = 30; poll_interval = \"100ms\"; };
	channels = { mail = { type = \"smtp\"; url = \"$SMTP_URL\"; from = \"noreply@example.com\";
	  connections = 4; daily_quota = 100; }; };"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'mail', 'quota', JSON_OBJECT('to', CONCAT('u', seq, '@$MAIL_DOMAIN'), 'text', 'x')
	    FROM seq_1_to_300"
}
test_expect_success 'setup: daily_quota 100, 300 messages' setup

two()
{
	local a b
	cg outbox dispatch --for 3s > "$TEST_TMP/a.out" 2>&1 & a=$!
	cg outbox dispatch --for 3s > "$TEST_TMP/b.out" 2>&1 & b=$!
	wait $a || { cat "$TEST_TMP/a.out"; fail "dispatcher a failed"; }
	wait $b || { cat "$TEST_TMP/b.out"; fail "dispatcher b failed"; }

	assert_eq "PENDING 0 200
SENT 1 100" "$(mysql_q "SELECT status, attempts, COUNT(*) FROM outbox_messages GROUP BY status, attempts ORDER BY status" | tr '\t' ' ')"
	assert_eq 100 "$(smtp_count)" "received"
	assert_eq 100 "$(mysql_q "SELECT quota_used FROM cronguard_channels WHERE name = 'mail' AND quota_day = UTC_DATE()")" "quota_used"
}
test_expect_success 'two dispatchers send exactly 100; the rest PENDING, unattempted' \
    two

# A new UTC day (simulated) opens the quota again.
new_day()
{
	mysql_q "UPDATE cronguard_channels SET quota_day = UTC_DATE() - INTERVAL 1 DAY"
	assert_exit 0 cg outbox dispatch
	assert_eq 200 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'SENT'")" "sent after the day changed"
}
test_expect_success 'a new UTC day opens the quota again' new_day

# Polling with nothing due reserves and gives back: an idle dispatcher
# does not use up the day's quota.
idle()
{
	mysql_q "DELETE FROM outbox_messages WHERE status = 'PENDING';
	    UPDATE cronguard_channels SET quota_day = UTC_DATE() - INTERVAL 1 DAY"
	assert_exit 0 cg outbox dispatch --for 1s
	assert_eq 0 "$(mysql_q "SELECT IF(quota_day = UTC_DATE(), quota_used, 0) FROM cronguard_channels WHERE name = 'mail'")" "quota used by idle polling"
}
test_expect_success 'an idle dispatcher does not use up the quota' idle

test_done
