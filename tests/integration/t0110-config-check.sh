#!/bin/sh
# config check: a valid configuration prints its effective values with
# every secret masked (exit 0); each kind of error exits 78 with
# "file:line: key: message" on stderr.  Needs no server, but for the last
# part (a wrong database password), run when the test servers are up.
# Cases: setup; the values, secrets masked; the output valid; the default
# path; the shipped example; errors; missing secret files; a command with
# a space; a FIFO and a NUL; @include; a missing file; a wrong password.
. "${CRONGUARD_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

secret=$TEST_TMP/db.password
hook_secret=$TEST_TMP/hook.secret
setup()
{
	(umask 077; echo 'pw-from-file-42' > "$secret"; echo 'whsec_YWJj' > "$hook_secret")

	# A valid configuration, using a password file: the file may be public.
	cat > "$CONF" <<CONF
database = { host = "127.0.0.1"; user = "cg"; name = "app";
  password_file = "$secret"; };
outbox = { lease = "2m"; };
channels = {
  hook = { type = "http"; url = "https://user:pw-in-url@hooks.example.com/x?token=t0k";
    headers = [ "Authorization: Bearer b3arer", "Content-Type: application/json" ];
    signing_secret_file = "$hook_secret"; };
};
jobs = { nightly = { command = [ "/bin/true" ]; expect_every = "1d"; }; };
CONF
	chmod 600 "$CONF"
}
test_expect_success 'setup: secret files, a valid configuration' setup

printed()
{
	local s
	assert_exit 0 cg config check
	assert_grep '^database = \{' "$OUT"
	assert_grep "password_file = \"$secret\";" "$OUT"
	assert_grep 'lease = "2m";' "$OUT"
	assert_grep 'batch_size = 50;' "$OUT"
	assert_grep 'lock = "cronguard:app:nightly";' "$OUT"
	assert_grep '"Authorization: \*\*\*\*\*\*\*\*"' "$OUT"
	assert_grep 'url = "https://\*\*\*\*\*\*\*\*@hooks.example.com/x\?\*\*\*\*\*\*\*\*";' "$OUT"
	for s in pw-from-file-42 whsec_YWJj b3arer pw-in-url t0k; do
		if grep -q -- "$s" "$OUT" "$ERR"; then
			fail "secret '$s' printed"
		fi
	done
	assert_eq 0 "$(wc -c < "$ERR" | tr -d ' ')" "bytes on stderr"
	# The default database TLS mode is said not to verify the server.
	assert_grep '^    mode = "preferred";' "$OUT"
	assert_grep '^    # does not verify the server' "$OUT"
	# The secret files are listed with the commands that read them.
	assert_grep "^#   $secret: every command that uses the database" "$OUT"
	assert_grep "^#   $hook_secret: outbox dispatch" "$OUT"
}
test_expect_success 'a valid configuration: its values printed, every secret masked' \
    printed

# The output is itself a valid configuration.
reloads()
{
	cp "$OUT" "$TEST_TMP/printed.conf"
	chmod 600 "$TEST_TMP/printed.conf"
	assert_exit 0 "$CRONGUARD_BIN" -c "$TEST_TMP/printed.conf" config check
}
test_expect_success 'the output is itself a valid configuration' reloads

# $CRONGUARD_CONFIG is the default path.
env_path()
{
	assert_exit 0 env CRONGUARD_CONFIG="$CONF" "$CRONGUARD_BIN" config check
	assert_grep 'name = "app";' "$OUT"
}
test_expect_success '$CRONGUARD_CONFIG is the default path' env_path

# The shipped example is valid once its secret files exist.
example()
{
	sed -e "s|/etc/cronguard/db.password|$secret|" \
	    -e "s|/etc/cronguard/billing.secret|$hook_secret|" \
	    "$CRONGUARD_SRCDIR/etc/cronguard.conf" > "$TEST_TMP/example.conf"
	assert_exit 0 "$CRONGUARD_BIN" -c "$TEST_TMP/example.conf" config check
	assert_grep 'lock = "cronguard:app:leave-accrual";' "$OUT"
}
test_expect_success 'the shipped example is valid once its secret files exist' \
    example

# Errors: exit 78, "file:line: key: message".
# expect_error LINE REGEX TEXT [MODE]
expect_error()
{
	printf '%s\n' "$3" > "$CONF"
	chmod "${4:-600}" "$CONF"
	assert_exit 78 cg config check
	assert_grep "$CONF:$1: $2" "$ERR"
	[ -s "$OUT" ] && fail "stdout not empty on error"
	return 0
}
errors()
{
	expect_error 3 'database\.hots: unknown key' 'database = {
  name = "app";
  hots = "db";
};'
	expect_error 1 'frobnicate: unknown key' 'frobnicate = 1;'
	expect_error 2 'syntax error' 'database = {
  name = ;
};'
	expect_error 2 'database\.port: expected an integer' 'database = { name = "a";
  port = "3306"; };'
	expect_error 2 'outbox\.lease: bad duration "5 m"' 'outbox = {
  lease = "5 m"; };'
	expect_error 3 'jobs\.x\.lock: lock name longer than 64 characters' 'database = { name = "a"; };
jobs = { x = { command = [ "/bin/true" ];
  lock = "0123456789012345678901234567890123456789012345678901234567890123456789"; }; };'
	expect_error 2 'outbox\.lease \(30s\) must be longer than channels\.h\.timeout \(1m\)' 'outbox = {
  lease = "30s"; };
