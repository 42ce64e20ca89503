#!/bin/sh
# 5,000 messages, nothing failing: one dispatch delivers every message id
# exactly once, every row ends SENT with one attempt, and each request
# carries the cronguard-outbox(7) HTTP PAYLOAD headers with a Standard Webhooks signature that
# verifies, plus the configured custom header.
# Cases: setup; one dispatch; each id once; headers and signatures;
# connections reused; a second pass.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
N=5000
SECRET=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
printf '%s\n' "$SECRET" > "$TEST_TMP/secret"
chmod 600 "$TEST_TMP/secret"
setup()
{
	write_config "$CONF" "
	outbox = { batch_size = 100; };
	channels = {
	  hook = { type = \"http\"; url = \"$HTTP_BASE/ok\"; concurrency = 8;
	           timeout = \"10s\"; headers = [ \"X-Test: $TEST_ID\" ];
	           signing_secret_file = \"$TEST_TMP/secret\"; };
	};"
	assert_exit 0 cg db migrate

	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'hook', 'test.event', JSON_OBJECT('n', seq, 'pad', REPEAT('x', 150))
	    FROM seq_1_to_$N"
}
test_expect_success 'setup: an HTTP channel, db migrate, 5,000 messages' setup

dispatch()
{
	assert_exit 0 cg -v outbox dispatch
	assert_grep "event=outbox_dispatched sent=$N retried=0 failed=0" "$ERR"
	assert_eq "$N" "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status = 'SENT' AND attempts = 1 AND sent_at IS NOT NULL")" "rows SENT"
}
test_expect_success 'one dispatch sends every message: SENT, one attempt each' \
    dispatch

# every message id exactly once, and nothing else
each_once()
{
	http_field headers.webhook-id | sort > "$TEST_TMP/got"
	mysql_q "SELECT message_id FROM outbox_messages" | sort > "$TEST_TMP/want"
	assert_eq "$N" "$(wc -l < "$TEST_TMP/got" | tr -d ' ')" "requests received"
	assert_eq "" "$(uniq -d "$TEST_TMP/got")" "ids received twice"
	cmp -s "$TEST_TMP/got" "$TEST_TMP/want" || fail "received ids differ from the table"
}
test_expect_success 'every message id received exactly once, nothing else' \
    each_once

# headers and signatures (HMAC over "id.timestamp.body", whsec_ key)
signed()
{
	http_requests > "$TEST_TMP/requests"
	/usr/bin/python3 - "$TEST_TMP/requests" "$SECRET" "$TEST_ID" <<'PY' || fail "header check failed"
import base64, hashlib, hmac, json, sys
key = base64.b64decode(sys.argv[2][len("whsec_"):])
bad = 0
for line in open(sys.argv[1], encoding="utf-8"):
    r = json.loads(line)
    h = r["headers"]
    mid = h["webhook-id"]
    ok = (r["method"] == "POST"
          and h.get("content-type") == "application/json"
          and h.get("idempotency-key") == mid
          and h.get("x-test") == sys.argv[3]
          and json.loads(r["body"])["n"] > 0)
    ts = h["webhook-timestamp"]
    mac = hmac.new(key, f"{mid}.{ts}.{r['body']}".encode(), hashlib.sha256)
    want = "v1," + base64.b64encode(mac.digest()).decode()
    if not ok or h.get("webhook-signature") != want:
        bad += 1
        if bad < 3:
            print("bad request:", line.strip(), "want", want, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}
test_expect_success 'each request has the headers and a signature that verifies' \
    signed

# connections were reused: far fewer connections than requests
reused()
{
	local conns
	conns=$(http_field conn | sort -u | wc -l | tr -d ' ')
	[ "$conns" -le 8 ] || fail "expected at most 8 connections, saw $conns"
}
test_expect_success 'connections reused: at most 8' reused

# nothing left to do: a second pass sends nothing
second_pass()
{
	assert_exit 0 cg outbox dispatch
	assert_eq "$N" "$(http_count)" "requests after a second pass"
}
test_expect_success 'a second pass sends nothing' second_pass

test_done
