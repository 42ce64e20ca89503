#!/bin/sh
# SIGTERM (and SIGINT) to cronguard while an SQL job runs: a second session
# stops the statement with KILL QUERY, the lock is released on the lock
# session, the run record is finished (outcome killed, 128 + signal) and
# cronguard exits with 128 + signal at once; no incident.
# Cases: setup; then one per signal (TERM, INT).
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = { slow = { sql = \"DO SLEEP(30)\"; lock = \"t0375:slow\"; }; };"
	assert_exit 0 cg db migrate
	at_exit "for id in \$(mysql_admin \"SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE 'DO SLEEP(30)%' AND DB = '$TEST_DB'\"); do mysql_admin \"KILL \$id\"; done"
}
test_expect_success SERVERS 'setup: an SQL job of 30s, db migrate' setup

running() {
	[ "$(mysql_q "SELECT COUNT(*) FROM cronguard_runs
	    WHERE outcome = 'running'")" = 1 ] &&
	[ "$(mysql_admin "SELECT COUNT(*) FROM information_schema.PROCESSLIST
	    WHERE INFO LIKE 'DO SLEEP(30)%' AND DB = '$TEST_DB'")" = 1 ]
}

# stopped SIG WANT: SIG to cronguard stops the statement, releases the
# lock and exits WANT at once, the run record killed WANT, no incident.
stopped()
{
	local sig=$1 want=$2 cg_pid start rc
	"$CRONGUARD_BIN" -c "$CONF" run slow 2> "$ERR" &
	cg_pid=$!
	at_exit "kill -9 $cg_pid 2>/dev/null"
	wait_for 10 running
	assert_eq 0 "$(mysql_q "SELECT IS_FREE_LOCK('t0375:slow')")" "held"
	start=$(date +%s)
	kill -"$sig" "$cg_pid"
	rc=0
	wait "$cg_pid" || rc=$?
	assert_eq 1 "$(mysql_q "SELECT IS_FREE_LOCK('t0375:slow')")" \
	    "released right after SIG$sig"
	assert_eq "$want" "$rc" "cronguard's exit status after SIG$sig"
	[ $(($(date +%s) - start)) -le 5 ] || fail "SIG$sig took too long"
	assert_eq "killed $want 1" "$(mysql_q "SELECT outcome, exit_status,
	    finished_at IS NOT NULL FROM cronguard_runs ORDER BY id DESC LIMIT 1" |
	    tr '\t' ' ')" "run record after SIG$sig"
	assert_eq 0 "$(mysql_admin "SELECT COUNT(*) FROM information_schema.PROCESSLIST
	    WHERE INFO LIKE 'DO SLEEP(30)%' AND DB = '$TEST_DB'")" "statement stopped"
	assert_eq 0 "$(grep -c 'incident=1' "$ERR" || true)" "no incident"
}
test_expect_success SERVERS 'SIGTERM: KILL QUERY, lock released, exit 143 at once' \
    'stopped TERM 143'
test_expect_success SERVERS 'SIGINT: KILL QUERY, lock released, exit 130 at once' \
    'stopped INT 130'

test_done
