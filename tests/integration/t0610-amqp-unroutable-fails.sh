#!/bin/sh
# An unroutable routing key with mandatory: the broker returns the message
# (basic.return) before its ack, so the row ends FAILED with the reason,
# never SENT; a second channel to an existing queue still delivers.
# Cases: setup; the dispatch.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
. "$CRONGUARD_SRCDIR/scripts/testenv-rabbitmq"
testenv_rabbitmq_for_test good
setup()
{
	write_config "$CONF" "
	outbox = { batch_size = 50; max_attempts = 5; };
	channels = {
	  lost = { type = \"amqp\"; url = \"amqp://127.0.0.1:$AMQP_PORT\";
	           username = \"guest\"; password_file = \"$TEST_TMP/pw\";
	           routing_key = \"nowhere\"; };
	  good = { type = \"amqp\"; url = \"amqp://127.0.0.1:$AMQP_PORT\";
	           username = \"guest\"; password_file = \"$TEST_TMP/pw\";
	           routing_key = \"{payload.q}\"; };
	};"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT IF(seq <= 20, 'lost', 'good'), 'test.event',
	        JSON_OBJECT('n', seq, 'q', 'good') FROM seq_1_to_40"
}
test_expect_success 'setup: an unroutable channel and a good one, 20 rows each' \
    setup

unroutable()
{
	cg -v outbox dispatch
	assert_eq 20 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE channel = 'lost' AND status = 'FAILED' AND attempts = 1
	    AND last_error LIKE 'unroutable: 312 NO_ROUTE%'")" "unroutable rows FAILED"
	assert_eq 20 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE channel = 'good' AND status = 'SENT'")" "routable rows SENT"
	assert_eq 20 "$(testenv_rabbitmq_count good)" "messages in the queue"
}
test_expect_success 'unroutable rows FAILED with the reason; the others SENT' \
    unroutable

test_done
