#!/bin/sh
# The broker stopped in the middle of a dispatch and started again: no
# row is SENT without its confirm (every SENT row's message is in the
# durable queue, also those marked while the broker was down), the rows
# caught in the outage go back to PENDING with backoff and are delivered
# once the broker is back, and for rows sharing an ordering_key the queue
# holds them in id order, across the restart too (a duplicate, a message
# the broker kept although its confirm was lost, may only follow its own
# first copy).  The number of duplicates is printed, not bounded: at least
# once allows them.
# Cases: setup; the broker stopped mid-dispatch and started again; the
# queue holds every row; per-key order.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
. "$CRONGUARD_SRCDIR/scripts/testenv-rabbitmq"
N=4000
KEYS=80
testenv_rabbitmq_for_test cgq
sent() { mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'SENT'"; }
sent_at_least() { [ "$(sent)" -ge "$1" ]; }

setup()
{
	# rate: so that the broker can be stopped mid-run (4,000 rows in ~20 s;
	# rabbitmqctl stop alone takes seconds on a loaded machine).
	write_config "$CONF" "
outbox = { batch_size = 100; max_attempts = 1000;
           backoff = { initial = \"500ms\"; max = \"500ms\"; jitter = 0.0; }; };
channels = {
  bus = { type = \"amqp\"; url = \"amqp://127.0.0.1:$AMQP_PORT\";
          username = \"guest\"; password_file = \"$TEST_TMP/pw\";
          routing_key = \"cgq\"; timeout = \"3s\"; rate = 200.0; };
};"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, ordering_key, payload)
	    SELECT 'bus', 'test.event', CONCAT('k', seq % $KEYS),
	        JSON_OBJECT('n', seq) FROM seq_1_to_$N"
}
test_expect_success 'setup: 4,000 rows on 80 ordering keys, db migrate' setup

restart()
{
	local pid before during retried
	cg -v outbox dispatch --for 40s > "$TEST_TMP/d.out" 2> "$TEST_TMP/d.err" &
	pid=$!
	at_exit "kill $pid 2>/dev/null"
	wait_for 20 sent_at_least 300
	testenv_rabbitmq_stop "$RMQ"
	before=$(sent)
	[ "$before" -lt "$N" ] || fail "all rows SENT before the broker stopped"
	sleep 2
	# No confirm can come while the broker is down.
	during=$(sent)
	mysql_q "SELECT message_id FROM outbox_messages WHERE status = 'SENT'" |
	    sort > "$TEST_TMP/sent-down"
	testenv_rabbitmq_start "$RMQ" || fail "rabbitmq did not start again"
	wait "$pid" || fail "dispatch exited $?: $(cat "$TEST_TMP/d.err")"
	# Rows whose last try failed just before the deadline are due again soon.
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		[ "$(sent)" = "$N" ] && break
		sleep 1
		cg -v outbox dispatch 2>> "$TEST_TMP/drain.err" || :
	done
	if [ "$(sent)" != "$N" ]; then
		tail -n 5 "$TEST_TMP/d.err" "$TEST_TMP/drain.err"
		mysql_q "SELECT status, attempts, last_error, COUNT(*)
		    FROM outbox_messages WHERE status <> 'SENT' GROUP BY 1, 2, 3"
		fail "rows SENT after the broker came back: $(sent) of $N"
	fi
	retried=$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE attempts > 1")
	[ "$retried" -gt 0 ] || fail "no row was caught by the outage (test too slow?)"
	echo "$before $during $retried" > "$TEST_TMP/counts"
}
test_expect_success 'the broker stopped mid-dispatch: every row SENT once it is back' \
    restart

held()
{
	testenv_rabbitmq_drain cgq > "$TEST_TMP/got" || fail "cannot drain cgq"
	cut -f1 "$TEST_TMP/got" | sort -u > "$TEST_TMP/got-ids"
	mysql_q "SELECT message_id FROM outbox_messages" | sort > "$TEST_TMP/all-ids"
	cmp -s "$TEST_TMP/all-ids" "$TEST_TMP/got-ids" ||
	    fail "the queue does not hold every row's message exactly (missing: $(comm -23 "$TEST_TMP/all-ids" "$TEST_TMP/got-ids" | wc -l))"
	[ -z "$(comm -23 "$TEST_TMP/sent-down" "$TEST_TMP/got-ids")" ] ||
	    fail "a row marked SENT while the broker was down has no message"
}
test_expect_success 'the queue holds every row'"'"'s message, those SENT in the outage too' \
    held

ordered()
{
	local before during retried total
	{ read -r before during retried < "$TEST_TMP/counts"; } 2> /dev/null || :
	total=$(wc -l < "$TEST_TMP/got")
	# Per key, the n of each message in queue order never goes down.
	awk -F'\t' '{
		if (!match($8, /"n": *[0-9]+/)) { print "no n: " $8; bad = 1; next }
		n = substr($8, RSTART, RLENGTH); sub(/.*: */, "", n); n += 0
		if ($6 in last && n < last[$6]) {
			print "key " $6 ": " n " after " last[$6]; bad = 1
		}
		last[$6] = n
	} END { exit bad }' "$TEST_TMP/got" > "$TEST_TMP/order" ||
	    fail "per-key order broken: $(head -5 "$TEST_TMP/order")"
	echo "broker restart: sent before stop=$before, during outage=$during," \
	    "rows retried=$retried, messages=$total, duplicates=$((total - N))"
}
test_expect_success 'per key, the queue holds the rows in id order' ordered

test_done
