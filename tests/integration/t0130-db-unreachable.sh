#!/bin/sh
# An unreachable database: exit 69 with a message naming host:port (or the
# socket) and the client library's error, and never a hang past
# connect_timeout.  Needs no server: it makes its own unreachable ones.
# Cases: a closed port, a black hole, a missing socket.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
: "${CRONGUARD_SQLDIR:=$CRONGUARD_SRCDIR/sql}"
export CRONGUARD_SQLDIR

# conf_db KEYS: a configuration with the given database connection keys.
conf_db()
{
	(
		umask 077
		cat > "$CONF" <<-CONF
		database = {
		  $1
		  user = "cronguard";
		  name = "t0130";
		  connect_timeout = "1s";
		  connect_retry = "0s";
		};
		CONF
	)
}

# timed MAX ARGS...: cronguard ARGS must exit 69 within MAX seconds (and
# is killed after 30, so a hang fails instead of blocking the suite).
timed()
{
	max=$1
	shift
	start=$(date +%s)
	assert_exit 69 timeout 30 "$CRONGUARD_BIN" -c "$CONF" "$@"
	took=$(($(date +%s) - start))
	[ "$took" -le "$max" ] || fail "'$*' took ${took}s, more than ${max}s"
}

# A port nothing listens on: bind one, note it, close it.
closed_port()
{
	local closed cmd
	closed=$("$LIB_PY" -c 'import socket; s = socket.socket()
s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
	conf_db "host = \"127.0.0.1\"; port = $closed;"
	for cmd in "db status" "db migrate"; do
		# shellcheck disable=SC2086 # the command's words
		timed 3 $cmd
		assert_grep "cannot connect to 127\.0\.0\.1:$closed: .*(Can't connect|refused)" "$ERR"
	done
}
test_expect_success 'a closed port: 69 at once, naming host:port' closed_port

# A black hole: a socket that listens but never accepts or answers, so the
# TCP handshake completes and the client waits for the server greeting.
black_hole()
{
	local hole_pid hole
	"$LIB_PY" -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
print(s.getsockname()[1]); sys.stdout.flush(); time.sleep(120)' \
	    > "$TEST_TMP/hole.port" &
	hole_pid=$!
	at_exit "kill $hole_pid"
	wait_for 10 test -s "$TEST_TMP/hole.port"
	hole=$(cat "$TEST_TMP/hole.port")
	conf_db "host = \"127.0.0.1\"; port = $hole;"
	timed 4 db status
	assert_grep "cannot connect to 127\.0\.0\.1:$hole: " "$ERR"
}
test_expect_success 'a black hole: 69 within connect_timeout' black_hole

# A socket path that does not exist.
no_socket()
{
	conf_db "socket = \"$TEST_TMP/no-such.sock\";"
	timed 3 db status
	assert_grep "cannot connect to socket $TEST_TMP/no-such\.sock: it does not exist .*/run/mysqld/mysqld\.sock" "$ERR"
}
test_expect_success 'a socket that does not exist: 69, naming the usual socket' no_socket

test_done
