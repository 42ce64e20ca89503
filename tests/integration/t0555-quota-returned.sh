#!/bin/sh
# Reserved-but-unsent quota always goes back: a slow rate holds most of
# each pass back, two dispatchers run many short passes side by side (and
# one is stopped by SIGTERM), and quota_used stays equal to the number of
# messages sent.
# Cases: setup; one-shot passes; --for and SIGTERM; the quota used up.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
export CRONGUARD_SQLDIR="${CRONGUARD_SQLDIR:-$CRONGUARD_SRCDIR/sql}"
enqueue() {
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'mail', 'quota', JSON_OBJECT('to', CONCAT('u', seq, '@$MAIL_DOMAIN'), 'text', 'x')
	    FROM seq_1_to_$1"
}

quota_used() {
	mysql_q "SELECT IF(quota_day = UTC_DATE(), quota_used, 0) FROM cronguard_channels WHERE name = 'mail'"
}
sent() {
	mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'SENT'"
}

setup()
{
	write_config "$CONF" "outbox = { batch_size = 50; poll_interval = \"100ms\"; };
	channels = { mail = { type = \"smtp\"; url = \"$SMTP_URL\"; from = \"noreply@example.com\";
	  connections = 2; rate = 2.0; daily_quota = 500; }; };"
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: rate 2, daily_quota 500' setup

one_shot()
{
	local i a b s
	# A one-shot pass reserves a batch of quota and the slots of one rate
	# horizon, sends the one due row, and its next batch finds the rate
	# used up: that batch's quota must go back too.
	i=0
	while [ $i -lt 6 ]; do
		enqueue 1
		cg outbox dispatch > "$TEST_TMP/a.out" 2>&1 & a=$!
		cg outbox dispatch > "$TEST_TMP/b.out" 2>&1 & b=$!
		wait $a || { cat "$TEST_TMP/a.out"; fail "dispatcher a failed"; }
		wait $b || { cat "$TEST_TMP/b.out"; fail "dispatcher b failed"; }
		i=$((i + 1))
	done
	s=$(sent)
	[ "$s" -gt 0 ] || fail "nothing was sent"
	assert_eq "$s" "$(quota_used)" "quota_used after one-shot passes ($s sent)"
}
test_expect_success 'one-shot passes side by side give back what they do not send' \
    one_shot

deadline()
{
	local a b s
	# Passes with a deadline, more rows than the rate lets through, and one
	# dispatcher stopped by SIGTERM mid-pass.
	enqueue 20
	cg outbox dispatch --for 2s > "$TEST_TMP/a.out" 2>&1 & a=$!
	"$CRONGUARD_BIN" -c "$CONF" -v outbox dispatch --for 10s > "$TEST_TMP/b.out" 2>&1 & b=$!
	sleep 1
	kill -TERM $b
	wait $a || { cat "$TEST_TMP/a.out"; fail "dispatcher a failed"; }
	wait $b || true
	grep -q "event=outbox_dispatch_stopped" "$TEST_TMP/b.out" ||
	    { cat "$TEST_TMP/b.out"; fail "dispatcher b was not stopped by SIGTERM"; }
	s=$(sent)
	assert_eq "$s" "$(quota_used)" "quota_used after --for and SIGTERM ($s sent)"
	assert_eq "$s" "$(smtp_count)" "received"
	assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'CLAIMED'")" "rows left claimed"
}
test_expect_success 'passes with a deadline, one stopped by SIGTERM: quota_used = sent' \
    deadline

# With the day's quota used up a pass logs one quota_exhausted warning.
exhausted()
{
	enqueue 1
	mysql_q "UPDATE cronguard_channels SET quota_used = 500 WHERE name = 'mail'"
	assert_exit 0 cg outbox dispatch
	assert_eq 1 "$(grep -c 'level=warn event=quota_exhausted channel=mail' "$ERR")" "quota_exhausted lines"
}
test_expect_success 'with the quota used up a pass logs one quota_exhausted' \
    exhausted

test_done
