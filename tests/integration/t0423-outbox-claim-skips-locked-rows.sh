#!/bin/sh
# Another dispatcher's claim transaction, held open on some rows (here a
# mysql client: BEGIN; SELECT ... FOR UPDATE; then a sleep), does not hold
# up a dispatcher: it skips the locked rows (FOR UPDATE SKIP LOCKED),
# delivers every other due row at once and exits while the other
# transaction is still open; the locked rows stay PENDING, unattempted.
# Without SKIP LOCKED the claim waits for the lock (until the holder
# commits, or innodb_lock_wait_timeout) and this test fails.
#
# Shown failing without the guard: with " FOR UPDATE" instead of
# " FOR UPDATE SKIP LOCKED" in src/outbox.c the dispatcher waited 30.2 s
# (the holder's whole sleep) and the test failed.
# Cases: setup; a dispatch beside a held claim; after it ends.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
HOLD=30
# its connection, once the rows are locked and it sleeps
holder_id() {
	mysql_admin "SELECT id FROM information_schema.processlist
	    WHERE db = '$TEST_DB' AND info LIKE 'SELECT SLEEP%'"
}
holder_sleeps() { [ -n "$(holder_id)" ]; }
setup()
{
	write_config "$CONF" "
	channels = {
	  hook = { type = \"http\"; url = \"$HTTP_BASE/h\"; concurrency = 4; };
	};"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'hook', 't', JSON_OBJECT('i', seq) FROM seq_1_to_10"
}
test_expect_success 'setup: ten messages, db migrate' setup

skips()
{
	local holder hid t0 t1 el
	# The oldest three rows, locked by another dispatcher's claim (its
	# session and its locking SELECT, src/outbox.c claim_txn).
	mysql_q "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED;
	    BEGIN;
	    SELECT o.id FROM outbox_messages o FORCE INDEX (ix_outbox_due)
	    WHERE o.status = 'PENDING' AND o.next_attempt_at <= NOW(6)
	    ORDER BY o.next_attempt_at, o.id LIMIT 3 FOR UPDATE SKIP LOCKED;
	    SELECT SLEEP($HOLD);
	    COMMIT" > /dev/null 2>&1 &
	holder=$!
	at_exit "kill $holder 2>/dev/null"
	wait_for 10 holder_sleeps
	hid=$(holder_id)
	at_exit "mysql_admin 'KILL $hid' 2>/dev/null"
	echo "$holder" > "$TEST_TMP/holder"
	echo "$hid" > "$TEST_TMP/hid"

	t0=$("$LIB_PY" -c 'import time; print(time.monotonic())')
	assert_exit 0 cg -v outbox dispatch
	t1=$("$LIB_PY" -c 'import time; print(time.monotonic())')
	el=$("$LIB_PY" -c "print('%.2f' % ($t1 - $t0))")
	echo "dispatch beside a held claim: ${el}s"
	kill -0 "$holder" 2>/dev/null ||
	    fail "the dispatcher waited for the other transaction (${el}s)"
	"$LIB_PY" -c "import sys; sys.exit(0 if $el < $HOLD / 2 else 1)" ||
	    fail "dispatch took ${el}s beside a held claim"

	assert_eq 7 "$(http_count "/$TEST_ID/h")" "requests"
	assert_eq "4,5,6,7,8,9,10" "$(mysql_q "SELECT GROUP_CONCAT(id ORDER BY id)
	    FROM outbox_messages WHERE status = 'SENT' AND attempts = 1")" "delivered"
	assert_eq "1,2,3" "$(mysql_q "SELECT GROUP_CONCAT(id ORDER BY id)
	    FROM outbox_messages WHERE status = 'PENDING' AND attempts = 0
	    AND claim_token IS NULL")" "locked rows left alone"
}
test_expect_success 'beside a held claim: the locked rows skipped, the rest sent at once' \
    skips

# Once the other transaction ends, the rows it held are delivered.
after()
{
	local holder hid n
	holder=$(cat "$TEST_TMP/holder")
	hid=$(cat "$TEST_TMP/hid")
	mysql_admin "KILL $hid"
	# killed: its client ends (started by the case before: not a child here)
	n=0
	while lib_running "$holder" && [ "$n" -lt 100 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	assert_exit 0 cg outbox dispatch
	assert_eq 10 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status = 'SENT' AND attempts = 1")" "all delivered"
	assert_eq 10 "$(http_count "/$TEST_ID/h")" "requests in total"
}
test_expect_success 'once the other transaction ends, its rows are delivered' \
    after

test_done
