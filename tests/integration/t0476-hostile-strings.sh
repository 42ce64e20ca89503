#!/bin/sh
# Hostile strings: quotes, backslashes, `%` conversions, SQL
# text, multibyte and 4-byte UTF-8, control characters, given as channel
# names, event types, ordering keys and lock names to every command that
# takes them, are stored and read back byte for byte (HEX() of the
# column against the bytes given), and the SQL they carry never runs.
# Lock names are printable ASCII by design: the others are refused (64).
# A NUL byte cannot travel in argv; invalid UTF-8 is refused as bad input
# (exit 65, no row), never stored mangled and never "database
# unavailable".
# Cases: setup; every string byte for byte; invalid UTF-8.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
hex() { printf '%s' "$1" | od -An -tx1 -v | tr -d ' \n' | tr 'a-f' 'A-F'; }

setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";"
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: db migrate' setup

byte_for_byte()
{
	local n locks s id want
	# One string per line (read from fd 3: the commands keep stdin).
	{
		printf '%s\n' "it's" 'back\slash\\ and \"quote\"' '%s%d%n%%%L%F%R%I' \
		    "x'); DROP TABLE outbox_messages; -- " \
		    '"; DELETE FROM cronguard_runs WHERE "1"="1' '예약 확정 😀' \
		    '`backtick` $dollar ?qmark'
		printf 'tab\there cr\rlf\n'
	} > "$TEST_TMP/strings"
	n=0 locks=0
	while IFS= read -r s <&3; do
		n=$((n + 1))
		# channel, event type and ordering key, all at once
		assert_exit 0 cg outbox enqueue --channel "$s" --type "$s" --key "$s" \
		    --payload '{"n": 1}'
		id=$(cut -d' ' -f1 "$OUT")
		want=$(hex "$s")
		assert_eq "$want $want $want" "$(mysql_q "SELECT HEX(channel),
	    HEX(event_type), HEX(ordering_key) FROM outbox_messages
	    WHERE id = $id" | tr '\t' ' ')" "enqueue #$n stored byte for byte"
		# read back through outbox list --format json (--channel filter too)
		assert_exit 0 cg outbox list --channel "$s" --format json
		/usr/bin/python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))
s = sys.argv[2]
assert len(rows) == 1, rows
r = rows[0]
assert r["channel"] == s and r["event_type"] == s and r["ordering_key"] == s, r
' "$OUT" "$s" || fail "outbox list #$n did not read back the string"
		# operator commands on the row with the string as reason
		assert_exit 0 cg outbox cancel --reason "$s" "$id"
		assert_eq "$(hex "cancelled: $s")" "$(mysql_q "SELECT HEX(last_error)
	    FROM outbox_messages WHERE id = $id")" "cancel reason #$n"
		# a lock name (at most 64 characters: every one here is shorter);
		# lock names are printable ASCII by design (cronguard(1)): others are
		# a usage error naming the option, and nothing runs
		if printf '%s' "$s" | LC_ALL=C grep -q '[^ -~]'; then
			assert_exit 64 cg exec --lock "$s" -- touch "$TEST_TMP/ran"
			assert_grep 'lock name is not printable ASCII' "$ERR"
			[ ! -e "$TEST_TMP/ran" ] || fail "job ran under a refused lock name"
			continue
		fi
		locks=$((locks + 1))
		assert_exit 0 cg exec --lock "$s" -- true
		assert_eq "$want" "$(mysql_q "SELECT HEX(lock_name) FROM cronguard_runs
	    ORDER BY id DESC LIMIT 1")" "lock name #$n stored byte for byte"
	done 3< "$TEST_TMP/strings"
	[ "$n" -eq 8 ] || fail "read $n strings, expected 8"
	assert_eq "$n" "$(mysql_q "SELECT COUNT(*) FROM outbox_messages")" "one row per string"
	[ "$locks" -eq 6 ] || fail "$locks printable lock names, expected 6"
	assert_eq "$locks" "$(mysql_q "SELECT COUNT(*) FROM cronguard_runs WHERE outcome = 'success'")" "runs recorded"
	echo "$n" > "$TEST_TMP/n"
}
test_expect_success 'each string stored and read back byte for byte, its SQL never run' \
    byte_for_byte

# Invalid UTF-8 is bad input: 65 naming the option, nothing stored.
invalid_utf8()
{
	local n bad
	n=$(cat "$TEST_TMP/n")
	bad=$(printf 'caf\351')
	assert_exit 65 cg outbox enqueue --channel "$bad" --type t --payload '{}'
	assert_grep 'channel' "$ERR"
	assert_exit 65 cg outbox enqueue --channel hook --type t --key "$bad" --payload '{}'
	assert_eq "$n" "$(mysql_q "SELECT COUNT(*) FROM outbox_messages")" "nothing stored for invalid UTF-8"
}
test_expect_success 'invalid UTF-8: exit 65 naming the option, nothing stored' \
    invalid_utf8

test_done
