#!/bin/sh
# Rate slots reserved but not sent in go back like quota: after one-shot
# passes that each send one row, the channel's next free slot (rate_tat)
# is at most one slot ahead of the database clock, and every pass sends
# its row (no pass is held back by slots an earlier pass did not use).
# A one-shot dispatch held back only by the rate waits for the next slot
# when that is less than a rate interval away, and exits at once when not.
# Cases: setup; one dispatcher; two; a slot within the interval; one
# beyond the limit.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
export CRONGUARD_SQLDIR="${CRONGUARD_SQLDIR:-$CRONGUARD_SRCDIR/sql}"
enqueue() {
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'mail', 'rate', JSON_OBJECT('to', CONCAT('u', seq, '@$MAIL_DOMAIN'), 'text', 'x')
	    FROM seq_1_to_$1"
}
sent() {
	mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'SENT'"
}
# Microseconds rate_tat is ahead of the database clock (0 when behind).
ahead() {
	mysql_q "SELECT GREATEST(TIMESTAMPDIFF(MICROSECOND, NOW(6), rate_tat), 0)
	    FROM cronguard_channels WHERE name = 'mail'"
}

setup()
{
	write_config "$CONF" "outbox = { batch_size = 50; poll_interval = \"100ms\"; };
	channels = { mail = { type = \"smtp\"; url = \"$SMTP_URL\"; from = \"noreply@example.com\";
	  connections = 2; rate = 2.0; daily_quota = 500; }; };"
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: rate 2, db migrate' setup

# One dispatcher: slot 0 is used, the rest of each reservation goes back.
one()
{
	local i a
	i=0
	while [ $i -lt 5 ]; do
		enqueue 1
		assert_exit 0 cg outbox dispatch
		i=$((i + 1))
		a=$(ahead)
		[ "$a" -le 500000 ] || fail "pass $i: rate_tat ${a}us ahead, more than one slot (500000us): unused slots kept"
		assert_eq $i "$(sent)" "sent after pass $i"
	done
	assert_eq "$(sent)" "$(mysql_q "SELECT quota_used FROM cronguard_channels WHERE name = 'mail'")" "quota_used"
	echo "$i" > "$TEST_TMP/i"
}
test_expect_success 'one dispatcher: slot 0 used, the rest of each reservation back' \
    one

two()
{
	local i a pa pb
	i=$(cat "$TEST_TMP/i")
	# Two dispatchers side by side: every row is sent by its pair of passes,
	# and no reservation is left more than one horizon plus a slot ahead.
	while [ $i -lt 10 ]; do
		enqueue 1
		cg outbox dispatch > "$TEST_TMP/a.out" 2>&1 & pa=$!
		cg outbox dispatch > "$TEST_TMP/b.out" 2>&1 & pb=$!
		wait $pa || { cat "$TEST_TMP/a.out"; fail "dispatcher a failed"; }
		wait $pb || { cat "$TEST_TMP/b.out"; fail "dispatcher b failed"; }
		i=$((i + 1))
		assert_eq $i "$(sent)" "sent after pair $i"
		a=$(ahead)
		[ "$a" -le 1500000 ] || fail "pair $i: rate_tat ${a}us ahead"
	done
	assert_eq "$(sent)" "$(mysql_q "SELECT quota_used FROM cronguard_channels WHERE name = 'mail'")" "quota_used (two dispatchers)"
	echo "$i" > "$TEST_TMP/i"
}
test_expect_success 'two dispatchers: each row sent by its pair, no slot kept' \
    two

waits()
{
	local i
	i=$(cat "$TEST_TMP/i")
	# The rate holds the next slot 1.3 s away (0.3 s beyond the 1 s horizon,
	# within the 0.5 s rate interval): a one-shot dispatch waits and sends.
	enqueue 1
	mysql_q "UPDATE cronguard_channels SET rate_tat = NOW(6) + INTERVAL 1300000 MICROSECOND WHERE name = 'mail'"
	assert_exit 0 cg outbox dispatch
	assert_eq $((i + 1)) "$(sent)" "sent after a wait for the rate"
}
test_expect_success 'the next slot within the rate interval: a one-shot dispatch waits and sends' \
    waits

beyond()
{
	local i t0 t1
	i=$(cat "$TEST_TMP/i")
	# 10 s away: a wait of 9 s, more than the rate interval and the 5 s
	# limit: it does not wait, sends nothing.
	enqueue 1
	mysql_q "UPDATE cronguard_channels SET rate_tat = NOW(6) + INTERVAL 10 SECOND WHERE name = 'mail'"
	t0=$(mysql_q "SELECT UNIX_TIMESTAMP(NOW(6)) * 1000 DIV 1")
	assert_exit 0 cg outbox dispatch
	t1=$(mysql_q "SELECT UNIX_TIMESTAMP(NOW(6)) * 1000 DIV 1")
	assert_eq $((i + 1)) "$(sent)" "sent with the slot beyond the wait limit"
	[ $((t1 - t0)) -lt 5000 ] || fail "dispatch waited $((t1 - t0)) ms for a slot beyond its limit"
}
test_expect_success 'a slot beyond the wait limit: no wait, nothing sent' \
    beyond

test_done
