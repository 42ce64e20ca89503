#!/bin/sh
# A signal to cronguard between the run record's write and the job's
# start, or between the job's end and finishing its record, does not kill
# it by the default action: the record is finished with the job's real
# outcome (after the job) or as cancelled (before it), so a once_per job
# does not run twice in its slot.
#   1. The record's final UPDATE waits behind LOCK TABLES cronguard_runs
#      WRITE; SIGTERM meanwhile; after UNLOCK the record says success,
#      cronguard exits 0, and the next launch the same day skips.
#   2. The start ping hangs (an endpoint that never answers); SIGTERM
#      meanwhile: the job never starts, the record says error "terminated
#      by SIGTERM before the job started", exit 143.
# Cases: setup; SIGTERM while the record is finished; the next launch
# skips; SIGTERM while the start ping hangs.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers

COUNT=$TEST_TMP/count
ran() { if [ -f "$COUNT" ]; then wc -l < "$COUNT" | tr -d ' '; else echo 0; fi; }
# A blocked statement waits read_timeout: keep it short, so that a broken
# run of this test fails in seconds.
short_timeouts() {
	sed -i 's/connect_timeout = "5s";/connect_timeout = "5s"; read_timeout = "8s"; write_timeout = "8s";/' "$CONF"
}

# in_processlist PATTERN: a statement LIKE PATTERN is running.
in_processlist() {
	[ -n "$(mysql_admin "SELECT ID FROM information_schema.PROCESSLIST
	    WHERE INFO LIKE '$1'")" ]
}

setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = { daily = { command = [ \"sh\", \"-c\",
    \"echo ran >> $COUNT; echo \$\$ > $TEST_TMP/job.pid; while [ ! -e $TEST_TMP/go ]; do sleep 0.05; done\" ];
    once_per = \"1d\"; }; };"
	short_timeouts
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: a once_per job, short timeouts, db migrate' setup

after_job()
{
	local cg_pid locker locker_id rc
	"$CRONGUARD_BIN" -c "$CONF" -v run daily > "$OUT" 2> "$ERR" &
	cg_pid=$!
	at_exit "kill -9 $cg_pid 2>/dev/null"
	wait_for 10 test -s "$TEST_TMP/job.pid"

	# Another session write-locks the runs table and holds it.
	mysql_q "LOCK TABLES cronguard_runs WRITE; SELECT SLEEP(60)" > /dev/null 2>&1 &
	locker=$!
	at_exit "kill $locker 2>/dev/null"
	wait_for 10 in_processlist 'SELECT SLEEP(60)%'
	locker_id=$(mysql_admin "SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP(60)%'")

	# The job ends; its record's UPDATE now waits for the table lock.
	touch "$TEST_TMP/go"
	wait_for 10 in_processlist 'UPDATE cronguard_runs%'
	kill -TERM "$cg_pid"
	sleep 0.5
	kill -0 "$cg_pid" 2>/dev/null || {
		cat "$ERR"
		fail "SIGTERM while the run record was being finished killed cronguard"
	}
	mysql_admin "KILL CONNECTION $locker_id"
	rc=0
	wait "$cg_pid" || rc=$?
	cat "$ERR"
	assert_eq 0 "$rc" "exit status: the job succeeded, the signal came after it"
	assert_grep 'event=signal_after_job job=daily signal=SIGTERM' "$ERR"
	assert_eq "success" "$(mysql_q "SELECT outcome FROM cronguard_runs WHERE job = 'daily'")" "run record"
}
test_expect_success 'SIGTERM while the run record is finished: success, exit 0' \
    after_job

skipped()
{
	assert_exit 0 cg -v run daily
	assert_grep 'event=job_already_done job=daily' "$ERR"
	assert_eq 1 "$(ran)" "runs of the once_per job today"
}
test_expect_success 'the next launch the same day skips' skipped

# 2. Before the job: the start ping hangs, SIGTERM arrives meanwhile.
before_job()
{
	local mute_pid cg_pid rc
	cat > "$TEST_TMP/mute.py" <<'PY'
import os, socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(8)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
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
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = { pinged = { command = [ \"sh\", \"-c\", \"echo ran >> $COUNT\" ];
    ping_url = \"http://127.0.0.1:$(cat "$TEST_TMP/port")/hc\"; }; };"
	short_timeouts
	"$CRONGUARD_BIN" -c "$CONF" run pinged > "$OUT" 2> "$ERR" &
	cg_pid=$!
	wait_for 10 test -s "$TEST_TMP/accepts"
	kill -TERM "$cg_pid"
	rc=0
	wait "$cg_pid" || rc=$?
	cat "$ERR"
	assert_eq 143 "$rc" "exit status of a run cancelled before its job"
	assert_grep 'event=job_cancelled job=pinged signal=SIGTERM' "$ERR"
	assert_eq 1 "$(ran)" "the cancelled job ran"
	assert_eq "error|terminated by SIGTERM before the job started" \
	    "$(mysql_q "SELECT CONCAT(outcome, '|', error) FROM cronguard_runs WHERE job = 'pinged'")" \
	    "run record of the cancelled run"
}
test_expect_success 'SIGTERM while the start ping hangs: cancelled, exit 143' \
    before_job

test_done
