#!/bin/sh
# outbox.pipeline = 3 streams its sends: a batch goes to the finaliser as
# soon as every message of it has its answer, and the next batches'
# messages start while an earlier batch still waits for its slowest one.
# 30 rows, batch 10; the first request is answered after 6 s, the others
# at once.  While it is in flight the two other batches are SENT, and the
# nine others of its own batch stay PROCESSING (a batch is finalised
# whole, fenced by its claim).  Sending a group of batches in one call
# that ends with its slowest message leaves every row PROCESSING for 6 s.
# Cases: setup; the dispatch.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
# SENT and PROCESSING rows
split() {
	mysql_q "SELECT CONCAT(SUM(status = 'SENT'), ' ', SUM(status = 'PROCESSING'))
	    FROM outbox_messages"
}
two_batches_sent() { [ "$(split)" = "20 10" ]; }
setup()
{
	write_config "$CONF" "
	outbox = { batch_size = 10; pipeline = 3; lease = \"10m\"; };
	channels = {
	  hook = { type = \"http\"; url = \"$HTTP_BASE/stall-first=6000\"; concurrency = 40; timeout = \"20s\"; };
	};"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'hook', 't', JSON_OBJECT('n', seq) FROM seq_1_to_30"
}
test_expect_success 'setup: 30 rows, the first request answered after 6 s' \
    setup

streams()
{
	local pid rc
	"$CRONGUARD_BIN" -c "$CONF" -v outbox dispatch > "$TEST_TMP/d.out" 2> "$TEST_TMP/d.err" &
	pid=$!
	at_exit "kill $pid 2>/dev/null"
	wait_for 10 sh -c "[ \$(grep -c '/$TEST_ID/' '$HTTP_LOG') -ge 1 ]"
	wait_for 4 two_batches_sent
	kill -0 "$pid" 2>/dev/null || fail "the dispatcher ended before the stalled request was answered"
	echo "while the first request stalls: SENT, PROCESSING = $(split)"

	rc=0
	wait "$pid" || rc=$?
	assert_eq 0 "$rc" "exit status ($(cat "$TEST_TMP/d.err"))"
	assert_eq 30 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'SENT' AND attempts = 1")" \
	    "SENT once each"
	assert_eq 30 "$(http_count)" "requests"
}
test_expect_success 'two batches SENT while the first waits for its slowest; then all SENT once' \
    streams

test_done
