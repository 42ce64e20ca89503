#!/bin/sh
# A connect refused for a passing reason (1040 too many connections; the
# server restarting: 2002/2003/2013) is retried with jittered backoff for
# up to database.connect_retry, with one warning line, before exit 69:
# a fleet's crontabs firing in the same second all run their jobs.  The
# monitoring checks keep a tighter limit and answer UNKNOWN in seconds.
# Cases: setup; every connection taken; connect_retry and outbox check;
# the storm; the server restarting.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
db_private_start	# max_connections is global: our own server
# occupy N SECONDS: N sessions of user cg, each sleeping SECONDS once it
# got in (our own checks may take a slot for a moment).
occupy()
{
	i=0
	while [ "$i" -lt "$1" ]; do
		until mariadb --no-defaults --protocol=tcp -h 127.0.0.1 \
		    -P "$CRONGUARD_TEST_DB_PORT" -u cg -N -B \
		    -e "SELECT SLEEP($2)" > /dev/null 2>&1; do
			sleep 0.2
		done &
		i=$((i + 1))
	done
	wait_for 10 sessions_at_least "$1"
}
sessions_at_least()
{
	[ "$(mysql_admin "SELECT COUNT(*) FROM information_schema.PROCESSLIST
	    WHERE USER = 'cg'")" -ge "$1" ]
}

setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";"
	assert_exit 0 cg db migrate
	# A user without SUPER: the server keeps one extra connection for SUPER.
	mysql_admin "CREATE USER cg@'127.0.0.1';
	    GRANT ALL ON \`$TEST_DB\`.* TO cg@'127.0.0.1'"
	sed -i 's/user = ".*";/user = "cg";/' "$CONF"
	at_exit 'mysql_admin "SET GLOBAL max_connections = 1000"'
}
test_expect_success 'setup: a server of its own, a user without SUPER' setup

# Every connection taken for 4 s (10 is MariaDB's lowest limit): exec
# waits for one instead of exit 69, and says so once.
taken()
{
	local start took
	mysql_admin "SET GLOBAL max_connections = 10"
	occupy 10 4
	start=$(date +%s)
	assert_exit 0 cg exec --lock "$TEST_ID" -- true
	took=$(($(date +%s) - start))
	assert_eq 1 "$(grep -c 'event=db_connect_retry' "$ERR")" "retry log lines"
	assert_grep 'level=warn event=db_connect_retry .*Too many connections' "$ERR"
	[ "$took" -ge 2 ] || fail "exec connected after ${took}s while all were taken"
	wait
}
test_expect_success 'every connection taken: exec waits for one, one warning line' \
    taken

# connect_retry bounds the wait: 2s, then exit 69 saying how long it tried;
# 0s: no retry at all.
bounded()
{
	local start took
	occupy 10 20
	cp "$CONF" "$TEST_TMP/short.conf"
	sed -i 's/^};$/  connect_retry = "2s";\n};/' "$TEST_TMP/short.conf"
	start=$(date +%s)
	assert_exit 69 "$CRONGUARD_BIN" -c "$TEST_TMP/short.conf" exec --lock "$TEST_ID" -- true
	took=$(($(date +%s) - start))
	assert_grep 'Too many connections \([0-9]+ attempts in 2s\)' "$ERR"
	[ "$took" -ge 2 ] && [ "$took" -le 5 ] || fail "gave up after ${took}s, not 2s"
	sed -i 's/connect_retry = "2s"/connect_retry = "0s"/' "$TEST_TMP/short.conf"
	assert_exit 69 "$CRONGUARD_BIN" -c "$TEST_TMP/short.conf" exec --lock "$TEST_ID" -- true
	assert_eq 0 "$(grep -c db_connect_retry "$ERR")" "retry lines with connect_retry 0s"

	# outbox check: UNKNOWN after its tighter limit, not after connect_retry.
	start=$(date +%s)
	assert_exit 3 cg outbox check
	took=$(($(date +%s) - start))
	assert_grep 'Too many connections' "$OUT"
	[ "$took" -ge 4 ] && [ "$took" -le 9 ] ||
	    fail "outbox check answered after ${took}s, expected 5 s of retries"
	mysql_admin "KILL QUERY USER cg"
	wait
}
test_expect_success 'connect_retry bounds the wait (0s: none); outbox check UNKNOWN sooner' \
    bounded

# The storm: 40 guarded runs started at once against 10 connections;
# every job runs.
storm()
{
	local pids fails p
	i=0
	while [ "$i" -lt 40 ]; do
		"$CRONGUARD_BIN" -c "$CONF" exec --lock "$TEST_ID:$i" -- \
		    sh -c "sleep 1; echo $i >> $TEST_TMP/ran" \
		    > "$TEST_TMP/storm.$i.out" 2>&1 &
		pids="${pids:-} $!"
		i=$((i + 1))
	done
	fails=0
	for p in $pids; do
		wait "$p" || fails=$((fails + 1))
	done
	[ "$fails" -eq 0 ] || { cat "$TEST_TMP"/storm.*.out; fail "$fails of 40 runs failed"; }
	assert_eq 40 "$(wc -l < "$TEST_TMP/ran" | tr -d ' ')" "jobs run in the storm"
	grep -l 'event=db_connect_retry' "$TEST_TMP"/storm.*.out > /dev/null ||
	    fail "no run had to retry: the storm did not hit the limit"
}
test_expect_success '40 guarded runs at once against 10 connections: every job runs' \
    storm

# The server restarting: exec started while it is down connects once it
# is back.
restart()
{
	local restarter
	mysql_admin "SET GLOBAL max_connections = 1000"
	db_private_stop
	( sleep 3; "$CRONGUARD_TESTENV" db-start "$TEST_TMP/servers" ) &
	restarter=$!
	assert_exit 0 cg exec --lock "$TEST_ID" -- true
	assert_grep "event=db_connect_retry .*Can't connect" "$ERR"
	wait "$restarter"
}
test_expect_success 'exec started while the server is down connects once it is back' \
    restart

test_done
