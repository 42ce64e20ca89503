#!/bin/sh
# One dispatcher sends 500 messages over at most `connections` SMTP
# connections (counted at the server), each reused for many messages.
# Cases: setup; the dispatch.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
smtp_private_start
export CRONGUARD_SQLDIR="${CRONGUARD_SQLDIR:-$CRONGUARD_SRCDIR/sql}"
setup()
{
	write_config "$CONF" "outbox = { batch_size = 100; };
	channels = { mail = { type = \"smtp\"; url = \"$SMTP_URL\"; from = \"noreply@example.com\";
	  connections = 4; }; };"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'mail', 'reuse', JSON_OBJECT('to', CONCAT('u', seq, '@$MAIL_DOMAIN'), 'subject', 'hi', 'text', 'x')
	    FROM seq_1_to_500"
}
test_expect_success 'setup: connections 4, 500 messages' setup

reused()
{
	local conns
	assert_exit 0 cg -v outbox dispatch
	assert_eq 500 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'SENT'")" "sent"
	assert_eq 500 "$(smtp_count)" "received"
	conns=$(smtp_connections "")
	echo "connections opened: $conns"
	[ "$conns" -ge 1 ] && [ "$conns" -le 4 ] || fail "$conns connections for 500 messages"
	assert_grep 'event=smtp_channel_closed channel=mail messages=500 connections=[1-4]$' "$ERR"
}
test_expect_success '500 messages over at most 4 connections' reused

test_done
