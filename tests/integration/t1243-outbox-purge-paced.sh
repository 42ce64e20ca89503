#!/bin/sh
# outbox purge paces itself (issue 37): at --rate 1000 it deletes 3,000
# old SENT rows in three batches of 1,000 taking at least two seconds,
# where --rate 0 deletes them without pausing; a bad --rate is exit 64.
# Cases: setup; paced; unpaced; bad --rate.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

old() {
	mysql_q "DELETE FROM outbox_messages;
	    INSERT INTO outbox_messages (channel, event_type, payload, status,
	      attempts, sent_at) SELECT 'hook', 'old', '{}', 'SENT', 1,
	      NOW(6) - INTERVAL 30 DAY FROM seq_1_to_3000"
}
# ms CMD...: the wall time of cg CMD in ms (its output in $OUT).
ms() {
	t0=$(date +%s%N)
	cg "$@" > "$OUT" 2> "$ERR" || fail "cg $*: $(cat "$ERR")"
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}

test_expect_success SERVERS 'setup: db migrate' '
	write_config "$CONF" "channels = { hook = { type = \"http\"; url = \"http://127.0.0.1:1/\"; }; };" &&
	assert_exit 0 cg db migrate
'

test_expect_success SERVERS 'at --rate 1000, 3,000 rows take two seconds or more' '
	old &&
	n=$(ms outbox purge --sent-before 7d --rate 1000) &&
	echo "# --rate 1000: $n ms" &&
	assert_eq "deleted 3000 SENT or CANCELLED and 0 FAILED messages" "$(cat "$OUT")" "the purge" &&
	[ "$n" -ge 2000 ] || fail "3,000 rows at --rate 1000 took $n ms"
'

test_expect_success SERVERS 'at --rate 0 they go without pauses' '
	old &&
	n=$(ms outbox purge --sent-before 7d --rate 0) &&
	echo "# --rate 0: $n ms" &&
	assert_eq "deleted 3000 SENT or CANCELLED and 0 FAILED messages" "$(cat "$OUT")" "the purge" &&
	[ "$n" -lt 2000 ] || fail "3,000 rows at --rate 0 took $n ms"
'

test_expect_success SERVERS 'a bad --rate is exit 64' '
	assert_exit 64 cg outbox purge --sent-before 7d --rate -1 &&
	assert_grep "--rate -1" "$ERR" &&
	assert_exit 64 cg outbox purge --sent-before 7d --rate fast &&
	assert_exit 64 cg outbox purge --sent-before 7d --rate 10000001
'

test_done
