#!/bin/sh
# cronguard-outbox(7), RETRIES, for HTTP: 503 is retried later with a growing
# next_attempt_at and attempts; 429 with Retry-After: 5 is not retried
# before 5 s; 400 is FAILED with the server's reason; max_attempts reached
# is FAILED; retry --failed puts it back and it is delivered.
# Cases: setup (one pass); 503; 400; 429; max_attempts and retry --failed;
# a retry by id.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
row() { mysql_q "SELECT $2 FROM outbox_messages WHERE channel = '$1'"; }
# the delay this row was given, in whole seconds, from the database clock
delay() { row "$1" "ROUND(TIMESTAMPDIFF(MICROSECOND, claimed_at, next_attempt_at) / 1e6)"; }
make_due() { mysql_q "UPDATE outbox_messages SET next_attempt_at = NOW(6) WHERE channel = '$1'"; }

setup()
{
	write_config "$CONF" "
	outbox = { max_attempts = 3; poll_interval = \"200ms\";
	           backoff = { initial = \"1s\"; multiplier = 3.0; max = \"1h\"; jitter = 0.0; }; };
	channels = {
	  s503 = { type = \"http\"; url = \"$HTTP_BASE/status=503\"; };
	  s429 = { type = \"http\"; url = \"$HTTP_BASE/status=429/retry-after=5\"; };
	  s400 = { type = \"http\"; url = \"$HTTP_BASE/status=400\"; };
	  flaky = { type = \"http\"; url = \"$HTTP_BASE/flaky/fail-first=3\"; };
	};"
	assert_exit 0 cg db migrate
	for ch in s503 s429 s400 flaky; do
		assert_exit 0 cg outbox enqueue --channel $ch --type t --payload "{\"ch\": \"$ch\"}"
	done
	assert_exit 0 cg outbox dispatch
}
test_expect_success 'setup: four channels, a message each, one pass' setup

# 503: PENDING, one attempt, due about initial (1 s) later
s503()
{
	assert_eq "PENDING 1" "$(row s503 "CONCAT_WS(' ', status, attempts)")" "503 after one pass"
	assert_eq "http 503: {\"error\": \"injected\", \"status\": 503}" "$(row s503 last_error)" "503 last_error"
	assert_eq 1 "$(delay s503)" "first backoff"
	make_due s503
	assert_exit 0 cg outbox dispatch --channel s503
	assert_eq "PENDING 2" "$(row s503 "CONCAT_WS(' ', status, attempts)")" "503 after two passes"
	assert_eq 3 "$(delay s503)" "second backoff grows"
	make_due s503
	assert_exit 0 cg outbox dispatch --channel s503
	assert_eq "FAILED 3" "$(row s503 "CONCAT_WS(' ', status, attempts)")" "503 at max_attempts"
	assert_grep 'gave up after 3 attempts' "$(row s503 last_error > "$TEST_TMP/e"; echo "$TEST_TMP/e")"
}
test_expect_success '503: PENDING, retried later with a growing delay, FAILED at max_attempts' \
    s503

# 400: FAILED at once with the reason
s400()
{
	assert_eq "FAILED 1" "$(row s400 "CONCAT_WS(' ', status, attempts)")" "400"
	assert_eq "http 400: {\"error\": \"injected\", \"status\": 400}" "$(row s400 last_error)" "400 last_error"
}
test_expect_success '400: FAILED at once with the reason' s400

# 429 + Retry-After: 5 beats the 1 s backoff, and nothing is sent before
s429()
{
	local d
	assert_eq "PENDING 1" "$(row s429 "CONCAT_WS(' ', status, attempts)")" "429"
	d=$(row s429 "TIMESTAMPDIFF(MICROSECOND, claimed_at, next_attempt_at)")
	[ "$d" -ge 5000000 ] || fail "429 retried after ${d}us, before Retry-After"
	assert_exit 0 cg outbox dispatch --channel s429 --for 3s
	assert_eq 1 "$(http_count "/$TEST_ID/status=429")" "429 requests within 3 s"
}
test_expect_success '429 with Retry-After: 5: not retried before 5 s' s429

# flaky: fails 3 times (503), FAILED at max_attempts; retry --failed, then OK
flaky()
{
	for _ in 1 2; do
		make_due flaky
		assert_exit 0 cg outbox dispatch --channel flaky
	done
	assert_eq "FAILED 3" "$(row flaky "CONCAT_WS(' ', status, attempts)")" "flaky at max_attempts"
	assert_exit 1 cg outbox check --format json
	assert_grep '^\{"status":"WARNING",.*"failed":3,' "$OUT"
	assert_exit 0 cg outbox retry --failed --channel flaky
	assert_grep '^1 message due now$' "$OUT"
	assert_eq "PENDING 0" "$(row flaky "CONCAT_WS(' ', status, attempts)")" "flaky retried"
	assert_exit 0 cg outbox dispatch --channel flaky
	assert_eq "SENT 1" "$(row flaky "CONCAT_WS(' ', status, attempts)")" "flaky delivered"
	assert_eq 4 "$(http_count "/$TEST_ID/flaky")" "flaky requests"
	# the same message id on every attempt
	assert_eq 1 "$(http_field headers.webhook-id "/$TEST_ID/flaky" | sort -u | wc -l | tr -d ' ')" \
	    "one webhook-id across retries"
}
test_expect_success 'max_attempts reached: FAILED; retry --failed, then delivered' \
    flaky

# retry by id: a FAILED row comes back; an id that is not FAILED is exit 65
by_id()
{
	local id400 idflaky
	id400=$(row s400 id)
	idflaky=$(row flaky id)
	# (an id given twice is one row, not a missing one)
	assert_exit 0 cg outbox retry "$id400" "$id400"
	assert_grep '^1 message due now$' "$OUT"
	assert_eq "PENDING 0" "$(row s400 "CONCAT_WS(' ', status, attempts)")" "400 retried by id"
	assert_exit 65 cg outbox retry "$idflaky"
	assert_grep 'not PENDING, FAILED or CANCELLED' "$ERR"
}
test_expect_success 'retry by id: a FAILED row comes back; another is 65' \
    by_id

test_done
