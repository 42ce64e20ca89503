#!/bin/sh
# SMTP over TLS, verified against a throwaway CA given by tls_ca:
#  - smtp:// with tls = "required" against a STARTTLS server: delivered,
#    and the server saw the message over TLS;
#  - smtps:// (implicit TLS) to "localhost": delivered over TLS;
#  - smtp:// with tls = "required" against a server without STARTTLS: a
#    transient failure that says so, and nothing reaches the server in clear;
#  - a certificate from another CA: a transient failure with the
#    certificate error in last_error, nothing delivered;
#  - credentials with STARTTLS required (no allow_plaintext_auth): valid,
#    and the login goes over TLS to a server that requires AUTH.
# The CAs and the server certificate are made by the openssl command line
# (smtp_server.py --tls-dir / --make-certs).
# Cases: setup (one pass); STARTTLS; smtps; no STARTTLS; another CA;
# AUTH over STARTTLS; an unreadable tls_ca.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
command -v openssl > /dev/null || fail "the openssl command is needed"

# tls_server NAME MODE [OPTION...]: start a TLS test server of this
# test's own; its port in $TEST_TMP/NAME/ready, its messages in
# $TEST_TMP/NAME/msg.
tls_server()
{
	local name=$1 mode=$2
	shift 2
	mkdir -p "$TEST_TMP/$name"
	"$LIB_PY" "$CRONGUARD_SRCDIR/tests/testservers/smtp_server.py" \
	    --host 127.0.0.1 --port 0 --dir "$TEST_TMP/$name/msg" \
	    --log "$TEST_TMP/$name/log" --ready-file "$TEST_TMP/$name/ready" \
	    --tls "$mode" --tls-dir "$TEST_TMP/certs" "$@" \
	    > "$TEST_TMP/$name/out" 2>&1 &
	at_exit "kill $! 2> /dev/null"
}
tls_server starttls require-starttls
tls_server smtps smtps
tls_server authtls require-starttls --auth cronguard:s3cret
"$LIB_PY" "$CRONGUARD_SRCDIR/tests/testservers/smtp_server.py" \
    --make-certs "$TEST_TMP/wrong" || fail "cannot make the second CA"
ready()
{
	[ -s "$TEST_TMP/starttls/ready" ] && [ -s "$TEST_TMP/smtps/ready" ] &&
	    [ -s "$TEST_TMP/authtls/ready" ]
}
wait_for 30 ready
STARTTLS_PORT=$(cat "$TEST_TMP/starttls/ready")
SMTPS_PORT=$(cat "$TEST_TMP/smtps/ready")
AUTHTLS_PORT=$(cat "$TEST_TMP/authtls/ready")
(umask 077; printf 's3cret\n' > "$TEST_TMP/pw")
CA=$TEST_TMP/certs/ca.pem

export CRONGUARD_SQLDIR="${CRONGUARD_SQLDIR:-$CRONGUARD_SRCDIR/sql}"
row() { mysql_q "SELECT status, attempts, last_error FROM outbox_messages WHERE channel = '$1'"; }
# tls_of DIR: the TLS version of each message the server stored.
tls_of()
{
	SMTP_DIR=$1 smtp_envelopes "" |
	    "$LIB_PY" -c 'import json, sys
for line in sys.stdin: print(json.loads(line)["tls"])'
}

