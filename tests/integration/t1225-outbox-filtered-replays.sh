#!/bin/sh
# Filtered replays (cronguard(1), outbox retry and outbox cancel):
# --channel, --event-type, --since and --error narrow retry --failed and
# cancel to the matching rows; --dry-run prints the count and changes
# nothing; rows outside the filters are left alone.  Cases: setup; a
# filtered retry; retry by error; a filtered cancel; usage errors.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

snap() { mysql_q "SELECT GROUP_CONCAT(id, status ORDER BY id SEPARATOR ' ') FROM outbox_messages"; }

setup()
{
	write_config "$CONF" "
channels = {
  hook = { type = \"http\"; url = \"$HTTP_BASE/hook\"; };
  mail = { type = \"http\"; url = \"$HTTP_BASE/mail\"; };
};"
	assert_exit 0 cg db migrate
	# FAILED rows: id 1-2 hook/order 503 recent, 3 hook/order 400 recent,
	# 4 hook/invoice 503 recent, 5 mail/order 503 recent, 6 hook/order 503
	# two hours ago; 7 PENDING hook/order.
	mysql_q "INSERT INTO outbox_messages (id, channel, event_type, payload, status,
	        last_error, claimed_at, created_at) VALUES
	    (1, 'hook', 'order', '{}', 'FAILED', 'http 503: busy', NOW(6), NOW(6)),
	    (2, 'hook', 'order', '{}', 'FAILED', 'http 503: busy (gave up after 8 attempts)', NOW(6), NOW(6)),
	    (3, 'hook', 'order', '{}', 'FAILED', 'http 400: bad', NOW(6), NOW(6)),
	    (4, 'hook', 'invoice', '{}', 'FAILED', 'http 503: busy', NOW(6), NOW(6)),
	    (5, 'mail', 'order', '{}', 'FAILED', 'http 503: busy', NOW(6), NOW(6)),
	    (6, 'hook', 'order', '{}', 'FAILED', 'http 503: busy', NOW(6) - INTERVAL 2 HOUR, NOW(6) - INTERVAL 3 HOUR);
	    INSERT INTO outbox_messages (id, channel, event_type, payload, next_attempt_at)
	    VALUES (7, 'hook', 'order', '{}', NOW(6) + INTERVAL 1 HOUR)"
}
test_expect_success SERVERS 'setup: db migrate, six FAILED rows and one PENDING' setup

filtered_retry()
{
	local before
	before=$(snap)
	assert_exit 0 cg outbox retry --failed --channel hook --event-type order --since 1h --error "http 503" --dry-run
	assert_grep '^2 messages would be due now$' "$OUT"
	assert_eq "$before" "$(snap)" "dry run changed rows"
	assert_exit 0 cg outbox retry --failed --channel hook --event-type order --since 1h --error "http 503"
	assert_grep '^2 messages due now$' "$OUT"
	assert_eq "1PENDING 2PENDING 3FAILED 4FAILED 5FAILED 6FAILED 7PENDING" "$(snap)" "filtered retry"
	assert_eq "0 0" "$(mysql_q "SELECT attempts, next_attempt_at > NOW(6) FROM outbox_messages WHERE id = 1" | tr '\t' ' ')" "retried row due now, attempts reset"
}
test_expect_success SERVERS 'retry --failed with filters; --dry-run changes nothing' \
    filtered_retry

retry_by_error()
{
	assert_exit 0 cg outbox retry --failed --error "400"
	assert_grep '^1 message due now$' "$OUT"
	assert_eq "1PENDING 2PENDING 3PENDING 4FAILED 5FAILED 6FAILED 7PENDING" "$(snap)" "retry by error"
}
test_expect_success SERVERS 'retry --failed --error' retry_by_error

# cancel with filters: PENDING and FAILED rows of the filters only.
filtered_cancel()
{
	assert_exit 0 cg outbox cancel --channel hook --event-type order --dry-run
	assert_grep '^5 messages would be cancelled$' "$OUT"
	assert_exit 0 cg outbox cancel --channel hook --since 1h --reason "replaced by v2" --event-type invoice
	assert_grep '^1 message cancelled$' "$OUT"
	assert_eq "1PENDING 2PENDING 3PENDING 4CANCELLED 5FAILED 6FAILED 7PENDING" "$(snap)" "filtered cancel"
	assert_eq "cancelled: replaced by v2" "$(mysql_q "SELECT last_error FROM outbox_messages WHERE id = 4")" "reason"
}
test_expect_success SERVERS 'cancel with filters: the matching rows only' \
    filtered_cancel

# Usage errors.
usage_errors()
{
	assert_exit 64 cg outbox cancel
	assert_exit 64 cg outbox cancel --dry-run 3
	assert_exit 64 cg outbox retry --channel hook 3
	assert_exit 64 cg outbox retry --failed --since -1h
	assert_exit 64 cg outbox retry --failed --since 0s
	assert_eq "1PENDING 2PENDING 3PENDING 4CANCELLED 5FAILED 6FAILED 7PENDING" "$(snap)" "after usage errors"
}
test_expect_success SERVERS 'usage errors: exit 64, no row changed' usage_errors

test_done
