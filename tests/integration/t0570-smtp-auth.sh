#!/bin/sh
# SMTP AUTH with username/password_file against a server that requires it:
# delivered; a wrong password is refused by the server (535) and counts as
# transient (the channel's fault, not the message's: PENDING, retried).
# (aiosmtpd 1.4.3 as run by the test server never answers a failed AUTH,
# so the send times out instead: transient all the same.)
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
  timeout = \"3s\"; }; };"
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
assert_exit 0 cg outbox dispatch
row=$(mysql_q "SELECT status, attempts, last_error FROM outbox_messages WHERE event_type = 'auth-bad'")
echo "$row" | grep -qE '^PENDING	1	smtp: .*(535|[Ll]ogin denied|timed out)' || fail "wrong password: $row"
assert_eq 1 "$(smtp_count)" "received"
