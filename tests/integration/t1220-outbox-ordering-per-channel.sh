#!/bin/sh
# Ordering scoped per channel (cronguard-outbox(7), ORDERING): a mail row
# FAILED on a bad address never holds back the webhook row of the same key
# (outbox.ordering_scope = "channel", the default); two rows of one channel
# and key behind a FAILED head stay PENDING, counted blocked by outbox
# check (all three formats) and named by outbox show; on_failure = "skip"
# lets them go; ordering_scope = "global" is the old behaviour.  Cases:
# setup; the webhook not held back; mail rows blocked behind their head;
# the global scope; on_failure = "skip".
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

# conf SCOPE ON_FAILURE
conf() {
	write_config "$CONF" "
outbox = { ordering_scope = \"$1\"; max_attempts = 1; };
channels = {
  mail = { type = \"http\"; url = \"$HTTP_BASE/mail/status=400\"; on_failure = \"$2\"; };
  hook = { type = \"http\"; url = \"$HTTP_BASE/hook\"; };
};"
}
test_expect_success SERVERS 'setup: db migrate' '
	conf channel block &&
	assert_exit 0 cg db migrate
'

statuses() {
	mysql_q "SELECT status FROM outbox_messages WHERE ordering_key = '$1'
	    ORDER BY id" | tr '\n' ' ' | sed 's/ $//'
}

# The mail row of order:1 fails for good; the webhook of order:1 goes.
webhook_not_held()
{
	conf channel block
	assert_exit 0 cg outbox enqueue --channel mail --type order.mail --key order:1 --payload '{"n":1}'
	assert_exit 0 cg outbox enqueue --channel hook --type order.hook --key order:1 --payload '{"n":2}'
	assert_exit 0 cg outbox dispatch
	assert_exit 0 cg outbox dispatch
	assert_eq "FAILED SENT" "$(statuses order:1)" "webhook behind a FAILED mail row"
}
test_expect_success SERVERS 'a FAILED mail row does not hold back the webhook of its key' \
    webhook_not_held

# Two more mail rows of the key wait behind the FAILED head.
blocked_behind_head()
{
	local head second
	conf channel block
	assert_exit 0 cg outbox enqueue --channel mail --type order.mail --key order:1 --payload '{"n":3}'
	assert_exit 0 cg outbox enqueue --channel mail --type order.mail --key order:1 --payload '{"n":4}'
	head=$(mysql_q "SELECT MIN(id) FROM outbox_messages WHERE ordering_key = 'order:1'")
	second=$(mysql_q "SELECT MIN(id) FROM outbox_messages WHERE ordering_key = 'order:1' AND status = 'PENDING'")
	assert_exit 0 cg outbox dispatch
	assert_eq "FAILED SENT PENDING PENDING" "$(statuses order:1)" "mail rows behind their FAILED head"
	assert_exit 1 cg outbox check --format json
	assert_grep '"blocked": ?2' "$OUT"
	assert_grep '"oldest_blocked_age_seconds": ?[0-9]+' "$OUT"
	assert_exit 1 cg outbox check
	assert_grep 'blocked=2' "$OUT"
	assert_exit 1 cg outbox check --format prometheus
	assert_grep '^cronguard_outbox_blocked 2$' "$OUT"
	assert_grep '^cronguard_outbox_oldest_blocked_age_seconds [0-9]+$' "$OUT"
	assert_exit 0 cg outbox show "$second"
	assert_grep "^blocked_by: $head " "$OUT"
	assert_exit 0 cg outbox show "$head"
	if grep -q '^blocked_by:' "$OUT"; then fail "the head names a blocker"; fi
}
test_expect_success SERVERS 'rows behind a FAILED head: blocked in outbox check, named by outbox show' \
    blocked_behind_head

# With the global scope the webhook waits too (today's behaviour).
global_scope()
{
	conf global block
	assert_exit 0 cg outbox enqueue --channel hook --type order.hook --key order:1 --payload '{"n":5}'
	assert_exit 0 cg outbox dispatch
	assert_eq "FAILED SENT PENDING PENDING PENDING" "$(statuses order:1)" "global scope"
	assert_exit 1 cg outbox check --format json
	assert_grep '"blocked": ?3' "$OUT"
}
test_expect_success SERVERS 'ordering_scope = "global": the webhook waits too' \
    global_scope

# on_failure = "skip": later rows go on (the mail ones fail at the sink:
# what matters is that they were attempted, in order).
on_failure_skip()
{
	conf channel skip
	assert_exit 0 cg outbox dispatch
	assert_exit 0 cg outbox dispatch
	assert_eq "FAILED SENT FAILED FAILED SENT" "$(statuses order:1)" "on_failure = skip"
	assert_exit 1 cg outbox check --format json
	assert_grep '"blocked": ?0' "$OUT"
}
test_expect_success SERVERS 'on_failure = "skip": the rows behind go on, in order' \
    on_failure_skip

test_done
