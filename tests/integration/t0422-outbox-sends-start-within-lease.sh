#!/bin/sh
# A claim's lease covers its sends: a message whose send could not end
# before the claim's lease runs out (not started within lease - timeout of
# the claim) is not started but released, unsent and with no attempt
# counted, for a fresh claim.  Otherwise a batch queued behind a slow
# server (batch 6, one request at a time, 400 ms each: 2.4 s) outlives
# its 2 s lease, a second dispatcher recovers the whole batch (counting
# an attempt) and sends it again while the first is still sending it.
# Cases: setup; two dispatchers; every row sent once; no claim past its
# lease.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
N=6
setup()
{
	write_config "$CONF" "
	outbox = { lease = \"2s\"; watchdog = \"1h\"; batch_size = $N; poll_interval = \"100ms\"; };
	channels = {
	  hook = { type = \"http\"; url = \"$HTTP_BASE/delay=400\"; timeout = \"1500ms\"; concurrency = 1; };
	};"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'hook', 'test.event', JSON_OBJECT('n', seq) FROM seq_1_to_$N"
}
test_expect_success 'setup: six messages, a server taking 400 ms a request' \
    setup

two()
{
	local apid
	# A drains; B polls beside it and recovers whatever A holds past the lease.
	"$CRONGUARD_BIN" -c "$CONF" -v outbox dispatch > "$TEST_TMP/a.out" 2> "$TEST_TMP/a.err" &
	apid=$!
	at_exit "kill $apid 2>/dev/null"
	wait_for 5 sh -c "[ \$(grep -c '/$TEST_ID/' '$HTTP_LOG') -ge 1 ]"
	assert_exit 0 cg -v outbox dispatch --for 4s
	wait "$apid" || fail "A exited $?: $(cat "$TEST_TMP/a.err")"
}
test_expect_success 'A drains, B polls beside it for 4 s' two

sent_once()
{
	# for the test log: the rows and both dispatchers' summaries
	mysql_q "SELECT id, status, attempts, last_error FROM outbox_messages ORDER BY id"
	grep -hE 'event=outbox_(recovered|lease_lost|dispatched)' "$TEST_TMP/a.err" "$ERR" || :

	assert_eq "$N" "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status = 'SENT' AND attempts = 1")" "all SENT at the first attempt"
	assert_eq "$N" "$(http_count)" "requests"
	assert_eq "$N" "$(http_field headers.webhook-id | sort -u | wc -l | tr -d ' ')" \
	    "distinct message ids received"
}
test_expect_success 'every row SENT at the first attempt, each id once' \
    sent_once

in_lease()
{
	if grep -E 'event=(outbox_recovered|outbox_lease_lost)' "$TEST_TMP/a.err" "$ERR"; then
		fail "a claim outlived its lease"
	fi
	# A left what it could not start in time to a fresh claim
	grep -qE 'event=outbox_dispatched .*released=[1-9]' "$TEST_TMP/a.err" "$ERR" ||
	    fail "nothing was released: $(cat "$TEST_TMP/a.err" "$ERR")"
}
test_expect_success 'no claim outlived its lease; A released what it could not start' \
    in_lease

test_done
