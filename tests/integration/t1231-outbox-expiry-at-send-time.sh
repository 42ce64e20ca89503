#!/bin/sh
# Expiry holds at send time (cronguard-outbox(7), EXPIRY AND DELAY): rows
# that expire while queued behind a slow endpoint (one at a time, 1 s
# each, 2.5 s to live) are FAILED with last_error "expired ...", never
# sent after their expires_at; serial and pipelined alike.  The rows are
# claimed in one batch while none has expired, so only the check just
# before each send holds them back.  Servers: MariaDB, HTTP.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

# config PIPELINE: one slow channel, one send at a time.
config()
{
	write_config "$CONF" "outbox = { pipeline = $1; batch_size = 20; };
channels = { slow = { type = \"http\"; url = \"$HTTP_BASE/$1/delay=1000\";
  concurrency = 1; timeout = \"5s\"; }; };"
}

setup()
{
	config 1
	CRONGUARD_SQLDIR="${CRONGUARD_SQLDIR:-$CRONGUARD_SRCDIR/sql}" \
	    assert_exit 0 cg db migrate
}
test_expect_success SERVERS 'setup: db migrate' setup

# expire_while_queued PIPELINE: 8 rows, 2.5 s to live, behind 1 s sends.
expire_while_queued()
{
	local i sent failed req late
	config "$1"
	mysql_q "DELETE FROM outbox_messages"
	for i in 1 2 3 4 5 6 7 8; do
		mysql_q "INSERT INTO outbox_messages (channel, event_type,
		    payload, expires_at) VALUES ('slow', 'e$i', '{\"i\":$i}',
		    NOW(6) + INTERVAL 2500000 MICROSECOND)"
	done
	assert_exit 0 cg outbox dispatch
	sent=$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status = 'SENT'")
	failed=$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE status = 'FAILED' AND last_error LIKE 'expired: expires_at %'
	    AND attempts = 0")
	assert_eq 8 "$((sent + failed))" "SENT + FAILED expired (sent $sent)"
	[ "$failed" -ge 3 ] || fail "only $failed rows expired"
	req=$(http_count "/$TEST_ID/$1/")
	assert_eq "$sent" "$req" "requests: the SENT rows only"
	# No request arrived after its row's expires_at.
	http_requests "/$TEST_ID/$1/" | "$LIB_PY" -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    print("%s %.6f" % (r["headers"]["webhook-id"], r["time"]))' |
	while read -r id t; do
		late=$(mysql_q "SELECT UNIX_TIMESTAMP(expires_at) < $t
		    FROM outbox_messages WHERE message_id = '$id'")
		assert_eq 0 "$late" "message $id sent after its expires_at"
	done
}
test_expect_success SERVERS 'serial: rows expiring while queued are not sent' \
    'expire_while_queued 1'
test_expect_success SERVERS 'pipelined: rows expiring while queued are not sent' \
    'expire_while_queued 2'

test_done
