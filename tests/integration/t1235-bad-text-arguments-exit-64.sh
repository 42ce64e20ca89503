#!/bin/sh
# Bad text arguments are exit 64 before any statement, in every command
# that takes them (cronguard(1), EXIT STATUS), through the one validator
# of an operator's text: a --reason of 5,000 bytes, with byte FF or with
# a UTF-16 surrogate (ED A0 80) for jobs ack and outbox cancel (as for
# outbox pause and jobs pause, t1232; a cancel reason may be as long as
# last_error holds, t1103); the same bytes, or a text longer than its
# column, in outbox cancel's and retry's --error, --event-type and
# --channel filters and outbox list's --channel.  Nothing is written, and
# a database that cannot be reached changes nothing (64).
# Servers: MariaDB.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

CHANNELS="channels = { hook = { type = \"http\"; url = \"http://127.0.0.1:1/\"; }; };
jobs = { nightly = { command = [ \"true\" ]; }; };"

setup()
{
	write_config "$CONF" "$CHANNELS"
	assert_exit 0 cg db migrate
	sed 's/^  port = .*/  port = 1;/' "$CONF" > "$TEST_TMP/down.conf"
	head -c 5000 /dev/zero | tr '\0' r > "$TEST_TMP/long"
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload,
	    status, last_error) VALUES ('hook', 't', '{}', 'FAILED', 'x')"
}
test_expect_success SERVERS 'setup: db migrate, a FAILED row' setup

bad_everywhere()
{
	assert_exit 64 cg "$@"
	assert_exit 64 "$CRONGUARD_BIN" -c "$TEST_TMP/down.conf" "$@"
}

# bad_texts MAX OPTION CMD...: CMD OPTION TEXT is 64 for a TEXT of byte
# FF, of a surrogate and, unless MAX is -, of MAX + 1 bytes.
bad_texts()
{
	local max=$1 opt=$2 ff sur
	shift 2
	ff=$(printf 'bad \377 byte')
	sur=$(printf 'half \355\240\200 pair')
	if [ "$max" != - ]; then
		bad_everywhere "$@" "$opt" "$(head -c $((max + 1)) "$TEST_TMP/long")"
		assert_grep "more than the limit of $max" "$ERR"
	fi
	bad_everywhere "$@" "$opt" "$ff"
	assert_grep "not valid UTF-8" "$ERR"
	bad_everywhere "$@" "$opt" "$sur"
	assert_grep "not valid UTF-8" "$ERR"
}

reasons()
{
	bad_texts 1024 --reason jobs ack nightly
	# a cancel reason may be as long as last_error holds (t1103)
	bad_texts - --reason outbox cancel --channel hook
	assert_eq "FAILED 0" "$(mysql_q "SELECT status, (SELECT COUNT(*)
	    FROM cronguard_job_acks) FROM outbox_messages" | tr '\t' ' ')" \
	    "nothing cancelled or acknowledged"
}
test_expect_success SERVERS 'jobs ack, outbox cancel --reason: 64' reasons

filters()
{
	bad_texts 1024 --error outbox cancel
	bad_texts - --event-type outbox cancel
	bad_texts - --error outbox retry --failed
	bad_texts 1024 --channel outbox retry --failed
	bad_texts - --channel outbox list
	assert_eq "FAILED" "$(mysql_q "SELECT status FROM outbox_messages")" \
	    "nothing changed"
}
test_expect_success SERVERS 'filters: --error, --event-type, --channel: 64' filters

test_done
