#!/bin/sh
# A stop signal that reaches outbox dispatch before its first pass (an
# operator's ssh session dropping while it reads its configuration or
# connects) stops it as SIGTERM does: exit 0, nothing claimed, nothing
# sent; not death by the signal (exit 129 for SIGHUP).  The database
# connection goes through tcp_hold.py, which holds it mid-connect for as
# long as the test needs:
#  1. SIGHUP while connecting: still alive while held; once let through,
#     it exits 0 without a pass;
#  2. SIGHUP as soon as main has started (the stop signals are blocked
#     from its first line, /proc/PID/status SigBlk), i.e. while the
#     configuration is read: exit 0, and it does not even connect;
#  3. the same with SIGTERM and SIGINT.
# (2 and 3 need the real binary: under a wrapper such as valgrind, SigBlk
# is the wrapper's.)
# Cases: setup; SIGHUP while connecting; SIGHUP, SIGTERM, SIGINT from
# main's first line.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
[ -r /proc/self/status ] || { echo "SKIP: no /proc"; exit 77; }
"$LIB_PY" "$CRONGUARD_SRCDIR/tests/testservers/tcp_hold.py" \
    --target "${CRONGUARD_TEST_DB_HOST:-127.0.0.1}:${CRONGUARD_TEST_DB_PORT:-3306}" \
    --ready-file "$TEST_TMP/hold.port" --log "$TEST_TMP/hold.log" \
    --go "$TEST_TMP/go" > "$TEST_TMP/hold.out" 2>&1 &
at_exit "kill $! 2> /dev/null"
wait_for 20 test -s "$TEST_TMP/hold.port"

# untouched WHAT: the rows are as inserted, nothing reached the server.
untouched()
{
	assert_eq "5 0" "$(mysql_q "SELECT COUNT(*), SUM(attempts) FROM outbox_messages
	    WHERE status = 'PENDING' AND claim_token IS NULL" | tr '\t' ' ')" \
	    "$1: PENDING rows, attempts"
	assert_eq 0 "$(http_count "/$TEST_ID/")" "$1: requests"
}

setup()
{
	write_config "$CONF" "
channels = { hook = { type = \"http\"; url = \"$HTTP_BASE/$TEST_ID/ok\"; }; };"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
    SELECT 'hook', 't', JSON_OBJECT('n', seq) FROM seq_1_to_5"

	sed "s/^\( *port = \)[0-9]*;/\1$(cat "$TEST_TMP/hold.port");/" "$CONF" > "$TEST_TMP/held.conf"
	grep -q "port = $(cat "$TEST_TMP/hold.port");" "$TEST_TMP/held.conf" ||
	    fail "no port in $TEST_TMP/held.conf"
}
test_expect_success 'setup: five rows, db migrate, a configuration through the hold' \
    setup

# 1. In the middle of connecting.
connecting()
{
	local pid rc
	"$CRONGUARD_BIN" -c "$TEST_TMP/held.conf" -v outbox dispatch \
	    > "$TEST_TMP/d1.out" 2> "$TEST_TMP/d1.err" &
	pid=$!
	wait_for 20 grep -q '^accepted 1$' "$TEST_TMP/hold.log"
	kill -HUP "$pid"
	sleep 0.5
	if ! kill -0 "$pid" 2> /dev/null; then
		rc=0
		wait "$pid" || rc=$?
		fail "SIGHUP while connecting: died at once (exit $rc)"
	fi
	touch "$TEST_TMP/go"
	rc=0
	wait "$pid" || rc=$?
	assert_eq 0 "$rc" "SIGHUP while connecting: exit ($(cat "$TEST_TMP/d1.err"))"
	assert_grep 'event=outbox_dispatch_stopped' "$TEST_TMP/d1.err"
	untouched "SIGHUP while connecting"
	rm -f "$TEST_TMP/go"
}
test_expect_success 'SIGHUP while connecting: alive while held, then exit 0 without a pass' \
    connecting

# 2, 3. From the first line of main, while the configuration is read.
# A wrapper (scripts/test --valgrind) has a mask of its own in SigBlk.
[ -n "${CRONGUARD_TEST_BIN:-}" ] || test_set_prereq REAL_BINARY
# sigblk PID: the process's blocked-signal mask, hex.
sigblk() { sed -n 's/^SigBlk:[[:space:]]*//p' "/proc/$1/status" 2> /dev/null; }
# at_start SIG: SIG as soon as main has started.
at_start()
{
	local sig=$1 accepted pid n stage m sleeper rc
	accepted=$(grep -c '^accepted' "$TEST_TMP/hold.log")
	"$CRONGUARD_BIN" -c "$TEST_TMP/held.conf" -v outbox dispatch \
	    > "$TEST_TMP/d.out" 2> "$TEST_TMP/d.err" &
	pid=$!
	# SIGHUP is bit 0 of the mask; it is set by main's first line and
	# cleared once dispatch's handlers are in place, so the signal goes
	# either while it is blocked (the configuration being read) or, when
	# this loop missed that short window, while the held connect waits
	# with the handlers installed: either way it must stop cleanly.
	n=0
	stage=
	while :; do
		m=$(sigblk "$pid")
		case $m in
		'' | *[!0-9a-fA-F]*) ;;
		*) [ $((0x$m & 1)) -eq 1 ] && { stage=blocked; break; } ;;
		esac
		if [ "$(grep -c '^accepted' "$TEST_TMP/hold.log")" -gt "$accepted" ]; then
			stage=connecting
			break
		fi
		n=$((n + 1))
		[ $n -lt 2000 ] || fail "SIG$sig: the stop signals were never blocked (SigBlk ${m:-gone})"
		kill -0 "$pid" 2> /dev/null || fail "SIG$sig: exited before main blocked the signals"
	done
	kill -"$sig" "$pid"
	# Should it connect after all (the signal came late), let it through.
	(sleep 3; touch "$TEST_TMP/go") &
	sleeper=$!
	rc=0
	wait "$pid" || rc=$?
	assert_eq 0 "$rc" "SIG$sig at start: exit ($(cat "$TEST_TMP/d.err"))"
	assert_grep 'event=outbox_dispatch_stopped' "$TEST_TMP/d.err"
	untouched "SIG$sig at start"
	kill "$sleeper" 2> /dev/null || :
	wait "$sleeper" 2> /dev/null || :
	rm -f "$TEST_TMP/go"
	echo "SIG$sig at start ($stage): connections $accepted -> $(grep -c '^accepted' "$TEST_TMP/hold.log")," \
	    "$(sed -n 's/.*msg="\([^"]*\)".*/\1/p' "$TEST_TMP/d.err" | head -1)"
}
for sig in HUP TERM INT; do
	test_expect_success REAL_BINARY "SIG$sig from main's first line: exit 0, nothing claimed" \
	    "at_start $sig"
done

test_done
