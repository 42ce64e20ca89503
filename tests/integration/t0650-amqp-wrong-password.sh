#!/bin/sh
# A wrong password is the channel's failure, not the messages': no row
# is attempted (attempts stay 0, rows stay PENDING) and the run reports
# the refused login; nothing reaches the broker.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
. "$CRONGUARD_SRCDIR/scripts/testenv-rabbitmq"
testenv_rabbitmq_for_test q
printf 'not-the-password\n' > "$TEST_TMP/pw"
write_config "$CONF" "
outbox = { batch_size = 50; };
channels = {
  bus = { type = \"amqp\"; url = \"amqp://127.0.0.1:$AMQP_PORT\";
          username = \"guest\"; password_file = \"$TEST_TMP/pw\";
          routing_key = \"q\"; circuit = { failures = 1; }; };
};"
assert_exit 0 cg db migrate
mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
    SELECT 'bus', 'test.event', JSON_OBJECT('n', seq) FROM seq_1_to_10"
cg -v outbox dispatch --for 3s
assert_eq 10 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
    WHERE status = 'PENDING' AND attempts = 0")" "rows untouched"
assert_eq 0 "$(testenv_rabbitmq_count q)" "messages in the queue"
