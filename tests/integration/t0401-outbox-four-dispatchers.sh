#!/bin/sh
# Four dispatchers at once on 5,000 messages: all are sent and none is
# received twice (FOR UPDATE SKIP LOCKED claims are disjoint).
# Cases: setup; four dispatchers; each row sent once; all took part.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
N=5000

setup()
{
	write_config "$CONF" "
outbox = { batch_size = 50; };
channels = {
  hook = { type = \"http\"; url = \"$HTTP_BASE/ok\"; concurrency = 4; };
};"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'hook', 'test.event', JSON_OBJECT('n', seq) FROM seq_1_to_$N"
}
test_expect_success SERVERS "setup: $N due rows, db migrate" setup

four()
{
	local pids='' i p
	for i in 1 2 3 4; do
		cg -v outbox dispatch > "$TEST_TMP/out.$i" 2> "$TEST_TMP/err.$i" &
		pids="$pids $!"
	done
	for p in $pids; do
		wait "$p" || fail "a dispatcher exited $?: $(cat "$TEST_TMP"/err.*)"
	done
}
test_expect_success SERVERS 'four dispatchers at once all exit 0' four

once()
{
	assert_eq "$N" "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status = 'SENT' AND attempts = 1")" "rows SENT"
	assert_eq "$N" "$(http_count)" "requests received"
	assert_eq "$N" "$(http_field headers.webhook-id | sort -u | wc -l | tr -d ' ')" \
	    "distinct ids received"
}
test_expect_success SERVERS 'every row SENT at the first attempt, received once' once

# every dispatcher took part (the claims interleaved, not one after another)
interleaved()
{
	local busy=0 i n
	for i in 1 2 3 4; do
		n=$(sed -n 's/.*event=outbox_dispatched sent=\([0-9]*\).*/\1/p' "$TEST_TMP/err.$i")
		[ "${n:-0}" -gt 0 ] && busy=$((busy + 1))
	done
	[ "$busy" -ge 2 ] || fail "only $busy dispatcher(s) sent anything"
}
test_expect_success SERVERS 'the dispatchers took part together (two or more sent)' \
    interleaved

test_done
