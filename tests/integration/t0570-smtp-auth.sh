#!/bin/sh
# SMTP AUTH with username/password_file against a server that requires it:
# delivered; a wrong password is refused by the server (535 5.7.8) and
# counts as transient, not permanent: it is the channel's configuration
# that is wrong, for every message alike, so the message stays PENDING
# (retried once the password is fixed) and repeated refusals open the
# circuit instead of marking good mail FAILED one message at a time.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
mkdir -p "$TEST_TMP/auth"
"$LIB_PY" "$CRONGUARD_SRCDIR/tests/testservers/smtp_server.py" --host 127.0.0.1 \
    --port 0 --dir "$TEST_TMP/auth/msg" --log "$TEST_TMP/auth/log" \
    --ready-file "$TEST_TMP/auth/ready" --auth "cronguard:s3cret pass" \
    > "$TEST_TMP/auth/out" 2>&1 &
auth_pid=$!
at_exit "kill $auth_pid 2> /dev/null"
ready() { [ -s "$TEST_TMP/auth/ready" ]; }
wait_for 20 ready
PORT=$(cat "$TEST_TMP/auth/ready")
SMTP_DIR=$TEST_TMP/auth/msg

(umask 077; printf 's3cret pass\n' > "$TEST_TMP/pw"; printf 'wrong\n' > "$TEST_TMP/bad")
channels()
{
	echo "outbox = { backoff = { initial = \"1s\"; max = \"1s\"; jitter = 0.0; }; };
channels = { mail = { type = \"smtp\"; url = \"smtp://127.0.0.1:$PORT\";
  from = \"noreply@example.com\"; username = \"cronguard\"; password_file = \"$1\";
  timeout = \"3s\"; connections = 1; ${2:-} }; };"
}
write_config "$CONF" "$(channels "$TEST_TMP/pw")"
export CRONGUARD_SQLDIR="${CRONGUARD_SQLDIR:-$CRONGUARD_SRCDIR/sql}"
assert_exit 0 cg db migrate
assert_exit 0 cg outbox enqueue --channel mail --type auth --payload \
    "{\"to\": \"kim@$MAIL_DOMAIN\", \"subject\": \"auth\", \"text\": \"x\"}"
assert_exit 0 cg outbox dispatch
assert_eq "SENT" "$(mysql_q "SELECT status FROM outbox_messages")"
assert_eq 1 "$(smtp_count)" "received"

write_config "$CONF" "$(channels "$TEST_TMP/bad")"
assert_exit 0 cg outbox enqueue --channel mail --type auth-bad --payload \
    "{\"to\": \"lee@$MAIL_DOMAIN\", \"text\": \"x\"}"
t0=$(date +%s)
assert_exit 0 cg outbox dispatch
t1=$(date +%s)
row=$(mysql_q "SELECT status, attempts, last_error FROM outbox_messages WHERE event_type = 'auth-bad'")
# The server's own reply, not a timeout (timeout = 3s).
echo "$row" | grep -qE '^PENDING	1	smtp: 535 5\.7\.8 ' || fail "wrong password: $row"
[ $((t1 - t0)) -lt 3 ] || fail "wrong password: took $((t1 - t0)) s (timed out?)"
assert_eq 1 "$(smtp_count)" "received"

# Every message is refused alike: with a circuit breaker, the refusals
# open it and the rest of the batch is not attempted (not burned).
write_config "$CONF" "$(channels "$TEST_TMP/bad" \
    'circuit = { failures = 2; cooldown = "1m"; };')"
mysql_q "UPDATE outbox_messages SET next_attempt_at = NOW(6) WHERE status = 'PENDING'"
mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
    SELECT 'mail', 'auth-bad', JSON_OBJECT('to', CONCAT('u', seq, '@$MAIL_DOMAIN'), 'text', 'x')
    FROM seq_1_to_5"
assert_exit 0 cg outbox dispatch
assert_grep 'event=circuit_open channel=mail failures=2' "$ERR"
assert_eq "6 3" "$(mysql_q "SELECT COUNT(*), SUM(attempts) FROM outbox_messages WHERE status = 'PENDING'" | tr '\t' ' ')" \
    "PENDING rows, attempts (1 before, 2 to open the circuit)"
mysql_q "SELECT circuit_error FROM cronguard_channels WHERE name = 'mail'" |
    grep -q '535 5.7.8' || fail "circuit_error: $(mysql_q 'SELECT circuit_error FROM cronguard_channels')"
assert_eq 1 "$(smtp_count)" "received"
