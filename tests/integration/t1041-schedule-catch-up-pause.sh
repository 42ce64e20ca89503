#!/bin/sh
# What a launch of a scheduled job runs: catch_up = "all" runs the slots
# missed since the last success, oldest first, each with its own
# CRONGUARD_SLOT and record, at most backfill_limit; "latest" runs one;
# "none" outside starting_deadline runs none.  A pause in the database
# stops every host, and a pause that expired stops none.  A skip hands
# a lease back at once: with once_per = "2s" and lease = "6s", the next
# period's launch on another host runs (before, it found the lease held).
# Cases: setup; catch_up all; latest; none; a pause in the database; a
# lease handed back.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers

SLOTS=$TEST_TMP/slots
export SLOTS
JOB='command = [ "sh", "-c", "echo $CRONGUARD_SLOT >> $SLOTS" ]'

# conf FILE DIR KEYS
conf()
{
	mkdir -p "$2"
	write_config "$1" "runtime_dir = \"$2\";
jobs = { j = { $JOB; timezone = \"+00:00\"; grace = \"1h\"; $3 }; };"
}

# minute N: the database clock's minute N minutes ago, as a slot (UTC).
minute()
{
	mysql_q "SELECT DATE_FORMAT(UTC_TIMESTAMP() - INTERVAL $1 MINUTE,
	    '%Y-%m-%d %H:%i:00')"
}

# seed N: the job's history is one success, for the slot N minutes ago.
seed()
{
	mysql_q "DELETE FROM cronguard_runs;
	    INSERT INTO cronguard_runs (job, host, pid, started_at, finished_at,
	    outcome, slot, slot_kind) VALUES ('j', 'seed', 1, '$(minute "$1")',
	    '$(minute "$1")', 'success', '$(minute "$1")', 'schedule')"
	: > "$SLOTS"
}

early_in_minute()
{
	local s
	while :; do
		s=$(mysql_q "SELECT SECOND(UTC_TIMESTAMP())")
		[ "$s" -le "$1" ] && [ "$s" -ge "${2:-1}" ] && return 0
		sleep 1
	done
}

iso() { printf '%s+00:00\n' "$(echo "$1" | tr ' ' T)"; }

setup()
{
	conf "$CONF" "$TEST_TMP/run" 'schedule = "* * * * *"; catch_up = "all"; backfill_limit = 3;'
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: catch_up all, backfill_limit 3, db migrate' setup

# all: the last success 5 minutes ago; slots -4 .. 0 are due, the newest
# three run, oldest first, and the older ones are reported.
catch_up_all()
{
	local want
	early_in_minute 40
	seed 5
	want=$(for m in 2 1 0; do iso "$(minute $m)"; done)
	assert_exit 0 cg -v run j
	assert_eq "$want" "$(cat "$SLOTS")" "catch_up all: the slots run, in order"
	assert_grep 'event=job_slots_skipped' "$ERR"
	assert_eq 3 "$(mysql_q "SELECT COUNT(DISTINCT slot) FROM cronguard_runs
    WHERE host <> 'seed' AND outcome = 'success'")" "catch_up all: records"
	assert_eq 2 "$(mysql_q "SELECT COUNT(*) FROM cronguard_runs
    WHERE slot_kind = 'catch_up'")" "catch_up all: kinds"
	# Done now: the next launch runs nothing.
	: > "$SLOTS"
	assert_exit 0 cg -v run j
	assert_grep 'event=job_already_done' "$ERR"
	assert_eq 0 "$(wc -l < "$SLOTS")" "after catching up"
}
test_expect_success 'catch_up all: the newest 3 missed slots, oldest first; then none' \
    catch_up_all

# latest: one run, for the latest slot.
catch_up_latest()
{
	conf "$CONF" "$TEST_TMP/run" 'schedule = "* * * * *";'
	early_in_minute 40
	seed 5
	assert_exit 0 cg run j
	assert_eq "$(iso "$(minute 0)")" "$(cat "$SLOTS")" "catch_up latest"
}
test_expect_success 'catch_up latest: one run, for the latest slot' \
    catch_up_latest

# none: launched past starting_deadline, nothing runs.
catch_up_none()
{
	conf "$CONF" "$TEST_TMP/run" 'schedule = "* * * * *"; catch_up = "none"; starting_deadline = "1s";'
	early_in_minute 50 3
	seed 5
	assert_exit 0 cg -v run j
	assert_grep 'event=job_slot_skipped' "$ERR"
	assert_eq 0 "$(wc -l < "$SLOTS")" "catch_up none past the deadline"
}
test_expect_success 'catch_up none past starting_deadline: nothing runs' \
    catch_up_none

# A pause on "another host" (a row in the database) stops this one.
paused()
{
	conf "$CONF" "$TEST_TMP/run" 'schedule = "* * * * *";'
	seed 5
	mysql_q "INSERT INTO cronguard_job_pauses (job, paused_by, reason)
    VALUES ('j', 'ops@elsewhere:1', 'db maintenance')"
	assert_exit 0 cg -v run j
	assert_grep 'event=job_paused.*reason="db maintenance"' "$ERR"
	assert_eq 0 "$(wc -l < "$SLOTS")" "a paused job ran"
	mysql_q "UPDATE cronguard_job_pauses SET job = '*'"
	assert_exit 0 cg -v run j
	assert_grep 'event=job_paused' "$ERR"
	assert_eq 0 "$(wc -l < "$SLOTS")" "a job paused by --all ran"
	# An expired pause stops nothing.
	mysql_q "UPDATE cronguard_job_pauses SET until_at = NOW(6) - INTERVAL 1 SECOND"
	assert_exit 0 cg run j
	assert_eq 1 "$(wc -l < "$SLOTS")" "a job whose pause expired"
	mysql_q "DELETE FROM cronguard_job_pauses"
}
test_expect_success 'a pause in the database stops this host; an expired one does not' \
    paused

# once_per with a lease: a no-op launch hands the lease back, so the next
# period's launch from another host runs, and takes no token meanwhile.
lease_back()
{
	local fence
	mysql_q "DELETE FROM cronguard_runs"
	conf "$TEST_TMP/a.conf" "$TEST_TMP/run-a" 'guard = "lease"; lease = "6s"; heartbeat = "1s"; once_per = "2s"; timezone = "+00:00";'
	sed -i 's/timezone = "+00:00"; grace = "1h"; guard/grace = "1h"; guard/' "$TEST_TMP/a.conf"
	conf "$TEST_TMP/b.conf" "$TEST_TMP/run-b" 'guard = "lease"; lease = "6s"; heartbeat = "1s"; once_per = "2s"; timezone = "+00:00";'
	sed -i 's/timezone = "+00:00"; grace = "1h"; guard/grace = "1h"; guard/' "$TEST_TMP/b.conf"
	: > "$SLOTS"
	# Early in an even second, so that both launches of A share a period.
	while [ "$(mysql_q "SELECT MOD(SECOND(NOW(3)), 2) = 0 AND MICROSECOND(NOW(6)) < 300000")" != 1 ]; do
		sleep 0.05
	done
	assert_exit 0 "$CRONGUARD_BIN" -c "$TEST_TMP/a.conf" run j
	fence=$(mysql_q "SELECT fence FROM cronguard_leases")
	assert_exit 0 "$CRONGUARD_BIN" -c "$TEST_TMP/a.conf" -v run j
	assert_grep 'event=job_already_done' "$ERR"
	assert_eq "$fence" "$(mysql_q "SELECT fence FROM cronguard_leases")" \
	    "the token after a no-op launch"
	sleep 2
	assert_exit 0 "$CRONGUARD_BIN" -c "$TEST_TMP/b.conf" -v run j
	if grep -q 'event=job_skipped' "$ERR"; then
		cat "$ERR"
		fail "the next period's launch found the lease held"
	fi
	assert_eq 2 "$(mysql_q "SELECT COUNT(*) FROM cronguard_runs
    WHERE outcome = 'success'")" "runs in two periods"
}
test_expect_success 'once_per with a lease: a no-op launch hands the lease back' \
    lease_back

test_done
