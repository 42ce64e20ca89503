#!/bin/sh
# sent_at is the time the peer accepted the message (cronguard-outbox(7),
# THE TABLE), written by the same finalise: two messages sent one after
# the other to an endpoint that answers after 1 s, in one batch, get
# sent_at about 1 s apart, each the end of its own attempt (started_at +
# duration_ms), not the batch's finalise time; serial and pipelined.
# Servers: MariaDB, HTTP.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

# conf PIPELINE
conf()
{
	write_config "$CONF" "outbox = { batch_size = 10; pipeline = $1; };
channels = { hook = { type = \"http\"; url = \"$HTTP_BASE/delay=1000\";
  concurrency = 1; timeout = \"5s\"; }; };"
}

setup()
{
	conf 1
	assert_exit 0 cg db migrate
}
test_expect_success SERVERS 'setup: db migrate' setup

# two PIPELINE: two messages through the slow endpoint.
two()
{
	conf "$1"
	mysql_q "DELETE FROM outbox_messages; DELETE FROM outbox_attempts;
	    INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'hook', 't', JSON_OBJECT('i', seq) FROM seq_1_to_2"
	assert_exit 0 cg outbox dispatch
	assert_eq 2 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status = 'SENT'")" "sent"
	gap=$(mysql_q "SELECT TIMESTAMPDIFF(MICROSECOND, MIN(sent_at),
	    MAX(sent_at)) DIV 1000 FROM outbox_messages")
	echo "pipeline $1: sent_at $gap ms apart"
	[ "$gap" -ge 800 ] || fail "sent_at $gap ms apart, not the sends' times"
	# each sent_at is the end of its attempt, within 100 ms
	assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages m
	    JOIN outbox_attempts a ON a.outbox_id = m.id
	    WHERE ABS(TIMESTAMPDIFF(MICROSECOND, a.started_at, m.sent_at)
	    DIV 1000 - CAST(a.duration_ms AS SIGNED)) > 100")" "sent_at not its attempt's end"
}
test_expect_success SERVERS 'serial: sent_at per message' 'two 1'
test_expect_success SERVERS 'pipelined: sent_at per message' 'two 2'

test_done
