#!/bin/sh
# AMQP publish under connection.blocked with large rows: a broker under a
# memory alarm stops reading, and rabbitmq-c's publish of a 1 MB message
# waited in poll(-1) for ever (--for 10s ran 715 s, SIGTERM ignored, the
# rows FAILED after three lease expiries).  Now a publish has a deadline
# (the channel timeout from the batch's start) and honours the stop flag
# (a watchdog shuts the stuck socket down), connection.blocked stops the
# publishing, the unsent rows go back PENDING with no attempt, and the
# close does not wait on the blocked connection.
#  1. --for 5s ends within 10 s;
#  2. SIGTERM 2 s into a --for 60s run ends it within 3 s;
#  3. every row PENDING, attempts 0, nothing SENT; once the alarm clears,
#     every row is delivered, SENT with one attempt.
# Cases: setup (a memory alarm); --for 5s; SIGTERM; the alarm cleared.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
. "$CRONGUARD_SRCDIR/scripts/testenv-rabbitmq"
N=50
testenv_rabbitmq_for_test cgq

now() { "$LIB_PY" -c 'import time; print(time.monotonic())'; }
elapsed() { "$LIB_PY" -c "import time; print('%.2f' % (time.monotonic() - $1))"; }

setup()
{
	write_config "$CONF" "
outbox = { batch_size = 50; poll_interval = \"500ms\"; };
channels = {
  bus = { type = \"amqp\"; url = \"amqp://127.0.0.1:$AMQP_PORT\";
          username = \"guest\"; password_file = \"$TEST_TMP/pw\";
          routing_key = \"cgq\"; timeout = \"3s\"; };
};"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'bus', 'test.event', JSON_OBJECT('n', seq, 'pad', REPEAT('x', 1000000))
	    FROM seq_1_to_$N"
	testenv_rabbitmq_ctl "$RMQ" set_vm_memory_high_watermark 0.000001 ||
	    fail "cannot set the watermark"
	at_exit 'testenv_rabbitmq_ctl "$RMQ" set_vm_memory_high_watermark 0.9'
	sleep 1
}
test_expect_success 'setup: 50 rows of 1 MB, the broker under a memory alarm' \
    setup

for_5s()
{
	local t0 el
	t0=$(now)
	# (timeout: without the fix it never ends)
	assert_exit 0 timeout -s KILL 60 "$CRONGUARD_BIN" -c "$CONF" -v outbox dispatch --for 5s
	el=$(elapsed "$t0")
	echo "memory alarm, $N rows of 1 MB, --for 5s: exit 0 after ${el}s"
	"$LIB_PY" -c "import sys; sys.exit(0 if $el < 10 else 1)" ||
	    fail "--for 5s under connection.blocked ran ${el}s"
	assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'SENT'")" \
	    "rows SENT under the alarm"
	assert_eq "$N" "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status = 'PENDING' AND attempts = 0")" "rows PENDING, no attempt"
}
test_expect_success 'under connection.blocked, --for 5s ends within 10 s' for_5s

sigterm()
{
	local t0 t1 pid rc el
	t0=$(now)
	"$CRONGUARD_BIN" -c "$CONF" -v outbox dispatch --for 60s > "$OUT" 2> "$ERR" &
	pid=$!
	(sleep 30; kill -KILL "$pid" 2>/dev/null) &
	at_exit "kill $! 2>/dev/null"
	sleep 2
	t1=$(now)
	kill -TERM "$pid"
	rc=0
	wait "$pid" || rc=$?
	el=$(elapsed "$t1")
	echo "memory alarm, SIGTERM 2 s into --for 60s: exit $rc ${el}s after the signal"
	assert_eq 0 "$rc" "exit status after SIGTERM"
	"$LIB_PY" -c "import sys; sys.exit(0 if $el < 3 else 1)" ||
	    { cat "$ERR"; fail "SIGTERM under connection.blocked took ${el}s"; }
	assert_eq "$N" "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status = 'PENDING' AND attempts = 0")" "rows PENDING, no attempt, after SIGTERM"
}
test_expect_success 'SIGTERM 2 s into --for 60s ends it within 3 s, rows PENDING' \
    sigterm

cleared()
{
	testenv_rabbitmq_ctl "$RMQ" set_vm_memory_high_watermark 0.9 ||
	    fail "cannot raise the watermark"
	sleep 1
	assert_exit 0 cg outbox dispatch
	assert_eq "$N" "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status = 'SENT' AND attempts = 1")" "rows SENT after the alarm"
	testenv_rabbitmq_drain cgq | cut -f1 | sort -u > "$TEST_TMP/got"
	mysql_q "SELECT message_id FROM outbox_messages" | sort > "$TEST_TMP/want"
	cmp -s "$TEST_TMP/want" "$TEST_TMP/got" ||
	    fail "the queue does not hold every row's message"
}
test_expect_success 'the alarm cleared: every row delivered, SENT with one attempt' \
    cleared

test_done
