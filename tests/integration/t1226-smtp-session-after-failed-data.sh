#!/bin/sh
# SMTP session hygiene (cronguard-outbox(7), MAIL PAYLOAD): a server that
# fails one DATA and then, on that same connection, refuses the next MAIL
# FROM ("503 nested MAIL command", a session left in doubt).  The message
# whose DATA failed is retried with its own DATA reply as last_error; the
# next messages go out on a fresh session; no row gets QUIT's "221" as its
# error.  The server is this test's own (Python, below).
# Cases: setup; one dispatch; the retry.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers

cat > "$TEST_TMP/smtp.py" <<'PY'
import socket, socketserver, sys, threading
state = {"data": 0, "conns": 0, "stored": 0}
lock = threading.Lock()
class H(socketserver.StreamRequestHandler):
    def say(self, s):
        self.wfile.write((s + "\r\n").encode()); self.wfile.flush()
    def handle(self):
        with lock:
            state["conns"] += 1
        dirty = False
        self.say("220 t1226 ESMTP")
        while True:
            line = self.rfile.readline()
            if not line:
                return
            cmd = line.decode("latin-1").strip().upper()
            if cmd.startswith(("EHLO", "HELO")):
                self.say("250 t1226")
            elif cmd.startswith("MAIL FROM"):
                self.say("503 5.5.1 Error: nested MAIL command" if dirty else "250 2.1.0 ok")
            elif cmd.startswith("RCPT TO"):
                self.say("250 2.1.5 ok")
            elif cmd == "DATA":
                with lock:
                    state["data"] += 1
                    first = state["data"] == 1
                if first:
                    # the transaction is not ended: the server stays in it
                    dirty = True
                    self.say("451 4.3.0 DATA failed: try again")
                    continue
                self.say("354 go ahead")
                while self.rfile.readline() not in (b".\r\n", b".\n", b""):
                    pass
                with lock:
                    state["stored"] += 1
                self.say("250 2.0.0 queued")
            elif cmd == "RSET":
                dirty = False
                self.say("250 2.0.0 reset")
            elif cmd == "NOOP":
                self.say("250 2.0.0 ok")
            elif cmd == "QUIT":
                self.say("221 2.0.0 Bye")
                return
            else:
                self.say("500 5.5.2 unknown")
class S(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True
srv = S(("127.0.0.1", 0), H)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
def report():
    with open(sys.argv[2] + ".tmp", "w") as f:
        f.write("%d %d\n" % (state["conns"], state["stored"]))
    os.rename(sys.argv[2] + ".tmp", sys.argv[2])
t = threading.Thread(target=srv.serve_forever, daemon=True); t.start()
import signal, time
signal.signal(signal.SIGTERM, lambda *a: (report(), os._exit(0)))
while True:
    time.sleep(0.2); report()
PY
"$LIB_PY" "$TEST_TMP/smtp.py" "$TEST_TMP/port" "$TEST_TMP/state" &
spid=$!
at_exit "kill $spid 2>/dev/null || :"
wait_for 10 test -s "$TEST_TMP/port"
port=$(cat "$TEST_TMP/port")

setup()
{
	local i
	write_config "$CONF" "
outbox = { backoff = { initial = \"1h\"; jitter = 0.0; }; };
channels = { mail = { type = \"smtp\"; url = \"smtp://127.0.0.1:$port\";
                      from = \"noreply@$MAIL_DOMAIN\"; connections = 1; }; };"
	assert_exit 0 cg db migrate
	for i in 1 2 3; do
		assert_exit 0 cg outbox enqueue --channel mail --type t \
		    --payload "{\"to\": \"kim@$MAIL_DOMAIN\", \"subject\": \"m$i\", \"text\": \"$i\"}"
	done
}
test_expect_success 'setup: a server that fails the first DATA, three messages' \
    setup

dispatched()
{
	assert_exit 0 cg outbox dispatch
	mysql_q "SELECT id, status, attempts, COALESCE(last_error, '-') FROM outbox_messages ORDER BY id" > "$TEST_TMP/rows"
	cat "$TEST_TMP/rows"
	if grep -q '221' "$TEST_TMP/rows"; then fail "QUIT's reply became a row's error"; fi
	assert_grep '^1	PENDING	1	smtp: 451 4.3.0 DATA failed: try again$' "$TEST_TMP/rows"
	assert_grep '^2	SENT	1	-$' "$TEST_TMP/rows"
	assert_grep '^3	SENT	1	-$' "$TEST_TMP/rows"
	assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM outbox_attempts WHERE status_code = 503")" "503 answers"
	assert_eq "451 250 250" "$(mysql_q "SELECT status_code FROM outbox_attempts ORDER BY outbox_id" | tr '\n' ' ' | sed 's/ $//')" "status codes in the attempt log"
}
test_expect_success 'the failed DATA retried with its reply, the rest on a fresh session' \
    dispatched

# The retry goes through too.
retried()
{
	assert_exit 0 cg outbox retry 1
	assert_exit 0 cg outbox dispatch
	assert_eq 3 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'SENT'")" "all SENT"
	wait_for 5 sh -c "[ \"\$(cut -d' ' -f2 '$TEST_TMP/state')\" = 3 ]"
}
test_expect_success 'the retry goes through too' retried

test_done
