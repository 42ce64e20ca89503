#!/bin/sh
# Signing-secret rotation (cronguard-outbox(7), HTTP PAYLOAD): a
# signing_secret_file with two secrets, one a line, signs each message
# twice in webhook-signature ("v1,A v1,B"), and the official Standard
# Webhooks library (npm standardwebhooks) verifies the request with either
# secret alone; once the old secret is dropped from the file, a request
# no longer verifies with it.  An empty file, a file of blank lines and a
# line that is not base64 after whsec_ are refused (exit 78), naming the
# file and the line, and no row is touched.  Cases: setup; both secrets
# verify; the old secret dropped; bad secret files.  Without npm (or when
# standardwebhooks does not install) the test is skipped, as a whole.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

NODE=$TEST_TMP/node
if test_have_prereq SERVERS; then
	command -v npm > /dev/null || {
		[ "${CI:-}" = true ] && fail "npm missing"
		echo "SKIP: npm missing"; exit 77
	}
	mkdir -p "$NODE"
	if ! (cd "$NODE" && npm install --silent --no-audit --no-fund standardwebhooks@1.1.1 > npm.log 2>&1); then
		cat "$NODE/npm.log"
		[ "${CI:-}" = true ] && fail "npm install standardwebhooks failed"
		echo "SKIP: npm install standardwebhooks failed"; exit 77
	fi
fi

secret() { printf 'whsec_%s' "$(head -c 24 /dev/urandom | base64)"; }
A=$(secret)
B=$(secret)
C=$(secret)
SECRETS=$TEST_TMP/hook.secret

setup()
{
	(umask 077; printf '%s\n%s\n' "$A" "$B" > "$SECRETS")
	write_config "$CONF" "
channels = { hook = { type = \"http\"; url = \"$HTTP_BASE/hook\";
                      signing_secret_file = \"$SECRETS\"; }; };"
	assert_exit 0 cg db migrate
}
test_expect_success SERVERS 'setup: two secrets in the file, db migrate' setup

# verify N SECRET: exit 0 when the Nth request verifies with SECRET.
verify() {
	http_requests "/$TEST_ID/hook" | sed -n "${1}p" > "$TEST_TMP/req"
	NODE_PATH=$NODE/node_modules node -e '
const { Webhook } = require("standardwebhooks");
const fs = require("fs");
const r = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
try {
  new Webhook(process.argv[2]).verify(r.body, r.headers);
} catch (e) { console.error(e.message); process.exit(1); }
' "$TEST_TMP/req" "$2"
}

two_secrets()
{
	assert_exit 0 cg outbox enqueue --channel hook --type t --payload '{"n":1,"s":"예약"}'
	assert_exit 0 cg outbox dispatch
	assert_eq 1 "$(http_count "/$TEST_ID/hook")" "requests"
	http_field headers.webhook-signature "/$TEST_ID/hook" > "$TEST_TMP/sig"
	assert_grep '^v1,[A-Za-z0-9+/=]{44} v1,[A-Za-z0-9+/=]{44}$' "$TEST_TMP/sig"
	verify 1 "$A" || fail "old secret does not verify"
	verify 1 "$B" || fail "new secret does not verify"
	if verify 1 "$C"; then fail "an unrelated secret verifies"; fi
}
test_expect_success SERVERS 'two secrets sign twice; either verifies alone' \
    two_secrets

# Rotation done: the old secret is dropped.
rotation_done()
{
	(umask 077; printf '%s\n' "$B" > "$SECRETS")
	assert_exit 0 cg outbox enqueue --channel hook --type t --payload '{"n":2}'
	assert_exit 0 cg outbox dispatch
	verify 2 "$B" || fail "new secret does not verify after the rotation"
	if verify 2 "$A"; then fail "the dropped secret still verifies"; fi
}
test_expect_success SERVERS 'the old secret dropped: it no longer verifies' \
    rotation_done

# Bad secret files: refused, the row stays PENDING untouched.
bad_secret_files()
{
	assert_exit 0 cg outbox enqueue --channel hook --type t --payload '{"n":3}'
	: > "$SECRETS"
	assert_exit 78 cg outbox dispatch
	assert_grep "$SECRETS is empty" "$ERR"
	printf '\n  \n' > "$SECRETS"
	assert_exit 78 cg outbox dispatch
	assert_grep 'no secret in it' "$ERR"
	printf '%s\nwhsec_not*base64\n' "$B" > "$SECRETS"
	assert_exit 78 cg outbox dispatch
	assert_grep "signing_secret_file: $SECRETS: line 2: invalid base64 after whsec_\$" "$ERR"
	assert_eq "PENDING 0" "$(mysql_q "SELECT status, attempts FROM outbox_messages
	    WHERE JSON_EXTRACT(payload, '\$.n') = 3" | tr '\t' ' ')" "row after refused secrets"
}
test_expect_success SERVERS 'bad secret files: refused (78), the row untouched' \
    bad_secret_files

test_done
