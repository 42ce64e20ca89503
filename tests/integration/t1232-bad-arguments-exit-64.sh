#!/bin/sh
# Bad arguments are exit 64 before any statement (cronguard(1), EXIT
# STATUS): outbox pause --reason over 1024 bytes, with byte FF or with a
# UTF-16 surrogate (ED A0 80); outbox enqueue --at before 1970 or after
# 2038; the same reasons for jobs pause.  Nothing is written, and a
# database that cannot be reached changes nothing (64, not 69).
# Servers: MariaDB.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

CHANNELS="channels = { hook = { type = \"http\"; url = \"http://127.0.0.1:1/\"; }; };
jobs = { nightly = { command = [ \"true\" ]; }; };"

setup()
{
	write_config "$CONF" "$CHANNELS"
	CRONGUARD_SQLDIR="${CRONGUARD_SQLDIR:-$CRONGUARD_SRCDIR/sql}" \
	    assert_exit 0 cg db migrate
	# the same, with a database nobody listens on
	sed 's/^  port = .*/  port = 1;/' "$CONF" > "$TEST_TMP/down.conf"
	head -c 5000 /dev/zero | tr '\0' r > "$TEST_TMP/long"
}
test_expect_success SERVERS 'setup: db migrate' setup

# bad_everywhere CMD...: exit 64 with the database up and down.
bad_everywhere()
{
	assert_exit 64 cg "$@"
	assert_exit 64 "$CRONGUARD_BIN" -c "$TEST_TMP/down.conf" "$@"
}

bad_reasons()
{
	local ff sur long
	ff=$(printf 'bad \377 byte')
	sur=$(printf 'half \355\240\200 pair')
	long=$(cat "$TEST_TMP/long")
	for cmd in "outbox pause hook" "jobs pause nightly"; do
		# shellcheck disable=SC2086
		bad_everywhere $cmd --reason "$long"
		assert_grep "more than the limit of 1024" "$ERR"
		# shellcheck disable=SC2086
		bad_everywhere $cmd --reason "$ff"
		assert_grep "not valid UTF-8" "$ERR"
		# shellcheck disable=SC2086
		bad_everywhere $cmd --reason "$sur"
		assert_grep "not valid UTF-8" "$ERR"
	done
	assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM cronguard_channel_pauses")" \
	    "pauses written"
}
test_expect_success SERVERS 'reasons: too long, FF, a surrogate: 64' bad_reasons

bad_times()
{
	local at
	for at in 1969-07-17T17:59:00Z 9999-01-01T00:00:00Z \
	    2038-01-19T03:14:08Z; do
		bad_everywhere outbox enqueue --channel hook --type t \
		    --payload '{}' --at "$at"
		assert_grep "out of range" "$ERR"
	done
	assert_exit 0 cg outbox enqueue --channel hook --type t \
	    --payload '{}' --at 2038-01-19T03:14:07Z
	assert_eq 1 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages")" \
	    "rows written: the one in range"
}
test_expect_success SERVERS 'enqueue --at before 1970 or after 2038: 64' bad_times

test_done
