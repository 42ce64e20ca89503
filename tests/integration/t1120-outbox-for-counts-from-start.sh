#!/bin/sh
# `outbox dispatch --for D` counts D from the start of the process, not
# from a successful connect, and connect retries stop at the deadline
# (cronguard(1), outbox dispatch).
# 1. Nothing listens on the configured port: --for 3s exits 69 within
#    3 s + connect_timeout (not after connect_retry, 30 s, and then 3 s
#    more).
# 2. The database comes back 2 s after the start (a TCP relay to the test
#    server starts listening on the configured port then): --for 5s sends
#    the due rows and ends within 5.5 s of its start, not 2 s + 5 s.
# Cases: setup; unreachable for good; back after 2 s.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
port=$("$CRONGUARD_SRCDIR/scripts/free-port")
elapsed() { "$LIB_PY" -c "import time; print('%.2f' % (time.monotonic() - $1))"; }
now() { "$LIB_PY" -c 'import time; print(time.monotonic())'; }

setup()
{
	write_config "$CONF" "
	channels = { hook = { type = \"http\"; url = \"$HTTP_BASE/h\"; }; };"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'hook', 't', JSON_OBJECT('i', seq) FROM seq_1_to_10"
	sed "s/port = ${CRONGUARD_TEST_DB_PORT:-3306};/port = $port;/" "$CONF" \
	    > "$TEST_TMP/away.conf"
	grep -q "port = $port;" "$TEST_TMP/away.conf" || fail "port not rewritten"
}
test_expect_success 'setup: ten due rows; a configuration naming a port nothing listens on' \
    setup

# 1. unreachable for good
unreachable()
{
	local t0 el
	t0=$(now)
	assert_exit 69 "$CRONGUARD_BIN" -c "$TEST_TMP/away.conf" outbox dispatch --for 3s
	el=$(elapsed "$t0")
	echo "unreachable, --for 3s: exit 69 after ${el}s"
	"$LIB_PY" -c "import sys; sys.exit(0 if $el < 3 + 5 + 0.5 else 1)" ||
	    fail "--for 3s against an unreachable database ran ${el}s"
	assert_grep "event=db_connect_retry" "$ERR"
}
test_expect_success 'unreachable for good: --for 3s exits 69 within 3 s + connect_timeout' \
    unreachable

# 2. back after 2 s, through a relay to the real server
back()
{
	local t0 el relay
	cat > "$TEST_TMP/relay.py" <<'PY'
import socket, sys, threading, time
port, dport, delay = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
time.sleep(delay)
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", port))
ls.listen(16)
def pump(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
while True:
    c, _ = ls.accept()
    u = socket.create_connection(("127.0.0.1", dport))
    threading.Thread(target=pump, args=(c, u), daemon=True).start()
    threading.Thread(target=pump, args=(u, c), daemon=True).start()
PY
	t0=$(now)
	"$LIB_PY" "$TEST_TMP/relay.py" "$port" "${CRONGUARD_TEST_DB_PORT:-3306}" 2 &
	relay=$!
	at_exit "kill $relay 2>/dev/null"
	assert_exit 0 "$CRONGUARD_BIN" -c "$TEST_TMP/away.conf" -v outbox dispatch --for 5s
	el=$(elapsed "$t0")
	echo "back after 2 s, --for 5s: exit 0 after ${el}s"
	assert_grep "event=db_connect_retry" "$ERR"
	assert_eq 10 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'SENT'")" "sent"
	"$LIB_PY" -c "import sys; sys.exit(0 if $el < 5.5 else 1)" ||
	    fail "--for 5s with the database back after 2 s ran ${el}s"
}
test_expect_success 'back after 2 s: --for 5s sends and ends within 5.5 s of its start' \
    back

test_done
