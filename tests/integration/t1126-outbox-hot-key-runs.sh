#!/bin/sh
# A hot ordering key (cronguard-outbox(7), ORDERING): a claim takes a run
# of a key's consecutive due rows in one batch and the dispatcher sends
# them one after another; the first failure puts the rest back unsent.
#  1. 300 rows of one key and 20 unkeyed rows drain in a handful of
#     claims (one row per claim before), every row delivered once and in
#     id order.
#  2. The 150th row of the key fails once (503): nothing after it is
#     requested before its retry succeeds, the rows of its run behind it
#     are put back with no attempt counted (301 requests, 301 attempts).
#  3. Two dispatchers at once on two hot keys: each key still in id
#     order, every row delivered exactly once.
#  4. The claim's ordering subqueries are dives into the ordering index
#     (doctor's EXPLAIN of the claim), not walks over the key's backlog.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

# conf TAG [FAULTS]: one http channel under $HTTP_BASE/TAG
conf() {
	write_config "$CONF" "
outbox = { batch_size = 100; max_attempts = 5;
           backoff = { initial = \"1ms\"; jitter = 0.0; }; };
channels = {
  hook = { type = \"http\"; url = \"$HTTP_BASE/$1/hook${2:+/$2}\"; concurrency = 8; };
};"
}

# fill KEYS ROWS: ROWS rows for each of the keys, then 20 unkeyed rows
fill() {
	mysql_q "DELETE FROM outbox_messages"
	for k in $1; do
		mysql_q "INSERT INTO outbox_messages (channel, event_type, ordering_key, payload)
		    SELECT 'hook', 't', '$k', JSON_OBJECT('k', '$k', 'i', seq,
		        'tag', CONCAT('r', seq, 'x'))
		    FROM seq_1_to_$2"
	done
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'hook', 't', JSON_OBJECT('k', '-', 'i', seq) FROM seq_1_to_20"
}

# order TAG: per key, the attempts and the deliveries came in id order,
# and each row was delivered exactly once; prints the first offence.
order() {
	http_requests "/$TEST_ID/$1/" > "$TEST_TMP/req-$1"
	"$LIB_PY" - "$TEST_TMP/req-$1" <<-'PY'
	import json, sys
	seen, ok = {}, {}
	for line in open(sys.argv[1], encoding="utf-8"):
	    r = json.loads(line)
	    b = json.loads(r["body"])
	    if b["k"] == "-":
	        continue
	    seen.setdefault(b["k"], []).append(b["i"])
	    if r["status"] == 200:
	        ok.setdefault(b["k"], []).append(b["i"])
	if not seen:
	    print("no keyed request at all")
	    sys.exit(1)
	for k in sorted(seen):
	    if seen[k] != sorted(seen[k]):
	        print(k, "attempt order", seen[k][:20])
	        sys.exit(1)
	    if ok[k] != sorted(set(ok[k])):
	        print(k, "delivered twice or out of order", ok[k][:20])
	        sys.exit(1)
	print("per key in id order")
	PY
}

drain() {
	i=0
	while [ "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status <> 'SENT'")" -gt 0 ]; do
		i=$((i + 1))
		[ $i -le 20 ] || fail "$1: not drained after $i passes"
		assert_exit 0 cg -vv outbox dispatch
		cat "$ERR" >> "$TEST_TMP/log-$1"
	done
}

setup() {
	conf hot
	assert_exit 0 cg db migrate
}
test_expect_success SERVERS 'setup: the schema' setup

runs() {
	conf hot
	fill hot 300
	drain hot
	order hot || fail "hot: per-key order violated"
	assert_eq 320 "$(http_count "/$TEST_ID/hot/")" "hot: requests"
	claims=$(grep -c 'event=outbox_batch count=[1-9]' "$TEST_TMP/log-hot")
	[ "$claims" -le 12 ] || fail "hot: $claims claims for 300 rows of one key (one row each?)"
	grep -q 'event=outbox_batch count=100 ' "$TEST_TMP/log-hot" ||
	    fail "hot: no claim took a full batch: $(grep outbox_batch "$TEST_TMP/log-hot" | head -n 5)"
}
test_expect_success SERVERS 'a hot key drains in runs, in id order' runs

mid_failure() {
	conf mid "fail-match=r150x"
	fill hot 300
	drain mid
	order mid || fail "mid: per-key order violated"
	assert_eq 321 "$(http_count "/$TEST_ID/mid/")" "mid: requests (one retry)"
	assert_eq "321 2" "$(mysql_q "SELECT SUM(attempts), MAX(attempts) FROM outbox_messages" | tr '\t' ' ')" \
	    "mid: attempts (rows put back count none)"
	assert_eq 2 "$(mysql_q "SELECT attempts FROM outbox_messages
	    WHERE JSON_VALUE(payload, '$.tag') = 'r150x'")" "mid: the failed row's attempts"
}
test_expect_success SERVERS 'the first failure of a run puts the rest back unsent' mid_failure

two_dispatchers() {
	conf two
	fill "a b" 400
	i=0
	while [ "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status <> 'SENT'")" -gt 0 ]; do
		i=$((i + 1))
		[ $i -le 20 ] || fail "two: not drained after $i rounds"
		cg outbox dispatch > /dev/null 2>&1 &
		p1=$!
		cg outbox dispatch > /dev/null 2>&1 &
		p2=$!
		wait $p1 || fail "two: dispatcher 1 failed"
		wait $p2 || fail "two: dispatcher 2 failed"
	done
	order two || fail "two: per-key order violated with two dispatchers"
	assert_eq 820 "$(http_count "/$TEST_ID/two/")" "two: requests (each row once)"
}
test_expect_success SERVERS 'two dispatchers at once keep each key in order' two_dispatchers

# doctor EXPLAINs the very statement the dispatcher runs, with the table
# full (a backlog of 5,000 rows of one key).
explain() {
	conf hot
	fill hot 5000
	mysql_q "ANALYZE TABLE outbox_messages" > /dev/null
	cg doctor > "$OUT" 2>&1 || true
	assert_grep '^OK claim_index: .*its 5 ordering subqueries are dives into the ordering index' "$OUT"
}
test_expect_success SERVERS "the claim's ordering subqueries are dives into the index" explain

test_done
