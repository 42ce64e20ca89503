#!/bin/sh
# Two "hosts" (separate runtime directories, so only the named lock stands
# between them) start the same job at once, 20 rounds: the job's critical
# sections never overlap.  The same with guard = "none" does overlap,
# which shows the test can fail.
# Cases: setup; 20 rounds under the named lock; the control, guard none.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers

LOG=$TEST_TMP/sections
JOB='echo "$$ S $(date +%s%N)" >> "$SECTIONS"; sleep 0.4; echo "$$ E $(date +%s%N)" >> "$SECTIONS"'
export SECTIONS="$LOG"

# host_config FILE DIR GUARD
host_config()
{
	mkdir -p "$2"
	write_config "$1" "runtime_dir = \"$2\";
jobs = { accrual = { command = [ \"sh\", \"-c\", \"$(printf '%s' "$JOB" |
    sed 's/["\\]/\\&/g')\" ]; guard = \"$3\"; }; };"
}

# rounds N CONF_A CONF_B: start both at once N times; prints skip count.
rounds()
{
	local i=0 rc_a rc_b
	while [ "$i" -lt "$1" ]; do
		"$CRONGUARD_BIN" -c "$2" -v run accrual 2>> "$TEST_TMP/a.err" &
		pid_a=$!
		"$CRONGUARD_BIN" -c "$3" -v run accrual 2>> "$TEST_TMP/b.err" &
		pid_b=$!
		rc_a=0; wait "$pid_a" || rc_a=$?
		rc_b=0; wait "$pid_b" || rc_b=$?
		[ "$rc_a" -eq 0 ] && [ "$rc_b" -eq 0 ] ||
		    fail "round $i: exit $rc_a and $rc_b"
		i=$((i + 1))
	done
}

# overlaps: number of sections that start before the previous one ended.
overlaps()
{
	awk '$2 == "S" { s[$1] = $3 } $2 == "E" { print s[$1], $3 }' "$LOG" |
	    sort -n | awk 'NR > 1 && $1 < end { n++ } { if ($2 > end) end = $2 }
	    END { print n + 0 }'
}

# shellcheck disable=SC2034 # cg reads it
CONF=$TEST_TMP/a.conf
setup()
{
	host_config "$TEST_TMP/a.conf" "$TEST_TMP/run-a" named_lock
	host_config "$TEST_TMP/b.conf" "$TEST_TMP/run-b" named_lock
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: two hosts, one database, db migrate' setup

named_lock()
{
	local ran skipped
	rounds 20 "$TEST_TMP/a.conf" "$TEST_TMP/b.conf"
	ran=$(grep -c ' S ' "$LOG")
	skipped=$(cat "$TEST_TMP/a.err" "$TEST_TMP/b.err" | grep -c 'event=job_skipped' || true)
	echo "named lock: $ran sections ran, $skipped skipped, $(overlaps) overlaps"
	assert_eq 0 "$(overlaps)" "overlapping sections under the named lock"
	[ "$ran" -ge 20 ] || fail "only $ran sections ran in 20 rounds"
	[ "$skipped" -ge 1 ] || fail "no run was ever skipped"
	assert_eq 40 "$((ran + skipped))" "every start either ran or skipped"
	assert_eq "$ran" "$(mysql_q "SELECT COUNT(*) FROM cronguard_runs
	    WHERE job = 'accrual' AND outcome = 'success'")" "run records"
	assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM cronguard_runs
	    WHERE outcome <> 'success' OR finished_at IS NULL")" "unfinished records"
}
test_expect_success 'under the named lock the sections never overlap; each start ran or skipped' \
    named_lock

# The control: without a guard the same starts do overlap.
control()
{
	: > "$LOG"
	host_config "$TEST_TMP/a.conf" "$TEST_TMP/run-a" none
	host_config "$TEST_TMP/b.conf" "$TEST_TMP/run-b" none
	rounds 5 "$TEST_TMP/a.conf" "$TEST_TMP/b.conf"
	echo "guard none: $(grep -c ' S ' "$LOG") sections ran, $(overlaps) overlaps"
	[ "$(overlaps)" -ge 1 ] || fail "guard none never overlapped: the test cannot fail"
}
test_expect_success 'the control: with guard none the same starts overlap' control

test_done
