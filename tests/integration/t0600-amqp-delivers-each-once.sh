#!/bin/sh
# 5,000 rows to a durable queue on a private RabbitMQ node: one dispatch
# publishes every row once with publisher confirms, every row ends SENT
# with one attempt, and the queue holds exactly 5,000 distinct messages.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
. "$CRONGUARD_SRCDIR/scripts/testenv-rabbitmq"
N=5000
testenv_rabbitmq_for_test cgq
write_config "$CONF" "
outbox = { batch_size = 200; };
channels = {
  bus = { type = \"amqp\"; url = \"amqp://127.0.0.1:$AMQP_PORT\";
          username = \"guest\"; password_file = \"$TEST_TMP/pw\";
          routing_key = \"cg{payload.q}\"; timeout = \"10s\"; };
};"
assert_exit 0 cg db migrate
mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
    SELECT 'bus', 'test.event', JSON_OBJECT('q', 'q', 'n', seq, 'pad', REPEAT('x', 150))
    FROM seq_1_to_$N"
assert_exit 0 cg -v outbox dispatch
assert_grep "event=outbox_dispatched sent=$N retried=0 failed=0" "$ERR"
assert_eq "$N" "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
    WHERE status = 'SENT' AND attempts = 1")" "rows SENT"
assert_eq "$N" "$(testenv_rabbitmq_count cgq)" "messages in the queue"
