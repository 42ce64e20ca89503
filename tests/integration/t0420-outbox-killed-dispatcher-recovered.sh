#!/bin/sh
# A dispatcher SIGKILLed while its requests hang (server delay) leaves rows
# PROCESSING; once the lease (2 s) has passed, the next pass recovers them,
# counting the killed claim as an attempt, and delivers everything.
# Cases: setup; the dispatcher SIGKILLed; within the lease; after it.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
N=20
conf() {
	write_config "$CONF" "
outbox = { lease = \"2s\"; watchdog = \"1h\"; };
channels = {
  hook = { type = \"http\"; url = \"$HTTP_BASE/$1\"; timeout = \"1s\"; concurrency = 4; };
};"
}
setup()
{
	conf "slow/delay=5000"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'hook', 'test.event', JSON_OBJECT('n', seq) FROM seq_1_to_$N"
}
test_expect_success 'setup: 20 messages to a server that answers after 5 s' \
    setup

killed()
{
	local pid
	"$CRONGUARD_BIN" -c "$CONF" outbox dispatch > "$TEST_TMP/killed.out" 2>&1 &
	pid=$!
	wait_for 10 sh -c "[ \$(grep -c '/$TEST_ID/slow' '$HTTP_LOG') -ge 4 ]"
	kill -9 "$pid"
	wait "$pid" 2>/dev/null || true

	assert_eq "$N" "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status = 'PROCESSING' AND attempts = 0")" "rows left PROCESSING"
}
test_expect_success 'a dispatcher SIGKILLed mid-send leaves its rows PROCESSING' \
    killed

# within the lease nothing is recovered
within()
{
	conf "fast"
	assert_exit 0 cg outbox dispatch
	assert_eq 0 "$(http_count "/$TEST_ID/fast")" "requests within the lease"
	assert_exit 0 cg outbox check
	assert_grep 'processing=20 stale=0 stuck=0' "$OUT"
}
test_expect_success 'within the lease nothing is recovered' within

after()
{
	sleep 2.5
	assert_exit 0 cg outbox check
	assert_grep 'processing=20 stale=20 stuck=0' "$OUT"
	assert_exit 0 cg -v outbox dispatch
	assert_grep "event=outbox_recovered count=$N" "$ERR"
	assert_eq "$N" "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status = 'SENT' AND attempts = 2")" "rows SENT, the killed claim counted"
	assert_eq "$N" "$(http_count "/$TEST_ID/fast")" "delivered after recovery"
}
test_expect_success 'past the lease the next pass recovers, counting the killed claim' \
    after

test_done
