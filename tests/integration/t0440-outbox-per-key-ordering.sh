#!/bin/sh
# Per-key ordering (cronguard-outbox(7), ORDERING): 3 keys x 50 messages, every message's
# first delivery fails (503) and is retried, the first message of each key
# fails twice; per key the server still sees the messages in id order: a
# row is not claimed while an earlier row of its key is PENDING,
# PROCESSING or FAILED.  Control: the same run with ordering = "none"
# delivers some key out of order (the second message of a key succeeds at
# its retry while the first fails again), so the check above can fail.
# A FAILED row blocks its key until retried; rows without a key are not
# held up.  The ordering check runs on ix_outbox_ordering_status (EXPLAIN).
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers

# conf ORDERING TAG: messages of channel "first" (the first of each key)
# fail twice, those of "hook" once.
conf() {
	write_config "$CONF" "
outbox = { batch_size = 20; ordering = \"$1\"; ordering_scope = \"global\"; max_attempts = 5;
           backoff = { initial = \"1ms\"; jitter = 0.0; }; };
channels = {
  hook = { type = \"http\"; url = \"$HTTP_BASE/$2/a/fail-first=1\"; concurrency = 8; };
  first = { type = \"http\"; url = \"$HTTP_BASE/$2/b/fail-first=2\"; concurrency = 8; };
  strict = { type = \"http\"; url = \"$HTTP_BASE/strict/status=400\"; };
};"
}

# run TAG: 150 messages, dispatch until all are SENT, then the requests.
run() {
	mysql_q "DELETE FROM outbox_messages;
	    INSERT INTO outbox_messages (channel, event_type, ordering_key, payload)
	    SELECT IF(seq <= 3, 'first', 'hook'), 't', CONCAT('k', seq % 3),
	        JSON_OBJECT('k', CONCAT('k', seq % 3), 'i', seq)
	    FROM seq_1_to_150"
	i=0
	while [ "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status <> 'SENT'")" -gt 0 ]; do
		i=$((i + 1))
		[ $i -le 400 ] || fail "$1: not drained after $i passes"
		assert_exit 0 cg outbox dispatch
	done
	assert_eq 147 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'SENT' AND attempts = 2")" \
	    "$1: SENT after one retry"
	assert_eq 3 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'SENT' AND attempts = 3")" \
	    "$1: first of each key SENT after two retries"
	assert_eq 303 "$(http_count "/$TEST_ID/$1/")" "$1: requests"
	http_requests "/$TEST_ID/$1/" > "$TEST_TMP/req-$1"
}

# order FILE [deliveries]: exit 0 when, per key, attempts and deliveries
# (or only the deliveries) came in id order; else print the first
# offending key and exit 1.
order() {
	"$LIB_PY" - "$1" "${2:-all}" <<-'PY'
	import json, sys
	seen, ok = {}, {}
	for line in open(sys.argv[1], encoding="utf-8"):
	    r = json.loads(line)
	    b = json.loads(r["body"])
	    seen.setdefault(b["k"], []).append(b["i"])
	    if r["status"] == 200:
	        ok.setdefault(b["k"], []).append(b["i"])
	for k in sorted(seen):
	    if sys.argv[2] == "all" and seen[k] != sorted(seen[k]):
	        print(k, "attempt order", seen[k][:12], "...")
	        sys.exit(1)
	    if ok[k] != sorted(set(ok[k])) or len(ok[k]) != 50:
	        print(k, "delivery order", ok[k][:12], "...")
	        sys.exit(1)
	print("per key in id order")
	PY
}

conf per_key ord
assert_exit 0 cg db migrate
run ord
order "$TEST_TMP/req-ord" || fail "per-key order violated"

# The guard shown to matter: without it the same failures reorder a key.
conf none ctl
run ctl
if order "$TEST_TMP/req-ctl" deliveries; then
	fail "control with ordering = none delivered every key in order"
fi
conf per_key ord

# The NOT EXISTS of the claim (src/outbox.c claim_txn) uses the index of
# sql/005 and reads no row (Using index).
mysql_q "EXPLAIN SELECT o.id FROM outbox_messages o FORCE INDEX (ix_outbox_due)
    WHERE o.status = 'PENDING' AND o.next_attempt_at <= NOW(6)
    AND (o.ordering_key IS NULL OR NOT EXISTS (SELECT 1 FROM outbox_messages e
      WHERE e.ordering_key = o.ordering_key AND e.id < o.id
      AND e.status IN ('PENDING','PROCESSING','FAILED')))
    ORDER BY o.next_attempt_at, o.id LIMIT 20" > "$TEST_TMP/explain"
grep 'DEPENDENT SUBQUERY' "$TEST_TMP/explain" | grep -q 'ix_outbox_ordering_status.*Using index' ||
    fail "ordering check not on ix_outbox_ordering_status: $(cat "$TEST_TMP/explain")"

# A FAILED row blocks its key; a keyless row and another key go through.
mysql_q "DELETE FROM outbox_messages"
assert_exit 0 cg outbox enqueue --channel strict --type t --key blocked --payload '{"n":1}'
assert_exit 0 cg outbox enqueue --channel hook --type t --key blocked --payload '{"n":2}'
assert_exit 0 cg outbox enqueue --channel hook --type t --payload '{"n":3}'
assert_exit 0 cg outbox dispatch
assert_exit 0 cg outbox dispatch
assert_eq "FAILED PENDING" "$(mysql_q "SELECT status FROM outbox_messages
    WHERE ordering_key = 'blocked' ORDER BY id" | tr '\n' ' ' | sed 's/ $//')" "blocked key"
assert_eq SENT "$(mysql_q "SELECT status FROM outbox_messages WHERE ordering_key IS NULL")" \
    "keyless row"
echo "PASS: $TEST_NAME"
