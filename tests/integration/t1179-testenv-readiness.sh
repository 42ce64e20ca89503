#!/bin/sh
# The test servers' readiness waits (scripts/testenv) hold on a loaded
# machine: a server whose process is slow to exec (fork done, exec not
# yet: its command line is still the starting script's) is waited for, not
# taken for dead; before, the wait gave up at once ("private smtp did not
# start", t0010; "mariadbd did not start", t0720 after a restart) and left
# the server running unowned.  A server that fails shows what this start
# printed, not an earlier start's "ready" from the same appended log.
# Needs no shared server; the MariaDB case needs mariadbd.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

ST=$TEST_TMP/servers
mkdir -p "$ST"

# testenv_with SCRIPT: run SCRIPT in bash with scripts/testenv sourced and
# the servers' programs (python3, mariadbd) replaced by a function that
# adds its PID to $ST/slow.pids and sleeps 2 s before the exec.  $1 in
# SCRIPT is the state directory, passed without a trailing slash, so that
# the command line before the exec does not name a file in it (as in
# `scripts/testenv smtp-start DIR`).
testenv_with()
{
	bash -c '
	. "$CRONGUARD_SRCDIR/scripts/testenv"
	slow() { echo "$BASHPID" >> "$1/slow.pids"; shift; sleep 2; exec "$@"; }
	slow_python() { slow "$ST" /usr/bin/python3 "$@"; }
	mariadbd() { slow "$ST" "$(type -P mariadbd)" "$@"; }
	TESTENV_PY=slow_python
	'"$1" _ "$ST"
}
export ST
# Whatever happens, the slow servers go: by their PIDs.
at_exit 'for p in $(cat "$ST/slow.pids" 2> /dev/null); do kill -KILL "$p" 2> /dev/null; done'
# last_slow: the PID of the last slow start.
last_slow() { tail -n 1 "$ST/slow.pids"; }
# running PID: PID runs (a zombie does not: orphans may never be reaped).
running() { ps -o stat= -p "$1" | grep -qv "^Z"; }

test_expect_success 'an SMTP server slow to exec is waited for' '
	testenv_with "testenv_smtp_start \"\$1\"" \
	    > "$OUT" 2> "$ERR" || { cat "$ERR"; fail "smtp-start failed"; }
	port=$(cat "$ST/smtp.port") &&
	assert_eq "$(last_slow)" "$(cat "$ST/smtp.pid")" "the pid recorded" &&
	"$LIB_PY" -c "import smtplib, sys
smtplib.SMTP(\"127.0.0.1\", int(sys.argv[1]), timeout=5).noop()" "$port" ||
	    fail "the server does not answer"
	"$CRONGUARD_TESTENV" smtp-stop "$ST" &&
	! running "$(last_slow)" ||
	    fail "smtp-stop left it running"
'

test_expect_success 'a failed start shows its own output, not an earlier ready' '
	echo "smtp_server ready port=1 (an earlier start)" >> "$ST/smtp/out" &&
	bash -c ". \"\$CRONGUARD_SRCDIR/scripts/testenv\"
	    failing() { echo \"this start failed\"; exit 1; }
	    TESTENV_PY=failing
	    testenv_smtp_start \"\$1\"" _ "$ST" > "$OUT" 2> "$ERR" &&
	    fail "a server that exits started"
	cat "$ERR"
	assert_grep "smtp \\(pid [0-9]+\\) exited before it was ready" "$ERR" &&
	assert_grep "^this start failed" "$ERR" &&
	! grep -q "an earlier start" "$ERR" || fail "the earlier output shown"
'

test_lazy_prereq MARIADBD 'command -v mariadbd && command -v mariadb-install-db'
test_expect_success MARIADBD 'a MariaDB slow to exec is waited for, and stopped' '
	testenv_with "testenv_db_start \"\$1\"" \
	    > "$OUT" 2> "$ERR" || { cat "$ERR"; fail "db-start failed"; }
	assert_eq "$(last_slow)" "$(cat "$ST/db.pid")" "the pid recorded" &&
	mariadb-admin --no-defaults --protocol=tcp -h 127.0.0.1 \
	    -P "$(cat "$ST/db.port")" -u root ping > /dev/null ||
	    fail "the server does not answer"
	"$CRONGUARD_TESTENV" db-stop "$ST" &&
	! running "$(last_slow)" ||
	    fail "db-stop left it running"
'

test_done
