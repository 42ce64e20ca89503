#!/bin/sh
# Channel pause in the database (cronguard-outbox(7), PAUSING A CHANNEL):
# two dispatchers with their own configurations ("two hosts") deliver a
# slow backlog; one outbox pause stops both within one pass: their sends
# in flight finish, nothing more is claimed, the paused rows stay PENDING
# with no attempt counted.  outbox check names the pause (who, since
# when, why) in all three formats.  outbox resume: the rest is delivered,
# every message exactly once.  A pause --for ends by itself.
# Cases: setup; the pause stops both dispatchers; outbox check names it;
# another channel goes on; resume; every message once; pause --for.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers

CONF2=$TEST_TMP/host2.conf
body="
outbox = { batch_size = 2; pipeline = 1; poll_interval = \"100ms\"; };
channels = {
  hook = { type = \"http\"; url = \"$HTTP_BASE/hook/delay=150\"; concurrency = 2; };
  other = { type = \"http\"; url = \"$HTTP_BASE/other\"; };
};"
count() { mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE $1"; }
# has WHERE OP N: the count of rows matching WHERE compares OP N.
has() { test "$(count "$1")" "$2" "$3"; }

setup()
{
	write_config "$CONF" "$body"
	write_config "$CONF2" "$body"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'hook', 't', JSON_OBJECT('i', seq) FROM seq_1_to_60"
}
test_expect_success 'setup: two hosts'"'"' configurations, 60 rows to a slow channel' \
    setup

cg outbox dispatch --for 60s > "$TEST_TMP/out.1" 2> "$TEST_TMP/err.1" &
p1=$!
"$CRONGUARD_BIN" -c "$CONF2" outbox dispatch --for 60s > "$TEST_TMP/out.2" 2> "$TEST_TMP/err.2" &
p2=$!
at_exit "kill $p1 $p2 2>/dev/null || :"

paused()
{
	local sent pending
	wait_for 20 has "status = 'SENT'" -ge 6

	assert_exit 0 cg outbox pause --reason "template fix" hook
	# Within one pass: the batches in flight end, nothing more is claimed.
	wait_for 10 has "status = 'PROCESSING'" -eq 0
	sent=$(count "status = 'SENT'")
	sleep 2
	assert_eq "$sent" "$(count "status = 'SENT'")" "SENT rows while paused"
	assert_eq 0 "$(count "status = 'PROCESSING'")" "claims while paused"
	pending=$(count "status = 'PENDING'")
	[ "$pending" -gt 0 ] || fail "nothing left PENDING to show the pause"
	assert_eq 0 "$(count "status = 'PENDING' AND attempts > 0")" "attempts counted while paused"
	kill -0 $p1 && kill -0 $p2 || fail "a dispatcher stopped"
}
test_expect_success 'one pause stops both dispatchers within one pass' paused

named()
{
	assert_exit 0 cg outbox check --format json
	assert_grep '"paused": ?\[\{"channel": ?"hook", ?"since": ?"[0-9-]+ [0-9:.]+", ?"by": ?"[^"]+@[^"]+:[0-9]+", ?"paused_for_seconds": ?[0-9]+, ?"reason": ?"template fix", ?"until": ?null\}\]' "$OUT"
	assert_exit 0 cg outbox check
	assert_grep 'paused=hook\(since [0-9-]+ [0-9:.]+ by .*@.*: template fix\)' "$OUT"
	assert_exit 0 cg outbox check --format prometheus
	assert_grep '^cronguard_outbox_channel_paused\{channel="hook"\} [0-9]+$' "$OUT"
}
test_expect_success 'outbox check names the pause in all three formats' named

# Another channel goes on meanwhile.
other()
{
	assert_exit 0 cg outbox enqueue --channel other --type t --payload '{"o":1}'
	wait_for 10 has "channel = 'other' AND status = 'SENT'" -eq 1
}
test_expect_success 'another channel goes on meanwhile' other

resumed()
{
	assert_exit 0 cg outbox resume hook
	assert_grep '^1 channel resumed$' "$OUT"
	wait_for 40 has "status = 'SENT'" -eq 61
}
test_expect_success 'resume: the rest is delivered' resumed

kill $p1 $p2 2>/dev/null || :
wait $p1 || :
wait $p2 || :

once()
{
	grep -l 'level=error' "$TEST_TMP"/err.* && fail "a dispatcher logged an error"
	assert_eq 60 "$(http_count "/$TEST_ID/hook/")" "hook requests"
	assert_eq 60 "$(http_requests "/$TEST_ID/hook/" | "$LIB_PY" -c '
import json, sys
print(len({json.loads(l)["headers"]["webhook-id"] for l in sys.stdin}))')" "distinct hook messages"
	assert_eq 60 "$(count "channel = 'hook' AND attempts = 1")" "one attempt each"
}
test_expect_success 'every hook message sent exactly once, no error logged' once

# A pause with --for ends by itself; a misspelt channel is refused.
pause_for()
{
	assert_exit 0 cg outbox pause --for 1s hook other
	assert_grep '^2 channels paused$' "$OUT"
	sleep 1.5
	assert_exit 0 cg outbox check --format json
	assert_grep '"paused": ?\[\]' "$OUT"
	assert_exit 64 cg outbox pause hoook
	assert_grep 'hoook: no such channel' "$ERR"
	assert_exit 64 cg outbox pause --for 0s hook
}
test_expect_success 'a pause --for ends by itself; a misspelt channel is refused' \
    pause_for

test_done
