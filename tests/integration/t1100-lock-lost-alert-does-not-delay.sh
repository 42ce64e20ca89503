#!/bin/sh
# A lost lock stops the job at once, whatever the alert endpoint does: with
# alert.url pointing at a server that accepts and never answers, the job
# is terminated within about a second of the KILL of the run's session
# (not after the alert's 10 s timeout), the alert is still attempted, and
# cronguard itself exits by the alert's timeout (76).
# Cases: setup; a lost lock: the job stopped at once, exit 76 by the
# alert's timeout.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers

# The endpoint: accepts, reads, never answers; logs each accept.
cat > "$TEST_TMP/mute.py" <<'PY'
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(8)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
import os
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
held = []
while True:
    c, _ = s.accept()
    held.append(c)
    with open(sys.argv[2], "a") as f:
        f.write("accepted\n")
PY
"$LIB_PY" "$TEST_TMP/mute.py" "$TEST_TMP/port" "$TEST_TMP/accepts" &
mute_pid=$!
at_exit "kill $mute_pid 2>/dev/null"
wait_for 10 test -s "$TEST_TMP/port"
port=$(cat "$TEST_TMP/port")

# The job records when it got SIGTERM, then ignores nothing else.
setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
alert = { url = \"http://127.0.0.1:$port/alert\"; timeout = \"10s\"; };
jobs = { long = { command = [ \"sh\", \"-c\",
    \"trap 'date +%s.%N > $TEST_TMP/job.term; exit 143' TERM; echo \$\$ > $TEST_TMP/job.pid; while :; do sleep 0.1; done\" ];
    heartbeat = \"200ms\"; }; };"
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: an alert endpoint that never answers, db migrate' \
    setup

lost()
{
	local rc cg_pid job_pid conn killed_at i took start waited
	rc=0
	"$CRONGUARD_BIN" -c "$CONF" run long > "$OUT" 2> "$ERR" &
	cg_pid=$!
	at_exit "kill $cg_pid 2>/dev/null; [ -s $TEST_TMP/job.pid ] && kill -9 \$(cat $TEST_TMP/job.pid) 2>/dev/null"
	wait_for 10 test -s "$TEST_TMP/job.pid"
	job_pid=$(cat "$TEST_TMP/job.pid")
	conn=$(mysql_q "SELECT connection_id FROM cronguard_runs WHERE job = 'long' AND outcome = 'running'")
	[ -n "$conn" ] || fail "no running run record"

	killed_at=$(date +%s.%N)
	mysql_admin "KILL CONNECTION $conn"
	# The job must be gone within 2 s of the KILL (heartbeat 200ms).
	i=0
	while kill -0 "$job_pid" 2>/dev/null && [ $i -lt 20 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$job_pid" 2>/dev/null; then
		cat "$ERR"
		fail "the job still runs 2 s after its lock was lost (waiting on the alert?)"
	fi
	[ -s "$TEST_TMP/job.term" ] || fail "the job did not get SIGTERM"
	took=$(awk -v a="$killed_at" -v b="$(cat "$TEST_TMP/job.term")" 'BEGIN { printf "%.2f", b - a }')
	echo "SIGTERM reached the job $took s after the KILL"
	awk -v t="$took" 'BEGIN { exit !(t < 2.0) }' || fail "SIGTERM came $took s after the KILL"

	start=$(date +%s)
	wait "$cg_pid" || rc=$?
	waited=$(( $(date +%s) - start ))
	cat "$ERR"
	assert_eq 76 "$rc" "exit status after the lock was lost"
	assert_grep 'event=lock_lost incident=1 job=long' "$ERR"
	# The alert was attempted, and cronguard waited for it no longer than its
	# timeout (10 s, minus what already passed).
	[ -s "$TEST_TMP/accepts" ] || fail "the alert was never attempted"
	assert_grep 'event=alert_failed incident=lock_lost' "$ERR"
	[ "$waited" -le 11 ] || fail "cronguard exited $waited s after the job, past alert.timeout"
	assert_eq "lock_lost 143" "$(mysql_q "SELECT outcome, exit_status FROM cronguard_runs
	    WHERE job = 'long'" | tr '\t' ' ')" "run record"
}
test_expect_success 'a lost lock stops the job within 2 s; exit 76 by the alert'"'"'s timeout' \
    lost

test_done