channels = { h = { type = "http"; url = "http://x/"; timeout = "1m"; }; };'
	expect_error 2 'database\.password: a secret given inline: .* is readable by others \(mode 0644\) \(chmod o-r .*\), or use password_file' 'database = { name = "a";
  password = "hunter2"; };' 644
	grep -q hunter2 "$ERR" && fail "inline password echoed"
	expect_error 2 'database\.password_file: cannot read /nonexistent/pw' 'database = { name = "a";
  password_file = "/nonexistent/pw"; };'
	chmod 644 "$secret"
	expect_error 1 "database\\.password_file: $secret is readable by others" "database = { name = \"a\"; password_file = \"$secret\"; };"
}
test_expect_success 'each kind of error: exit 78, file:line: key: message' \
    errors

# A host that only runs jobs need not have a channel's secret file:
# config check warns and says who needs it (exit 0), and jobs run.
missing_secret()
{
	mkdir -p "$TEST_TMP/run"
	cat > "$CONF" <<CONF
runtime_dir = "$TEST_TMP/run";
channels = { hook = { type = "http"; url = "https://hooks.example.com/x";
    signing_secret_file = "$TEST_TMP/missing.secret"; }; };
jobs = { local = { command = [ "/bin/true" ]; guard = "none"; };
    pinged = { command = [ "/bin/true" ]; guard = "none";
        ping_url_file = "$TEST_TMP/missing.ping"; }; };
CONF
	assert_exit 0 cg config check
	assert_grep "^cronguard: warning: $CONF:3: channels\.hook\.signing_secret_file: cannot read $TEST_TMP/missing\.secret: No such file or directory \(create it, or correct the path\) \(needed where outbox dispatch sends on channel hook\)" "$ERR"
	# The same for a job's ping URL file, needed where that job runs.
	assert_grep "^cronguard: warning: $CONF:6: jobs\.pinged\.ping_url_file: cannot read $TEST_TMP/missing\.ping: No such file or directory \(create it, or correct the path\) \(needed where job pinged runs\)" "$ERR"
	assert_exit 0 cg run local
	# outbox dispatch does need it: exit 78 with file:line, before any
	# connection attempt (the database here is unreachable: that would be 69).
	cat > "$CONF" <<CONF
database = { host = "127.0.0.1"; port = 9; name = "x"; connect_timeout = "1s"; };
channels = { hook = { type = "http"; url = "https://hooks.example.com/x";
    signing_secret_file = "$TEST_TMP/missing.secret"; }; };
CONF
	assert_exit 78 cg outbox dispatch
	assert_grep "^cronguard: $CONF:3: channels\.hook\.signing_secret_file: cannot read" "$ERR"
	assert_exit 78 cg outbox dispatch --channel hook
}
test_expect_success 'a secret file missing: a warning naming who needs it; outbox dispatch 78' \
    missing_secret

# One command string with a space that names no file: "program --flag"
# written as one string (there is no shell).  A warning, exit 0.
spaced_command()
{
	printf '%s\n' 'jobs = { j = { guard = "none";' \
	    '  command = [ "/nonexistent/tool --flag" ]; }; };' > "$CONF"
	assert_exit 0 cg config check
	assert_grep "^cronguard: warning: $CONF:2: jobs\.j\.command\[0\]: \"/nonexistent/tool --flag\" does not exist" "$ERR"
}
test_expect_success 'a command string with a space naming no file: a warning' \
    spaced_command

# A FIFO as the configuration is refused at once, not read (it would
# block); a NUL byte is refused with its line, not cut short.
fifo_nul()
{
	mkfifo "$TEST_TMP/fifo.conf"
	assert_exit 78 timeout 20 "$CRONGUARD_BIN" -c "$TEST_TMP/fifo.conf" config check
	assert_grep "fifo\.conf: not a regular file" "$ERR"
	printf 'outbox = { ordering = "none"; };\ndatabase = { name = "a\000pp"; };\n' > "$CONF"
	assert_exit 78 cg config check
	assert_grep "^cronguard: $CONF:2: a NUL byte is not allowed" "$ERR"
}
test_expect_success 'a FIFO refused at once; a NUL byte refused with its line' \
    fifo_nul

# @include errors name the path the include resolved to.
include()
{
	printf '\n@include "sub/none.conf"\n' > "$CONF"
	assert_exit 78 cg config check
	assert_grep "$CONF:2: @include \"sub/none\.conf\" \($TEST_TMP/sub/none\.conf\): No such file or directory" "$ERR"
}
test_expect_success '@include errors name the path it resolved to' include

# A missing file, and an argument config check does not take.
usage()
{
	assert_exit 78 "$CRONGUARD_BIN" -c "$TEST_TMP/none.conf" config check
	assert_grep "$TEST_TMP/none.conf: No such file or directory" "$ERR"
	write_config "$CONF"
	assert_exit 64 cg config check extra
	assert_grep '^usage: cronguard .*config check' "$ERR"
}
test_expect_success 'a missing file: 78; an argument config check does not take: 64' \
    usage

# With the test servers: a wrong database password names the file it came
# from.
wrong_password()
{
	local user
	user=cg_pw_$$
	at_exit "mysql_admin \"DROP USER IF EXISTS '$user'@'%'\""
	mysql_admin "CREATE USER '$user'@'%' IDENTIFIED BY 'right-pw'" ||
	    fail "cannot create user $user"
	(umask 077; echo 'wrong-pw' > "$TEST_TMP/wrong.password")
	cat > "$CONF" <<CONF
database = { host = "$CRONGUARD_TEST_DB_HOST"; port = $CRONGUARD_TEST_DB_PORT;
  user = "$user"; password_file = "$TEST_TMP/wrong.password";
  name = "$TEST_DB"; };
CONF
	assert_exit 69 cg db status
	assert_grep "Access denied .*\(password from $TEST_TMP/wrong\.password\)" "$ERR"
}
test_expect_success SERVERS 'a wrong database password names the file it came from' \
    wrong_password

test_done
