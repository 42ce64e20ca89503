#!/bin/sh
# An SMTP server that refuses the connection or the sender is the
# channel's fault, not the messages' (cronguard-outbox(7), FAILURES): a 554
# greeting, a 550 to MAIL FROM, a 5xx to both EHLO and HELO.  Each of 50
# rows stays PENDING with no attempt and next_attempt_at unchanged, the
# circuit opens at the first refusal (circuit.failures = 5
# notwithstanding), and one channel_rejected incident is reported.  A
# 552 to MAIL FROM (the SIZE limit) stays the message's own permanent
# failure.  The server is a few lines of Python on a free port.
# Cases: setup; a 554 greeting; a 550 to MAIL FROM; a 5xx to EHLO and
# HELO; a 552 to MAIL FROM.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
cat > "$TEST_TMP/refuse.py" <<'PY'
import socket, sys, threading
mode, ready = sys.argv[1], sys.argv[2]
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", 0))
ls.listen(64)
def serve(c):
    f = c.makefile("rb")
    def say(line):
        c.sendall(line.encode() + b"\r\n")
    if mode == "greeting":
        say("554 5.7.1 no service for you")
    else:
        say("220 refuse.test ESMTP")
    for raw in f:
        cmd = raw.decode("latin-1").strip().upper()
        if cmd.startswith("QUIT"):
            say("221 bye")
            break
        if cmd.startswith("EHLO") or cmd.startswith("HELO"):
            if mode == "ehlo":
                say("550 5.7.1 go away")
            else:
                say("250 refuse.test")
        elif cmd.startswith("MAIL FROM"):
            if mode == "mail":
                say("550 5.7.1 sender refused")
            elif mode == "size":
                say("552 5.3.4 message too big")
            else:
                say("250 ok")
        else:
            say("503 5.5.1 bad sequence")
    c.close()
port = ls.getsockname()[1]
with open(ready + ".tmp", "w") as fh:
    fh.write(str(port))
import os
os.rename(ready + ".tmp", ready)
while True:
    c, _ = ls.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY

ready() { [ -s "$TEST_TMP/ready" ]; }

setup()
{
	write_config "$CONF"
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: db migrate' setup

# refused MODE: 50 rows to the server refusing as MODE says (refuse.py).
refused()
{
	local mode=$1 srv port before reply
	rm -f "$TEST_TMP/ready"
	"$LIB_PY" "$TEST_TMP/refuse.py" "$mode" "$TEST_TMP/ready" &
	srv=$!
	at_exit "kill $srv 2>/dev/null"
	wait_for 10 ready
	port=$(cat "$TEST_TMP/ready")
	write_config "$CONF" "
outbox = { batch_size = 50; };
channels = { mail = { type = \"smtp\"; url = \"smtp://127.0.0.1:$port\";
  from = \"noreply@example.com\"; timeout = \"3s\"; connections = 4;
  circuit = { failures = 5; cooldown = \"1m\"; }; }; };"
	mysql_q "DELETE FROM outbox_messages; DELETE FROM cronguard_channels;
	    INSERT INTO outbox_messages (channel, event_type, payload, next_attempt_at)
	    SELECT 'mail', 't', JSON_OBJECT('to', CONCAT('u', seq, '@$MAIL_DOMAIN'), 'text', 'x'),
	    NOW(6) - INTERVAL 1 SECOND FROM seq_1_to_50"
	before=$(mysql_q "SELECT GROUP_CONCAT(id, ':', next_attempt_at ORDER BY id)
	    FROM outbox_messages")
	assert_exit 0 cg outbox dispatch
	kill "$srv"
	if [ "$mode" = size ]; then
		assert_eq "50" "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
		    WHERE status = 'FAILED' AND last_error LIKE '%552 5.3.4%'")" \
		    "$mode: FAILED rows with the reply"
		if grep -q channel_rejected "$ERR"; then
			fail "$mode: reported as a channel refusal"
		fi
		return 0
	fi
	assert_eq "50 0" "$(mysql_q "SELECT COUNT(*), SUM(attempts) FROM outbox_messages
	    WHERE status = 'PENDING'" | tr '\t' ' ')" "$mode: PENDING rows, attempts"
	assert_eq "$before" "$(mysql_q "SELECT GROUP_CONCAT(id, ':', next_attempt_at ORDER BY id)
	    FROM outbox_messages")" "$mode: next_attempt_at"
	assert_eq 1 "$(grep -c 'level=error event=channel_rejected incident=1 channel=mail' "$ERR")" \
	    "$mode: incidents"
	case $mode in
	greeting) reply='refused the connection: 554 5\.7\.1 no service' ;;
	mail) reply='refused the sender \(MAIL FROM\): 550 5\.7\.1 sender refused' ;;
	ehlo) reply='refused the EHLO: 550 5\.7\.1 go away' ;;
	esac
	assert_grep "event=channel_rejected .*detail=\"smtp: the server $reply" "$ERR"
	# One failure per connection that was refused (connections = 4).
	assert_grep "event=circuit_open channel=mail failures=[1-4] " "$ERR"
	assert_eq 1 "$(mysql_q "SELECT COUNT(*) FROM cronguard_channels
	    WHERE name = 'mail' AND circuit_open_until > NOW(6)")" "$mode: circuit open"
	echo "$mode: 50 rows PENDING, attempts 0, circuit open, one incident"
}
test_expect_success 'a 554 greeting: rows PENDING, circuit open, one incident' \
    'refused greeting'
test_expect_success 'a 550 to MAIL FROM: rows PENDING, circuit open, one incident' \
    'refused mail'
test_expect_success 'a 5xx to EHLO and HELO: rows PENDING, circuit open, one incident' \
    'refused ehlo'
test_expect_success 'a 552 to MAIL FROM (SIZE) stays the messages'"'"' own failure' \
    'refused size'

test_done
