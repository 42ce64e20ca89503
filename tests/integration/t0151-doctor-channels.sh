#!/bin/sh
# doctor's channel checks, each stage shown passing and failing against
# real servers: name resolution (a .invalid host), TCP connect (a closed
# loopback port, SMTP and AMQP), TLS (an https:// URL at the plain HTTP
# server, a certificate from another CA, STARTTLS not offered; and passing
# with the throwaway CA), SMTP (EHLO, AUTH offered and accepted, a wrong
# password, AUTH not offered while a username is set), HTTP HEAD (405 is
# reachable, 503 a WARNING, a stalled endpoint cut off at the channel's
# timeout) and the alert URL.  Nothing is sent: no mail reaches the
# servers, the HTTP server sees HEAD requests only.
# Cases: every stage passing; nothing sent; every stage failing, bounded,
# with a fix; each failure named; JSON; a secret file gone.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
command -v openssl > /dev/null || fail "the openssl command is needed"
: "${CRONGUARD_SQLDIR:=$CRONGUARD_SRCDIR/sql}"
export CRONGUARD_SQLDIR

# smtp_server NAME ARGS...: an SMTP test server of this test's own; its
# port in $TEST_TMP/NAME/ready.
smtp_server()
{
	name=$1
	shift
	mkdir -p "$TEST_TMP/$name"
	"$LIB_PY" "$CRONGUARD_SRCDIR/tests/testservers/smtp_server.py" \
	    --host 127.0.0.1 --port 0 --dir "$TEST_TMP/$name/msg" \
	    --log "$TEST_TMP/$name/log" --ready-file "$TEST_TMP/$name/ready" \
	    "$@" > "$TEST_TMP/$name/out" 2>&1 &
	at_exit "kill $! 2> /dev/null"
}
smtp_server auth --auth "cg:s3cret"
smtp_server smtps --tls smtps --tls-dir "$TEST_TMP/certs"
"$LIB_PY" "$CRONGUARD_SRCDIR/tests/testservers/smtp_server.py" \
    --make-certs "$TEST_TMP/wrong" || fail "cannot make the second CA"
