#!/bin/sh
# `outbox dispatch --for D` keeps its deadline behind a table lock: with
# another session holding LOCK TABLES outbox_messages WRITE for 30 s, every
# blocked statement waits at most until the deadline (the session's lock
# wait timeouts are lowered to the time left: cronguard(1), outbox
# dispatch), not read_timeout and again after each reconnect.
# 1. Locked before the start: --for 4s exits 69 well within 10 s; the 50
#    rows stay PENDING with no attempt; once the lock is gone a dispatch
#    sends each once.
# 2. Locked while a batch is in flight (slow sink): the finalise waits
#    until the deadline, the run exits 69 within 10 s, the rows it sent
#    stay PROCESSING and are recovered after their lease, then sent: no
#    row is left PROCESSING, every row ends SENT.
# Cases: setup; locked before the start; the lock gone; locked mid-batch;
# recovered after the lease.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers

now() { "$LIB_PY" -c 'import time; print(time.monotonic())'; }
elapsed() { "$LIB_PY" -c "import time; print('%.2f' % (time.monotonic() - $1))"; }
# lock_table: another session holds the table write-locked for 30 s (or
# until killed); returns once the lock is held.
locked()
{
	[ "$(mysql_admin "SELECT COUNT(*) FROM information_schema.PROCESSLIST
	    WHERE DB = '$TEST_DB' AND INFO = 'DO SLEEP(30)'")" = 1 ]
}
lock_table()
{
	mysql_q "LOCK TABLES outbox_messages WRITE; DO SLEEP(30);
	    UNLOCK TABLES" >/dev/null 2>&1 &
	locker=$!
	at_exit "kill $locker 2>/dev/null"
	wait_for 5 locked
}
unlock_table() { kill "$locker" 2>/dev/null; wait "$locker" 2>/dev/null || :; }

setup()
{
	write_config "$CONF" "
outbox = { batch_size = 50; lease = \"6s\"; poll_interval = \"200ms\"; };
channels = {
  hook = { type = \"http\"; url = \"$HTTP_BASE/h\"; timeout = \"3s\"; concurrency = 50; };
  slow = { type = \"http\"; url = \"$HTTP_BASE/delay=1500\"; timeout = \"3s\"; concurrency = 50; };
};"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'hook', 't', JSON_OBJECT('i', seq) FROM seq_1_to_50"
}
test_expect_success 'setup: 50 rows to a fast channel, db migrate' setup

# 1. locked before the start
before()
{
	local t0 el
	lock_table
	t0=$(now)
	assert_exit 69 cg outbox dispatch --channel hook --for 4s
	el=$(elapsed "$t0")
	echo "table locked from the start, --for 4s: exit 69 after ${el}s"
	"$LIB_PY" -c "import sys; sys.exit(0 if $el < 10 else 1)" ||
	    fail "--for 4s behind a table lock ran ${el}s"
	unlock_table
	assert_eq "50" "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status = 'PENDING' AND attempts = 0")" "rows PENDING, no attempt"
}
test_expect_success 'locked before the start: --for 4s exits 69 within 10 s, rows PENDING' \
    before

gone()
{
	assert_exit 0 cg outbox dispatch --channel hook
	assert_eq "50 50" "$(mysql_q "SELECT COUNT(*), SUM(attempts = 1) FROM outbox_messages
	    WHERE status = 'SENT'" | tr '\t' ' ')" "sent once each"
	assert_eq 50 "$(http_count "/$TEST_ID/h")" "requests"
}
test_expect_success 'the lock gone: a dispatch sends each row once' gone

# 2. locked while a batch is in flight
claimed()
{
	[ "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status = 'PROCESSING'")" = 20 ]
}
mid_batch()
{
	local t0 disp rc el
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'slow', 't', JSON_OBJECT('i', seq) FROM seq_1_to_20"
	t0=$(now)
	cg outbox dispatch --channel slow --for 4s >"$OUT" 2>"$ERR" &
	disp=$!
	wait_for 5 claimed
	lock_table
	rc=0
	wait "$disp" || rc=$?
	el=$(elapsed "$t0")
	echo "table locked mid-batch, --for 4s: exit $rc after ${el}s"
	cat "$ERR"
	assert_eq 69 "$rc" "exit status"
	"$LIB_PY" -c "import sys; sys.exit(0 if $el < 10 else 1)" ||
	    fail "--for 4s with the finalise behind a table lock ran ${el}s"
	unlock_table
}
test_expect_success 'locked while a batch is in flight: --for 4s exits 69 within 10 s' \
    mid_batch

# What was sent and not finalised waits for its lease, then goes again.
recovered()
{
	assert_eq 20 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE channel = 'slow' AND status = 'PROCESSING'")" "in flight at the lock"
	sleep 6
	assert_exit 0 cg outbox dispatch --channel slow
	assert_grep "event=outbox_recovered count=20" "$ERR"
	assert_eq "0" "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status <> 'SENT'")" "rows not SENT"
}
test_expect_success 'what was in flight is recovered after its lease, then sent' \
    recovered

test_done
