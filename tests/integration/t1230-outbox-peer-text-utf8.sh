#!/bin/sh
# A peer's text is stored as valid, bounded UTF-8 (cronguard-outbox(7),
# RETRIES): an SMTP server refusing one recipient among four with a
# Latin-1 reply ("550 5.1.1 Empf\xe4nger unbekannt") no longer fails the
# batch's finalise.  The three good mails are delivered once, the refused
# one is FAILED with a readable reason, dispatch exits 0 and nothing is
# left PROCESSING; a second pass sends nothing again.  Servers: MariaDB,
# this test's own SMTP server (its reject-latin1 fault).
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
# Outside the cases: they run in subshells, and SMTP_DIR must stay set.
smtp_private_start

D=$MAIL_DOMAIN
setup()
{
	write_config "$CONF" "outbox = { batch_size = 10; };
channels = { mail = { type = \"smtp\"; url = \"$SMTP_URL\";
  from = \"noreply@example.com\"; }; };"
	CRONGUARD_SQLDIR="${CRONGUARD_SQLDIR:-$CRONGUARD_SRCDIR/sql}" \
	    assert_exit 0 cg db migrate
	for r in good1 good2 reject-latin1 good3; do
		mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
		    VALUES ('mail', '$r',
		    JSON_OBJECT('to', '$r+$TEST_ID@$D', 'text', 'x'))"
	done
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    VALUES ('mail', 'partial', JSON_OBJECT('to',
	    JSON_ARRAY('reject-latin1+$TEST_ID@$D', 'partial+$TEST_ID@$D'),
	    'text', 'x'))"
}
test_expect_success SERVERS 'setup: four mails, one to a Latin-1 refusal' setup

dispatch_once()
{
	assert_exit 0 cg outbox dispatch
	assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status = 'PROCESSING'")" "rows left PROCESSING"
}
test_expect_success SERVERS 'dispatch exits 0, nothing left PROCESSING' \
    dispatch_once

delivered_once()
{
	local r
	for r in good1 good2 good3 partial; do
		assert_eq 1 "$(smtp_count "$r+$TEST_ID@$D")" "$r delivered"
		assert_eq SENT "$(mysql_q "SELECT status FROM outbox_messages
		    WHERE event_type = '$r'")" "$r status"
	done
}
test_expect_success SERVERS 'the good mails are delivered once' delivered_once

readable_reason()
{
	mysql_q "SELECT status, last_error FROM outbox_messages
	    WHERE event_type = 'reject-latin1'" > "$TEST_TMP/row"
	assert_grep "^FAILED	smtp: all recipients refused: <reject-latin1[+][^>]*> [(]550 5[.]1[.]1 Empfänger unbekannt" "$TEST_TMP/row"
	# the partial refusal's reason, on a SENT row, is readable too
	mysql_q "SELECT last_error FROM outbox_messages
	    WHERE event_type = 'partial'" > "$TEST_TMP/partial"
	assert_grep "Empfänger unbekannt" "$TEST_TMP/partial"
	# and so is the attempt log's detail
	mysql_q "SELECT a.detail FROM outbox_attempts a JOIN outbox_messages m
	    ON m.id = a.outbox_id WHERE m.event_type = 'reject-latin1'" \
	    > "$TEST_TMP/detail"
	assert_grep "Empfänger unbekannt" "$TEST_TMP/detail"
}
test_expect_success SERVERS 'the refused mail is FAILED with a readable reason' \
    readable_reason

no_resend()
{
	assert_exit 0 cg outbox dispatch
	for r in good1 good2 good3 partial; do
		assert_eq 1 "$(smtp_count "$r+$TEST_ID@$D")" "$r still once"
	done
}
test_expect_success SERVERS 'a second pass sends nothing again' no_resend

test_done
