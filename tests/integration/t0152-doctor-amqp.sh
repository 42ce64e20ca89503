#!/bin/sh
# doctor on an AMQP channel: the broker's connection opened and the login
# accepted (OK channel_amqp, nothing published); a wrong password is
# CRITICAL channel_amqp with the credentials as the fix.
# Cases: setup; the login accepted; a wrong password.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
. "$CRONGUARD_SRCDIR/scripts/testenv-rabbitmq"
testenv_rabbitmq_for_test q
: "${CRONGUARD_SQLDIR:=$CRONGUARD_SRCDIR/sql}"
export CRONGUARD_SQLDIR
(umask 077 && printf 'not-the-password\n' > "$TEST_TMP/bad")
conf()
{
	write_config "$CONF" "channels = {
  bus = { type = \"amqp\"; url = \"amqp://127.0.0.1:$AMQP_PORT\";
          username = \"guest\"; password_file = \"$1\"; routing_key = \"q\"; };
};"
}
setup()
{
	conf "$TEST_TMP/pw"
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: db migrate' setup

logged_in()
{
	conf "$TEST_TMP/pw"
	assert_exit 0 cg doctor
	assert_grep "^OK channel_connect: bus: connected to 127\\.0\\.0\\.1 port $AMQP_PORT in [0-9]+ ms\$" "$OUT"
	assert_grep '^OK channel_amqp: bus: connection opened, logged in as guest; nothing published$' "$OUT"
	assert_eq 0 "$(testenv_rabbitmq_count q)" "messages in q"
}
test_expect_success 'doctor logs in to the broker and publishes nothing' logged_in

wrong_password()
{
	conf "$TEST_TMP/bad"
	assert_exit 2 cg doctor
	assert_grep '^CRITICAL channel_amqp: bus: .*; fix: correct channels\.bus\.username and its password' "$OUT"
}
test_expect_success 'a wrong password is CRITICAL channel_amqp, the credentials the fix' \
    wrong_password

test_done
