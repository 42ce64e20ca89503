#!/bin/sh
# outbox.pipeline = 3: while a batch is sent, the next ones are claimed
# (a slow sink sees more than one batch in flight; at pipeline = 1 a
# batch's requests start only after the previous batch's answers, at
# least the sink's delay apart); SIGTERM with batches claimed ahead, one
# of them half started, puts every unsent row back at once, no attempt
# counted; and a key whose message is in flight is not claimed ahead (its
# next message waits for the first, which fails once, to be SENT).
# Cases: setup; pipeline 3; pipeline 1; SIGTERM; a key in flight.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers

# conf DEPTH PATH [CONCURRENCY [CHANNEL]]: batch 10, a channel "hook"
# (concurrency 40) to PATH, and CHANNEL's configuration if given.
conf() {
	write_config "$CONF" "
outbox = { batch_size = 10; pipeline = $1; lease = \"10m\"; max_attempts = 5;
           ordering_scope = \"global\";
           backoff = { initial = \"1ms\"; jitter = 0.0; }; };
channels = {
  hook = { type = \"http\"; url = \"$HTTP_BASE/$2\"; concurrency = ${3:-40}; timeout = \"5s\"; };
  ${4:-}
};"
}
fill() {
	mysql_q "DELETE FROM outbox_messages;
	    INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'hook', 't', JSON_OBJECT('n', seq) FROM seq_1_to_30"
}
# most PATH MS: the most requests under PATH that arrived within MS of
# each other
most() {
	http_requests "/$TEST_ID/$1" | "$LIB_PY" -c '
import json, sys
t = sorted(json.loads(l)["time"] for l in sys.stdin)
w = float(sys.argv[1]) / 1000
print(max(sum(1 for u in t if s <= u < s + w) for s in t))' "$2"
}
setup()
{
	conf 3 overlap/delay=1000
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: pipeline 3 to a slow sink, db migrate' setup

# 1. 30 rows, batch 10, each answer after 1 s: at pipeline 1 three waves of
# 10, each 1 s after the last; at 3, batches claimed ahead are sent at once.
pipeline_3()
{
	local n
	fill
	assert_exit 0 cg outbox dispatch
	assert_eq 30 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'SENT' AND attempts = 1")" \
	    "pipeline 3: SENT once each"
	n=$(most overlap/ 900)
	[ "$n" -gt 10 ] || fail "pipeline 3: at most $n requests within 0.9 s: no batch was sent beside another"
}
test_expect_success 'pipeline 3: batches claimed ahead are sent beside the one in flight' \
    pipeline_3

pipeline_1()
{
	conf 1 serial/delay=1000
	fill
	assert_exit 0 cg outbox dispatch
	assert_eq 10 "$(most serial/ 900)" "pipeline 1: requests within 0.9 s (one batch)"
}
test_expect_success 'pipeline 1: one batch in flight at a time' pipeline_1

# 2. SIGTERM while the first batch and half the second are sent (15 at a
# time) and the third is claimed ahead.
all_claimed() { [ "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'PROCESSING'")" -eq 30 ]; }
sigterm()
{
	local pid sent rc
	conf 3 term/delay=1500 15
	fill
	"$CRONGUARD_BIN" -c "$CONF" -v outbox dispatch > "$TEST_TMP/d.out" 2> "$TEST_TMP/d.err" &
	pid=$!
	wait_for 10 sh -c "[ \$(grep -c '/$TEST_ID/term' '$HTTP_LOG') -ge 1 ]"
	wait_for 10 all_claimed
	wait_for 5 sh -c "[ \$(grep -c '/$TEST_ID/term' '$HTTP_LOG') -ge 15 ]"
	sent=$(http_count "/$TEST_ID/term")
	echo "requests started before SIGTERM: $sent of 30"
	kill -TERM "$pid"
	rc=0
	wait "$pid" || rc=$?
	assert_eq 0 "$rc" "exit status after SIGTERM ($(cat "$TEST_TMP/d.err"))"
	assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'PROCESSING'")" "none PROCESSING"
	assert_eq "$sent" "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'SENT' AND attempts = 1")" \
	    "requests in flight finished"
	assert_eq $((30 - sent)) "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
    WHERE status = 'PENDING' AND attempts = 0 AND next_attempt_at <= NOW(6)")" \
	    "unsent rows back to PENDING, no attempt counted"
}
test_expect_success 'SIGTERM with batches claimed ahead: every unsent row PENDING, no attempt' \
    sigterm

# 3. Ten keys, ten messages each, in id order k0..k9, k0..k9, ...: the
# first claim is the first message of each key (a full batch, so the next
# claim follows at once) on channel "first", where each fails once.  The
# second of a key must not be claimed while its first is in flight, or it
# is delivered first.
key_in_flight()
{
	local i
	conf 3 hook 40 "first = { type = \"http\"; url = \"$HTTP_BASE/first/fail-first=1\"; concurrency = 40; };"
	mysql_q "DELETE FROM outbox_messages;
    INSERT INTO outbox_messages (channel, event_type, ordering_key, payload)
    SELECT IF(seq <= 10, 'first', 'hook'), 't', CONCAT('k', seq % 10),
        JSON_OBJECT('k', CONCAT('k', seq % 10), 'i', seq)
    FROM seq_1_to_100"
	i=0
	while [ "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status <> 'SENT'")" -gt 0 ]; do
		i=$((i + 1))
		[ $i -le 50 ] || fail "not drained after $i passes"
		assert_exit 0 cg outbox dispatch
	done
	{ http_requests "/$TEST_ID/first"; http_requests "/$TEST_ID/hook"; } |
	    "$LIB_PY" -c '
import json, sys
ok = {}
for r in sorted((json.loads(l) for l in sys.stdin), key=lambda r: r["seq"]):
    if r["status"] == 200:
        b = json.loads(r["body"])
        ok.setdefault(b["k"], []).append(b["i"])
bad = [k for k, v in ok.items() if v != sorted(v)]
assert len(ok) == 10 and not bad, ("delivered out of order", bad, ok)
' || fail "a key was delivered out of order at pipeline 3"
}
test_expect_success 'a key whose message is in flight is not claimed ahead' \
    key_in_flight

test_done
