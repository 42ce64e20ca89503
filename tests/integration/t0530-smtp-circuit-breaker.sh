#!/bin/sh
# SMTP server stopped: the circuit opens after `failures` consecutive
# transient failures (state in cronguard_channels, for every instance);
# rows claimed meanwhile go back to PENDING with no attempt counted; while
# it is open nothing is attempted; after `cooldown`, with the server back,
# one probe closes it and everything is delivered.
# Cases: setup; the server stopped; the circuit open; the server back.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
smtp_private_start
export CRONGUARD_SQLDIR="${CRONGUARD_SQLDIR:-$CRONGUARD_SRCDIR/sql}"
attempts() { mysql_q "SELECT SUM(attempts) FROM outbox_messages"; }
circuit_open() { mysql_q "SELECT COALESCE(circuit_open_until > NOW(6), 0) FROM cronguard_channels WHERE name = 'mail'"; }

setup()
{
	write_config "$CONF" "outbox = { batch_size = 10; poll_interval = \"200ms\";
	  backoff = { initial = \"1s\"; max = \"1s\"; jitter = 0.0; }; };
	channels = { mail = { type = \"smtp\"; url = \"$SMTP_URL\"; from = \"noreply@example.com\";
	  connections = 2; timeout = \"5s\"; circuit = { failures = 3; cooldown = \"6s\"; }; }; };"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'mail', 'circuit', JSON_OBJECT('to', CONCAT('u', seq, '@$MAIL_DOMAIN'), 'text', 'x')
	    FROM seq_1_to_20"
}
test_expect_success 'setup: an SMTP channel with a circuit, 20 messages' setup

trips()
{
	local burned
	smtp_private_stop
	assert_exit 0 cg outbox dispatch
	assert_grep 'event=circuit_open channel=mail failures=[0-9]+ cooldown=6s' "$ERR"
	assert_eq 1 "$(circuit_open)" "circuit open"
	burned=$(attempts)
	# failures, plus at most connections - 1 sends already in flight
	[ "$burned" -ge 3 ] && [ "$burned" -le 4 ] || fail "attempts while tripping: $burned"
	assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status <> 'PENDING'")" "all PENDING"
	mysql_q "SELECT circuit_error FROM cronguard_channels" | grep -q "connect" ||
	    fail "circuit_error: $(mysql_q 'SELECT circuit_error FROM cronguard_channels')"
	echo "$burned" > "$TEST_TMP/burned"
}
test_expect_success 'the server stopped: the circuit opens after failures; rows PENDING' \
    trips

# Open: passes attempt nothing (the failed rows are due again after 1 s).
open()
{
	local burned
	burned=$(cat "$TEST_TMP/burned")
	sleep 1.1
	assert_exit 0 cg outbox dispatch
	assert_exit 0 cg outbox dispatch --for 1s
	assert_eq "$burned" "$(attempts)" "attempts while open"
	assert_eq 1 "$(circuit_open)" "still open"
}
test_expect_success 'while open nothing is attempted' open

# Server back; once the cooldown is over a probe closes the circuit.
closes()
{
	local burned
	burned=$(cat "$TEST_TMP/burned")
	smtp_private_start
	assert_exit 0 cg -v outbox dispatch --for 8s
	assert_grep 'event=circuit_closed channel=mail' "$ERR"
	assert_eq 20 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'SENT'")" "all sent"
	assert_eq 20 "$(smtp_count)" "all received"
	assert_eq "0 NULL" "$(mysql_q "SELECT circuit_failures, circuit_open_until FROM cronguard_channels" | tr '\t' ' ')"
	# No attempt burned beyond the failures and the one delivery each.
	assert_eq $((20 + burned)) "$(attempts)" "attempts in total"
}
test_expect_success 'the server back: after cooldown a probe closes it, all delivered' \
    closes

test_done
