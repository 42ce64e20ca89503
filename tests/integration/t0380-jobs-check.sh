#!/bin/sh
# jobs check turns CRITICAL for a job whose last success is older than
# expect_every + grace, and OK after a good run, in all three formats
# (and --metrics-file); WARNING for a job never run; CRITICAL for a lock
# that a foreign session holds past grace; UNKNOWN without a database.
# Cases: setup; CRITICAL; OK; WARNING; a held lock; UNKNOWN.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
JOBS="runtime_dir = \"$TEST_TMP\";
jobs = {
  accrual = { command = [ \"true\" ]; expect_every = \"1h\"; grace = \"1m\"; };
  fresh = { command = [ \"true\" ]; expect_every = \"1d\"; };
  held = { command = [ \"true\" ]; lock = \"t0380:held\"; grace = \"1s\"; };
};"
setup()
{
	write_config "$CONF" "$JOBS"
	assert_exit 0 cg db migrate

	# accrual succeeded 2 hours ago (database clock), and never since.
	mysql_q "INSERT INTO cronguard_runs (job, host, pid, started_at, finished_at,
	    outcome, exit_status) VALUES ('accrual', 'old', 1, NOW(6) - INTERVAL 2 HOUR,
	    NOW(6) - INTERVAL 2 HOUR + INTERVAL 5 SECOND, 'success', 0)"
}
test_expect_success 'setup: three jobs, db migrate; accrual succeeded 2 hours ago' \
    setup

critical()
{
	assert_exit 2 cg jobs check accrual
	assert_grep '^JOBS CRITICAL - accrual CRITICAL: last success 1h59m5[0-9]s ago \(expected every 1h \+ 1m\) \| accrual_last_success_age=71[0-9][0-9]s;;3660 accrual_running=0$' "$OUT"
	assert_exit 2 cg jobs check --format json accrual
	/usr/bin/python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "CRITICAL", d
j = d["jobs"][0]
assert j["job"] == "accrual" and j["status"] == "CRITICAL", j
assert 7100 < j["last_success_age_seconds"] < 7300, j
assert j["last_success_timestamp_seconds"] > 1.6e9, j' "$OUT" || fail "json: $(cat "$OUT")"
	assert_exit 2 cg jobs check --format prometheus accrual
	assert_grep '^cronguard_job_last_success_timestamp_seconds\{job="accrual"\} [0-9]{10}\.[0-9]+$' "$OUT"
	assert_grep '^cronguard_job_status\{job="accrual"\} 2$' "$OUT"
	assert_grep '^cronguard_jobs_check_status 2$' "$OUT"
	assert_grep '^# TYPE cronguard_job_last_success_timestamp_seconds gauge$' "$OUT"
}
test_expect_success 'a last success older than expect_every + grace: CRITICAL in all formats' \
    critical

# A good run: OK in every format.
good_run()
{
	assert_exit 0 cg run accrual
	assert_exit 0 cg jobs check accrual
	assert_grep '^JOBS OK - 1 job ok \| accrual_last_success_age=[0-9]s;;3660 accrual_running=0$' "$OUT"
	assert_exit 0 cg jobs check --format json accrual
	/usr/bin/python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "OK" and d["jobs"][0]["status"] == "OK", d
assert d["jobs"][0]["last_success_age_seconds"] < 60, d' "$OUT" || fail "json: $(cat "$OUT")"
	assert_exit 0 cg jobs check --format prometheus accrual
	assert_grep '^cronguard_job_status\{job="accrual"\} 0$' "$OUT"
	assert_grep '^cronguard_jobs_check_status 0$' "$OUT"
	assert_exit 0 cg jobs check --metrics-file "$TEST_TMP/jobs.prom" accrual
	assert_grep '^JOBS OK' "$OUT"
	assert_grep '^cronguard_jobs_check_status 0$' "$TEST_TMP/jobs.prom"
}
test_expect_success 'after a good run: OK in every format and --metrics-file' \
    good_run

# Never run: WARNING (a new job should not page anyone at once).
never_run()
{
	assert_exit 1 cg jobs check fresh
	assert_grep '^JOBS WARNING - fresh WARNING: no successful run recorded' "$OUT"
}
test_expect_success 'a job never run: WARNING' never_run

# A foreign session holding a job's lock past grace: CRITICAL.
held()
{
	mysql_q "SELECT GET_LOCK('t0380:held', 0), SLEEP(15)" > /dev/null 2>&1 &
	at_exit "for id in \$(mysql_admin \"SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE '%t0380:held%' AND ID <> CONNECTION_ID()\"); do mysql_admin \"KILL \$id\"; done"
	sleep 2.5
	assert_exit 2 cg jobs check held
	assert_grep '^JOBS CRITICAL - held CRITICAL: lock t0380:held held by connection [0-9]+ .*no cronguard run record' "$OUT"
	assert_exit 2 cg jobs check
	assert_exit 0 cg locks
	assert_grep '^t0380:held +held +STUCK +- +connection [0-9]+, no run record' "$OUT"
	assert_exit 0 cg jobs list
	assert_grep '^accrual +named_lock +cronguard:test_[0-9]+:accrual +[0-9-]+ [0-9:]+ +success +[0-9-]+ [0-9:]+ +[0-9]+$' "$OUT"
	assert_grep '^fresh +named_lock +cronguard:test_[0-9]+:fresh +- +- +- +-$' "$OUT"
}
test_expect_success 'a lock held by a foreign session past grace: CRITICAL; locks, jobs list' \
    held

# Unknown job, no database: UNKNOWN.
unknown()
{
	assert_exit 3 cg jobs check no-such-job
	assert_grep '^JOBS UNKNOWN - no job "no-such-job"' "$OUT"
	write_config "$CONF" "$JOBS"
	sed -i 's/port = [0-9]*;/port = 1;/' "$CONF"
	assert_exit 3 cg jobs check --format json
	assert_grep '"status": "UNKNOWN"' "$OUT"
}
test_expect_success 'an unknown job, no database: UNKNOWN' unknown

test_done
