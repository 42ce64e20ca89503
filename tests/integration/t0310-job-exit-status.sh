#!/bin/sh
# run and exec pass the job's exit status through (like flock(1)); 124
# after the timeout (the job killed); 126 when the command cannot be
# executed, 127 when it is not found; the job sees CRONGUARD_JOB,
# CRONGUARD_RUN_ID and CRONGUARD_LOCK; every run leaves a finished record.
# Cases: setup; exit status; environment; timeout; 126 and 127; a job
# killed; usage errors; nothing left held.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = {
  seven = { command = [ \"sh\", \"-c\", \"exit 7\" ]; };
  env = { command = [ \"sh\", \"-c\",
    \"echo \$CRONGUARD_JOB \$CRONGUARD_RUN_ID \$CRONGUARD_LOCK\" ];
    lock = \"t0310:env\"; output = \"capture\"; };
  slow = { command = [ \"sleep\", \"30\" ]; timeout = \"1s\"; };
  selfkill = { command = [ \"sh\", \"-c\", \"kill -9 \$\$\" ]; };
};"
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: four jobs, db migrate' setup

record() # record ID: "outcome exit_status"
{
	mysql_q "SELECT outcome, IFNULL(exit_status, 'NULL'),
	    finished_at IS NOT NULL FROM cronguard_runs WHERE id = $1" | tr '\t' ' '
}
last_id() { mysql_q "SELECT MAX(id) FROM cronguard_runs"; }

exit_status()
{
	assert_exit 7 cg run seven
	assert_eq "failure 7 1" "$(record "$(last_id)")" "run record of exit 7"
	assert_exit 0 cg exec --lock t0310:x -- true
	assert_eq "success 0 1" "$(record "$(last_id)")"
	assert_exit 3 cg exec --lock t0310:x -- sh -c 'exit 3'
}
test_expect_success 'run and exec pass the job'"'"'s exit status through' exit_status

environment()
{
	local id
	assert_exit 0 cg run env
	id=$(last_id)
	assert_eq "env $id t0310:env" "$(cat "$OUT")" "job environment"
	assert_exit 0 cg exec --lock t0310:y -- sh -c 'echo $CRONGUARD_JOB $CRONGUARD_LOCK'
	assert_eq "t0310:y t0310:y" "$(cat "$OUT")" "exec environment"
}
test_expect_success 'the job sees CRONGUARD_JOB, CRONGUARD_RUN_ID, CRONGUARD_LOCK' environment

timeout_124()
{
	local start
	start=$(date +%s)
	assert_exit 124 cg run slow
	[ $(( $(date +%s) - start )) -lt 10 ] || fail "timeout took too long"
	assert_grep 'event=job_timeout' "$ERR"
	assert_eq "timeout 143 1" "$(record "$(last_id)")" "run record of the timeout"
	assert_exit 124 cg exec --lock t0310:x --timeout 500ms -- sleep 30
}
test_expect_success 'after the timeout the job is killed: 124' timeout_124

cannot_execute()
{
	printf '#!/bin/sh\necho hi\n' > "$TEST_TMP/noexec"
	chmod 644 "$TEST_TMP/noexec"
	assert_exit 126 cg exec --lock t0310:x -- "$TEST_TMP/noexec"
	assert_grep 'Permission denied' "$ERR"
	assert_eq "error 126 1" "$(record "$(last_id)")"
	assert_exit 127 cg exec --lock t0310:x -- "$TEST_TMP/does-not-exist"
	assert_grep 'No such file' "$ERR"
	assert_exit 127 cg exec --lock t0310:x -- t0310-no-such-command-anywhere
	assert_eq "error 127 1" "$(record "$(last_id)")"
}
test_expect_success '126 when the command cannot be executed, 127 when not found' \
    cannot_execute

self_killed()
{
	assert_exit 137 cg run selfkill
	assert_eq "killed 137 1" "$(record "$(last_id)")" "killed by SIGKILL: 128+9"
}
test_expect_success 'a job killed by SIGKILL: 137, outcome killed' self_killed

usage_errors()
{
	assert_exit 64 cg exec -- true
	assert_exit 64 cg exec --lock t0310:x
	assert_exit 64 cg exec --lock t0310:x --timeout 5x -- true
	assert_exit 64 cg run no-such-job
}
test_expect_success 'usage errors: 64' usage_errors

# Nothing left held or running.
nothing_left()
{
	assert_eq 1 "$(mysql_q "SELECT IS_FREE_LOCK('t0310:x')")"
	assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM cronguard_runs WHERE outcome = 'running'")"
}
test_expect_success 'nothing left held or running' nothing_left

test_done
