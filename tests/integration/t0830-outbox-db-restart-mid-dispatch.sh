#!/bin/sh
# MariaDB restarted while a batch is in flight:
# `outbox dispatch` reconnects (one db_reconnected line per reconnect),
# finalises what it already sent and carries on: exit 0, every row SENT,
# no message delivered twice.  Before, it exited 69 at once and its
# in-flight batch went out again after the lease.  Only when the database
# stays away past connect_retry does it exit 69.  And a claim whose COMMIT
# reply was lost is sent only when its token is found committed
# (CRONGUARD_FAULT=commit_lost / commit_lost_before, test builds).
# Cases: setup; a restart mid-dispatch; the database gone; a lost COMMIT
# reply (FAULTS: built with --enable-fault-injection).
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
db_private_start	# restarted below: our own server
N=400
enqueue()
{
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'hook', 'test.event', JSON_OBJECT('n', seq)
	    FROM seq_1_to_$1"
}
# dups: message ids received more than once, in all.
dups()
{
	http_field headers.webhook-id | sort | uniq -d | wc -l | tr -d ' '
}
requests_at_least() { [ "$(http_count)" -ge "$1" ]; }
# age_claims: make every PROCESSING row stale (as after the lease).
age_claims()
{
	mysql_q "UPDATE outbox_messages SET claimed_at = claimed_at -
	    INTERVAL 1 HOUR WHERE status = 'PROCESSING'"
}
setup()
{
	# 50 rows a batch, 10 at a time, 150 ms each: a batch is in flight for
	# about 0.75 s, so a stop lands in one.  The lease leaves a claim 25 s to
	# start its sends (lease - timeout) however long the restart takes on a
	# loaded machine; claims are aged by hand where the test needs them stale.
	write_config "$CONF" "
	outbox = { batch_size = 50; lease = \"30s\"; };
	channels = {
	  hook = { type = \"http\"; url = \"$HTTP_BASE/delay=150\";
	           concurrency = 10; timeout = \"5s\"; };
	};"
	sed -i 's/connect_timeout = "5s";/&\n  connect_retry = "60s";/' "$CONF"
	assert_exit 0 cg db migrate

	enqueue "$N"
}
test_expect_success 'setup: a server of its own, connect_retry 60s, 400 rows' \
    setup

# Restart mid-dispatch.
restart()
{
	local pid rc processing reconnects
	cg -v outbox dispatch > "$TEST_TMP/d1.out" 2> "$TEST_TMP/d1.err" &
	pid=$!
	wait_for 20 requests_at_least 75
	db_private_stop
	sleep 1
	db_private_start
	rc=0
	wait "$pid" || rc=$?
	cat "$TEST_TMP/d1.err" >&2
	processing=$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status = 'PROCESSING'")
	if [ "$rc" -ne 0 ] || [ "$processing" -ne 0 ]; then
		# Without the fix: the stranded batch is re-sent after the lease.
		age_claims
		cg outbox dispatch 2>> "$TEST_TMP/d1.err"
		echo "before the fix: exit $rc, $processing rows left PROCESSING," \
		    "$(dups) messages delivered twice" >&2
	fi
	assert_eq 0 "$rc" "dispatch exit status across a restart"
	assert_eq 0 "$processing" "rows left PROCESSING"
	assert_eq "$N" "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status = 'SENT' AND attempts = 1")" "rows SENT at the first attempt"
	assert_eq 0 "$(dups)" "messages delivered twice"
	assert_eq "$N" "$(http_count)" "requests"
	reconnects=$(grep -c 'event=db_reconnected' "$TEST_TMP/d1.err")
	[ "$reconnects" -ge 1 ] && [ "$reconnects" -le 3 ] ||
	    fail "expected one db_reconnected line (at most one per statement), got $reconnects"
	assert_grep "event=outbox_dispatched sent=$N " "$TEST_TMP/d1.err"
}
test_expect_success 'restarted mid-dispatch: reconnects, exit 0, every row SENT once' \
    restart

# The database stays away: exit 69 after connect_retry (3 s), not at once
# and not later than it plus a connect; the in-flight rows stay PROCESSING
# for the lease and go out again after it (this batch's duplicates are
# the price of an outage longer than connect_retry, counted no further).
gone()
{
	local pid start rc took
	sed -i 's/connect_retry = "60s"/connect_retry = "3s"/' "$CONF"
	enqueue 100
	cg outbox dispatch > /dev/null 2> "$TEST_TMP/d2.err" &
	pid=$!
	wait_for 20 requests_at_least $((N + 20))
	start=$(date +%s)
	db_private_stop
	rc=0
	wait "$pid" || rc=$?
	took=$(($(date +%s) - start))
	assert_eq 69 "$rc" "dispatch exit status with the database gone"
	assert_grep 'reconnecting failed: .*attempts in' "$TEST_TMP/d2.err"
	[ "$took" -ge 2 ] && [ "$took" -le 20 ] ||
	    fail "gave up after ${took}s, expected about 3 s"
	db_private_start
	age_claims
	assert_exit 0 cg outbox dispatch
	assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status <> 'SENT'")" "rows not SENT after the lease"
}
test_expect_success 'the database gone past connect_retry: 69; the rows go out after the lease' \
    gone

# A claim's COMMIT whose reply is lost.  commit_lost: the COMMIT ran, so
# the claim's token is found and its rows are sent at once, not left for
# the lease.  commit_lost_before: it never ran, so the rows must not be
# sent on that claim (they are claimed again): each delivered once.
test_lazy_prereq FAULTS 'grep -q "^#define ENABLE_FAULT_INJECTION 1" \
    "${CRONGUARD_BUILDDIR:-.}/config.h"'
commit_lost()
{
	local fault before dups_before want
	sed -i 's/connect_retry = "3s"/connect_retry = "60s"/' "$CONF"
	for fault in commit_lost commit_lost_before; do
		before=$(http_count)
		dups_before=$(dups)
		enqueue 100
		CRONGUARD_FAULT=$fault cg outbox dispatch 2> "$TEST_TMP/f.err" ||
		    { cat "$TEST_TMP/f.err" >&2; fail "$fault: dispatch failed"; }
		cat "$TEST_TMP/f.err" >&2
		assert_grep 'event=db_reconnected' "$TEST_TMP/f.err"
		assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
		    WHERE status <> 'SENT'")" "$fault: rows not SENT"
		assert_eq $((before + 100)) "$(http_count)" "$fault: requests"
		assert_eq "$dups_before" "$(dups)" \
		    "$fault: messages delivered twice (before: $dups_before)"
		case $fault in
		commit_lost) want=1 ;;
		*) want=0 ;;
		esac
		assert_grep "event=outbox_claim_commit_unknown .*committed=$want" \
		    "$TEST_TMP/f.err"
	done
}
test_expect_success FAULTS 'a lost COMMIT reply: sent at once if committed, else claimed again' \
    commit_lost

test_done
