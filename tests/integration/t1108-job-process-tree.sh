#!/bin/sh
# The whole process tree is the job, and the lock is given up only after
# its last process is gone (src/reaper.h).  A job that is a wrapper,
# sh -c "sh -c 'sleep 4; echo late >> F'; true", writes nothing to F when
# cronguard is killed with SIGKILL, when its lock session is killed on the
# server, and at its timeout; a job that exits leaving a background
# process behind has it killed before the lock is given up.  A server
# restart under a running job is noticed at once, not at the next
# heartbeat (30 s by default): the job's last write is within a second of
# the server going away, and the run exits 76.  No process of the job holds
# the lock session's socket (close-on-exec; the control drops it with an
# LD_PRELOAD shim).
#
# Cases: setup; kill -9 of cronguard; the session killed on the server;
# the timeout; a process left behind; no socket in the job; a server
# restart.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

F=$TEST_TMP/late
export F

# is_free: IS_FREE_LOCK of the test's lock.
is_free() { mysql_q "SELECT IS_FREE_LOCK('t1108:tree')"; }

# start_job JOB: cronguard run JOB in the background, its pid in $cg_pid,
# once the job's inner shell has started.
start_job()
{
	rm -f "$TEST_TMP/inner.pid"
	"$CRONGUARD_BIN" -c "$CONF" run "$1" > "$OUT" 2> "$ERR" &
	cg_pid=$!
	at_exit "kill -9 $cg_pid 2>/dev/null"
	wait_for 10 test -s "$TEST_TMP/inner.pid"
}

# nothing_late: after the inner shell's 4 s, F is still empty.
nothing_late()
{
	sleep 4.5
	if [ -s "$F" ]; then
		fail "a process of the job outlived it: $(cat "$F")"
	fi
}

test_expect_success SERVERS 'setup: wrapper jobs' '
	inner="echo \\\$\\\$ > $TEST_TMP/inner.pid; sleep 4; echo late >> $F" &&
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = {
  tree = { command = [ \"sh\", \"-c\", \"sh -c \\\"$inner\\\"; true\" ];
    lock = \"t1108:tree\"; };
  timed = { command = [ \"sh\", \"-c\", \"sh -c \\\"$inner\\\"; true\" ];
    lock = \"t1108:tree\"; timeout = \"1s\"; };
  leaves = { command = [ \"sh\", \"-c\", \"sh -c \\\"$inner\\\" & sleep 0.5; exit 0\" ];
    lock = \"t1108:tree\"; };
  sockets = { command = [ \"sh\", \"-c\", \"ls -l /proc/self/fd > $TEST_TMP/fds\" ];
    lock = \"t1108:tree\"; };
};" &&
	assert_exit 0 cg db migrate
'

test_expect_success SERVERS 'kill -9 of cronguard: the whole tree dies, then the lock is free' '
	: > "$F" &&
	start_job tree &&
	assert_eq 0 "$(is_free)" "held while running" &&
	kill -9 "$cg_pid" &&
	n=0 &&
	while [ "$(is_free)" != 1 ] && [ "$n" -lt 20 ]; do
		sleep 0.1; n=$((n + 1))
	done &&
	echo "lock free $((n * 100)) ms after SIGKILL" &&
	assert_eq 1 "$(is_free)" "free within 2 s" &&
	if kill -0 "$(cat "$TEST_TMP/inner.pid")" 2>/dev/null; then
		fail "the inner shell still runs after the lock is free"
	fi &&
	nothing_late
'

test_expect_success SERVERS 'the lock session killed on the server: the tree stops, exit 76' '
	: > "$F" &&
	start_job tree &&
	conn=$(mysql_q "SELECT IS_USED_LOCK('"'"'t1108:tree'"'"')") &&
	t0=$(date +%s%N) &&
	mysql_admin "KILL CONNECTION $conn" &&
	rc=0 && wait "$cg_pid" || rc=$?
	ms=$(( ($(date +%s%N) - t0) / 1000000 )) &&
	echo "cronguard exited $rc, $ms ms after the KILL" &&
	assert_eq 76 "$rc" "exit status" &&
	[ "$ms" -lt 2000 ] || fail "the loss was noticed after $ms ms" &&
	assert_grep "event=lock_lost .*the server closed the lock session" "$ERR" &&
	nothing_late
'

test_expect_success SERVERS 'the timeout kills the whole tree' '
	: > "$F" &&
	start_job timed &&
	rc=0 && wait "$cg_pid" || rc=$?
	assert_eq 124 "$rc" "exit status" &&
	nothing_late
'

test_expect_success SERVERS 'a process left behind is killed before the release' '
	: > "$F" &&
	start_job leaves &&
	rc=0 && wait "$cg_pid" || rc=$?
	assert_eq 0 "$rc" "exit status" &&
	assert_grep "event=job_leftovers_killed job=leaves" "$ERR" &&
	if kill -0 "$(cat "$TEST_TMP/inner.pid")" 2>/dev/null; then
		fail "the process left behind still runs after the run"
	fi &&
	nothing_late
'

test_expect_success SERVERS 'no process of the job holds a socket; without close-on-exec one does' '
	assert_exit 0 cg run sockets &&
	if grep -q "socket:" "$TEST_TMP/fds"; then
		fail "the job holds a socket: $(grep socket: "$TEST_TMP/fds")"
	fi &&
	${CC:-cc} -shared -fPIC -o "$TEST_TMP/no-cloexec.so" \
	    "$CRONGUARD_SRCDIR/tests/integration/no-cloexec.c" -ldl &&
	LD_PRELOAD="$TEST_TMP/no-cloexec.so" \
	    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
	    "$CRONGUARD_BIN" -c "$CONF" run sockets > "$OUT" 2> "$ERR" &&
	assert_grep "socket:" "$TEST_TMP/fds"
'

test_expect_success SERVERS 'a server restart is noticed at once, with the default heartbeat' '
	db_private_start &&
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = { ticks = { command = [ \"sh\", \"-c\",
    \"while :; do date +%s%N >> $TEST_TMP/ticks; sleep 0.05; done\" ];
    lock = \"t1108:ticks\"; }; };" &&
	assert_exit 0 cg db migrate &&
	"$CRONGUARD_BIN" -c "$CONF" run ticks > "$OUT" 2> "$ERR" &
	cg_pid=$!
	at_exit "kill -9 $cg_pid 2>/dev/null"
	wait_for 10 test -s "$TEST_TMP/ticks" &&
	sleep 0.5 &&
	t0=$(date +%s%N) &&
	db_private_stop &&
	rc=0 && wait "$cg_pid" || rc=$?
	last=$(tail -n 1 "$TEST_TMP/ticks") &&
	ms=$(( (last - t0) / 1000000 )) &&
	echo "exit $rc; the job last wrote $ms ms after the server was told to stop" &&
	assert_eq 76 "$rc" "exit status" &&
	[ "$ms" -lt 1000 ] || fail "the job ran on $ms ms without its lock"
'

test_done