setup()
{
	write_config "$CONF" "
	outbox = { backoff = { initial = \"1h\"; max = \"1h\"; jitter = 0.0; }; };
	channels = {
	  starttls = { type = \"smtp\"; url = \"smtp://127.0.0.1:$STARTTLS_PORT\";
	    tls = \"required\"; tls_ca = \"$CA\"; from = \"noreply@example.com\";
	    timeout = \"10s\"; };
	  smtps = { type = \"smtp\"; url = \"smtps://localhost:$SMTPS_PORT\";
	    tls_ca = \"$CA\"; from = \"noreply@example.com\"; timeout = \"10s\"; };
	  cleartext = { type = \"smtp\"; url = \"$SMTP_URL\"; tls = \"required\";
	    tls_ca = \"$CA\"; from = \"noreply@example.com\"; timeout = \"10s\"; };
	  wrongca = { type = \"smtp\"; url = \"smtps://localhost:$SMTPS_PORT\";
	    tls_ca = \"$TEST_TMP/wrong/ca.pem\"; from = \"noreply@example.com\";
	    timeout = \"10s\"; };
	  authtls = { type = \"smtp\"; url = \"smtp://127.0.0.1:$AUTHTLS_PORT\";
	    tls = \"required\"; tls_ca = \"$CA\"; from = \"noreply@example.com\";
	    username = \"cronguard\"; password_file = \"$TEST_TMP/pw\";
	    timeout = \"10s\"; };
	};"
	assert_exit 0 cg db migrate
	for ch in starttls smtps cleartext wrongca authtls; do
		assert_exit 0 cg outbox enqueue --channel "$ch" --type "$ch" --payload \
		    "{\"to\": \"$ch@$MAIL_DOMAIN\", \"subject\": \"tls\", \"text\": \"x\"}"
	done
	assert_exit 0 cg outbox dispatch
}
test_expect_success 'setup: five channels, a message each, one pass' setup

starttls()
{
	local r
	r=$(row starttls)
	echo "$r" | grep -qE '^SENT	1	NULL$' || fail "starttls: $r"
	assert_eq TLSv1.3 "$(tls_of "$TEST_TMP/starttls/msg")" "starttls: message TLS"
	grep -q '"event": "starttls"' "$TEST_TMP/starttls/log" ||
	    fail "starttls: the server saw no STARTTLS"
}
test_expect_success 'tls = "required" against a STARTTLS server: delivered over TLS' \
    starttls

smtps()
{
	local r
	r=$(row smtps)
	echo "$r" | grep -qE '^SENT	1	NULL$' || fail "smtps: $r"
	assert_eq TLSv1.3 "$(tls_of "$TEST_TMP/smtps/msg")" "smtps: message TLS"
}
test_expect_success 'smtps:// to localhost: delivered over TLS' smtps

# The shared server offers no STARTTLS: nothing may be sent in clear.
cleartext()
{
	local r
	r=$(row cleartext)
	echo "$r" | grep -qE '^PENDING	1	smtp: STARTTLS not supported.* nothing sent in clear' ||
	    fail "cleartext: $r"
	assert_eq 0 "$(smtp_count "cleartext@$MAIL_DOMAIN")" "cleartext: received"
}
test_expect_success 'a server without STARTTLS: nothing sent in clear' \
    cleartext

wrongca()
{
	local r
	r=$(row wrongca)
	echo "$r" | grep -qE '^PENDING	1	smtp: SSL certificate problem' ||
	    fail "wrongca: $r"
	# Only the smtps channel's own message reached that server.
	assert_eq 1 "$(SMTP_DIR=$TEST_TMP/smtps/msg smtp_count "")" "smtps: received"
}
test_expect_success 'a certificate from another CA: the error in last_error, nothing sent' \
    wrongca

authtls()
{
	local r
	r=$(row authtls)
	echo "$r" | grep -qE '^SENT	1	NULL$' || fail "authtls: $r"
	assert_eq TLSv1.3 "$(tls_of "$TEST_TMP/authtls/msg")" "authtls: message TLS"
	# The login came after STARTTLS on its connection.
	"$LIB_PY" - "$TEST_TMP/authtls/log" <<-'PY' || fail "authtls: no login over TLS"
	import json, sys
	ev = [json.loads(l) for l in open(sys.argv[1])]
	tls = {e["conn"] for e in ev if e["event"] == "starttls"}
	ok = [e for e in ev if e["event"] == "auth" and e["ok"]]
	sys.exit(0 if ok and all(e["conn"] in tls for e in ok) else 1)
	PY
}
test_expect_success 'credentials with STARTTLS required: the login over TLS' \
    authtls

# A tls_ca that cannot be read is a configuration error, with file:line.
tls_ca_unreadable()
{
	local line
	write_config "$CONF" "
	channels = { smtps = { type = \"smtp\"; url = \"smtps://localhost:1\";
	    from = \"noreply@example.com\";
	    tls_ca = \"$TEST_TMP/missing.pem\"; }; };"
	line=$(grep -n missing.pem "$CONF" | cut -d: -f1)
	assert_exit 78 cg config check
	assert_grep "cronguard.conf:$line: channels.smtps.tls_ca: cannot read $TEST_TMP/missing.pem: No such file" "$ERR"
}
test_expect_success 'an unreadable tls_ca: 78 with file:line' \
    tls_ca_unreadable

test_done
