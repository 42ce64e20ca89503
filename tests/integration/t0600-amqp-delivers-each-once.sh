#!/bin/sh
# 5,000 rows to a durable queue on a private RabbitMQ node: one dispatch
# publishes every row once with publisher confirms, every row ends SENT
# with one attempt, and the messages consumed from the queue are exactly
# the rows, each message_id once, with their properties (persistent,
# application/json, message_id, type = event_type, timestamp = created_at)
# and headers (ordering_key when the row has one, attempts = 1), and the
# payload as the body.  Every tenth payload holds an integer beyond 64
# bits: still valid JSON, its routing key still read from payload.q.
# Cases: setup; one dispatch; the queue holds exactly the rows.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
. "$CRONGUARD_SRCDIR/scripts/testenv-rabbitmq"
N=5000
testenv_rabbitmq_for_test cgq

setup()
{
	write_config "$CONF" "
outbox = { batch_size = 200; };
channels = {
  bus = { type = \"amqp\"; url = \"amqp://127.0.0.1:$AMQP_PORT\";
          username = \"guest\"; password_file = \"$TEST_TMP/pw\";
          routing_key = \"cg{payload.q}\"; timeout = \"10s\"; };
};"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, ordering_key, payload)
	    SELECT 'bus', 'test.event', IF(seq % 2 = 0, CONCAT('key-', seq), NULL),
	        JSON_OBJECT('q', 'q', 'n', IF(seq % 10 = 0,
	            CAST(CONCAT(seq, '000000000000000000000') AS DECIMAL(40, 0)), seq),
	            'pad', REPEAT('x', 150))
	    FROM seq_1_to_$N"
}
test_expect_success 'setup: 5,000 rows to a durable queue, db migrate' setup

dispatched()
{
	assert_exit 0 cg -v outbox dispatch
	assert_grep "event=outbox_dispatched sent=$N retried=0 failed=0" "$ERR"
	assert_eq "$N" "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status = 'SENT' AND attempts = 1")" "rows SENT"
	assert_eq "$N" "$(testenv_rabbitmq_count cgq)" "messages in the queue"
}
test_expect_success 'one dispatch publishes every row once, with confirms' \
    dispatched

# What the queue should hold, one line per row, as testenv_rabbitmq_drain
# prints a message.
consumed()
{
	mysql_q "SELECT message_id, 2, 'application/json', event_type,
	        FLOOR(UNIX_TIMESTAMP(created_at)), IFNULL(ordering_key, '-'), 1,
	        payload
	    FROM outbox_messages" | sort > "$TEST_TMP/want"
	testenv_rabbitmq_drain cgq > "$TEST_TMP/got.raw" || fail "cannot drain cgq"
	assert_eq "$N" "$(wc -l < "$TEST_TMP/got.raw")" "messages consumed"
	assert_eq "$N" "$(cut -f1 "$TEST_TMP/got.raw" | sort -u | wc -l)" \
	    "distinct message_ids consumed"
	sort "$TEST_TMP/got.raw" > "$TEST_TMP/got"
	diff "$TEST_TMP/want" "$TEST_TMP/got" > "$TEST_TMP/diff" || {
		head -4 "$TEST_TMP/diff" | cut -c1-160 >&2
		fail "consumed messages differ from the rows (properties, headers or body)"
	}
}
test_expect_success 'the queue holds exactly the rows, each once, with their properties' \
    consumed

test_done
