#!/bin/sh
# SIGTERM mid-batch: the dispatcher starts nothing new, lets the requests
# in flight finish, puts the claimed but unsent rows back to PENDING at
# once with no attempt counted, and exits 0 without waiting for the lease.
# SIGUSR1, SIGUSR2 and SIGPIPE before it do not stop it.  t0461 sources
# this script with STOP_SIGNAL=HUP.
# Cases: setup; the signals; the rows after.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
: "${STOP_SIGNAL:=TERM}"
need_servers
setup()
{
	write_config "$CONF" "
	outbox = { batch_size = 20; lease = \"10m\"; };
	channels = {
	  hook = { type = \"http\"; url = \"$HTTP_BASE/slow/delay=1500\"; concurrency = 2; timeout = \"5s\"; };
	};"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'hook', 't', JSON_OBJECT('n', seq) FROM seq_1_to_20"
}
test_expect_success 'setup: 20 messages to a server taking 1.5 s, db migrate' \
    setup

signals()
{
	local pid t0 t1 rc
	"$CRONGUARD_BIN" -c "$CONF" -v outbox dispatch > "$TEST_TMP/d.out" 2> "$TEST_TMP/d.err" &
	pid=$!
	wait_for 10 sh -c "[ \$(grep -c '/$TEST_ID/slow' '$HTTP_LOG') -ge 2 ]"
	assert_eq 20 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'PROCESSING'")" \
	    "claimed before the signal"

	kill -USR1 "$pid"
	kill -USR2 "$pid"
	kill -PIPE "$pid"
	sleep 0.3
	kill -0 "$pid" 2>/dev/null ||
	    fail "SIGUSR1/SIGUSR2/SIGPIPE stopped the dispatcher ($(cat "$TEST_TMP/d.err"))"
	if grep -q 'event=outbox_dispatch_stopped' "$TEST_TMP/d.err"; then
	    fail "SIGUSR1/SIGUSR2/SIGPIPE were taken as a stop request"
	fi

	t0=$(date +%s)
	kill -"$STOP_SIGNAL" "$pid"
	rc=0
	wait "$pid" || rc=$?
	t1=$(date +%s)
	assert_eq 0 "$rc" "exit status after SIG$STOP_SIGNAL ($(cat "$TEST_TMP/d.err"))"
	[ $((t1 - t0)) -le 4 ] || fail "took $((t1 - t0)) s to stop"
	assert_grep 'event=outbox_dispatch_stopped' "$TEST_TMP/d.err"
}
test_expect_success "SIGUSR1, SIGUSR2, SIGPIPE do not stop the dispatcher; SIG$STOP_SIGNAL does, exit 0" \
    signals

rows()
{
	assert_eq 2 "$(http_count "/$TEST_ID/slow")" "requests started"
	assert_eq 2 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'SENT' AND attempts = 1")" \
	    "in-flight requests finished"
	assert_eq 18 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status = 'PENDING' AND attempts = 0 AND next_attempt_at <= NOW(6)")" \
	    "unsent rows back to PENDING, no attempt counted"
	assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'PROCESSING'")" "none PROCESSING"
}
test_expect_success 'the requests in flight finished; the unsent rows PENDING, no attempt counted' \
    rows

test_done
