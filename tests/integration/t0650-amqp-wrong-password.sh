#!/bin/sh
# A wrong password is the channel's failure, not the messages': no row
# is attempted (attempts stay 0, rows stay PENDING), the first refused
# login opens the circuit, whatever circuit.failures (5 here) says
# (event=circuit_open failures=1 with the broker's reason, shown
# by outbox check) and is reported once as an incident; with the circuit
# open no further login is tried.  Nothing reaches the broker.  With the
# right password (circuit reset by hand) every row is delivered once.
# Cases: setup; a refused login; the circuit open; the right password.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
. "$CRONGUARD_SRCDIR/scripts/testenv-rabbitmq"
testenv_rabbitmq_for_test q
printf 'not-the-password\n' > "$TEST_TMP/pw"
setup()
{
	write_config "$CONF" "
	outbox = { batch_size = 50; poll_interval = \"200ms\"; };
	channels = {
	  bus = { type = \"amqp\"; url = \"amqp://127.0.0.1:$AMQP_PORT\";
	          username = \"guest\"; password_file = \"$TEST_TMP/pw\";
	          routing_key = \"q\"; circuit = { failures = 5; cooldown = \"1m\"; }; };
	};"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'bus', 'test.event', JSON_OBJECT('n', seq) FROM seq_1_to_10"
}
test_expect_success 'setup: a wrong password, ten rows' setup

refused()
{
	assert_exit 0 cg -v outbox dispatch --for 2s
	assert_eq 10 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status = 'PENDING' AND attempts = 0")" "rows untouched"
	assert_grep "event=circuit_open channel=bus failures=1 .*error=\"amqp: login: connection closed: 403 ACCESS_REFUSED" "$ERR"
	assert_eq 1 "$(grep -c 'level=error event=channel_auth_failed incident=1 channel=bus detail="amqp: login: ' "$ERR")" \
	    "incidents reported"
	assert_eq 1 "$(mysql_q "SELECT COUNT(*) FROM cronguard_channels
	    WHERE name = 'bus' AND circuit_open_until > NOW(6)
	    AND circuit_error LIKE '%ACCESS_REFUSED%'")" "circuit open in the database"
	cg outbox check > "$OUT" 2>&1 || :
	assert_grep "circuit_open=bus" "$OUT"
}
test_expect_success 'a refused login: no row attempted, the circuit open, one incident' \
    refused

# The circuit is open: a second run does not even log in.
open()
{
	assert_exit 0 cg -v outbox dispatch
	if grep -q channel_auth_failed "$ERR"; then
		fail "a login was tried with the circuit open"
	fi
	assert_eq 0 "$(testenv_rabbitmq_count q)" "messages in the queue"
}
test_expect_success 'with the circuit open no login is tried' open

right()
{
	printf 'guest\n' > "$TEST_TMP/pw"
	mysql_q "UPDATE cronguard_channels SET circuit_open_until = NULL,
	    circuit_failures = 0, circuit_probe_at = NULL WHERE name = 'bus'"
	assert_exit 0 cg -v outbox dispatch
	assert_eq 10 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status = 'SENT' AND attempts = 1")" "rows SENT with the password"
	assert_eq 10 "$(testenv_rabbitmq_count q)" "messages in the queue"
}
test_expect_success 'the right password, the circuit reset: every row delivered once' \
    right

test_done
