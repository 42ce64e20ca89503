#!/bin/sh
# A broker under a memory alarm (vm_memory_high_watermark tiny) blocks
# publishers with connection.blocked: the pass stops publishing, puts the
# unsent claims back to PENDING without counting an attempt, marks
# nothing SENT without its confirm, and dispatch --for exits within its
# deadline.  Once the alarm clears, every row is delivered.
# Cases: setup; under the alarm; the alarm cleared.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
. "$CRONGUARD_SRCDIR/scripts/testenv-rabbitmq"
N=200
testenv_rabbitmq_for_test -c "vm_memory_high_watermark.absolute = 1" cgq
setup()
{
	write_config "$CONF" "
	outbox = { batch_size = 50; poll_interval = \"500ms\"; };
	channels = {
	  bus = { type = \"amqp\"; url = \"amqp://127.0.0.1:$AMQP_PORT\";
	          username = \"guest\"; password_file = \"$TEST_TMP/pw\";
	          routing_key = \"cgq\"; timeout = \"2s\"; };
	};"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'bus', 'test.event', JSON_OBJECT('n', seq) FROM seq_1_to_$N"
}
test_expect_success 'setup: 200 rows to a broker under a memory alarm' setup

blocked()
{
	local ms
	assert_exit 0 cg -v outbox dispatch --for 4s
	# The run's own time (not process start-up, slow under ASan and load):
	# within the deadline plus one in-flight confirm wait (timeout 2 s).
	ms=$(sed -n 's/.*event=outbox_dispatched .* ms=\([0-9]*\).*/\1/p' "$ERR")
	[ -n "$ms" ] && [ "$ms" -le 6500 ] ||
	    fail "dispatch --for 4s ran ${ms:-?} ms (deadline 4 s + timeout 2 s)"
	assert_grep "event=amqp_blocked channel=bus reason=\"low on memory\"" "$ERR"
	# Nothing SENT without its confirm: a SENT row's message is in the queue.
	assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status = 'SENT'")" "rows SENT under the alarm"
	assert_eq "$N" "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status = 'PENDING' AND attempts = 0")" "rows PENDING, no attempt"
	assert_eq 0 "$(testenv_rabbitmq_count cgq)" "messages in the queue"
}
test_expect_success 'blocked: nothing SENT, rows PENDING unattempted, --for kept' \
    blocked

# The alarm clears: everything is delivered.
cleared()
{
	testenv_rabbitmq_ctl "$RMQ" set_vm_memory_high_watermark 0.9 ||
	    fail "cannot raise the watermark"
	sleep 1
	assert_exit 0 cg -v outbox dispatch
	assert_eq "$N" "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status = 'SENT' AND attempts = 1")" "rows SENT after the alarm"
	testenv_rabbitmq_drain cgq | cut -f1 | sort -u > "$TEST_TMP/got"
	mysql_q "SELECT message_id FROM outbox_messages" | sort > "$TEST_TMP/want"
	cmp -s "$TEST_TMP/want" "$TEST_TMP/got" ||
	    fail "the queue does not hold every row's message"
}
test_expect_success 'the alarm cleared: every row delivered once' cleared

test_done
