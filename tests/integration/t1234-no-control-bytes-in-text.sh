#!/bin/sh
# No control character from a row reaches a terminal (cronguard(1),
# OUTPUT): ESC, BEL, CR, LF, NUL, DEL and the C1 CSI (U+009B) in
# event_type, channel, ordering_key, last_error and an attempt's detail
# are shown as visible escapes (\x1b, \a is \x07, \r, \n, \x00, \u009b)
# by outbox list (narrow and --wide) and outbox show, so no line can be
# forged ("status: SENT"); outbox list --format json keeps them, escaped
# as JSON does.  A pause reason written with SQL is shown the same way by
# jobs list and outbox check.  Servers: MariaDB.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

CHANNELS="channels = { hook = { type = \"http\"; url = \"http://127.0.0.1:1/\"; }; };
jobs = { nightly = { command = [ \"true\" ]; }; };"

# BAD: SQL for a text with every control character of the test.
BAD="CONCAT('a', CHAR(27), '[31m', CHAR(7), CHAR(13), CHAR(0), CHAR(127),
    _utf8mb4 X'C29B', '2J', CHAR(10), 'status: SENT')"

setup()
{
	write_config "$CONF" "$CHANNELS"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (id, channel, event_type,
	    ordering_key, payload, status, last_error) VALUES
	    (1, $BAD, $BAD, $BAD, JSON_OBJECT('k', $BAD), 'FAILED', $BAD);
	    INSERT INTO outbox_attempts (outbox_id, attempt, started_at,
	    duration_ms, outcome, status_code, detail, dispatcher,
	    claim_token) VALUES (1, 1, NOW(6), 1, 'FAILED', 550, $BAD,
	    $BAD, UUID());
	    INSERT INTO cronguard_channel_pauses (channel, paused_by, reason)
	    VALUES ('hook', $BAD, $BAD);
	    INSERT INTO cronguard_job_pauses (job, paused_by, reason)
	    VALUES ('nightly', $BAD, $BAD)"
	assert_eq 1 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE LOCATE(CHAR(27), event_type) > 0 AND LOCATE(CHAR(0), channel) > 0")" \
	    "the row holds the bytes"
}
test_expect_success SERVERS 'setup: a row, an attempt and pauses full of control characters' setup

# clean WHAT: $OUT has no control byte but its line ends, no C1 CSI.
clean()
{
	"$LIB_PY" - "$OUT" "$1" <<'PY'
import sys
d = open(sys.argv[1], 'rb').read()
bad = sorted({b for b in d if (b < 0x20 and b != 10) or b == 0x7f})
if bad or b'\xc2\x9b' in d:
    sys.stdout.write(sys.argv[2] + ': raw control bytes %r in:\n' % bad)
    sys.stdout.write(d.decode('utf-8', 'replace'))
    sys.exit(1)
PY
}

listing()
{
	assert_exit 0 cg outbox list
	clean "outbox list"
	assert_grep 'a\\x1b\[31m\\x07\\r\\x00\\x7f\\u009b2J\\nstatus: SENT' "$OUT"
	assert_eq 2 "$(wc -l < "$OUT")" "lines of outbox list"
	assert_exit 0 cg outbox list --wide
	clean "outbox list --wide"
	assert_eq 2 "$(wc -l < "$OUT")" "lines of outbox list --wide"
}
test_expect_success SERVERS 'outbox list: the bytes made visible' listing

showing()
{
	assert_exit 0 cg outbox show 1
	clean "outbox show"
	assert_eq 1 "$(grep -c '^status: ' "$OUT")" "status lines"
	assert_grep '^event_type: a\\x1b\[31m\\x07\\r\\x00\\x7f\\u009b2J\\nstatus: SENT$' "$OUT"
	assert_grep '^ordering_key: a\\x1b' "$OUT"
	assert_grep '^last_error: a\\x1b' "$OUT"
	assert_grep '^  1 .* FAILED 550 a\\x1b.*: a\\x1b' "$OUT"
}
test_expect_success SERVERS 'outbox show: every field made visible, no forged line' showing

json()
{
	assert_exit 0 cg outbox list --format json
	"$LIB_PY" - "$OUT" <<'PY' || fail "outbox list --format json"
import json, sys
want = 'a\x1b[31m\x07\r\x00\x7f\u009b2J\nstatus: SENT'
row = json.load(open(sys.argv[1]))[0]
for k in ('channel', 'event_type', 'ordering_key', 'last_error'):
    if row.get(k) != want:
        sys.exit('%s: %r' % (k, row.get(k)))
PY
}
test_expect_success SERVERS 'outbox list --format json: the text whole, escaped as JSON' json

pauses()
{
	assert_exit 0 cg jobs list
	clean "jobs list"
	assert_grep 'paused by a\\x1b.*: a\\x1b' "$OUT"
	assert_exit 1 cg outbox check --format nagios
	clean "outbox check"
	assert_eq 1 "$(wc -l < "$OUT")" "lines of outbox check"
	assert_eq 1 "$(tr -cd '|' < "$OUT" | wc -c)" "perfdata bars"
}
test_expect_success SERVERS 'pause reasons: jobs list and outbox check' pauses

test_done
