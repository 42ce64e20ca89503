#!/bin/sh
# --for DUR keeps polling every poll_interval: a row inserted while the
# dispatcher runs is delivered before it exits, and it exits once DUR has
# passed.  keep_sent = false deletes delivered rows instead of marking
# them SENT (failed ones stay).
# Cases: setup; dispatch --for polls; keep_sent = false.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

setup()
{
	write_config "$CONF" "
outbox = { poll_interval = \"200ms\"; keep_sent = false; };
channels = {
  hook = { type = \"http\"; url = \"$HTTP_BASE/ok\"; };
  bad = { type = \"http\"; url = \"$HTTP_BASE/status=404\"; };
};"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'hook', 't', JSON_OBJECT('n', seq) FROM seq_1_to_10"
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload) VALUES ('bad', 't', '{}')"
}
test_expect_success SERVERS 'setup: ten rows for hook, one for a 404' setup

polls()
{
	local t0 t1 pid
	t0=$(date +%s)
	"$CRONGUARD_BIN" -c "$CONF" -v outbox dispatch --for 3s > "$TEST_TMP/d.out" 2> "$TEST_TMP/d.err" &
	pid=$!
	at_exit "kill $pid 2>/dev/null"
	wait_for 10 sh -c "[ \$(grep -c '/$TEST_ID/ok' '$HTTP_LOG') -ge 10 ]"
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload) VALUES ('hook', 't', '{\"late\": true}')"
	wait_for 10 sh -c "[ \$(grep -c '/$TEST_ID/ok' '$HTTP_LOG') -ge 11 ]"
	wait "$pid" || fail "dispatch exited $?: $(cat "$TEST_TMP/d.err")"
	t1=$(date +%s)
	[ $((t1 - t0)) -ge 2 ] && [ $((t1 - t0)) -le 6 ] || fail "--for 3s ran $((t1 - t0)) s"
	assert_grep 'event=outbox_dispatched sent=11 retried=0 failed=1' "$TEST_TMP/d.err"
}
test_expect_success SERVERS 'dispatch --for 3s delivers a row inserted meanwhile, exits after 3s' \
    polls

kept()
{
	assert_eq "bad FAILED" "$(mysql_q "SELECT channel, status FROM outbox_messages" | tr '\t' ' ')" \
	    "only the failed row is left"
	assert_eq 11 "$(http_field headers.webhook-id "/$TEST_ID/ok" | sort -u | wc -l | tr -d ' ')" "delivered once each"
}
test_expect_success SERVERS 'keep_sent = false: delivered rows deleted, the failed one stays; each sent once' \
    kept

test_done
