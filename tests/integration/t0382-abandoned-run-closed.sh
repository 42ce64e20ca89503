#!/bin/sh
# A run record left "running" by a cronguard that died (SIGKILL: its
# session closed, its lock free) is closed as "abandoned", with the time it
# was found and by whom, by the next cronguard that touches the job: jobs
# list, jobs check, run.  A live run (its session holds its lock) is not.
# Cases: setup; cronguard SIGKILLed; jobs list and jobs check beside a
# live run; jobs check closes one; run closes one.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
outcome() { mysql_q "SELECT outcome FROM cronguard_runs WHERE id = $1"; }

setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
	jobs = {
	  long = { command = [ \"sh\", \"-c\", \"echo \$\$ > $TEST_TMP/long.pid; exec sleep 30\" ];
	    lock = \"t0382:long\"; };
	  live = { command = [ \"sh\", \"-c\", \"echo \$\$ > $TEST_TMP/live.pid; exec sleep 30\" ];
	    lock = \"t0382:live\"; };
	  quick = { command = [ \"true\" ]; lock = \"t0382:quick\"; };
	};"
	assert_exit 0 cg db migrate
	at_exit "for f in $TEST_TMP/long.pid $TEST_TMP/live.pid; do [ -s \$f ] && kill \$(cat \$f) 2>/dev/null; done"
}
test_expect_success 'setup: three jobs, db migrate' setup

# --- cronguard SIGKILLed while its job runs: the record stays "running".
sigkilled()
{
	local cg_pid run_id
	"$CRONGUARD_BIN" -c "$CONF" run long 2> "$TEST_TMP/long.err" &
	cg_pid=$!
	wait_for 10 test -s "$TEST_TMP/long.pid"
	run_id=$(mysql_q "SELECT id FROM cronguard_runs WHERE job = 'long'")
	kill -9 "$cg_pid"
	wait "$cg_pid" 2>/dev/null || true
	# The job's reaper kills the job and then lets the lock go (t1108).
	wait_for 10 test "$(mysql_q "SELECT IS_FREE_LOCK('t0382:long')")" = 1
	if kill -0 "$(cat "$TEST_TMP/long.pid")" 2>/dev/null; then
		fail "the job outlived its guard"
	fi
	assert_eq running "$(outcome "$run_id")" "left by the dead cronguard"
	echo "$run_id" > "$TEST_TMP/run_id"
}
test_expect_success 'cronguard SIGKILLed: its record stays running, its lock free' \
    sigkilled

listed()
{
	local run_id live_pid live_id
	run_id=$(cat "$TEST_TMP/run_id")
	# --- a live run of another job, for the control below.
	"$CRONGUARD_BIN" -c "$CONF" run live 2> "$TEST_TMP/live.err" &
	live_pid=$!
	at_exit "kill $live_pid 2>/dev/null"
	wait_for 10 test -s "$TEST_TMP/live.pid"
	live_id=$(mysql_q "SELECT id FROM cronguard_runs WHERE job = 'live'")

	# jobs list closes the dead one, and only that one.
	assert_exit 0 cg jobs list
	assert_grep '^long +named_lock +t0382:long +[0-9-]+ [0-9:]+ +abandoned +- +([0-9]+|-)$' "$OUT"
	assert_grep '^live +named_lock +t0382:live +[0-9-]+ [0-9:]+ +running ' "$OUT"
	assert_grep "level=warn event=run_abandoned job=long runs=1 " "$ERR"
	assert_eq abandoned "$(outcome "$run_id")"
	assert_eq running "$(outcome "$live_id")" "a live run is not abandoned"
	assert_eq 1 "$(mysql_q "SELECT COUNT(*) FROM cronguard_runs WHERE id = $run_id
	    AND finished_at >= NOW(6) - INTERVAL 1 MINUTE
	    AND error LIKE 'abandoned: session % is gone and does not hold lock t0382:long; found by %:%'")" \
	    "finished_at is when it was found; error says by whom"

	# jobs check: the abandoned run is a WARNING until a later run succeeds;
	# the live run is still fine.
	assert_exit 1 cg jobs check long live
	assert_grep "^JOBS WARNING - long WARNING: last run $run_id: abandoned at " "$OUT"
	assert_eq running "$(outcome "$live_id")" "jobs check leaves the live run alone"
	kill "$(cat "$TEST_TMP/live.pid")"
	wait "$live_pid" 2>/dev/null || true
}
test_expect_success 'jobs list closes the dead run, not a live one; jobs check warns' \
    listed

# jobs check closes one too.
checked()
{
	local gone_id
	mysql_q "INSERT INTO cronguard_runs (job, lock_name, host, pid, connection_id)
	    VALUES ('long', 't0382:long', 'gone', 1, 4000000000)"
	gone_id=$(mysql_q "SELECT MAX(id) FROM cronguard_runs WHERE job = 'long'")
	assert_exit 1 cg jobs check long
	assert_eq abandoned "$(outcome "$gone_id")" "closed by jobs check"
}
test_expect_success 'jobs check closes one too' checked

# run closes the job's dead runs before it records its own.
run_closes()
{
	local gone_id
	mysql_q "INSERT INTO cronguard_runs (job, lock_name, host, pid, connection_id)
	    VALUES ('quick', 't0382:quick', 'gone', 1, 4000000001)"
	gone_id=$(mysql_q "SELECT MAX(id) FROM cronguard_runs WHERE job = 'quick'")
	assert_exit 0 cg run quick
	assert_eq abandoned "$(outcome "$gone_id")" "closed by run"
	assert_grep "event=run_abandoned job=quick runs=1 " "$ERR"
	assert_exit 0 cg jobs check quick
	assert_grep '^JOBS OK - 1 job ok' "$OUT"
}
test_expect_success 'run closes the job'"'"'s dead runs before it records its own' \
    run_closes

test_done
