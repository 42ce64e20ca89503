#!/bin/sh
# jobs check judges a scheduled job from its runs' flags (sql/016) as it
# would from every run of its window (cronguard(1), jobs check): a run
# for a slot records whether the slot before had no run (a gap ends
# there) and whether its slot was already running; jobs check reads the
# flagged runs and the latest few, and says what it says with the flags
# removed (every run read).  Needs the MariaDB test server.
# Cases: setup; a run writes the flags; the verdicts with and without
# flags agree (a gap, a tail, a catch-up, a slot run twice long ago, a
# long failing streak, an ack); the flagged read uses its indexes.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/slot-lib.sh"

setup()
{
	write_config "$CONF" "jobs = { j = { command = [ \"true\" ];
  schedule = \"* * * * *\"; timezone = \"UTC\"; grace = \"90s\"; }; };"
	assert_exit 0 cg db migrate
}
test_expect_success SERVERS 'setup: db migrate' setup

# The flags of slot N's newest run.
flags_of()
{
	mysql_q "SELECT IFNULL(slot_flags, 'NULL') FROM cronguard_runs
	    WHERE job = 'j' AND slot = '$(slot "$1")' ORDER BY id DESC LIMIT 1"
}

# Runs started by cronguard: the first of a job and one after a slot
# without a run end a gap (1), one after a run does not (0), one written
# after a later slot's is flagged 4; a run that starts while a scheduled
# run of its slot is running is flagged 2.
writes_flags()
{
	early_in_minute
	mysql_q "DELETE FROM cronguard_runs"
	assert_exit 0 cg run --slot "$(slot 6)" j
	assert_exit 0 cg run --slot "$(slot 2)" j
	assert_exit 0 cg run --slot "$(slot 1)" j
	[ "$(flags_of 6)" = 1 ] || fail "slot 6 (first run): $(flags_of 6)"
	[ "$(flags_of 2)" = 1 ] || fail "slot 2 (after a gap): $(flags_of 2)"
	[ "$(flags_of 1)" = 0 ] || fail "slot 1 (after a run): $(flags_of 1)"
	# A catch-up inside the gap: a later slot has a run (4), the slot
	# before it none (1); the newest run before it then is slot 6's.
	assert_exit 0 cg run --slot "$(slot 4)" j
	[ "$(flags_of 4)" = 5 ] || fail "slot 4 (a catch-up): $(flags_of 4)"
	[ "$(mysql_q "SELECT slot_gap_from = '$(slot 6)' FROM cronguard_runs
	    WHERE job = 'j' AND slot = '$(slot 4)'")" = 1 ] ||
	    fail "slot 4's gap does not begin at slot 6"
	# A scheduled run of the current slot left running (its lock lost,
	# say), then cronguard's own run of that slot.
	mysql_q "INSERT INTO cronguard_runs (job, host, pid, outcome, slot,
	    slot_kind, slot_flags) VALUES ('j', 'other', 1, 'running',
	    '$(slot 0)', 'schedule', 0)"
	assert_exit 0 cg run j
	[ "$(flags_of 0)" = 2 ] || fail "slot 0 (already running): $(flags_of 0)"
}
test_expect_success SERVERS 'a run writes the flags' writes_flags

