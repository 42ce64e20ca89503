#!/bin/sh
# outbox check: rows PROCESSING past the watchdog are stuck → exit 2 with
# stuck=N; the thresholds give WARNING and CRITICAL as configured; the
# three formats; --metrics-file is replaced atomically (a new inode, never
# a half-written file); an unreachable database is UNKNOWN (exit 3).
# Cases: setup; the empty outbox; the pending, oldest due and failed
# thresholds (and json); stale versus stuck (metrics, prometheus); bad
# options; the database unreachable.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
M=$TEST_TMP/metrics/cronguard.prom
mkdir "$TEST_TMP/metrics"
add() {	# add N STATUS [SQL-EXTRA-SET]
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload, status)
	    SELECT 'hook', 't', '{}', '$2' FROM seq_1_to_$1"
}

setup()
{
	write_config "$CONF" "
outbox = { lease = \"1m\"; watchdog = \"10m\";
           thresholds = { pending_warn = 3; pending_crit = 6;
                          oldest_due_warn = \"1h\"; oldest_due_crit = \"2h\";
                          failed_warn = 2; failed_crit = 4; }; };
channels = { hook = { type = \"http\"; url = \"$HTTP_BASE/ok\"; }; };"
	assert_exit 0 cg db migrate
}
test_expect_success SERVERS 'setup: configuration, db migrate' setup

empty_outbox()
{
	assert_exit 0 cg outbox check --metrics-file "$M"
	assert_eq "OUTBOX OK - stuck=0 stale=0 pending=0 due=0 failed=0 oldest_due=0s | pending=0;3;6 due=0 processing=0 stale=0 stuck=0;;0 failed=0;2;4 oldest_due=0s;3600;7200 unknown_channel=0 circuit_open=0;0" \
	    "$(cat "$OUT")" "empty outbox"
	assert_grep '^cronguard_outbox_up 1$' "$M"
	stat -c %i "$M" > "$TEST_TMP/ino1"
}
test_expect_success SERVERS 'an empty outbox is OK, the metrics file says up' \
    empty_outbox

# pending thresholds
pending_thresholds()
{
	mysql_q "DELETE FROM outbox_messages"
	add 3 PENDING
	assert_exit 1 cg outbox check
	assert_grep '^OUTBOX WARNING - .* pending=3 due=3 ' "$OUT"
	add 3 PENDING
	assert_exit 2 cg outbox check
	assert_grep '^OUTBOX CRITICAL - .* pending=6 due=6 ' "$OUT"
}
test_expect_success SERVERS 'pending thresholds: WARNING, CRITICAL' \
    pending_thresholds

# oldest due age
oldest_due()
{
	mysql_q "DELETE FROM outbox_messages"
	add 1 PENDING
	mysql_q "UPDATE outbox_messages SET next_attempt_at = NOW(6) - INTERVAL 61 MINUTE"
	assert_exit 1 cg outbox check
	assert_grep 'oldest_due=36[0-9][0-9]s ' "$OUT"
	mysql_q "UPDATE outbox_messages SET next_attempt_at = NOW(6) - INTERVAL 3 HOUR"
	assert_exit 2 cg outbox check
	# not yet due rows count as pending but not due
	mysql_q "UPDATE outbox_messages SET next_attempt_at = NOW(6) + INTERVAL 1 HOUR"
	assert_exit 0 cg outbox check
	assert_grep ' pending=1 due=0 failed=0 oldest_due=0s ' "$OUT"
}
test_expect_success SERVERS 'oldest due age thresholds; a row not yet due is not due' \
    oldest_due

# failed thresholds
failed_thresholds()
{
	mysql_q "DELETE FROM outbox_messages"
	add 2 FAILED
	assert_exit 1 cg outbox check
	add 2 FAILED
	assert_exit 2 cg outbox check --format json
	assert_eq '{"status":"CRITICAL","pending":0,"due":0,"processing":0,"stale":0,"stuck":0,"failed":4,"oldest_due_age_seconds":0,"unknown_channel":0,"expired":0,"paused_pending":0,"blocked":0,"oldest_blocked_age_seconds":0,"circuit_open":0,"channels":{},"paused":[]}' \
	    "$(cat "$OUT")" "json"
}
test_expect_success SERVERS 'failed thresholds; --format json' failed_thresholds

# stale (past the lease) is not an alarm; stuck (past the watchdog) is
stale_and_stuck()
{
	local ino1 ino2
	mysql_q "DELETE FROM outbox_messages"
	add 2 PROCESSING
	mysql_q "UPDATE outbox_messages SET claimed_at = NOW(6) - INTERVAL 2 MINUTE, claim_token = UUID()"
	assert_exit 0 cg outbox check
	assert_grep '^OUTBOX OK - stuck=0 stale=2 ' "$OUT"
	add 1 PROCESSING
	mysql_q "UPDATE outbox_messages SET claimed_at = NOW(6) - INTERVAL 11 MINUTE, claim_token = UUID()
	    WHERE claimed_at IS NULL"
	assert_exit 2 cg outbox check --metrics-file "$M"
	assert_grep '^OUTBOX CRITICAL - stuck=1 stale=3 ' "$OUT"
	assert_grep 'processing=3 stale=3 stuck=1;;0 ' "$OUT"
	assert_grep 'event=outbox_stuck' "$ERR"
	assert_grep '^cronguard_outbox_stuck 1$' "$M"
	assert_grep '^cronguard_outbox_messages\{status="processing"\} 3$' "$M"
	assert_grep '^cronguard_outbox_check_status 2$' "$M"
	ino1=$(cat "$TEST_TMP/ino1")
	ino2=$(stat -c %i "$M")
	[ "$ino1" != "$ino2" ] || fail "metrics file rewritten in place (inode $ino1)"
	assert_eq "" "$(find "$TEST_TMP/metrics" -mindepth 1 ! -name cronguard.prom)" "temporary files left"
	assert_exit 2 cg outbox check --format prometheus
	assert_grep '^# TYPE cronguard_outbox_stuck gauge$' "$OUT"
	assert_grep '^cronguard_outbox_oldest_due_age_seconds 0$' "$OUT"
}
test_expect_success SERVERS 'stale is not an alarm, stuck is; metrics file replaced, not rewritten' \
    stale_and_stuck

# bad option and format
test_expect_success SERVERS 'bad option and format: exit 64' '
	assert_exit 64 cg outbox check --format xml &&
	assert_exit 64 cg outbox check --bogus
'

# the database unreachable: UNKNOWN, and the metrics say so
db_unreachable()
{
	local conf2=$TEST_TMP/down.conf
	sed 's/port = [0-9]*;/port = 1;/' "$CONF" > "$conf2"
	chmod 600 "$conf2"
	assert_exit 3 "$CRONGUARD_BIN" -c "$conf2" outbox check --metrics-file "$M"
	assert_grep '^OUTBOX UNKNOWN - ' "$OUT"
	assert_grep '^cronguard_outbox_up 0$' "$M"
}
test_expect_success SERVERS 'the database unreachable: UNKNOWN, metrics up 0' \
    db_unreachable

test_done
