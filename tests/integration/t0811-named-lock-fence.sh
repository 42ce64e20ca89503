#!/bin/sh
# guard = "named_lock": every acquisition takes the next fencing token of
# the lock (exactly one more than the previous acquisition's), the job
# gets it in CRONGUARD_FENCE and the run record stores it; an attempt
# that finds the lock busy takes none, so the next acquisition is still
# exactly one more.
# Cases: setup; three runs; busy attempts; the next run; one round trip.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
LOCK=cronguard:$TEST_DB:j
counter() { mysql_q "SELECT fence FROM cronguard_leases WHERE name = '$LOCK'"; }
fences() { tr '\n' ' ' < "$TEST_TMP/fences" | sed 's/ $//'; }

held() { [ "$(mysql_admin "SELECT IS_USED_LOCK('$LOCK') IS NOT NULL")" = 1 ]; }
released() { ! held; }
QLOCK=cronguard:$TEST_DB:q
qcount() { mysql_q "SELECT n FROM t0811_q ORDER BY id DESC LIMIT 1"; }
qfence() { mysql_q "SELECT fence FROM cronguard_leases WHERE name = '$QLOCK'"; }
setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
	jobs = { j = { command = [ \"sh\", \"-c\",
	    \"echo \$CRONGUARD_FENCE >> $TEST_TMP/fences\" ];
	    guard = \"named_lock\"; }; };"
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: a named_lock job, db migrate' setup

three()
{
	for _ in 1 2 3; do assert_exit 0 cg run j; done
	assert_eq "1 2 3" "$(fences)" "CRONGUARD_FENCE of three runs"
	assert_eq "1 2 3" "$(mysql_q "SELECT fence FROM cronguard_runs ORDER BY id" |
	    tr '\n' ' ' | sed 's/ $//')" "run records"
	assert_eq 3 "$(counter)" "counter"
}
test_expect_success 'three runs: fences 1, 2, 3' three

# Busy: another session holds the lock (within grace, so skipped, exit
# 0); the counter does not move, the job does not run.
busy()
{
	local holder
	mysql_admin "SELECT GET_LOCK('$LOCK', 0), SLEEP(60)" > /dev/null 2>&1 &
	holder=$!
	at_exit "kill $holder 2> /dev/null"
	wait_for 10 held
	for _ in 1 2 3; do assert_exit 0 cg run j; done
	assert_eq 3 "$(counter)" "counter after three busy attempts"
	assert_eq "1 2 3" "$(fences)" "no run while busy"
	mysql_admin "KILL $(mysql_admin "SELECT IS_USED_LOCK('$LOCK')")"
	wait_for 10 released
}
test_expect_success 'busy attempts take no token and do not run' busy

next()
{
	assert_exit 0 cg run j
	assert_eq "1 2 3 4" "$(fences)" "the next acquisition is one more"
	assert_eq 4 "$(counter)" "counter"
}
test_expect_success 'the next acquisition is exactly one more' next

# One round trip: the SQL job below runs on the lock's session and
# records how many statements that session had run (Questions counts
# the client's statements, not those inside the procedure).  Without
# the procedure (a schema before migration 009) the token costs the
# failed CALL and a second statement, and every acquisition says so.
round_trip()
{
	local one
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
	jobs = { q = { sql = \"INSERT INTO t0811_q (n) SELECT VARIABLE_VALUE FROM
	    information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'QUESTIONS'\";
	    guard = \"named_lock\"; }; };"
	mysql_q "CREATE TABLE t0811_q (id INT AUTO_INCREMENT PRIMARY KEY, n BIGINT)"
	assert_exit 0 cg run q
	one=$(qcount)
	assert_eq 1 "$(qfence)" "SQL job's token"
	! grep -q lock_fence_extra_statement "$ERR" || fail "warned with the procedure"
	mysql_q "DROP PROCEDURE cronguard_get_lock"
	assert_exit 0 cg run q
	assert_eq 2 "$(qfence)" "the token without the procedure"
	assert_grep 'level=warn event=lock_fence_extra_statement' "$ERR"
	assert_grep 'run cronguard db migrate' "$ERR"
	assert_eq 2 "$(($(qcount) - one))" \
	    "statements before the job: the failed CALL and the fence's own"
}
test_expect_success 'one round trip with the procedure; a warning and one more without it' \
    round_trip

test_done
