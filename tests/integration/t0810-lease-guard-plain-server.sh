#!/bin/sh
# guard = "lease" on a plain server: the job gets CRONGUARD_FENCE, one
# larger each run and stored in the run record; a second host is skipped
# while the lease is held; a lease taken from under the job (expired and
# stolen) is lease_lost: the job is terminated and cronguard exits 76.
# guard = "auto" on a plain server is the named lock, whose runs get a
# fence from the same counter.
# Cases: setup; fences; held by host 1, then stolen; auto.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
LOCK=cronguard:$TEST_DB:j
job_config()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP/run$1\";
jobs = { j = { command = [ \"sh\", \"-c\",
    \"echo \$CRONGUARD_FENCE >> $TEST_TMP/fences; $2\" ];
    guard = \"$3\"; heartbeat = \"300ms\"; lease = \"$4\"; }; };"
	mkdir -p "$TEST_TMP/run$1"
}
setup()
{
	job_config 1 true lease 1s
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: a lease job, db migrate' setup

# Fences 1, 2, 3; each in its run record.
fences()
{
	for _ in 1 2 3; do assert_exit 0 cg run j; done
	assert_eq "1 2 3" "$(tr '\n' ' ' < "$TEST_TMP/fences" | sed 's/ $//')" "fences"
	assert_eq "1 2 3" "$(mysql_q "SELECT fence FROM cronguard_runs ORDER BY id" |
	    tr '\n' ' ' | sed 's/ $//')" "run records"
	assert_eq "NULL 3" "$(mysql_q "SELECT owner_token, fence FROM cronguard_leases
	    WHERE name = '$LOCK'" | tr '\t' ' ')" "released"
	assert_exit 0 cg locks
	assert_grep "^$LOCK  *j  *free  *-  *-\$" "$OUT"
}
test_expect_success 'fences 1, 2, 3, each in its run record; the lease released' \
    fences

# Held by a long run on "host 1": "host 2" (its own runtime directory) is
# skipped without running the job.
held()
{
	local cg_pid job_pid rc
	job_config 1 "echo \$\$ > $TEST_TMP/job.pid; exec sleep 30" lease 1s
	"$CRONGUARD_BIN" -c "$CONF" run j > "$TEST_TMP/out1" 2> "$TEST_TMP/err1" &
	cg_pid=$!
	at_exit "kill $cg_pid 2>/dev/null"
	wait_for 10 test -s "$TEST_TMP/job.pid"
	job_pid=$(cat "$TEST_TMP/job.pid")
	job_config 2 true lease 1s
	assert_exit 0 cg -v run j
	assert_grep 'event=job_skipped' "$ERR"
	assert_eq 4 "$(wc -l < "$TEST_TMP/fences" | tr -d ' ')" "runs so far"
	# The heartbeat keeps it past its 1 s lease.
	sleep 1.5
	assert_exit 0 cg run j
	assert_eq 4 "$(wc -l < "$TEST_TMP/fences" | tr -d ' ')" "still held"
	# locks shows the lease: held by host 1's run, with its fence (and
	# free once released, above).
	assert_exit 0 cg locks
	cat "$OUT"
	assert_grep "^$LOCK  *j  *held  *4  *connection [0-9]*, run [0-9]* on " "$OUT"

	# Stolen: another owner writes the row (as after an expiry).  The next
	# heartbeat cannot extend it: lease_lost, job terminated, exit 76.
	mysql_q "UPDATE cronguard_leases SET owner_token = REPEAT('f', 32),
	    fence = fence + 1 WHERE name = '$LOCK'"
	rc=0
	wait "$cg_pid" || rc=$?
	cat "$TEST_TMP/err1"
	assert_eq 76 "$rc" "exit after the lease was stolen"
	assert_grep 'level=error event=lease_lost incident=1 job=j' "$TEST_TMP/err1"
	kill -0 "$job_pid" 2> /dev/null && fail "the job still runs"
	assert_eq "lock_lost 4" "$(mysql_q "SELECT outcome, fence FROM cronguard_runs
	    ORDER BY id DESC LIMIT 1" | tr '\t' ' ')" "run record"
	# The thief's lease is untouched by the loser's release.
	assert_eq "ffffffffffffffffffffffffffffffff 5" "$(mysql_q "SELECT owner_token,
	    fence FROM cronguard_leases WHERE name = '$LOCK'" | tr '\t' ' ')" "thief"
}
test_expect_success 'held: host 2 skipped, the heartbeat keeps it; stolen: lease_lost, 76' \
    held

# auto on a plain server: the named lock (the run record names its
# session), with a fence from the same counter.
auto()
{
	job_config 1 "echo \$CRONGUARD_LOCK > $TEST_TMP/lock" auto 1s
	assert_exit 0 cg run j
	assert_eq 6 "$(tail -n 1 "$TEST_TMP/fences")" "named lock fence"
	assert_eq "$LOCK" "$(cat "$TEST_TMP/lock")" "CRONGUARD_LOCK"
	assert_eq "1 6 success" "$(mysql_q "SELECT connection_id IS NOT NULL, fence,
	    outcome FROM cronguard_runs ORDER BY id DESC LIMIT 1" | tr '\t' ' ')" \
	    "named-lock run record"
}
test_expect_success 'auto on a plain server: the named lock, a fence from the same counter' \
    auto

test_done
