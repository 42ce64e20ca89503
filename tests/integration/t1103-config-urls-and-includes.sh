#!/bin/sh
# config check refuses what the configuration could only fail at later:
# a ping URL (ping_url, or the URL in ping_url_file) whose scheme is not
# http or https, and an alert.timeout beyond its bound; an @include of an
# absolute path is read from that path.  outbox cancel refuses a reason
# longer than last_error holds before asking the database (exit 64).
# Needs no server.
. "${CRONGUARD_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

# ping_url: only http:// and https://.
ping_url_schemes()
{
	local u
	for u in file:///etc/passwd gopher://127.0.0.1:70/x dict://127.0.0.1/d \
	    ftp://127.0.0.1/x; do
		write_config "$CONF" "jobs = { j = { command = [ \"/bin/true\" ];
		    ping_url = \"$u\"; }; };"
		assert_exit 78 cg config check
		assert_grep 'jobs\.j\.ping_url: .*is not an http:// or https:// URL' "$ERR"
	done
	write_config "$CONF" 'jobs = { j = { command = [ "/bin/true" ];
	    ping_url = "HTTPS://hc-ping.example/abc"; }; };'
	assert_exit 0 cg config check
}
test_expect_success 'ping_url: only http:// and https://' ping_url_schemes

# ping_url_file: the URL in the file too, and run refuses it as well.
ping_url_file()
{
	(umask 077; echo 'file:///etc/shadow' > "$TEST_TMP/ping.url")
	write_config "$CONF" "jobs = { j = { command = [ \"/bin/true\" ];
	    guard = \"none\"; ping_url_file = \"$TEST_TMP/ping.url\"; }; };"
	assert_exit 78 cg config check
	assert_grep 'jobs\.j\.ping_url_file: .*does not hold an http:// or https:// URL' "$ERR"
	assert_exit 78 cg run j
	assert_grep 'jobs\.j\.ping_url_file' "$ERR"
	(umask 077; echo 'http://127.0.0.1:1/ping' > "$TEST_TMP/ping.url")
	assert_exit 0 cg config check
}
test_expect_success 'ping_url_file: the URL in the file too, for run as well' \
    ping_url_file

# alert.timeout is bounded: an alert must not hold up an exit for days.
alert_timeout()
{
	write_config "$CONF" 'alert = { url = "http://127.0.0.1:1/a"; timeout = "3650d"; };'
	assert_exit 78 cg config check
	assert_grep 'alert\.timeout' "$ERR"
	write_config "$CONF" 'alert = { url = "http://127.0.0.1:1/a"; timeout = "61s"; };'
	assert_exit 78 cg config check
	write_config "$CONF" 'alert = { url = "http://127.0.0.1:1/a"; timeout = "60s"; };'
	assert_exit 0 cg config check
	write_config "$CONF" 'alert = { url = "http://127.0.0.1:1/a"; };'
	assert_exit 0 cg config check
	assert_grep 'timeout = "10s";' "$OUT"
}
test_expect_success 'alert.timeout is bounded (60 s), 10 s by default' \
    alert_timeout

# @include of an absolute path: used as it is, from any working directory,
# next to a relative one; errors name the included file.
include_absolute()
{
	local bin
	mkdir -p "$TEST_TMP/conf.d" "$TEST_TMP/elsewhere"
	(umask 077
	printf 'jobs = { abs = { command = [ "/bin/true" ]; guard = "none"; }; };\n' \
	    > "$TEST_TMP/elsewhere/abs.conf"
	printf 'alert = { timeout = "7s"; };\n' > "$TEST_TMP/conf.d/rel.conf"
	printf '@include "%s"\n@include "conf.d/rel.conf"\n' \
	    "$TEST_TMP/elsewhere/abs.conf" > "$TEST_TMP/main.conf")
	assert_exit 0 "$CRONGUARD_BIN" -c "$TEST_TMP/main.conf" config check
	assert_grep '^  abs = \{' "$OUT"
	assert_grep 'timeout = "7s";' "$OUT"
	bin=$(cd "$(dirname "$CRONGUARD_BIN")" && pwd)/$(basename "$CRONGUARD_BIN")
	assert_exit 0 sh -c "cd '$TEST_TMP/conf.d' && '$bin' -c ../main.conf config check"
	assert_grep '^  abs = \{' "$OUT"
	printf 'jobs = { abs = { command = [ "/bin/true" ]; bogus = 1; }; };\n' \
	    > "$TEST_TMP/elsewhere/abs.conf"
	assert_exit 78 "$CRONGUARD_BIN" -c "$TEST_TMP/main.conf" config check
	assert_grep "^cronguard: $TEST_TMP/elsewhere/abs.conf:1: jobs\.abs\.bogus: unknown key" "$ERR"
	rm "$TEST_TMP/elsewhere/abs.conf"
	assert_exit 78 "$CRONGUARD_BIN" -c "$TEST_TMP/main.conf" config check
	assert_grep "@include \"$TEST_TMP/elsewhere/abs.conf\" \($TEST_TMP/elsewhere/abs.conf\): No such file" "$ERR"
}
test_expect_success '@include of an absolute path, from any directory; errors name the file' \
    include_absolute

# outbox cancel --reason: the limit is last_error's, checked before the
# database (the configured one need not even answer).
cancel_with() { cg outbox cancel --reason "$(cat "$TEST_TMP/$1")" 1; }
cancel_reason()
{
	head -c 70000 /dev/zero | tr '\0' x > "$TEST_TMP/long"
	head -c 65525 /dev/zero | tr '\0' x > "$TEST_TMP/over"
	head -c 65524 /dev/zero | tr '\0' x > "$TEST_TMP/limit"
	write_config "$CONF" ''
	sed -i 's/port = [0-9]*;/port = 1;/' "$CONF"
	assert_exit 64 cancel_with long
	assert_grep 'reason is 70000 bytes, more than the limit of 65524' "$ERR"
	assert_exit 64 cancel_with over
	# At the limit the database is asked (and here does not answer).
	assert_exit 69 cancel_with limit
}
test_expect_success 'outbox cancel --reason: the limit is checked before the database' \
    cancel_reason

test_done
