#!/bin/sh
# --for DUR keeps polling every poll_interval: a row inserted while the
# dispatcher runs is delivered before it exits, and it exits once DUR has
# passed.  keep_sent = false deletes delivered rows instead of marking
# them SENT (failed ones stay).
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
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

t0=$(date +%s)
"$CRONGUARD_BIN" -c "$CONF" -v outbox dispatch --for 3s > "$TEST_TMP/d.out" 2> "$TEST_TMP/d.err" &
pid=$!
wait_for 10 sh -c "[ \$(grep -c '/$TEST_ID/ok' '$HTTP_LOG') -ge 10 ]"
mysql_q "INSERT INTO outbox_messages (channel, event_type, payload) VALUES ('hook', 't', '{\"late\": true}')"
wait_for 10 sh -c "[ \$(grep -c '/$TEST_ID/ok' '$HTTP_LOG') -ge 11 ]"
wait "$pid" || fail "dispatch exited $?: $(cat "$TEST_TMP/d.err")"
t1=$(date +%s)
[ $((t1 - t0)) -ge 2 ] && [ $((t1 - t0)) -le 6 ] || fail "--for 3s ran $((t1 - t0)) s"
assert_grep 'event=outbox_dispatched sent=11 retried=0 failed=1' "$TEST_TMP/d.err"

assert_eq "bad FAILED" "$(mysql_q "SELECT channel, status FROM outbox_messages" | tr '\t' ' ')" \
    "only the failed row is left"
assert_eq 11 "$(http_field headers.webhook-id "/$TEST_ID/ok" | sort -u | wc -l | tr -d ' ')" "delivered once each"
echo "PASS: $TEST_NAME"
