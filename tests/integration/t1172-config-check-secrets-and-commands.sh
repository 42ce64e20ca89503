#!/bin/sh
# config check lists every secret file with the command that reads it
# (ping_url_file included, naming its job), and warns (exit 0) about a
# job's command that does not exist, is not executable, or is not in PATH,
# naming the job and the exit code run would give.  No servers needed.
# Cases: setup; the secret files; the warnings; no warning once executable.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

setup()
{
	(umask 077 && printf 'pw\n' > "$TEST_TMP/db.pw" &&
	    printf 'https://hc-ping.com/x\n' > "$TEST_TMP/ping" &&
	    printf 's\n' > "$TEST_TMP/sign" && printf 'x\n' > "$TEST_TMP/noexec")
	cat > "$CONF" <<CONF
database = { name = "app"; password_file = "$TEST_TMP/db.pw"; };
channels = { hooks = { type = "http"; url = "https://hooks.example.com/";
  signing_secret_file = "$TEST_TMP/sign"; }; };
jobs = {
  pinged = { command = [ "/bin/true" ]; ping_url_file = "$TEST_TMP/ping"; };
  missing = { command = [ "$TEST_TMP/no-such-program", "--x" ]; };
  noexec = { command = [ "$TEST_TMP/noexec" ]; };
  notinpath = { command = [ "no-such-program-$$" ]; };
  inpath = { command = [ "sh", "-c", "true" ]; };
  sqljob = { sql = "SELECT 1"; };
};
CONF
	chmod 600 "$CONF"
}
test_expect_success 'setup: secret files and six jobs' setup

secrets()
{
	assert_exit 0 cg config check
	assert_grep "^#   $TEST_TMP/db\\.pw: every command that uses the database \\(database\\.password_file\\)\$" "$OUT"
	assert_grep "^#   $TEST_TMP/sign: outbox dispatch on channel hooks \\(channels\\.hooks\\.signing_secret_file\\)\$" "$OUT"
	assert_grep "^#   $TEST_TMP/ping: run pinged \\(jobs\\.pinged\\.ping_url_file\\)\$" "$OUT"
}
test_expect_success 'config check lists every secret file with its command' \
    secrets

# The warnings of the config check above.
warnings()
{
	assert_grep "^cronguard: warning: job missing: command $TEST_TMP/no-such-program: No such file or directory \\(run exits 127\\)\$" "$ERR"
	assert_grep "^cronguard: warning: job notinpath: command no-such-program-$$ is not in PATH \\(run exits 127\\)\$" "$ERR"
	assert_grep "^cronguard: warning: job noexec: command $TEST_TMP/noexec is not executable by this user: Permission denied \\(run exits 126\\)\$" "$ERR"
	if grep -E "job (pinged|inpath|sqljob):" "$ERR"; then
		fail "a warning for a job that can start"
	fi
}
test_expect_success 'missing, not executable, not in PATH: a warning naming the job' \
    warnings

executable()
{
	chmod 700 "$TEST_TMP/noexec"
	assert_exit 0 cg config check
	if grep -q "job noexec:" "$ERR"; then
		fail "warned about an executable command"
	fi
}
test_expect_success 'no warning once the command is executable' executable

test_done
