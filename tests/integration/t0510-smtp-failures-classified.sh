#!/bin/sh
# SMTP replies classified (cronguard-outbox(7), RETRIES): 451 → PENDING, retried later
# with attempts counted; 550 and 554 → FAILED with the server's reply in
# last_error; some recipients refused → SENT, the refused ones in
# last_error; header injection and unusable payloads → FAILED before any
# byte is sent, while the other rows go through.
# Cases: setup (one pass); the rows classified; nothing refused sent; 451
# retried.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
export CRONGUARD_SQLDIR="${CRONGUARD_SQLDIR:-$CRONGUARD_SRCDIR/sql}"
D=$MAIL_DOMAIN
enq()
{
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    VALUES ('mail', '$1', '$2')"
}
row() { mysql_q "SELECT status, attempts, last_error FROM outbox_messages WHERE event_type = '$1'"; }
check()
{
	local got
	got=$(row "$1")
	echo "$got" | grep -qE -- "$2" || fail "$1: '$got' does not match '$2'"
}
setup()
{
	write_config "$CONF" "outbox = { backoff = { initial = \"1s\"; max = \"1s\"; jitter = 0.0; }; };
	channels = { mail = { type = \"smtp\"; url = \"$SMTP_URL\";
	  from = \"noreply@example.com\"; max_size = 100000; }; };"
	assert_exit 0 cg db migrate
	enq tempfail "{\"to\": \"tempfail@$D\", \"text\": \"x\"}"
	enq reject "{\"to\": \"reject@$D\", \"text\": \"x\"}"
	enq tempfail-data "{\"to\": \"tempfail-data@$D\", \"text\": \"x\"}"
	enq reject-data "{\"to\": \"reject-data@$D\", \"text\": \"x\"}"
	enq partial "{\"to\": [\"reject@$D\", \"partial-ok@$D\"], \"text\": \"x\"}"
	enq inj-subject "{\"to\": \"inj1@$D\", \"subject\": \"Hi\\\\r\\\\nBcc: inj-evil@$D\", \"text\": \"x\"}"
	enq inj-to "{\"to\": \"inj2@$D\\\\nBcc: inj-evil@$D\", \"text\": \"x\"}"
	enq inj-header "{\"to\": \"inj3@$D\", \"headers\": {\"X-A\": \"1\\\\r\\\\nBcc: inj-evil@$D\"}, \"text\": \"x\"}"
	enq inj-bcc-header "{\"to\": \"inj4@$D\", \"headers\": {\"Bcc\": \"inj-evil@$D\"}, \"text\": \"x\"}"
	enq not-object "[\"inj5@$D\"]"
	enq no-rcpt "{\"subject\": \"nobody\", \"text\": \"x\"}"
	enq bad-rcpt "{\"to\": \"not an address\", \"text\": \"x\"}"
	enq too-big "{\"to\": \"inj6@$D\", \"text\": \"$(head -c 110000 /dev/zero | tr '\0' a)\"}"
	enq good "{\"to\": \"good@$D\", \"text\": \"x\"}"

	assert_exit 0 cg outbox dispatch
}
test_expect_success 'setup: 14 rows, one pass' setup

classified()
{
	check tempfail '^PENDING	1	smtp: all recipients refused: <tempfail@[^>]*> \(451 4\.3\.0 '
	check reject '^FAILED	1	smtp: all recipients refused: <reject@[^>]*> \(550 5\.1\.1 Recipient rejected'
	check tempfail-data '^PENDING	1	smtp: 451 4\.3\.0 Temporary failure after DATA'
	check reject-data '^FAILED	1	smtp: 554 5\.6\.0 Message rejected after DATA'
	check partial '^SENT	1	smtp: 1 recipient\(s\) refused: <reject@[^>]*> \(550 5\.1\.1 '
	check inj-subject '^FAILED	1	payload: subject: CR or LF \(header injection\)$'
	check inj-to '^FAILED	1	payload: to: CR or LF in address \(header injection\)$'
	check inj-header '^FAILED	1	payload: headers: X-A: CR or LF in value \(header injection\)$'
	check inj-bcc-header '^FAILED	1	payload: headers: "Bcc" is reserved$'
	check not-object '^FAILED	1	payload: not a JSON object$'
	check no-rcpt '^FAILED	1	payload: to: missing recipient$'
	check bad-rcpt '^FAILED	1	payload: to: malformed address$'
	check too-big '^FAILED	1	message too large: about [0-9]+ bytes, max_size 100000$'
	check good '^SENT	1	NULL$'
}
test_expect_success 'each reply and each unusable payload classified' \
    classified

# Nothing of the refused payloads reached the server.
not_sent()
{
	local r
	for r in inj1 inj2 inj3 inj4 inj5 inj6 inj-evil; do
		assert_eq 0 "$(smtp_count "$r@$D")" "messages to $r received"
	done
	assert_eq 1 "$(smtp_count "partial-ok@$D")" "partial message delivered"
	assert_eq 1 "$(smtp_count "good@$D")" "good message delivered"
}
test_expect_success 'nothing of the refused payloads reached the server' \
    not_sent

# 451 is retried: due again after the 1 s backoff, attempted again.
retried()
{
	mysql_q "SELECT next_attempt_at > created_at FROM outbox_messages
	    WHERE event_type = 'tempfail'" | grep -qx 1 || fail "tempfail not delayed"
	sleep 1.2
	assert_exit 0 cg outbox dispatch
	check tempfail '^PENDING	2	smtp: all recipients refused: <tempfail@[^>]*> \(451 '
	check tempfail-data '^PENDING	2	'
	check reject '^FAILED	1	'
}
test_expect_success '451 is retried after the backoff' retried

test_done
