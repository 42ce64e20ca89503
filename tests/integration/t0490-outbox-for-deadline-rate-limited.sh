#!/bin/sh
# `outbox dispatch --for` keeps its deadline with a rate-limited backlog:
# rate = 20 and 200 due rows, --for 3s ends within 3.5 s (the deadline is
# checked within a pass, and no more rows are claimed than the rate can
# send before it), about 3 s worth of rows are sent, and every row not sent
# is PENDING with no attempt counted (released as SEND_NONE, if claimed; a
# released row keeps its last claim_token, which the next claim replaces).
# Control: the same backlog without --for (drain mode, no deadline) runs
# until everything is sent, at the rate.
# Cases: setup; --for 3s; drain mode.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
setup()
{
	write_config "$CONF" "
	outbox = { batch_size = 100; poll_interval = \"200ms\"; };
	channels = {
	  hook = { type = \"http\"; url = \"$HTTP_BASE/rl\"; concurrency = 4; rate = 20.0; };
	};"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'hook', 't', JSON_OBJECT('i', seq) FROM seq_1_to_200"
}
test_expect_success 'setup: rate 20, 200 due rows' setup

deadline()
{
	local t0 t1 el sent
	t0=$("$LIB_PY" -c 'import time; print(time.monotonic())')
	assert_exit 0 cg -v outbox dispatch --for 3s
	t1=$("$LIB_PY" -c 'import time; print(time.monotonic())')
	el=$("$LIB_PY" -c "print('%.2f' % ($t1 - $t0))")
	sent=$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'SENT'")
	echo "--for 3s: ran ${el}s, sent $sent of 200"
	"$LIB_PY" -c "import sys; sys.exit(0 if $el < 3.5 else 1)" ||
	    fail "--for 3s ran ${el}s"
	# 20/s for just under 3 s (the first slot is at once)
	[ "$sent" -ge 50 ] && [ "$sent" -le 61 ] || fail "sent $sent, expected 50..61"
	assert_eq "$sent" "$(http_count "/$TEST_ID/rl")" "requests"
	assert_eq "$((200 - sent))" "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status = 'PENDING' AND attempts = 0")" \
	    "unsent rows PENDING, no attempt counted"
	assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status <> 'SENT' AND attempts > 0")" "attempts on unsent rows"
	assert_grep "event=outbox_dispatched sent=$sent retried=0 failed=0" "$ERR"
	echo "$sent" > "$TEST_TMP/sent"
}
test_expect_success '--for 3s keeps its deadline; the rows not sent PENDING, unattempted' \
    deadline

# Drain mode has no deadline: it sends the rest at the rate.
drain()
{
	local left t0 t1 el
	left=$((200 - $(cat "$TEST_TMP/sent")))
	t0=$("$LIB_PY" -c 'import time; print(time.monotonic())')
	assert_exit 0 cg outbox dispatch
	t1=$("$LIB_PY" -c 'import time; print(time.monotonic())')
	el=$("$LIB_PY" -c "print('%.2f' % ($t1 - $t0))")
	echo "drain: ran ${el}s for $left rows"
	assert_eq 200 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'SENT' AND attempts = 1")" \
	    "all sent once"
	"$LIB_PY" -c "import sys; sys.exit(0 if $el >= ($left - 1) / 20.0 * 0.85 else 1)" ||
	    fail "drain of $left rows at 20/s took only ${el}s"
}
test_expect_success 'drain mode has no deadline: the rest at the rate' drain

test_done