# run_at N OUTCOME FLAGS [FROM [KIND]]: a run of slot N as cronguard
# writes it, the newest run before it then for slot FROM (- none).
run_at()
{
	local from=NULL
	[ "${4:--}" = - ] || from="'$(slot "$4")'"
	mysql_q "INSERT INTO cronguard_runs (job, host, pid, started_at,
	    finished_at, outcome, slot, slot_kind, slot_flags, slot_gap_from)
	    VALUES ('j', 'h', 1, '$(slot "$1")', '$(slot "$1")', '$2',
	    '$(slot "$1")', '${5:-schedule}', $3, $from)"
}
# runs FROM TO OUTCOME: a run of every slot from FROM down to TO, each
# after the one before it (flags 0).
runs()
{
	mysql_q "INSERT INTO cronguard_runs (job, host, pid, started_at,
	    finished_at, outcome, slot, slot_kind, slot_flags)
	    SELECT 'j', 'h', 1, t, t, '$3', t, 'schedule', 0 FROM (SELECT
	    FROM_UNIXTIME(FLOOR(UNIX_TIMESTAMP(NOW()) / 60) * 60 - 60 * seq)
	    AS t FROM seq_${2}_to_$1) s ORDER BY t"
}
# The verdict with the flags, then with every run read: the same.
same_verdict()
{
	local rc=0
	cg jobs check --format json j > "$TEST_TMP/flagged" 2>&1 || rc=$?
	echo "exit $rc" >> "$TEST_TMP/flagged"
	mysql_q "UPDATE cronguard_runs SET slot_flags = NULL WHERE job = 'j'"
	rc=0
	cg jobs check --format json j > "$TEST_TMP/full" 2>&1 || rc=$?
	echo "exit $rc" >> "$TEST_TMP/full"
	# Ages move with the clock between the two.
	sed -i '/_age_seconds/d' "$TEST_TMP/flagged" "$TEST_TMP/full"
	if ! diff "$TEST_TMP/full" "$TEST_TMP/flagged" > "$TEST_TMP/diff"; then
		fail "$1: with flags and without differ: $(cat "$TEST_TMP/diff")"
	fi
	assert_grep "$2" "$TEST_TMP/flagged"
}
fresh()
{
	early_in_minute
	mysql_q "DELETE FROM cronguard_runs; DELETE FROM cronguard_job_acks"
}

agree()
{
	# Slots 40 to 6 run, none since: the tail is missed (slots 5 to 2, and
	# 1 once its grace has passed).
	fresh
	run_at 40 success 1
	runs 39 6 success
	same_verdict tail '"slots_missed": [45],'
	# A gap of five slots, runs after it: missed before the last
	# success.
	fresh
	run_at 40 success 1
	runs 39 20 success
	run_at 14 success 1 20
	runs 13 0 success
	same_verdict gap '"slots_missed": 5'
	# The same gap, one slot in it caught up afterwards, older than the
	# latest runs read: flagged 4 (a later slot had a run) and 1 (the
	# slot before it had none).
	fresh
	run_at 40 success 1
	runs 39 20 success
	run_at 14 success 1 20
	runs 13 6 success
	run_at 17 success 5 20 catch_up
	runs 5 0 success
	same_verdict catch-up '"slots_missed": 4'
	# A slot run twice thirty slots ago, older than the latest runs.
	fresh
	run_at 40 success 1
	runs 39 31 success
	run_at 30 success 0
	run_at 30 success 2
	runs 29 0 success
	same_verdict twice 'ran twice: 2 successful runs'
	# Thirteen failed slots in a row (12 to 0): more than the latest runs read.
	fresh
	run_at 40 success 1
	runs 39 13 success
	runs 12 0 failure
	same_verdict failing '13 consecutive failed slots'
	# An ack of the gap's newest slot covers it.
	fresh
	run_at 40 success 1
	runs 39 20 success
	run_at 14 success 1 20
	runs 13 0 success
	mysql_q "INSERT INTO cronguard_job_acks (job, slot, acked_by, reason)
	    VALUES ('j', '$(slot 15)', 't', 't')"
	same_verdict ack '"slots_missed": 0'
}
test_expect_success SERVERS 'the verdicts with and without flags agree' agree

# The flagged runs are read on their index; without it, the schema is
# behind (UNKNOWN, run db migrate) rather than a slow read.
index()
{
	fresh
	run_at 40 success 1
	runs 39 0 success
	# Forty unflagged runs in the window and one flagged: one read.
	mysql_q "ANALYZE SELECT x.slot FROM cronguard_runs x
	    FORCE INDEX (ix_runs_flags) WHERE x.slot_flags IN (1, 2, 3, 4, 5,
	    6, 7) AND x.slot >= '$(slot 40)'" > "$TEST_TMP/explain"
	assert_grep 'ix_runs_flags.*[[:space:]]1\.00[[:space:]]' "$TEST_TMP/explain"
	mysql_q "ALTER TABLE cronguard_runs DROP KEY ix_runs_flags"
	assert_exit 3 cg jobs check j
	assert_grep 'the schema is behind' "$OUT"
	mysql_q "ALTER TABLE cronguard_runs
	    ADD KEY ix_runs_flags (slot_flags, slot, job)"
	assert_exit 0 cg jobs check j
}
test_expect_success SERVERS 'the flagged runs are read on their index' index

test_done
