#!/bin/sh
# Fencing: dispatcher A claims and is frozen mid-send past its lease; B
# recovers and re-claims the rows and delivers them.  A's late finalise
# changes nothing (claim_token fence) and reports outbox_lease_lost.
# The race is asserted to have happened (A's sends completed, A finalised
# after B had re-claimed and finalised: lost=N in A's summary).  That
# outbox_finalise's own statements change a stale claim's rows without
# the claim_token fence is shown by test_finalise_fenced in
# tests/unit/check_outbox_live.c, which drives the code's finalise.
# Cases: setup; B recovers from a frozen A; A's late finalise.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
N=10
conf() {
	write_config "$1" "
outbox = { lease = \"2s\"; watchdog = \"1h\"; };
channels = {
  hook = { type = \"http\"; url = \"$HTTP_BASE/$2\"; timeout = \"1500ms\"; concurrency = 10; };
};"
}
setup()
{
	conf "$CONF" "b"
	conf "$TEST_TMP/a.conf" "a/delay=500"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'hook', 'test.event', JSON_OBJECT('n', seq) FROM seq_1_to_$N"
}
test_expect_success 'setup: ten messages, two dispatchers'"'"' configurations' \
    setup

recovered()
{
	local apid tokA tokB sentB
	"$CRONGUARD_BIN" -c "$TEST_TMP/a.conf" -v outbox dispatch > "$TEST_TMP/a.out" 2> "$TEST_TMP/a.err" &
	apid=$!
	at_exit "kill -CONT $apid 2>/dev/null; kill $apid 2>/dev/null"
	wait_for 10 sh -c "[ \$(grep -c '/$TEST_ID/a/' '$HTTP_LOG') -ge $N ]"
	kill -STOP "$apid"
	tokA=$(mysql_q "SELECT DISTINCT claim_token FROM outbox_messages")
	sleep 2.5

	assert_exit 0 cg -v outbox dispatch
	assert_grep "event=outbox_recovered count=$N" "$ERR"
	assert_eq "$N" "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status = 'SENT' AND attempts = 2")" "B delivered"
	tokB=$(mysql_q "SELECT DISTINCT claim_token FROM outbox_messages")
	[ "$tokA" != "$tokB" ] || fail "B did not re-claim with a new token"
	sentB=$(mysql_q "SELECT GROUP_CONCAT(sent_at ORDER BY id) FROM outbox_messages")
	printf '%s\n' "$tokA" > "$TEST_TMP/tokA"
	printf '%s\n' "$tokB" > "$TEST_TMP/tokB"
	printf '%s\n' "$sentB" > "$TEST_TMP/sentB"

	kill -CONT "$apid"
	wait "$apid" || fail "A exited $?: $(cat "$TEST_TMP/a.err")"
}
test_expect_success 'A frozen past its lease: B recovers, re-claims and delivers' \
    recovered

fenced()
{
	local tokA tokB sentB
	tokA=$(cat "$TEST_TMP/tokA")
	tokB=$(cat "$TEST_TMP/tokB")
	sentB=$(cat "$TEST_TMP/sentB")
	assert_grep 'event=outbox_lease_lost' "$TEST_TMP/a.err"
	assert_grep "claim token $tokA" "$TEST_TMP/a.err"
	# A's requests reached the server and its finalise ran, after B's: every
	# row of it lost, none written (nor counted as sent or retried)
	assert_eq "$N" "$(http_count "/$TEST_ID/a/")" "A's requests"
	assert_grep "event=outbox_dispatched sent=0 retried=0 failed=0 released=0 lost=$N " "$TEST_TMP/a.err"
	# A's results were discarded: B's final state is untouched
	assert_eq "$N" "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status = 'SENT' AND attempts = 2 AND claim_token = '$tokB'")" \
	    "final states after A's late finalise"
	assert_eq "$sentB" "$(mysql_q "SELECT GROUP_CONCAT(sent_at ORDER BY id) FROM outbox_messages")" \
	    "sent_at unchanged"
}
test_expect_success 'A'"'"'s late finalise changes nothing and reports outbox_lease_lost' \
    fenced

test_done
