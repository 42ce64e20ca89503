#!/bin/sh
# SMTP AUTH with username/password_file:
#  - credentials on smtp:// without TLS are a configuration error (exit 78,
#    naming the channel and the key) for config check and for every
#    command that loads the configuration, unless allow_plaintext_auth;
#  - with allow_plaintext_auth, against a server that requires AUTH:
#    delivered;
#  - a wrong password (535 5.7.8) is the channel's fault, not the
#    message's: the rows stay PENDING with attempts and next_attempt_at
#    unchanged, never FAILED; the refusal opens the circuit and is
#    reported once as an incident (event=channel_auth_failed); with the
#    circuit open no further login is tried;
#  - a server that offers no AUTH while credentials are set is the same
#    channel failure: nothing goes out unauthenticated.
# Cases: credentials in clear; allow_plaintext_auth; a wrong password;
# the circuit open; the password fixed; a server without AUTH.
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
# channels PASSWORD_FILE [KEYS] [URL]
channels()
{
	echo "outbox = { backoff = { initial = \"1s\"; max = \"1s\"; jitter = 0.0; }; };
channels = { mail = { type = \"smtp\"; url = \"${3:-smtp://127.0.0.1:$PORT}\";
  from = \"noreply@example.com\";
  username = \"cronguard\"; password_file = \"$1\";
  timeout = \"3s\"; connections = 1; ${2:-} }; };"
}
export CRONGUARD_SQLDIR="${CRONGUARD_SQLDIR:-$CRONGUARD_SRCDIR/sql}"

# Credentials in clear without saying so: refused before anything runs.
in_clear()
{
	local line cmd want where
	write_config "$CONF" "$(channels "$TEST_TMP/pw")"
	line=$(grep -n 'username = ' "$CONF" | cut -d: -f1)
	for cmd in "config check" "outbox dispatch" "outbox check" "db status"; do
		# A check reports a configuration it cannot load as UNKNOWN (3),
		# its reason in the check's own output (cronguard(1), outbox check).
		want=78 where=$ERR
		[ "$cmd" = "outbox check" ] && want=3 where=$OUT
		# shellcheck disable=SC2086 # the command's words
		assert_exit $want cg $cmd
		assert_grep "cronguard.conf:$line: channels.mail.username: credentials would cross the network in clear: use smtps://, or tls = \"required\" \(STARTTLS\), or set allow_plaintext_auth = true" "$where"
	done
}
test_expect_success 'credentials in clear: 78 (3 for outbox check) naming the key' \
    in_clear

plaintext()
{
	write_config "$CONF" "$(channels "$TEST_TMP/pw" 'allow_plaintext_auth = true;')"
	assert_exit 0 cg config check
	assert_grep 'allow_plaintext_auth = true' "$OUT"
	assert_exit 0 cg db migrate
	assert_exit 0 cg outbox enqueue --channel mail --type auth --payload \
	    "{\"to\": \"kim@$MAIL_DOMAIN\", \"subject\": \"auth\", \"text\": \"x\"}"
	assert_exit 0 cg outbox dispatch
	assert_eq "SENT" "$(mysql_q "SELECT status FROM outbox_messages")"
	assert_eq 1 "$(smtp_count)" "received"
	assert_grep '"event": "auth", .*"ok": true' "$TEST_TMP/auth/log"
}
test_expect_success 'with allow_plaintext_auth, against a server requiring AUTH: delivered' \
    plaintext

# A wrong password: every row stays as it was, the circuit opens at the
# first refusal (whatever circuit.failures says: retrying cannot succeed
# before an operator acts) and one incident is reported.
wrong()
{
	local before
	write_config "$CONF" "$(channels "$TEST_TMP/bad" \
	    'allow_plaintext_auth = true; circuit = { failures = 5; cooldown = "1m"; };')"
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload, next_attempt_at)
	    SELECT 'mail', 'auth-bad', JSON_OBJECT('to', CONCAT('u', seq, '@$MAIL_DOMAIN'), 'text', 'x'),
	    NOW(6) - INTERVAL 1 SECOND FROM seq_1_to_5"
	before=$(mysql_q "SELECT GROUP_CONCAT(id, ':', next_attempt_at ORDER BY id)
	    FROM outbox_messages WHERE event_type = 'auth-bad'")
	# The server's own reply (535 5.7.8 in the incident and the circuit's
	# error below), not a timeout.
	assert_exit 0 cg outbox dispatch
	assert_eq "5 0" "$(mysql_q "SELECT COUNT(*), SUM(attempts) FROM outbox_messages
	    WHERE event_type = 'auth-bad' AND status = 'PENDING'" | tr '\t' ' ')" \
	    "PENDING rows, attempts"
	assert_eq "$before" "$(mysql_q "SELECT GROUP_CONCAT(id, ':', next_attempt_at ORDER BY id)
	    FROM outbox_messages WHERE event_type = 'auth-bad'")" "next_attempt_at"
	assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'FAILED'")" \
	    "FAILED rows"
	assert_grep 'level=error event=channel_auth_failed incident=1 channel=mail detail="smtp: login refused: 535 5\.7\.8 ' "$ERR"
	assert_eq 1 "$(grep -c 'event=channel_auth_failed' "$ERR")" "incidents reported"
	assert_grep 'event=circuit_open channel=mail failures=1 .*error="smtp: login refused: 535 5\.7\.8' "$ERR"
	mysql_q "SELECT circuit_error FROM cronguard_channels
	    WHERE name = 'mail' AND circuit_open_until > NOW(6)" |
	    grep -q '535 5.7.8' || fail "circuit_error: $(mysql_q 'SELECT circuit_error FROM cronguard_channels')"
	cg outbox check > "$OUT" 2>&1 || :
	assert_grep "circuit_open=mail" "$OUT"
}
test_expect_success 'a wrong password: rows untouched, the circuit open, one incident' \
    wrong

circuit_open()
{
	local logins
	logins=$(grep -c '"event": "auth"' "$TEST_TMP/auth/log")
	# The circuit is open: a second run does not even log in.
	assert_exit 0 cg outbox dispatch
	if grep -q channel_auth_failed "$ERR"; then
		fail "a login was tried with the circuit open"
	fi
	assert_eq "$logins" "$(grep -c '"event": "auth"' "$TEST_TMP/auth/log")" "logins"
	assert_eq 1 "$(smtp_count)" "received"
}
test_expect_success 'with the circuit open no login is tried' circuit_open

# Fixed password, circuit closed by hand: every row goes out, once.
fixed()
{
	write_config "$CONF" "$(channels "$TEST_TMP/pw" 'allow_plaintext_auth = true;')"
	mysql_q "UPDATE cronguard_channels SET circuit_open_until = NULL,
	    circuit_failures = 0, circuit_probe_at = NULL WHERE name = 'mail'"
	assert_exit 0 cg outbox dispatch
	assert_eq "6 6" "$(mysql_q "SELECT COUNT(*), SUM(attempts) FROM outbox_messages WHERE status = 'SENT'" | tr '\t' ' ')" \
	    "SENT rows, attempts"
	assert_eq 6 "$(smtp_count)" "received"
}
test_expect_success 'the password fixed, the circuit closed: every row once' \
    fixed

# The shared test server offers no AUTH: with credentials set, nothing is
# sent unauthenticated; the rows stay PENDING, unattempted.
no_auth()
{
	write_config "$CONF" "$(channels "$TEST_TMP/pw" 'allow_plaintext_auth = true;' "$SMTP_URL")"
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'mail', 'no-auth', JSON_OBJECT('to', CONCAT('n', seq, '-$TEST_ID@$MAIL_DOMAIN'), 'text', 'x')
	    FROM seq_1_to_3"
	assert_exit 0 cg outbox dispatch
	assert_eq "3 0" "$(mysql_q "SELECT COUNT(*), SUM(attempts) FROM outbox_messages
	    WHERE event_type = 'no-auth' AND status = 'PENDING'" | tr '\t' ' ')" \
	    "no AUTH: PENDING rows, attempts"
	assert_grep 'level=error event=channel_auth_failed incident=1 channel=mail detail="smtp: the server offers no AUTH' "$ERR"
	# shellcheck disable=SC2034 # smtp_count reads it
	SMTP_DIR=$CRONGUARD_TEST_SMTP_DIR
	assert_eq 0 "$(smtp_count "-$TEST_ID@")" "no AUTH: received"
}
test_expect_success 'a server offering no AUTH: nothing sent unauthenticated' \
    no_auth

test_done