ready() { [ -s "$TEST_TMP/auth/ready" ] && [ -s "$TEST_TMP/smtps/ready" ]; }
wait_for 30 ready
AUTH_PORT=$(cat "$TEST_TMP/auth/ready")
SMTPS_PORT=$(cat "$TEST_TMP/smtps/ready")
CA=$TEST_TMP/certs/ca.pem
closed=$("$LIB_PY" -c 'import socket; s = socket.socket()
s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
(umask 077 && printf 's3cret\n' > "$TEST_TMP/pw" && printf 'wrong\n' > "$TEST_TMP/bad")
HTTPS_BASE=$(printf '%s' "$HTTP_BASE" | sed 's|^http:|https:|')

# conf CHANNELS [MORE]: the channels section (and more settings).
conf() { write_config "$CONF" "channels = { $1 }; ${2:-}"; }
smtp() { echo "$1 = { type = \"smtp\"; url = \"$2\"; from = \"cg@example.com\"; timeout = \"5s\"; $3 };"; }
http() { echo "$1 = { type = \"http\"; url = \"$2\"; timeout = \"${3:-5s}\"; };"; }

# --- every stage passing: exit 0
passing()
{
	conf "$(smtp mail "smtp://127.0.0.1:$AUTH_PORT" "username = \"cg\"; allow_plaintext_auth = true; password_file = \"$TEST_TMP/pw\";")
$(smtp secure "smtps://localhost:$SMTPS_PORT" "tls_ca = \"$CA\";")
$(http hooks "$HTTP_BASE/hooks/status=405")" \
	    "alert = { url = \"$HTTP_BASE/alert\"; };"
	assert_exit 0 cg db migrate
	assert_exit 0 cg doctor
	assert_grep '^OK channel_dns: mail: 127\.0\.0\.1 resolved in [0-9]+ ms$' "$OUT"
	assert_grep "^OK channel_connect: mail: connected to 127\\.0\\.0\\.1 port $AUTH_PORT in [0-9]+ ms\$" "$OUT"
	assert_grep '^OK channel_smtp: mail: EHLO answered, AUTH .*PLAIN.* offered, logged in as cg; nothing sent$' "$OUT"
	assert_grep '^OK channel_tls: secure: handshake done and certificate verified for localhost in [0-9]+ ms$' "$OUT"
	assert_grep '^OK channel_smtp: secure: EHLO answered; nothing sent$' "$OUT"
	assert_grep '^OK channel_http: hooks: HEAD answered 405: reachable$' "$OUT"
	assert_grep '^OK alert_http: alert: HEAD answered 200: reachable$' "$OUT"
	if grep -q '^OK channel_tls: mail:' "$OUT"; then
		fail "a TLS stage for a clear-text channel"
	fi
}
test_expect_success 'every stage passing: doctor exits 0, each stage OK' passing

nothing_sent()
{
	local d
	# nothing sent: no message stored, the HTTP server saw HEAD only
	for d in auth smtps; do
		[ -z "$(ls "$TEST_TMP/$d/msg" 2> /dev/null)" ] || fail "doctor sent mail to $d"
	done
	http_field method | grep -vx HEAD && fail "a request other than HEAD"
	assert_eq 2 "$(http_count)" "HEAD requests"
}
test_expect_success 'nothing sent: no mail stored, HEAD requests only' \
    nothing_sent

# --- every stage failing once; each line names the channel and has a fix
broken_stages()
{
	local start took
	conf "$(smtp unresolved "smtp://cronguard-doctor.invalid:25" "")
$(smtp stopped "smtp://127.0.0.1:$closed" "")
$(smtp badpw "smtp://127.0.0.1:$AUTH_PORT" "username = \"cg\"; allow_plaintext_auth = true; password_file = \"$TEST_TMP/bad\";")
$(smtp noauth "$SMTP_URL" "username = \"cg\"; allow_plaintext_auth = true; password_file = \"$TEST_TMP/pw\";")
$(smtp nostarttls "$SMTP_URL" "tls = \"required\";")
$(smtp wrongca "smtps://localhost:$SMTPS_PORT" "tls_ca = \"$TEST_TMP/wrong/ca.pem\";")
$(http plainhttps "$HTTPS_BASE/hooks")
$(http broken "$HTTP_BASE/hooks/status=503")
$(http stalled "$HTTP_BASE/hooks/delay=20000" 1s)
amqp = { type = \"amqp\"; url = \"amqp://127.0.0.1:$closed\"; };" \
	    "alert = { url = \"http://127.0.0.1:$closed/alert\"; };"
	start=$(date +%s)
	assert_exit 2 cg doctor
	took=$(($(date +%s) - start))
	[ "$took" -le 15 ] || fail "doctor took ${took}s: a check is not bounded"
	if grep -E '^(WARNING|CRITICAL|UNKNOWN) ' "$OUT" | grep -vq '; fix: .'; then
		cat "$OUT"
		fail "a failing check without a fix"
	fi
}
test_expect_success 'every stage failing: doctor exits 2 within 15 s, each with a fix' \
    broken_stages

named()
{
	assert_grep '^CRITICAL channel_dns: unresolved: cannot resolve cronguard-doctor\.invalid: .*; fix: correct the host in channels\.unresolved\.url' "$OUT"
	assert_grep "^CRITICAL channel_connect: stopped: cannot connect to 127\\.0\\.0\\.1 port $closed: .*; fix: start the server, or correct channels\\.stopped\\.url\$" "$OUT"
	assert_grep '^CRITICAL channel_smtp: badpw: AUTH as cg refused: 535.*; fix: correct channels\.badpw\.username and its password$' "$OUT"
	assert_grep '^CRITICAL channel_smtp: noauth: EHLO answered but AUTH is not offered.*; fix: ' "$OUT"
	assert_grep '^CRITICAL channel_tls: nostarttls: TLS with 127\.0\.0\.1: .*; fix: enable STARTTLS on the server' "$OUT"
	assert_grep '^CRITICAL channel_tls: wrongca: TLS with localhost: .*certificate.*; fix: give the server a certificate for localhost from a CA in the channel.s tls_ca' "$OUT"
	assert_grep '^CRITICAL channel_tls: plainhttps: TLS with 127\.0\.0\.1: .*; fix: ' "$OUT"
	assert_grep '^WARNING channel_http: broken: HEAD answered 503: .*; fix: check the endpoint' "$OUT"
	assert_grep '^CRITICAL channel_http: stalled: HEAD: .*timed out after 1[0-9]{3} milliseconds.*; fix: ' "$OUT"
	assert_grep "^CRITICAL channel_connect: amqp: cannot connect to 127\\.0\\.0\\.1 port $closed: " "$OUT"
	assert_grep "^CRITICAL alert_connect: alert: cannot connect to 127\\.0\\.0\\.1 port $closed: .*; fix: start the server, or correct alert\\.url\$" "$OUT"
	# the wrong password was tried, but no mail went anywhere
	[ -z "$(ls "$TEST_TMP/auth/msg" 2> /dev/null)" ] || fail "doctor sent mail"
}
test_expect_success 'each failing stage names the channel, what failed and the fix' \
    named

# --- JSON carries the same verdicts
json_verdicts()
{
	assert_exit 2 cg doctor --format json
	"$LIB_PY" - "$OUT" <<'PY' || fail "doctor --format json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "CRITICAL", d
by = {(c["name"], c["finding"].split(":")[0]): c for c in d["checks"]}
for key, st in ((("channel_dns", "unresolved"), "CRITICAL"),
                (("channel_connect", "stopped"), "CRITICAL"),
                (("channel_tls", "wrongca"), "CRITICAL"),
                (("channel_smtp", "badpw"), "CRITICAL"),
                (("channel_http", "broken"), "WARNING"),
                (("alert_connect", "alert"), "CRITICAL")):
    assert by[key]["status"] == st and by[key]["fix"], (key, by.get(key))
PY
}
test_expect_success 'JSON carries the same verdicts' json_verdicts

# --- a channel's secret file gone after the configuration was written
secret_gone()
{
	(umask 077 && printf 's3cret\n' > "$TEST_TMP/gone")
	conf "$(smtp mail "smtp://127.0.0.1:$AUTH_PORT" "username = \"cg\"; allow_plaintext_auth = true; password_file = \"$TEST_TMP/gone\";")"
	rm -f "$TEST_TMP/gone"
	assert_exit 2 cg doctor
	assert_grep '^CRITICAL channel_secret: mail: .*gone.*; fix: create it, or correct the path' "$OUT"
}
test_expect_success 'a channel'"'"'s secret file gone: CRITICAL' secret_gone

test_done
