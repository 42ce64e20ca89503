#!/bin/sh
# The operator commands: enqueue validates the payload as JSON (exit 65
# naming line and column), list (text and json, newest first, filters),
# show (every column, payload pretty-printed; a missing id is exit 65),
# purge (--dry-run counts; deletes only what is old enough, in batches of
# at most 1000 rows; says what it deleted) and usage errors (64).
# Cases: setup; enqueue; list; show; purge; retry's usage.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers

setup()
{
	write_config "$CONF" "
channels = { hook = { type = \"http\"; url = \"$HTTP_BASE/ok\"; }; };"
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: an HTTP channel, db migrate' setup

# enqueue
enqueue()
{
	local id mid
	assert_exit 0 cg outbox enqueue --channel hook --type order.paid --key order:7 \
	    --payload '{"order": 7, "note": "예약 확정"}'
	id=$(cut -d' ' -f1 "$OUT")
	mid=$(cut -d' ' -f2 "$OUT")
	assert_eq "hook order.paid order:7 PENDING $mid" "$(mysql_q "SELECT channel, event_type,
    ordering_key, status, message_id FROM outbox_messages WHERE id = $id" | tr '\t' ' ')" "enqueued row"
	printf '{\n  "a": [1, 2,\n' > "$TEST_TMP/bad.json"
	assert_exit 65 cg outbox enqueue --channel hook --type t --payload-file "$TEST_TMP/bad.json"
	assert_grep 'payload is not valid JSON: line 3 column 0' "$ERR"
	assert_exit 65 cg outbox enqueue --channel hook --type t --payload '{"a": }'
	assert_grep 'line 1 column 7' "$ERR"
	printf '{"from": "file"}\n' > "$TEST_TMP/good.json"
	assert_exit 0 cg outbox enqueue --channel hook --type t --payload-file "$TEST_TMP/good.json"
	assert_exit 0 cg outbox enqueue --channel elsewhere --type t --payload '[]'
	assert_grep 'channel elsewhere is not configured' "$ERR"
	assert_exit 64 cg outbox enqueue --channel hook --payload '{}'
	assert_exit 64 cg outbox enqueue --channel hook --type t
	assert_exit 64 cg outbox enqueue --channel hook --type t --payload '{}' --payload-file x
	echo "$id $mid" > "$TEST_TMP/ids"
}
test_expect_success 'enqueue stores the row; a payload not JSON is 65 naming line and column' \
    enqueue

# list: newest first, filters, json
list_rows()
{
	local id
	{ read -r id _ < "$TEST_TMP/ids"; } 2> /dev/null || :
	assert_exit 0 cg outbox list
	assert_eq 3 "$(tail -n +2 "$OUT" | wc -l | tr -d ' ')" "list rows"
	assert_grep '^ID +STATUS +CHANNEL' "$OUT"
	assert_eq "$id" "$(tail -n 1 "$OUT" | awk '{print $1}')" "oldest last"
	assert_exit 0 cg outbox list --channel elsewhere --format json
	/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert len(r)==1 and r[0]["channel"]=="elsewhere" and r[0]["status"]=="PENDING", r' "$OUT" ||
	    fail "list json"
	assert_exit 0 cg outbox list --status sent
	assert_eq 1 "$(wc -l < "$OUT" | tr -d ' ')" "no SENT rows yet"
	assert_exit 64 cg outbox list --status lost
	assert_exit 64 cg outbox list --limit 0
}
test_expect_success 'list: newest first, filters, JSON; bad options 64' \
    list_rows

# show
show_row()
{
	local id mid
	{ read -r id mid < "$TEST_TMP/ids"; } 2> /dev/null || :
	assert_exit 0 cg outbox show "$id"
	assert_grep "^message_id: $mid\$" "$OUT"
	assert_grep '^ordering_key: order:7$' "$OUT"
	assert_grep '^claim_token: NULL$' "$OUT"
	assert_grep '^  "note": "예약 확정"' "$OUT"
	assert_exit 65 cg outbox show 999999
	assert_grep 'no message 999999' "$ERR"
	assert_exit 64 cg outbox show
	assert_exit 64 cg outbox show abc
}
test_expect_success 'show: every column, the payload pretty-printed; a missing id 65' \
    show_row

# purge: 2,500 old SENT rows, 3 recent SENT rows, 2 old FAILED rows
purge()
{
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload, status, sent_at)
    SELECT 'hook', 't', '{}', 'SENT', NOW(6) - INTERVAL 8 DAY FROM seq_1_to_2500"
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload, status, sent_at)
    SELECT 'hook', 't', '{}', 'SENT', NOW(6) - INTERVAL 1 HOUR FROM seq_1_to_3"
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload, status, claimed_at)
    SELECT 'hook', 't', '{}', 'FAILED', NOW(6) - INTERVAL 40 DAY FROM seq_1_to_2"
	assert_exit 0 cg outbox purge --sent-before 7d --failed-before 30d --dry-run
	assert_eq "would delete 2500 SENT or CANCELLED and 2 FAILED messages" "$(cat "$OUT")" "dry run"
	assert_eq 2508 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages")" "dry run deletes nothing"
	assert_exit 0 cg -v outbox purge --sent-before 7d
	assert_grep 'event=outbox_purged sent=2500 failed=0' "$ERR"
	assert_eq "deleted 2500 SENT or CANCELLED and 0 FAILED messages" "$(cat "$OUT")" "purge says what it deleted"
	assert_eq 3 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'SENT'")" "recent SENT kept"
	assert_exit 0 cg outbox purge --failed-before 30d
	assert_eq 3 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status <> 'SENT'")" "FAILED purged, PENDING kept"
	assert_exit 64 cg outbox purge
	assert_exit 64 cg outbox purge --sent-before soon
}
test_expect_success 'purge: --dry-run counts, deletes only what is old enough, says what' \
    purge

# retry usage
retry_usage()
{
	assert_exit 64 cg outbox retry
	assert_exit 64 cg outbox retry 1 --failed
	assert_exit 64 cg outbox retry 1 --channel hook
}
test_expect_success 'retry without a row or with a filter and ids: 64' \
    retry_usage

test_done
