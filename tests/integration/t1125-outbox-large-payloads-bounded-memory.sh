#!/bin/sh
# Memory stays bounded with large payloads: outbox.max_batch_bytes (64 MiB
# by default) caps the payload bytes a dispatcher holds claimed, across
# its pipelined batches, and a claim still takes one row larger than the
# budget.  40 rows of 8 MB to an HTTP sink drain at the defaults with a
# peak RSS of at most 256 MiB (/usr/bin/time -v; under AddressSanitizer,
# whose shadow memory and quarantine inflate RSS, the bound is only
# reported).  max_size on an http channel: a row over it is FAILED with
# the size and the limit, never dropped, and the others are sent.
# Cases: setup; 40 rows of 8 MB; a budget smaller than one row.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
cat > "$TEST_TMP/sink.py" <<'PY'
import http.server, os, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        while n > 0:
            n -= len(self.rfile.read(min(n, 1 << 20)))
        with open(sys.argv[1] + ".log", "a") as f:
            f.write(self.headers.get("webhook-id", "-") + "\n")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(s.server_address[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()
PY
"$LIB_PY" "$TEST_TMP/sink.py" "$TEST_TMP/sink" &
sink=$!
at_exit "kill $sink 2>/dev/null"
up() { [ -s "$TEST_TMP/sink" ]; }
wait_for 10 up
port=$(cat "$TEST_TMP/sink")

setup()
{
	write_config "$CONF" "
channels = { hook = { type = \"http\"; url = \"http://127.0.0.1:$port/in\"; timeout = \"30s\"; }; };"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'hook', 't', JSON_OBJECT('n', seq, 'pad', REPEAT('x', 8000000))
	    FROM seq_1_to_40"
}
test_expect_success 'setup: db migrate, 40 rows of 8 MB' setup

bounded()
{
	local rss
	/usr/bin/time -v -o "$TEST_TMP/time" "$CRONGUARD_BIN" -c "$CONF" -vv outbox dispatch \
	    > "$OUT" 2> "$ERR" || { cat "$ERR" | tail -20; fail "dispatch failed"; }
	rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$TEST_TMP/time")
	echo "40 rows of 8 MB at the defaults: peak RSS $((rss / 1024)) MiB"
	assert_eq "40 40" "$(mysql_q "SELECT COUNT(*), SUM(attempts) FROM outbox_messages
	    WHERE status = 'SENT'" | tr '\t' ' ')" "sent"
	assert_eq 40 "$(sort -u "$TEST_TMP/sink.log" | wc -l | tr -d ' ')" "received"
	# No claim held more than the budget, but for a single row.
	grep 'event=outbox_batch ' "$ERR" | sed -n 's/.* count=\([0-9]*\) .*/\1/p' |
	    sort -n | tail -1 > "$TEST_TMP/most"
	[ "$(cat "$TEST_TMP/most")" -le 8 ] || fail "a batch of $(cat "$TEST_TMP/most") rows of 8 MB"
	if nm -D "$CRONGUARD_BIN" 2>/dev/null | grep -q __asan_init ||
	    nm "$CRONGUARD_BIN" 2>/dev/null | grep -q __asan_init; then
		echo "AddressSanitizer build: RSS bound not asserted"
	else
		[ "$rss" -le $((256 * 1024)) ] || fail "peak RSS $((rss / 1024)) MiB > 256 MiB"
	fi
}
test_expect_success '40 rows of 8 MB drain at the defaults, each claim within the budget' \
    bounded

# A budget smaller than one row: each claim takes one row.
one_row()
{
	write_config "$CONF" "
outbox = { max_batch_bytes = \"1M\"; };
channels = { hook = { type = \"http\"; url = \"http://127.0.0.1:$port/in\";
  timeout = \"30s\"; max_size = 5000000; }; };"
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'hook', 'big', JSON_OBJECT('n', seq, 'pad', REPEAT('x', IF(seq = 2, 6000000, 2000000)))
	    FROM seq_1_to_3"
	assert_exit 0 cg -vv outbox dispatch
	assert_eq "SENT SENT" "$(mysql_q "SELECT GROUP_CONCAT(status ORDER BY id SEPARATOR ' ')
	    FROM outbox_messages WHERE event_type = 'big' AND JSON_VALUE(payload, '$.n') <> 2")" "small rows"
	mysql_q "SELECT status, last_error FROM outbox_messages WHERE event_type = 'big'
	    AND JSON_VALUE(payload, '$.n') = 2" | grep -q "^FAILED	payload too large: 60000[0-9]* bytes, max_size 5000000$" ||
	    fail "row over max_size: $(mysql_q "SELECT status, last_error FROM outbox_messages WHERE event_type = 'big'")"
	assert_eq 0 "$(grep 'event=outbox_batch ' "$ERR" | grep -vc ' count=1 ')" "batches of more than one row"
}
test_expect_success 'a budget smaller than one row: one row a claim; over max_size FAILED' \
    one_row

test_done
