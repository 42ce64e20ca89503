#!/bin/sh
# A row for a channel no configuration names stays PENDING and is counted
# as unknown_channel (a WARNING); a payload the HTTP channel cannot use (a
# JSON scalar, not an object or array) is FAILED with a clear reason and
# nothing is sent for it, while the other rows of the batch go through.
# Cases: setup; the dispatch; outbox check.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

setup()
{
	write_config "$CONF" "
channels = { hook = { type = \"http\"; url = \"$HTTP_BASE/ok\"; }; };"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload) VALUES
	    ('hook', 't', '{\"n\": 1}'),
	    ('nowhere', 't', '{\"n\": 2}'),
	    ('hook', 't', '42'),
	    ('hook', 't', '\"just text\"'),
	    ('hook', 't', '[\"n\", 5]')"
}
test_expect_success SERVERS 'setup: five rows, one for no channel, two scalars' setup

dispatched()
{
	assert_exit 0 cg outbox dispatch
	assert_eq "1 SENT
2 PENDING
3 FAILED
4 FAILED
5 SENT" "$(mysql_q "SELECT id, status FROM outbox_messages ORDER BY id" | tr '\t' ' ')" "states"
	assert_eq "payload is not a JSON object or array: line 1 column 2: '[' or '{' expected near '42'" \
	    "$(mysql_q "SELECT last_error FROM outbox_messages WHERE id = 3")" "reason"
	assert_eq 2 "$(http_count)" "requests sent"
	assert_eq 0 "$(mysql_q "SELECT attempts FROM outbox_messages WHERE id = 2")" "unknown channel untouched"
}
test_expect_success SERVERS 'dispatch: scalars FAILED with the reason, the unknown channel untouched, the rest sent' \
    dispatched

checked()
{
	assert_exit 1 cg outbox check
	assert_grep '^OUTBOX WARNING - .* pending=1 due=1 failed=2 oldest_due=[0-9]+s unknown_channel=1 \|' "$OUT"
	assert_exit 1 cg outbox check --format json
	assert_grep '"unknown_channel":1,' "$OUT"
}
test_expect_success SERVERS 'outbox check: WARNING, unknown_channel=1 (Nagios and JSON)' \
    checked

test_done
