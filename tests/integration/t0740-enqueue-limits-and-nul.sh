#!/bin/sh
# outbox enqueue: a channel, type or ordering key longer than its column
# (64, 128, 191 characters) is bad input, exit 65 naming the option, not
# "database unavailable" (69).  A payload that is valid JSON with \u0000
# in a string is accepted by enqueue and delivered by the HTTP channel
# (the body as stored), not FAILED as "not a JSON object or array"; so is
# one with an integer beyond 64 bits (jansson's json_int_t), which MariaDB
# stores as valid JSON: it is not FAILED as "too big integer".
# Cases: setup; values longer than their columns; \u0000 and a big integer.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers

# rep N CHAR: CHAR N times.
rep() { printf "%${1}s" "" | tr ' ' "$2"; }

setup()
{
	write_config "$CONF" "
channels = { hook = { type = \"http\"; url = \"$HTTP_BASE/ok\"; }; };"
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: an HTTP channel, db migrate' setup

too_long()
{
	assert_exit 65 cg outbox enqueue --channel "$(rep 65 c)" --type t --payload '{}'
	assert_grep '--channel is 65 characters long, at most 64' "$ERR"
	assert_exit 65 cg outbox enqueue --channel hook --type "$(rep 129 t)" --payload '{}'
	assert_grep '--type is 129 characters long, at most 128' "$ERR"
	assert_exit 65 cg outbox enqueue --channel hook --type t --key "$(rep 192 k)" --payload '{}'
	assert_grep '--key is 192 characters long, at most 191' "$ERR"
	# Characters, not bytes: 191 two-byte characters fit.
	assert_exit 0 cg outbox enqueue --channel hook --type t \
	    --key "$(rep 191 k | sed 's/k/é/g')" --payload '{"n": 1}'
	assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE channel <> 'hook'")"
}
test_expect_success 'a channel, type or key longer than its column: exit 65 naming it' \
    too_long

sent_as_stored()
{
	local BIG
	assert_exit 0 cg outbox enqueue --channel hook --type t --payload '{"a": "x\u0000y"}'
	BIG='{"wei": 123456789012345678901234567890}'
	assert_exit 0 cg outbox enqueue --channel hook --type t --payload "$BIG"
	assert_exit 0 cg outbox dispatch
	assert_eq "SENT SENT SENT" "$(mysql_q "SELECT status FROM outbox_messages ORDER BY id" | tr '\n' ' ' | sed 's/ $//')" "states"
	assert_eq 3 "$(http_count)" "requests sent"
	http_field body | grep -qF 'x\u0000y' || fail "body with \\u0000 not sent as stored"
	http_field body | grep -qF '123456789012345678901234567890' ||
	    fail "body with a 30-digit integer not sent as stored"
}
test_expect_success 'payloads with \u0000 and a 30-digit integer are sent as stored' \
    sent_as_stored

test_done
