#!/bin/sh
# The newest finished run of a job (jobs check, jobs list) is one entry
# of ix_runs_job_done (sql/013), however long the job's history: doctor
# EXPLAINs the statement cronguard runs (runs_index) and says OK; with
# the index dropped the server reads the job's runs and doctor warns.
# Cases: setup; no run yet; 2,001 runs; without the index.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers

# doctor: its other checks may warn about this test server; only
# runs_index matters here.
doctor() { cg doctor > "$OUT" 2> "$ERR" || true; }

setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = { nightly = { command = [ \"true\" ]; }; };"
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: one job, db migrate' setup

no_run()
{
	doctor
	assert_grep '^OK runs_index: the newest finished run of a job is one entry of ix_runs_job_done \(type ref\)$' "$OUT"
}
test_expect_success 'no run yet: doctor says runs_index OK' no_run

# 2,000 finished runs and a running one.
long_history()
{
	mysql_q "INSERT INTO cronguard_runs (job, host, pid, started_at, finished_at,
	    outcome) SELECT 'nightly', 'h', 1, NOW(6) - INTERVAL seq MINUTE,
	    NOW(6) - INTERVAL seq MINUTE, IF(seq % 3 = 0, 'failure', 'success')
	    FROM seq_1_to_2000"
	mysql_q "INSERT INTO cronguard_runs (job, host, pid) VALUES ('nightly', 'h', 2)"
	mysql_q "ANALYZE TABLE cronguard_runs" > /dev/null
	doctor
	assert_grep '^OK runs_index: the newest finished run of a job is one entry of ix_runs_job_done \(type ref\)$' "$OUT"
	# The lookup jobs check makes for each job, read on the server: one
	# entry of the index, backwards, for 2,001 runs.
	mysql_q "ANALYZE SELECT y.id FROM cronguard_runs y
	    WHERE y.job = 'nightly' AND y.done = 1 ORDER BY y.id DESC LIMIT 1" \
	    > "$TEST_TMP/explain"
	assert_grep 'ix_runs_job_done.*[[:space:]]1\.00[[:space:]]' "$TEST_TMP/explain"
	if grep -q filesort "$TEST_TMP/explain"; then
		fail "the lookup sorts: $(cat "$TEST_TMP/explain")"
	fi
	assert_exit 0 cg jobs list
	assert_grep '^nightly +named_lock .* running ' "$OUT"
	assert_exit 0 cg jobs check --format json nightly
	assert_grep "\"last_finished_run_id\": $(mysql_q "SELECT MAX(id) FROM cronguard_runs
	    WHERE job = 'nightly' AND outcome <> 'running'")," "$OUT"
}
test_expect_success '2,001 runs: the newest finished one is one index entry' \
    long_history

# Without the index: a WARNING naming the fix.
no_index()
{
	mysql_q "DROP INDEX ix_runs_job_done ON cronguard_runs"
	doctor
	assert_grep '^WARNING runs_index: the newest finished run of a job reads key .*, not one entry of ix_runs_job_done; fix: cronguard db migrate \(sql/013_runs_done.sql' "$OUT"
}
test_expect_success 'without the index doctor warns, naming the fix' no_index

test_done
