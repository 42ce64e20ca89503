#!/bin/sh
# The test servers and lib.sh helpers behave as documented: the SMTP server
# stores messages with their envelope and injects 451/550 by recipient; the
# HTTP server logs requests and injects status, Retry-After and fail-first;
# a private SMTP server stops and comes back on the same port.
# Cases: database, SMTP, HTTP, private SMTP server.
. "$(dirname "$0")/lib.sh"
need_servers

command -v curl > /dev/null || fail "curl is needed"

send() {
	curl -sS "$SMTP_URL" --mail-from "from@$MAIL_DOMAIN" \
	    --mail-rcpt "$1" --upload-file "$TEST_TMP/msg"
}
post() {
	curl -s -o /dev/null -w '%{http_code} %header{retry-after}' \
	    -H 'Content-Type: application/json' -H "webhook-id: ${2:-none}" \
	    -d '{"n":1}' "$HTTP_BASE$1"
}
printf 'Subject: hello\r\n\r\nbody\r\n' > "$TEST_TMP/msg"

# Database: lib.sh's test database exists and is ours.
database()
{
	assert_eq "$TEST_DB" "$(mysql_q 'SELECT DATABASE()')" "current database"
	mysql_q 'CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10)); INSERT INTO t VALUES (1, NULL)'
	assert_eq NULL "$(mysql_q 'SELECT v FROM t')" "NULL rendering"
	write_config "$CONF" 'outbox = { batch_size = 5; };'
	assert_grep "name = \"$TEST_DB\";" "$CONF"
	assert_grep 'batch_size = 5' "$CONF"
}
test_expect_success 'the test database is ours; NULL rendered; write_config' database

# SMTP: one accepted message, and the two RCPT faults.
smtp()
{
	assert_exit 0 send "kim@$MAIL_DOMAIN"
	assert_exit 55 send "tempfail@$MAIL_DOMAIN"
	assert_grep 'RCPT failed: 451' "$ERR"
	assert_exit 55 send "reject+x@$MAIL_DOMAIN"
	assert_grep 'RCPT failed: 550' "$ERR"
	assert_eq 1 "$(smtp_count)" "stored messages"
	assert_eq 1 "$(smtp_connections)" "connections used"
	smtp_envelopes > "$OUT"
	assert_grep "\"rcpt_tos\": \\[\"kim@$MAIL_DOMAIN\"\\]" "$OUT"
	assert_grep '^Subject: hello' "$(smtp_messages)"
}
test_expect_success 'SMTP stores a message with its envelope; 451 and 550 by recipient' smtp

# HTTP: plain, status, Retry-After, fail-first per webhook-id.
http()
{
	assert_eq '200 ' "$(post /ok)" "plain POST"
	assert_eq '503 ' "$(post /status=503)" "status=503"
	assert_eq '429 5' "$(post /status=429/retry-after=5)" "status=429/retry-after=5"
	assert_eq '503 ' "$(post /fail-first=2 a)" "fail-first 1"
	assert_eq '503 ' "$(post /fail-first=2 a)" "fail-first 2"
	assert_eq '200 ' "$(post /fail-first=2 a)" "fail-first 3"
	assert_eq '503 ' "$(post /fail-first=2 b)" "fail-first other id"
	assert_eq 7 "$(http_count)" "logged requests"
	assert_eq 2 "$(http_field headers.webhook-id | sort -u | grep -c '^[ab]$')" "ids"
	assert_eq '{"n":1}' "$(http_field body "/$TEST_ID/ok")" "body"
}
test_expect_success 'HTTP logs requests; status, Retry-After and fail-first' http

# A private SMTP server goes away and comes back on the same port.
private_smtp()
{
	local port
	smtp_private_start
	port=$SMTP_PORT
	assert_exit 0 send "a@$MAIL_DOMAIN"
	smtp_private_stop
	assert_exit 7 send "a@$MAIL_DOMAIN"
	smtp_private_start
	assert_eq "$port" "$SMTP_PORT" "port after restart"
	assert_exit 0 send "a@$MAIL_DOMAIN"
	assert_eq 2 "$(smtp_count)" "messages on the private server"
	assert_eq 2 "$(smtp_connections '')" "connections to the private server"
}
test_expect_success 'a private SMTP server stops and comes back on the same port' private_smtp

test_done
