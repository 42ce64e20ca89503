#!/bin/sh
# A secret is checked when it is loaded, not at the first send
# (cronguard.conf(5), SECRETS): a signing secret "whsec_" followed by
# what is not base64 (in a file, or inline), an empty secret file, a file
# of blank lines: config check and doctor exit 78 naming the file once,
# and outbox dispatch too (it printed "channel hook: channel hook: ...").
# Before, config check and doctor passed and the first dispatch failed.
# A secret file that is missing stays a warning in config check (a host
# that does not send need not have it).
# Servers: MariaDB.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
: "${CRONGUARD_SQLDIR:=$CRONGUARD_SRCDIR/sql}"
export CRONGUARD_SQLDIR
SECRET=$TEST_TMP/hook.secret

setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
channels = { hook = { type = \"http\"; url = \"$HTTP_BASE/hook\";
  signing_secret_file = \"$SECRET\"; }; };"
	(umask 077 && printf 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n' > "$SECRET")
	assert_exit 0 cg db migrate
	assert_exit 0 cg config check
	assert_exit 0 cg doctor
}
test_expect_success SERVERS 'setup: a good secret passes' setup

# refused CMD REGEX: CMD exits 78, its message matches REGEX and names
# the secret file once
refused()
{
	local cmd=$1
	# shellcheck disable=SC2086
	assert_exit 78 cg $cmd
	assert_grep "$2" "$ERR"
	assert_eq 1 "$(grep -o "$SECRET" "$ERR" | wc -l | tr -d ' ')" \
	    "$cmd: times the file is named"
	if grep -q 'channel hook: channel hook' "$ERR"; then
		fail "$cmd: the channel named twice"
	fi
}

bad_files()
{
	local cmd
	printf 'whsec_!!!notbase64\n' > "$SECRET"
	for cmd in "config check" doctor "outbox dispatch"; do
		refused "$cmd" "^cronguard: $CONF:[0-9]+: channels\\.hook\\.signing_secret_file: $SECRET: line 1: invalid base64 after whsec_\$"
	done
	: > "$SECRET"
	for cmd in "config check" doctor "outbox dispatch"; do
		refused "$cmd" "^cronguard: $CONF:[0-9]+: channels\\.hook\\.signing_secret_file: $SECRET is empty \\(write the secret into"
	done
	printf '\n \n' > "$SECRET"
	for cmd in "config check" doctor; do
		refused "$cmd" "signing_secret_file: $SECRET: no secret in it"
	done
}
test_expect_success SERVERS 'bad secret files: 78 in config check, doctor, dispatch' bad_files

inline()
{
	write_config "$CONF" "channels = { hook = { type = \"http\";
  url = \"$HTTP_BASE/hook\"; signing_secret = \"whsec_!!!notbase64\"; }; };"
	assert_exit 78 cg config check
	assert_grep "^cronguard: $CONF:[0-9]+: channels\\.hook\\.signing_secret: line 1: invalid base64 after whsec_\$" "$ERR"
}
test_expect_success SERVERS 'an inline signing secret that does not decode: 78' inline

missing()
{
	write_config "$CONF" "channels = { hook = { type = \"http\";
  url = \"$HTTP_BASE/hook\"; signing_secret_file = \"$TEST_TMP/none\"; }; };"
	assert_exit 0 cg config check
	assert_grep "^cronguard: warning: .*signing_secret_file: cannot read $TEST_TMP/none" "$ERR"
}
test_expect_success SERVERS 'a missing secret file: a warning in config check' missing

test_done
