#!/bin/sh
# Expiry and delay (cronguard-outbox(7), EXPIRY AND DELAY): a row past its
# expires_at is never delivered, it becomes FAILED with last_error
# "expired ...", counted expired by outbox check; a channel's ttl applies
# to rows inserted by plain SQL; a delayed row (--delay, --at) waits until
# its time.  Bad input is refused with a clear error and nothing written.
# Cases: setup; expiry and ttl; --delay and --at; bad input.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

st() { mysql_q "SELECT status FROM outbox_messages WHERE event_type = '$1'"; }

setup()
{
	write_config "$CONF" "
channels = {
  hook = { type = \"http\"; url = \"$HTTP_BASE/hook\"; };
  remind = { type = \"http\"; url = \"$HTTP_BASE/remind\"; ttl = \"2s\"; };
};"
	assert_exit 0 cg db migrate
}
test_expect_success SERVERS 'setup: configuration, db migrate' setup

# expires_at in the past (SQL) and --expires-in: never sent.
expiry_and_ttl()
{
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload, expires_at)
	    VALUES ('hook', 'past', '{\"p\":1}', NOW(6) - INTERVAL 1 SECOND),
	           ('hook', 'future', '{\"p\":2}', NOW(6) + INTERVAL 1 HOUR)"
	assert_exit 0 cg outbox enqueue --channel hook --type soon --expires-in 1s --delay 2s --payload '{"p":3}'
	# ttl: a reminder inserted by SQL 3 s ago is past the channel's 2 s.
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload, created_at)
	    VALUES ('remind', 'old', '{\"r\":1}', NOW(6) - INTERVAL 3 SECOND),
	           ('remind', 'new', '{\"r\":2}', NOW(6))"
	assert_exit 0 cg outbox dispatch
	assert_eq FAILED "$(st past)" "expires_at passed"
	assert_eq SENT "$(st future)" "expires_at ahead"
	assert_eq PENDING "$(st soon)" "delayed row waits"
	assert_eq FAILED "$(st old)" "ttl passed"
	assert_eq SENT "$(st new)" "within ttl"
	assert_eq 2 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE last_error LIKE 'expired%'")" "last_error"
	mysql_q "SELECT last_error FROM outbox_messages WHERE event_type = 'old'" > "$TEST_TMP/err-old"
	assert_grep "^expired: its channel's ttl passed" "$TEST_TMP/err-old"
	sleep 2.2
	assert_exit 0 cg outbox dispatch
	assert_eq FAILED "$(st soon)" "--expires-in shorter than --delay: expired"
	assert_eq 1 "$(http_count "/$TEST_ID/hook")" "hook requests: the unexpired row only"
	assert_eq 1 "$(http_count "/$TEST_ID/remind")" "remind requests: the one within ttl"
	assert_exit 1 cg outbox check --format json
	assert_grep '"expired": ?3' "$OUT"
	assert_exit 1 cg outbox check --format prometheus
	assert_grep '^cronguard_outbox_expired 3$' "$OUT"
}
test_expect_success SERVERS 'expires_at, --expires-in and a channel ttl: FAILED, never sent' \
    expiry_and_ttl

# --delay and --at: due later.
delay_and_at()
{
	local at at1
	assert_exit 0 cg outbox enqueue --channel hook --type later --delay 1h --payload '{"l":1}'
	at=$(date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ)
	assert_exit 0 cg outbox enqueue --channel hook --type atted --at "$at" --payload '{"l":2}'
	assert_eq 1 "$(mysql_q "SELECT next_attempt_at > NOW(6) + INTERVAL 59 MINUTE FROM outbox_messages WHERE event_type = 'later'")" "--delay"
	assert_eq 1 "$(mysql_q "SELECT ABS(TIMESTAMPDIFF(SECOND, next_attempt_at, NOW(6) + INTERVAL 2 HOUR)) < 5 FROM outbox_messages WHERE event_type = 'atted'")" "--at"
	at1=$(date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%S+01:00)
	assert_exit 0 cg outbox enqueue --channel hook --type offset --at "$at1" --payload '{"l":3}'
	assert_eq 1 "$(mysql_q "SELECT ABS(TIMESTAMPDIFF(SECOND, next_attempt_at, NOW(6))) < 5 FROM outbox_messages WHERE event_type = 'offset'")" "--at with an offset"
	assert_exit 0 cg outbox dispatch
	assert_eq PENDING "$(st later)" "delayed row"
	assert_eq PENDING "$(st atted)" "row due --at later"
	assert_eq SENT "$(st offset)" "row due --at now (offset)"
}
test_expect_success SERVERS '--delay and --at (with an offset): due later' \
    delay_and_at

# Bad input: clear errors, nothing inserted.
bad_input()
{
	local n at
	at=$(date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ)
	n=$(mysql_q "SELECT COUNT(*) FROM outbox_messages")
	assert_exit 64 cg outbox enqueue --channel hook --type t --at "tomorrow" --payload '{}'
	assert_grep 'at: bad time "tomorrow": expected RFC 3339' "$ERR"
	assert_exit 64 cg outbox enqueue --channel hook --type t --at "2026-02-30T10:00:00Z" --payload '{}'
	assert_exit 64 cg outbox enqueue --channel hook --type t --delay -1s --payload '{}'
	assert_grep 'delay: -1s' "$ERR"
	assert_exit 64 cg outbox enqueue --channel hook --type t --delay 1s --at "$at" --payload '{}'
	assert_exit 64 cg outbox enqueue --channel hook --type t --expires-in 0s --payload '{}'
	assert_eq "$n" "$(mysql_q "SELECT COUNT(*) FROM outbox_messages")" "rows after bad input"
	write_config "$TEST_TMP/bad.conf" "
channels = { hook = { type = \"http\"; url = \"$HTTP_BASE/hook\"; ttl = \"0s\"; }; };"
	if "$CRONGUARD_BIN" -c "$TEST_TMP/bad.conf" config check > "$OUT" 2> "$ERR"; then
		fail "ttl = 0s accepted"
	fi
	assert_grep 'ttl' "$ERR"
}
test_expect_success SERVERS 'bad input: clear errors, nothing inserted; ttl = 0s refused' \
    bad_input

test_done
