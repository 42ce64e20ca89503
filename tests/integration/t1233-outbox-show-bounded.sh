#!/bin/sh
# outbox show is bounded (cronguard(1), outbox show): the attempt log is
# read newest first, --attempts N of it (default 20) with its total
# count, so memory does not grow with the log.  A row with 200,000
# attempt rows and one with 10: the same page and a peak RSS within 4 MiB
# of each other (both runs of the same binary, so a sanitizer's overhead
# is the same in both); --attempts 0 shows only the count; a bad
# --attempts is exit 64.  Servers: MariaDB.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

CHANNELS="channels = { hook = { type = \"http\"; url = \"http://127.0.0.1:1/\"; }; };"

# attempts ID N: N attempt rows for message ID, set-based, each with a
# detail of about 200 bytes.
attempts()
{
	mysql_q "INSERT INTO outbox_attempts (outbox_id, attempt, started_at,
	    duration_ms, outcome, status_code, detail, dispatcher, claim_token)
	    SELECT $1, seq, NOW(6) - INTERVAL ($2 - seq) SECOND, 12, 'RETRY',
	    503, CONCAT('http 503: ', REPEAT('x', 190), ' #', seq),
	    'web1:42', UUID() FROM seq_1_to_$2"
}

setup()
{
	write_config "$CONF" "$CHANNELS"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (id, channel, event_type, payload,
	    attempts) VALUES (1, 'hook', 't', '{}', 200000),
	    (2, 'hook', 't', '{}', 10)"
	attempts 1 200000
	attempts 2 10
}
test_expect_success SERVERS 'setup: db migrate, 200,000 attempts and 10' setup

# lines: the attempt lines of $OUT.
lines() { grep -c '^  [0-9]' "$OUT" || true; }

paged()
{
	assert_exit 0 cg outbox show 2
	assert_grep '^attempts logged: 10$' "$OUT"
	assert_eq 10 "$(lines)" "attempt lines of 10"
	assert_eq 10 "$(grep '^  [0-9]' "$OUT" | head -1 | cut -d' ' -f3)" \
	    "newest first"
	assert_exit 0 cg outbox show 1
	assert_grep '^attempts logged: 200000 \(the newest 20 shown; --attempts N for more\)$' "$OUT"
	assert_eq 20 "$(lines)" "attempt lines of 200,000 (default)"
	assert_eq 200000 "$(grep '^  [0-9]' "$OUT" | head -1 | cut -d' ' -f3)" \
	    "newest first"
	assert_eq 199981 "$(grep '^  [0-9]' "$OUT" | tail -1 | cut -d' ' -f3)" \
	    "the 20th newest last"
	assert_exit 0 cg outbox show 1 --attempts 3
	assert_eq 3 "$(lines)" "--attempts 3"
	assert_exit 0 cg outbox show --attempts 0 1
	assert_grep '^attempts logged: 200000 \(the newest 0 shown' "$OUT"
	assert_eq 0 "$(lines)" "--attempts 0"
	for bad in -1 x 100001; do
		assert_exit 64 cg outbox show 1 --attempts "$bad"
		assert_grep 'attempts' "$ERR"
	done
}
test_expect_success SERVERS 'newest first, 20 by default, with the total' paged

# rss ID: the peak RSS in KiB of outbox show ID.
rss()
{
	/usr/bin/time -f %M -o "$TEST_TMP/rss" "$CRONGUARD_BIN" -c "$CONF" \
	    outbox show "$1" > /dev/null 2>&1 || fail "outbox show $1 failed"
	tail -1 "$TEST_TMP/rss"
}

bounded()
{
	local small big
	[ -x /usr/bin/time ] || { echo "no /usr/bin/time"; return 0; }
	small=$(rss 2)
	big=$(rss 1)
	echo "peak RSS: 10 attempts ${small} KiB, 200,000 attempts ${big} KiB"
	[ "$big" -le $((small + 4096)) ] ||
	    fail "200,000 attempts took $((big - small)) KiB more than 10"
}
test_expect_success SERVERS 'memory: 200,000 attempts within 4 MiB of 10' bounded

test_done
