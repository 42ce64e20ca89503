#!/bin/sh
# The jobs metrics file has an up gauge as the outbox file has:
# cronguard_jobs_up is 1 when the jobs could be judged from the database
# and 0 when it could not be read (the file is still written, so the
# alert rules see the database down rather than a stale file).  Both
# files carry the time they were written (cronguard_*_check_timestamp_seconds,
# host clock), which the shipped alert rules use to tell a check that
# stopped running.
# Cases: setup; the database up; the database unreachable.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
JOBS="runtime_dir = \"$TEST_TMP\";
jobs = { nightly = { command = [ \"true\" ]; expect_every = \"1d\"; }; };"
J=$TEST_TMP/jobs.prom
O=$TEST_TMP/outbox.prom

# ts_near FILE NAME: the gauge NAME in FILE is within 5 s of now.
ts_near()
{
	local v now
	v=$(sed -n "s/^$2 \\([0-9]*\\)\$/\\1/p" "$1")
	now=$(date +%s)
	[ -n "$v" ] || { cat "$1"; fail "$1: no $2 sample"; }
	{ [ "$v" -ge $((now - 5)) ] && [ "$v" -le "$now" ]; } ||
	    fail "$1: $2 is $v, now is $now"
}

setup()
{
	write_config "$CONF" "$JOBS"
	assert_exit 0 cg db migrate
	assert_exit 0 cg run nightly
}
test_expect_success 'setup: db migrate, one run of a job' setup

up()
{
	assert_exit 0 cg jobs check --metrics-file "$J"
	assert_grep '^# TYPE cronguard_jobs_up gauge$' "$J"
	assert_grep '^cronguard_jobs_up 1$' "$J"
	assert_grep '^# TYPE cronguard_jobs_check_timestamp_seconds gauge$' "$J"
	ts_near "$J" cronguard_jobs_check_timestamp_seconds
	assert_grep '^cronguard_job_status\{job="nightly"\} 0$' "$J"
	assert_exit 0 cg jobs check --format prometheus
	assert_grep '^cronguard_jobs_up 1$' "$OUT"
	assert_exit 0 cg outbox check --metrics-file "$O"
	assert_grep '^cronguard_outbox_up 1$' "$O"
	ts_near "$O" cronguard_outbox_check_timestamp_seconds
}
test_expect_success 'the database up: up 1 and the time written, in both files' up

# The database unreachable: up 0, a fresh timestamp, no per-job samples.
down()
{
	local before after
	sleep 1.1
	before=$(sed -n 's/^cronguard_jobs_check_timestamp_seconds //p' "$J")
	sed -i 's/port = [0-9]*;/port = 1;/' "$CONF"
	assert_exit 3 cg jobs check --metrics-file "$J"
	assert_grep '^JOBS UNKNOWN - ' "$OUT"
	assert_grep '^cronguard_jobs_up 0$' "$J"
	assert_grep '^cronguard_jobs_check_status 3$' "$J"
	ts_near "$J" cronguard_jobs_check_timestamp_seconds
	after=$(sed -n 's/^cronguard_jobs_check_timestamp_seconds //p' "$J")
	[ "$after" -gt "$before" ] || fail "timestamp did not advance: $before then $after"
	if grep -q '^cronguard_job_status' "$J"; then
		cat "$J"; fail "per-job samples written without a database"
	fi
	assert_exit 3 cg outbox check --metrics-file "$O"
	assert_grep '^cronguard_outbox_up 0$' "$O"
	ts_near "$O" cronguard_outbox_check_timestamp_seconds
}
test_expect_success 'the database unreachable: up 0, a fresh time, no per-job samples' \
    down

test_done
