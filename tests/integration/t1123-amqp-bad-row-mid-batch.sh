#!/bin/sh
# One row the broker could never take, in the middle of an AMQP batch: a
# routing key of 300 bytes (AMQP's short string holds 255).  The row is
# checked before it is published: it alone ends FAILED with the reason,
# and every other row is SENT and in the queue exactly once, over three
# passes (before, the encoding failure dropped the connection without
# the earlier rows' confirms: each good row was published three times and
# ended FAILED "connection lost").  outbox enqueue refuses such a row
# (exit 65), naming the limit; a payload over max_size is refused alike.
# Cases: setup; three passes; outbox enqueue refuses.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
. "$CRONGUARD_SRCDIR/scripts/testenv-rabbitmq"
testenv_rabbitmq_for_test good
setup()
{
	write_config "$CONF" "
	outbox = { batch_size = 50; max_attempts = 3;
	  backoff = { initial = \"250ms\"; max = \"250ms\"; jitter = 0.0; }; };
	channels = {
	  bus = { type = \"amqp\"; url = \"amqp://127.0.0.1:$AMQP_PORT\";
	          username = \"guest\"; password_file = \"$TEST_TMP/pw\";
	          routing_key = \"{payload.q}\"; timeout = \"5s\"; max_size = 2000; };
	};"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'bus', 'test.event', JSON_OBJECT('n', seq,
	        'q', IF(seq = 25, REPEAT('x', 300), 'good')) FROM seq_1_to_50"
}
test_expect_success 'setup: 50 rows, one with a routing key of 300 bytes' \
    setup

passes()
{
	for _ in 1 2 3; do
		assert_exit 0 cg -v outbox dispatch
		sleep 0.3
	done
	assert_eq "FAILED 1" "$(mysql_q "SELECT status, attempts FROM outbox_messages
	    WHERE JSON_VALUE(payload, '$.n') = 25" | tr '\t' ' ')" "the bad row"
	mysql_q "SELECT last_error FROM outbox_messages WHERE JSON_VALUE(payload, '$.n') = 25" |
	    grep -q '^amqp: routing key of 300 bytes: AMQP allows at most 255$' ||
	    fail "last_error: $(mysql_q "SELECT last_error FROM outbox_messages WHERE status = 'FAILED'")"
	assert_eq "49 49" "$(mysql_q "SELECT COUNT(*), SUM(attempts) FROM outbox_messages
	    WHERE status = 'SENT'" | tr '\t' ' ')" "good rows SENT, one attempt each"
	testenv_rabbitmq_drain good | cut -f1 | sort > "$TEST_TMP/got"
	mysql_q "SELECT message_id FROM outbox_messages WHERE status = 'SENT'" | sort > "$TEST_TMP/want"
	assert_eq 49 "$(wc -l < "$TEST_TMP/got" | tr -d ' ')" "messages in the queue"
	cmp -s "$TEST_TMP/want" "$TEST_TMP/got" ||
	    fail "the queue does not hold each good row exactly once"
}
test_expect_success 'three passes: the bad row alone FAILED, every other SENT once' \
    passes

enqueue()
{
	assert_exit 65 cg outbox enqueue --channel bus --type t \
	    --payload "{\"q\": \"$(printf '%0300d' 0)\"}"
	assert_grep "routing key of 300 bytes: AMQP allows at most 255" "$ERR"
	assert_exit 65 cg outbox enqueue --channel bus --type t \
	    --payload "{\"q\": \"good\", \"pad\": \"$(printf '%03000d' 0)\"}"
	assert_grep "payload too large: 30[0-9][0-9] bytes, max_size 2000" "$ERR"
}
test_expect_success 'outbox enqueue refuses such a row, and one over max_size (65)' \
    enqueue

test_done
