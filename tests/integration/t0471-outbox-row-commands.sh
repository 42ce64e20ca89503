#!/bin/sh
# Operator commands for one row: retry makes a PENDING row due
# now (its backoff cleared, attempts kept) and puts FAILED and CANCELLED
# rows back to PENDING; cancel marks PENDING or FAILED rows CANCELLED with
# a reason, never PROCESSING or SENT ones, and a CANCELLED row does not
# block its ordering key; purge ID deletes only finished rows; purge by
# age removes CANCELLED rows like SENT ones; list does not cut last_error
# mid-word (--wide prints it whole); enqueue checks the payload against
# the channel's type (exit 65 at once, no row).
# Cases: setup; enqueue; retry; cancel; a cancelled key; retry of a
# cancelled row; purge ID; purge by age; list's last_error.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
rows() { mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE $1"; }

setup()
{
	write_config "$CONF" "
channels = {
  hook = { type = \"http\"; url = \"$HTTP_BASE/ok\"; };
  mail = { type = \"smtp\"; url = \"smtp://127.0.0.1:$SMTP_PORT\"; from = \"Shop <shop@example.com>\"; };
};"
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: an HTTP and an SMTP channel, db migrate' setup

# enqueue: checked against the channel's type, nothing inserted on failure
typed_enqueue()
{
	assert_exit 65 cg outbox enqueue --channel hook --type t --payload '"a string"'
	assert_grep 'payload cannot be sent on channel hook: payload is not a JSON object or array' "$ERR"
	assert_exit 65 cg outbox enqueue --channel mail --type t --payload '{"subject": "no recipient", "text": "x"}'
	assert_grep 'payload cannot be sent on channel mail' "$ERR"
	assert_exit 65 cg outbox enqueue --channel mail --type t \
	    --payload '{"to": "a@example.com", "subject": "x\r\nBcc: evil@example.com", "text": "x"}'
	assert_eq 0 "$(rows 1)" "refused payloads left no row"
	assert_exit 0 cg outbox enqueue --channel mail --type t \
	    --payload '{"to": "a@example.com", "subject": "hello", "text": "x"}'
	assert_exit 0 cg outbox enqueue --channel hook --type t --payload '[1]'
	assert_eq 2 "$(rows 1)" "valid payloads inserted"
	mysql_q "DELETE FROM outbox_messages"
}
test_expect_success 'enqueue checks the payload against the channel'"'"'s type, no row on failure' \
    typed_enqueue

# retry ID on a PENDING row in backoff: due now, attempts kept
retry_due()
{
	mysql_q "INSERT INTO outbox_messages (id, channel, event_type, payload, attempts, next_attempt_at, last_error)
    VALUES (1, 'hook', 't', '{}', 3, NOW(6) + INTERVAL 1 HOUR, 'HTTP 503')"
	assert_exit 0 cg outbox retry 1
	assert_eq "1 message due now" "$(cat "$OUT")" "retry output"
	assert_eq "PENDING 3 1" "$(mysql_q "SELECT status, attempts, next_attempt_at <= NOW(6) FROM outbox_messages WHERE id = 1" | tr '\t' ' ')" "backoff cleared, attempts kept"
}
test_expect_success 'retry ID of a PENDING row in backoff: due now, attempts kept' \
    retry_due

# cancel: PENDING and FAILED rows; PROCESSING and SENT refused (65)
cancel_rows()
{
	mysql_q "INSERT INTO outbox_messages (id, channel, event_type, ordering_key, payload, status, claim_token, claimed_at)
    VALUES (2, 'hokk', 't', 'order:9', '{}', 'PENDING', NULL, NULL),
           (3, 'hook', 't', 'order:9', '{}', 'PENDING', NULL, NULL),
           (4, 'hook', 't', NULL, '{}', 'PROCESSING', UUID(), NOW(6)),
           (5, 'hook', 't', NULL, '{}', 'SENT', NULL, NOW(6)),
           (6, 'hook', 't', NULL, '{}', 'FAILED', NULL, NOW(6))"
	assert_exit 0 cg outbox cancel --reason 'misspelt channel' 2
	assert_eq "1 message cancelled" "$(cat "$OUT")" "cancel output"
	assert_eq "CANCELLED cancelled: misspelt channel 1" "$(mysql_q "SELECT status, last_error, claimed_at IS NOT NULL FROM outbox_messages WHERE id = 2" | tr '\t' ' ')" "cancelled with reason"
	assert_exit 65 cg outbox cancel 4 5 6 999
	assert_grep '3 of 4 ids are not PENDING or FAILED messages' "$ERR"
	assert_eq "PROCESSING SENT CANCELLED" "$(mysql_q "SELECT status FROM outbox_messages WHERE id IN (4,5,6) ORDER BY id" | tr '\n' ' ' | sed 's/ $//')" "only FAILED cancelled"
	assert_eq "cancelled: by the operator" "$(mysql_q "SELECT last_error FROM outbox_messages WHERE id = 6")" "default reason"
}
test_expect_success 'cancel: PENDING and FAILED rows, with a reason; PROCESSING and SENT 65' \
    cancel_rows

# a CANCELLED row does not block its key: row 3 (same key as 2) is sent
key_unblocked()
{
	assert_exit 0 cg outbox dispatch
	assert_eq SENT "$(mysql_q "SELECT status FROM outbox_messages WHERE id = 3")" "key not blocked by CANCELLED"
	assert_eq CANCELLED "$(mysql_q "SELECT status FROM outbox_messages WHERE id = 2")" "CANCELLED never sent"
}
test_expect_success 'a CANCELLED row does not block its ordering key, and is never sent' \
    key_unblocked

# retry puts a CANCELLED row back; cancel again
retry_cancelled()
{
	assert_exit 0 cg outbox retry 6
	assert_eq "PENDING 0" "$(mysql_q "SELECT status, attempts FROM outbox_messages WHERE id = 6" | tr '\t' ' ')" "uncancelled"
	assert_exit 65 cg outbox retry 4 5
	assert_grep '2 of 2 ids are not PENDING, FAILED or CANCELLED messages' "$ERR"
	assert_exit 0 cg outbox cancel 6
}
test_expect_success 'retry puts a CANCELLED row back to PENDING' retry_cancelled

# purge ID: only finished rows
purge_ids()
{
	assert_exit 65 cg outbox purge 4 5
	assert_grep '1 of 2 ids are not SENT, FAILED or CANCELLED messages' "$ERR"
	assert_eq "deleted 1 message" "$(cat "$OUT")" "purge by id output"
	assert_eq 0 "$(rows 'id = 5')" "SENT row purged"
	assert_eq 1 "$(rows 'id = 4')" "PROCESSING row kept"
	assert_exit 64 cg outbox purge 6 --dry-run
	assert_exit 64 cg outbox purge 6 --sent-before 1d
	assert_exit 64 cg outbox purge x1
}
test_expect_success 'purge ID deletes only finished rows' purge_ids

# purge by age: CANCELLED rows like SENT ones
purge_age()
{
	mysql_q "UPDATE outbox_messages SET claimed_at = NOW(6) - INTERVAL 9 DAY WHERE id = 2"
	assert_exit 0 cg outbox purge --sent-before 7d
	assert_eq 0 "$(rows 'id = 2')" "old CANCELLED purged"
	assert_eq 1 "$(rows 'id = 6')" "recent CANCELLED kept"
	assert_exit 0 cg outbox list --status cancelled
	assert_eq 2 "$(wc -l < "$OUT" | tr -d ' ')" "list --status cancelled"
}
test_expect_success 'purge by age removes CANCELLED rows as SENT ones' purge_age

# list: last_error not cut mid-word; --wide prints it whole
last_error()
{
	local long line
	long='connection refused by upstream gateway while sending the webhook payload to the configured endpoint'
	mysql_q "UPDATE outbox_messages SET last_error = '$long' WHERE id = 6"
	assert_exit 0 cg outbox list --status cancelled
	line=$(tail -n 1 "$OUT")
	case $line in
	*'while sending the...') ;;
	*) fail "narrow list cut last_error mid-word: $line" ;;
	esac
	assert_exit 0 cg outbox list --status cancelled --wide
	assert_grep "$long\$" "$OUT"
}
test_expect_success 'list cuts last_error at a word; --wide prints it whole' \
    last_error

test_done
