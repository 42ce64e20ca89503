#!/bin/sh
# Per-key ordering at outbox.pipeline = 3 (issue 37, item 4): a claim made
# while a key's row is in flight keeps the key's next rows, which follow
# that row (doc/architecture.md, "Ordering and runs of a key"): they are
# sent as soon as it is SENT, not after its whole batch is finalised, and
# never before it, nor at all when it failed.
# Cases: setup; next rows claimed ahead; in order under failures; a few
# batches held.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

# conf PATH: batch 10, pipeline 3, per-key ordering per channel, one
# http channel to PATH.
conf() {
	write_config "$CONF" "
outbox = { batch_size = 10; pipeline = 3; lease = \"10m\"; max_attempts = 100;
           backoff = { initial = \"1ms\"; max = \"1ms\"; jitter = 0.0; }; };
channels = {
  hook = { type = \"http\"; url = \"$HTTP_BASE/$1\"; concurrency = 40; timeout = \"10s\"; };
};"
}
# fill KEYS ROWS: ROWS rows, interleaved over KEYS keys (k0, k1, ...),
# each body naming its key and its place.
fill() {
	mysql_q "DELETE FROM outbox_messages;
	    INSERT INTO outbox_messages (channel, event_type, ordering_key, payload)
	    SELECT 'hook', 't', CONCAT('k', seq % $1),
	        JSON_OBJECT('k', CONCAT('k', seq % $1), 'i', seq)
	    FROM seq_1_to_$2"
}
# in_order PATH: every key's successful requests under PATH arrived in
# id order, each row once.
in_order() {
	http_requests "/$TEST_ID/$1" | "$LIB_PY" -c '
import json, sys
ok = {}
for r in sorted((json.loads(l) for l in sys.stdin), key=lambda r: r["seq"]):
    if r["status"] == 200:
        b = json.loads(r["body"])
        ok.setdefault(b["k"], []).append(b["i"])
bad = {k: v for k, v in ok.items() if v != sorted(set(v))}
assert not bad, ("delivered out of order or twice", bad)
print(sum(len(v) for v in ok.values()))'
}

test_expect_success SERVERS 'setup: db migrate' '
	conf setup &&
	assert_exit 0 cg db migrate
'

# Ten keys, three rows each: the first batch is every key's first row,
# and the first request to arrive waits 2 s.  The second claim (made
# while the first batch is in flight) keeps every key's second row, so
# the nine other keys' second rows go as soon as their first is SENT;
# a claim that kept none would wait for the whole first batch, 2 s.
ahead() {
	conf ahead/stall-first=2000 &&
	fill 10 30 &&
	assert_exit 0 cg outbox dispatch &&
	assert_eq 30 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status = 'SENT' AND attempts = 1")" "SENT once each" &&
	assert_eq 30 "$(in_order ahead/)" "requests, each key in order" &&
	n=$(http_requests "/$TEST_ID/ahead/" | "$LIB_PY" -c '
import json, sys
t = {}
for r in (json.loads(l) for l in sys.stdin):
    t.setdefault(json.loads(r["body"])["k"], []).append(r["time"])
print(sum(1 for v in t.values() if sorted(v)[1] - sorted(v)[0] < 1.0))') &&
	echo "# keys whose second row went within 1 s of their first: $n" &&
	[ "$n" -ge 8 ] ||
	    fail "only $n keys had their second row sent within 1 s of the first: the claim ahead kept none"
}
test_expect_success SERVERS 'a claim ahead keeps the next rows of keys in flight' ahead

# Twenty keys, ten rows each, a fifth of the requests failing at random
# and every answer 30 ms late: a row claimed behind one in flight must
# wait for it and stay unsent when it failed, or the key goes out of
# order.  Passes until all are SENT.
failures() {
	conf fail/fail-rate=20/delay=30 &&
	fill 20 200 &&
	i=0 &&
	while [ "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status <> 'SENT'")" -gt 0 ]; do
		i=$((i + 1))
		[ $i -le 60 ] || fail "not drained after $i passes"
		assert_exit 0 cg outbox dispatch
	done &&
	echo "# drained in $i passes" &&
	n=$(in_order fail/) || fail "a key was delivered out of order at pipeline 3"
	assert_eq 200 "$n" "rows delivered"
}
test_expect_success SERVERS 'keys stay in order when rows in flight fail' failures

# A pass holds a few batches in memory, however many it claims: a batch
# finalised unpins the batch its rows followed.  Sixty batches of ten
# over twenty keys each follow the one before; when a batch was unpinned
# only as it was freed, the pass held all sixty to its end (-vv logs held,
# the batches still held after each finalise).
held() {
	conf held &&
	fill 20 600 &&
	cg -vv outbox dispatch 2> "$TEST_TMP/held.err" > /dev/null ||
	    { tail -n 5 "$TEST_TMP/held.err"; fail "dispatch failed"; }
	assert_eq 600 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status = 'SENT' AND attempts = 1")" "SENT once each" &&
	assert_eq 600 "$(in_order held)" "requests, each key in order" &&
	n=$(grep -c 'event=outbox_batch' "$TEST_TMP/held.err") &&
	most=$(sed -n 's/.*event=outbox_batch .*held=\([0-9]*\).*/\1/p' \
	    "$TEST_TMP/held.err" | sort -n | tail -n 1) &&
	echo "# $n batches, at most $most held" &&
	[ "$n" -ge 60 ] || fail "$n batches, not 60"
	[ -n "$most" ] && [ "$most" -le 5 ] ||
	    fail "the pass held $most batches at once (pipeline 3)"
}
test_expect_success SERVERS 'a pass holds a few batches, not every one it claimed' held

test_done
