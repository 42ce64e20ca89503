#!/bin/sh
# cronguard SIGKILLed while its job runs, the job having started a
# background child that keeps running: the named lock is free at once
# (the lock session's socket is close-on-exec, so no child inherited it),
# and so is the local flock; the next run is not blocked.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = { bg = { command = [ \"sh\", \"-c\",
    \"sleep 30 & echo \$! > $TEST_TMP/bg.pid; echo \$\$ > $TEST_TMP/job.pid; wait\" ];
    lock = \"t0350:bg\"; }; };"
assert_exit 0 cg db migrate
at_exit "for f in $TEST_TMP/bg.pid $TEST_TMP/job.pid; do [ -s \$f ] && kill \$(cat \$f) 2>/dev/null; done"

"$CRONGUARD_BIN" -c "$CONF" run bg 2> "$ERR" &
cg_pid=$!
wait_for 10 test -s "$TEST_TMP/bg.pid"
wait_for 10 test -s "$TEST_TMP/job.pid"
assert_eq 0 "$(mysql_q "SELECT IS_FREE_LOCK('t0350:bg')")" "held while running"

kill -9 "$cg_pid"
wait "$cg_pid" 2>/dev/null || true
# "At once": the server sees the socket close as the process dies.
free=0 n=0
while [ "$n" -lt 10 ]; do
	free=$(mysql_q "SELECT IS_FREE_LOCK('t0350:bg')")
	[ "$free" = 1 ] && break
	sleep 0.1
	n=$((n + 1))
done
assert_eq 1 "$free" "IS_FREE_LOCK within a second of SIGKILL"
echo "lock free within $(( (n + 1) * 100 )) ms"
kill -0 "$(cat "$TEST_TMP/bg.pid")" || fail "the background child should still run"
# The job itself dies with its guard (PR_SET_PDEATHSIG, t0393); a child
# it started in the background does not, hence the close-on-exec guard.
flock -n "$(ls "$TEST_TMP"/cronguard-*/*.lock)" true || fail "the local flock is still held"

# Control: the same run with the close-on-exec guard taken away (an
# LD_PRELOAD shim drops FD_CLOEXEC): the job's children inherit the lock
# session, and the lock outlives cronguard's SIGKILL.  This is what the
# test above would see without the guard.
kill "$(cat "$TEST_TMP/bg.pid")" "$(cat "$TEST_TMP/job.pid")" 2>/dev/null || true
rm -f "$TEST_TMP/bg.pid" "$TEST_TMP/job.pid"
${CC:-cc} -shared -fPIC -o "$TEST_TMP/no-cloexec.so" \
    "$CRONGUARD_SRCDIR/tests/integration/no-cloexec.c" -ldl ||
	fail "cannot build the no-cloexec shim"
LD_PRELOAD="$TEST_TMP/no-cloexec.so" \
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
    "$CRONGUARD_BIN" -c "$CONF" run bg 2> "$ERR" &
cg_pid=$!
wait_for 10 test -s "$TEST_TMP/bg.pid"
wait_for 10 test -s "$TEST_TMP/job.pid"
kill -9 "$cg_pid"
wait "$cg_pid" 2>/dev/null || true
sleep 1
assert_eq 0 "$(mysql_q "SELECT IS_FREE_LOCK('t0350:bg')")" \
    "control: without close-on-exec a child keeps the lock after SIGKILL"
kill "$(cat "$TEST_TMP/bg.pid")" "$(cat "$TEST_TMP/job.pid")" 2>/dev/null || true
n=0
while [ "$(mysql_q "SELECT IS_FREE_LOCK('t0350:bg')")" != 1 ]; do
	[ "$n" -lt 50 ] || fail "control: the lock stayed held after the children died"
	sleep 0.1
	n=$((n + 1))
done
echo "control: the lock was held by the orphaned children until they died"

# The next run starts (the job's leftovers are the operator's business).
write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = { bg = { command = [ \"true\" ]; lock = \"t0350:bg\"; }; };"
assert_exit 0 cg -v run bg
assert_grep 'event=job_finished job=bg outcome=success' "$ERR"
echo "PASS: $TEST_NAME"
