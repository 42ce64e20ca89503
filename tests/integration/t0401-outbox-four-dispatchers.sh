#!/bin/sh
# Four dispatchers at once on 5,000 messages: all are sent and none is
# received twice (FOR UPDATE SKIP LOCKED claims are disjoint).
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
N=5000
write_config "$CONF" "
outbox = { batch_size = 50; };
channels = {
  hook = { type = \"http\"; url = \"$HTTP_BASE/ok\"; concurrency = 4; };
};"
assert_exit 0 cg db migrate
mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
    SELECT 'hook', 'test.event', JSON_OBJECT('n', seq) FROM seq_1_to_$N"

pids=
for i in 1 2 3 4; do
	cg -v outbox dispatch > "$TEST_TMP/out.$i" 2> "$TEST_TMP/err.$i" &
	pids="$pids $!"
done
for p in $pids; do
	wait "$p" || fail "a dispatcher exited $?: $(cat "$TEST_TMP"/err.*)"
done

assert_eq "$N" "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
    WHERE status = 'SENT' AND attempts = 1")" "rows SENT"
assert_eq "$N" "$(http_count)" "requests received"
assert_eq "$N" "$(http_field headers.webhook-id | sort -u | wc -l | tr -d ' ')" \
    "distinct ids received"
# every dispatcher took part (the claims interleaved, not one after another)
busy=0
for i in 1 2 3 4; do
	n=$(sed -n 's/.*event=outbox_dispatched sent=\([0-9]*\).*/\1/p' "$TEST_TMP/err.$i")
	[ "${n:-0}" -gt 0 ] && busy=$((busy + 1))
done
[ "$busy" -ge 2 ] || fail "only $busy dispatcher(s) sent anything"
echo "PASS: $TEST_NAME"
