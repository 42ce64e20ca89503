#!/bin/sh
# Per-key ordering (CONTRACT 6.5): 3 keys x 50 messages, every message's
# first delivery fails (503) and is retried; per key the server still sees
# the messages in id order: a row is not claimed while an earlier row of
# its key is PENDING, PROCESSING or FAILED.  A FAILED row blocks its key
# until retried; rows without a key are not held up.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
write_config "$CONF" "
outbox = { batch_size = 20; ordering = \"per_key\"; max_attempts = 5;
           backoff = { initial = \"1ms\"; jitter = 0.0; }; };
channels = {
  hook = { type = \"http\"; url = \"$HTTP_BASE/ord/fail-first=1\"; concurrency = 8; };
  strict = { type = \"http\"; url = \"$HTTP_BASE/strict/status=400\"; };
};"
assert_exit 0 cg db migrate
mysql_q "INSERT INTO outbox_messages (channel, event_type, ordering_key, payload)
    SELECT 'hook', 't', CONCAT('k', seq % 3), JSON_OBJECT('k', CONCAT('k', seq % 3), 'i', seq)
    FROM seq_1_to_150"

i=0
while [ "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status <> 'SENT'")" -gt 0 ]; do
	i=$((i + 1))
	[ $i -le 400 ] || fail "not drained after $i passes"
	assert_exit 0 cg outbox dispatch
done
assert_eq 150 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'SENT' AND attempts = 2")" \
    "all SENT after one retry each"
assert_eq 300 "$(http_count "/$TEST_ID/ord/")" "requests (one failure and one success each)"

http_requests "/$TEST_ID/ord/" > "$TEST_TMP/req"
/usr/bin/python3 - "$TEST_TMP/req" <<'PY' || fail "per-key order violated"
import json, sys
seen, ok = {}, {}
for line in open(sys.argv[1], encoding="utf-8"):
    r = json.loads(line)
    b = json.loads(r["body"])
    seen.setdefault(b["k"], []).append(b["i"])
    if r["status"] == 200:
        ok.setdefault(b["k"], []).append(b["i"])
bad = False
for k in sorted(seen):
    if seen[k] != sorted(seen[k]):
        print(k, "attempt order", seen[k], file=sys.stderr); bad = True
    if ok[k] != sorted(set(ok[k])) or len(ok[k]) != 50:
        print(k, "delivery order", ok[k], file=sys.stderr); bad = True
sys.exit(1 if bad else 0)
PY

# A FAILED row blocks its key; a keyless row and another key go through.
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
