#!/bin/sh
# Per-key ordering (cronguard-outbox(7), ORDERING): 3 keys x 50 messages, every message's
# first delivery fails (503) and is retried, the first message of each key
# fails twice; per key the server still sees the messages in id order: a
# row is not claimed while an earlier row of its key is PROCESSING or
# FAILED, or PENDING outside the same claim.  Control: the same run with ordering = "none"
# delivers some key out of order (the second message of a key succeeds at
# its retry while the first fails again), so the check above can fail.
# (A claim may hold a run of a key's rows; they are sent one after
# another: t1126.)
# A FAILED row blocks its key until retried; rows without a key are not
# held up.  The ordering subqueries run on ix_outbox_ordering_status
# (doctor's EXPLAIN).  Cases: setup; per key in id order; the control
# with ordering = none; the claim's index dives; a FAILED row blocks its
# key.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

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

test_expect_success SERVERS 'setup: db migrate' '
	conf per_key ord &&
	assert_exit 0 cg db migrate
'

per_key_order()
{
	conf per_key ord
	run ord
	order "$TEST_TMP/req-ord" || fail "per-key order violated"
}
test_expect_success SERVERS 'per key, attempts and deliveries in id order' \
    per_key_order

# The guard shown to matter: without it the same failures reorder a key.
control_none()
{
	conf none ctl
	run ctl
	if order "$TEST_TMP/req-ctl" deliveries; then
		fail "control with ordering = none delivered every key in order"
	fi
}
test_expect_success SERVERS 'control: ordering = none reorders a key' \
    control_none

# The ordering subqueries of the claim (global scope) are dives into the
# index of sql/005: doctor EXPLAINs the statement the dispatcher runs.
claim_index()
{
	conf per_key ord
	cg doctor > "$OUT" 2>&1 || true
	assert_grep '^OK claim_index: .*its 5 ordering subqueries are dives into the ordering index' "$OUT"
}
test_expect_success SERVERS 'the ordering subqueries dive into the ordering index' \
    claim_index

# A FAILED row blocks its key; a keyless row and another key go through.
failed_blocks_key()
{
	conf per_key ord
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
}
test_expect_success SERVERS 'a FAILED row blocks its key, a keyless row goes through' \
    failed_blocks_key

test_done
