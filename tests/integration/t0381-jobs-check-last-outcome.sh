#!/bin/sh
# jobs check: a job whose last finished run ended in an incident (or lost
# its lock) is CRITICAL, in a timeout, a failure, ... WARNING, until a later
# run succeeds; in all three formats.  A run still going after the bad one
# does not clear it: only a success does.
# Cases: setup; text; json; prometheus; a run still going; a run whose
# session is gone; a success.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
# run JOB OUTCOME [AGE_MINUTES]: a finished run record.
run()
{
	mysql_q "INSERT INTO cronguard_runs (job, host, pid, started_at,
	    finished_at, outcome, exit_status) VALUES ('$1', 'h', 1,
	    NOW(6) - INTERVAL ${3:-5} MINUTE,
	    NOW(6) - INTERVAL ${3:-5} MINUTE + INTERVAL 1 SECOND, '$2', 0)"
}
setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
	jobs = {
	  inc = { command = [ \"true\" ]; };
	  lost = { command = [ \"true\" ]; };
	  slow = { command = [ \"true\" ]; };
	  bad = { command = [ \"true\" ]; expect_every = \"1d\"; };
	  gone = { command = [ \"true\" ]; };
	};"
	assert_exit 0 cg db migrate
	run bad success 60
	run bad failure 30
	run inc incident
	run lost lock_lost
	run slow timeout
}
test_expect_success 'setup: five jobs, db migrate, their last runs' setup

text()
{
	assert_exit 1 cg jobs check bad
	assert_grep '^JOBS WARNING - bad WARNING: last run [0-9]+: failure at [0-9-]+ [0-9:]+ \| ' "$OUT"
	assert_exit 2 cg jobs check inc
	assert_grep '^JOBS CRITICAL - inc CRITICAL: last run [0-9]+: incident at ' "$OUT"
	assert_exit 2 cg jobs check lost
	assert_grep '^JOBS CRITICAL - lost CRITICAL: last run [0-9]+: lock_lost at ' "$OUT"
	assert_exit 1 cg jobs check slow
	assert_grep '^JOBS WARNING - slow WARNING: last run [0-9]+: timeout at ' "$OUT"
	assert_exit 2 cg jobs check
	assert_grep '^JOBS CRITICAL - ' "$OUT"
}
test_expect_success 'an incident or lock_lost is CRITICAL; a timeout or failure WARNING' \
    text

json()
{
	assert_exit 2 cg jobs check --format json
	/usr/bin/python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "CRITICAL", d
j = {x["job"]: x for x in d["jobs"]}
assert j["inc"]["status"] == "CRITICAL" and j["inc"]["last_outcome"] == "incident", j
assert j["lost"]["status"] == "CRITICAL", j
assert j["slow"]["status"] == "WARNING" and "timeout" in j["slow"]["message"], j
assert j["bad"]["status"] == "WARNING" and j["bad"]["last_outcome"] == "failure", j
assert j["bad"]["last_finished_outcome"] == "failure", j' "$OUT" || fail "json: $(cat "$OUT")"
}
test_expect_success 'the same in JSON' json

prometheus()
{
	assert_exit 2 cg jobs check --format prometheus
	assert_grep '^cronguard_job_status\{job="inc"\} 2$' "$OUT"
	assert_grep '^cronguard_job_status\{job="lost"\} 2$' "$OUT"
	assert_grep '^cronguard_job_status\{job="slow"\} 1$' "$OUT"
	assert_grep '^cronguard_job_status\{job="bad"\} 1$' "$OUT"
	assert_grep '^cronguard_job_last_run_failed\{job="inc"\} 1$' "$OUT"
	assert_grep '^cronguard_jobs_check_status 2$' "$OUT"
}
test_expect_success 'the same for Prometheus' prometheus

# A run still recorded as running does not clear the incident.
still_running()
{
	mysql_q "INSERT INTO cronguard_runs (job, host, pid) VALUES ('inc', 'h', 2)"
	assert_exit 2 cg jobs check inc
	assert_grep '^JOBS CRITICAL - inc CRITICAL: last run [0-9]+: incident' "$OUT"
	mysql_q "DELETE FROM cronguard_runs WHERE job = 'inc' AND outcome = 'running'"
}
test_expect_success 'a run still recorded as running does not clear the incident' \
    still_running

# A run recorded as running whose session is gone died without finishing
# (one jobs check cannot close as abandoned: no lock name, or a replica):
# WARNING; the same run with its session in the process list is running.
sleeper_seen()
{
	[ -n "$(mysql_q "SELECT ID FROM information_schema.PROCESSLIST
	    WHERE INFO = 'SELECT SLEEP(5)'")" ]
}
session_gone()
{
	mysql_q "INSERT INTO cronguard_runs (job, host, pid, connection_id)
	    VALUES ('gone', 'h', 3, 4000000000)"
	assert_exit 1 cg jobs check gone
	assert_grep '^JOBS WARNING - gone WARNING: run [0-9]+ died without finishing \(its session 4000000000 is gone\)' "$OUT"
	mysql_q "SELECT SLEEP(5)" > /dev/null &
	sleeper=$!
	wait_for 5 sleeper_seen
	mysql_q "UPDATE cronguard_runs SET connection_id = (SELECT ID
	    FROM information_schema.PROCESSLIST WHERE INFO = 'SELECT SLEEP(5)'
	    LIMIT 1) WHERE job = 'gone'"
	assert_exit 0 cg jobs check gone
	! grep -q 'died without finishing' "$OUT" || fail "alive: $(cat "$OUT")"
	wait "$sleeper"
}
test_expect_success 'a running run whose session is gone: WARNING' session_gone

# A later success clears it, in every format.
success()
{
	assert_exit 0 cg run inc
	assert_exit 0 cg run bad
	assert_exit 0 cg jobs check inc bad
	assert_grep '^JOBS OK - 2 jobs ok' "$OUT"
	assert_exit 0 cg jobs check --format json inc bad
	assert_grep '"status": "OK"' "$OUT"
	assert_exit 0 cg jobs check --format prometheus inc bad
	assert_grep '^cronguard_job_status\{job="inc"\} 0$' "$OUT"
	assert_grep '^cronguard_job_last_run_failed\{job="inc"\} 0$' "$OUT"
}
test_expect_success 'a later success clears it, in every format' success

test_done
