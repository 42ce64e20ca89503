#!/bin/sh
# jobs check: a paused job is not overdue.  Its status is OK, in every
# format, with who paused it, since and until when and why (and what the
# run records said); cronguard_job_paused is 1 and JSON "paused" the pause.
# Resumed, or its --for over, the same job is CRITICAL again.
# Cases: setup; overdue; paused; resumed; every job for 2 s.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
me="$(id -un)@$(hostname -s 2>/dev/null || hostname):[0-9]+"

setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
	jobs = {
	  accrual = { command = [ \"true\" ]; expect_every = \"1h\"; grace = \"1m\"; };
	  fine = { command = [ \"true\" ]; };
	};"
	assert_exit 0 cg db migrate

	# accrual succeeded 2 hours ago (database clock), and never since.
	mysql_q "INSERT INTO cronguard_runs (job, host, pid, started_at, finished_at,
	    outcome, exit_status) VALUES ('accrual', 'old', 1, NOW(6) - INTERVAL 2 HOUR,
	    NOW(6) - INTERVAL 2 HOUR + INTERVAL 5 SECOND, 'success', 0)"
}
test_expect_success 'setup: two jobs, db migrate; accrual succeeded 2 hours ago' \
    setup

overdue()
{
	assert_exit 2 cg jobs check
	assert_grep '^JOBS CRITICAL - accrual CRITICAL: last success 1h59m[0-9]+s ago' "$OUT"
	assert_exit 2 cg jobs check --format prometheus
	assert_grep '^cronguard_job_paused\{job="accrual"\} 0$' "$OUT"
	assert_grep '^# TYPE cronguard_job_paused gauge$' "$OUT"
}
test_expect_success 'not paused: accrual CRITICAL, cronguard_job_paused 0' \
    overdue

# Paused: OK, and says why.
paused()
{
	local f
	assert_exit 0 cg jobs pause accrual --reason "ledger | migration"
	assert_exit 0 cg jobs check
	assert_grep "^JOBS OK - 2 jobs ok; accrual OK: paused by $me since [0-9-]{10} [0-9:]{8} until resumed: ledger / migration \(while paused: CRITICAL last success 1h59m[0-9]+s ago \(expected every 1h \+ 1m\)\) \| accrual_last_success_age=71[0-9]{2}s;;3660 accrual_running=0 fine_running=0$" "$OUT"
	assert_exit 0 cg jobs check accrual
	assert_exit 0 cg jobs check --format json
	/usr/bin/python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "OK", d
j = {x["job"]: x for x in d["jobs"]}
a = j["accrual"]
assert a["status"] == "OK" and a["message"].startswith("paused by "), a
assert a["paused"]["reason"] == "ledger | migration", a
assert a["paused"]["until_at"] is None and a["paused"]["all_jobs"] is False, a
assert j["fine"]["paused"] is None and j["fine"]["status"] == "OK", j' "$OUT" ||
	    fail "json: $(cat "$OUT")"
	assert_exit 0 cg jobs check --format prometheus --metrics-file "$TEST_TMP/jobs.prom"
	for f in "$OUT" "$TEST_TMP/jobs.prom"; do
		assert_grep '^cronguard_job_paused\{job="accrual"\} 1$' "$f"
		assert_grep '^cronguard_job_paused\{job="fine"\} 0$' "$f"
		assert_grep '^cronguard_job_status\{job="accrual"\} 0$' "$f"
		assert_grep '^cronguard_jobs_check_status 0$' "$f"
	done
}
test_expect_success 'paused: OK in every format, saying by whom, since, until, why' \
    paused

# Resumed: CRITICAL again.
resumed()
{
	assert_exit 0 cg jobs resume accrual
	assert_exit 2 cg jobs check
	assert_grep '^JOBS CRITICAL - accrual CRITICAL: last success' "$OUT"
}
test_expect_success 'resumed: CRITICAL again' resumed

# Paused with every job, for 2 s: OK, then CRITICAL by itself.
all_for()
{
	assert_exit 0 cg jobs pause --all --for 2s
	assert_exit 0 cg jobs check --format prometheus
	assert_grep '^cronguard_job_paused\{job="accrual"\} 1$' "$OUT"
	assert_grep '^cronguard_job_paused\{job="fine"\} 1$' "$OUT"
	assert_exit 0 cg jobs check
	assert_grep "; accrual OK: paused \(every job\) by $me since .* until [0-9-]{10} [0-9:]{8} \(while paused" "$OUT"
	sleep 2.5
	assert_exit 2 cg jobs check
	assert_grep '^JOBS CRITICAL - accrual CRITICAL: last success' "$OUT"
}
test_expect_success 'every job paused for 2 s: OK, then CRITICAL by itself' \
    all_for

test_done
