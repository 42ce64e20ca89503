#!/bin/sh
# The slot's success is recorded before the lock or lease is given up:
# thirty "hosts" (their own runtime directories) launched 150 ms apart (so that
# launches keep coming while the first run ends) on
# a per-minute job whose record is large (8 MB of captured output, so the
# record takes a while to write) run it once per slot, under the named
# lock, under a lease and with once_per.  With the release before the
# record (the order before this test), a host that took the lock in
# between found the slot undone and ran it again.
#
# Cases: setup; the named lock; a lease; once_per.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

HOSTS=30
GAP=0.15
RUNS=$TEST_TMP/runs
export RUNS

# The job: 8 MB of output, then a line naming it in $RUNS.
cat > "$TEST_TMP/job.sh" <<'JOB'
#!/bin/sh
head -c 8000000 /dev/zero | tr '\0' x
echo "$CRONGUARD_JOB" >> "$RUNS"
JOB
chmod 755 "$TEST_TMP/job.sh"

# host_config N: the configuration of host N, three jobs.
host_config()
{
	local common="command = [ \"$TEST_TMP/job.sh\" ]; output = \"capture\"; output_max = \"8M\";"
	mkdir -p "$TEST_TMP/run-$1"
	write_config "$TEST_TMP/h$1.conf" "runtime_dir = \"$TEST_TMP/run-$1\";
jobs = {
  locked = { $common schedule = \"* * * * *\"; grace = \"1h\"; };
  leased = { $common schedule = \"* * * * *\"; grace = \"1h\";
    guard = \"lease\"; lease = \"1m\"; };
  daily = { $common once_per = \"1d\"; };
};"
}

# Wait until the database clock is early in its minute, so that a burst
# stays in one slot.
early_in_minute()
{
	local s
	while :; do
		s=$(mysql_q "SELECT SECOND(UTC_TIMESTAMP())")
		[ "$s" -le 40 ] && [ "$s" -ge 1 ] && return 0
		sleep 1
	done
}

# burst JOB: every host launches JOB, 30 ms apart; all must exit 0.
burst()
{
	local i=1 pids='' p bad=0
	while [ "$i" -le "$HOSTS" ]; do
		"$CRONGUARD_BIN" -c "$TEST_TMP/h$i.conf" -v run "$1" \
		    > /dev/null 2>> "$TEST_TMP/$1.err" &
		pids="$pids $!"
		sleep "$GAP"
		i=$((i + 1))
	done
	for p in $pids; do
		wait "$p" || bad=$((bad + 1))
	done
	assert_eq 0 "$bad" "launches of $1 that did not exit 0"
}

# once_per_slot JOB: the job ran once, and has one success record; some
# launch came after the release (else the test proves nothing).
once_per_slot()
{
	local ran ndone
	ran=$(grep -cx "$1" "$RUNS" || true)
	ndone=$(grep -c "event=job_already_done" "$TEST_TMP/$1.err" || true)
	echo "$1: ran $ran time(s) in $HOSTS launches; $ndone found the slot done"
	[ "$ndone" -ge 1 ] || fail "no launch came after the release"
	assert_eq 1 "$ran" "runs of $1 in one slot"
	assert_eq 1 "$(mysql_q "SELECT COUNT(*) FROM cronguard_runs
	    WHERE job = '$1' AND outcome = 'success'")" "successful records of $1"
	assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM cronguard_runs
	    WHERE job = '$1' AND outcome <> 'success'")" "other records of $1"
}

test_expect_success SERVERS 'setup: thirty hosts, a migrated schema' '
	i=1
	while [ "$i" -le "$HOSTS" ]; do
		host_config "$i"
		i=$((i + 1))
	done &&
	CONF=$TEST_TMP/h1.conf &&
	assert_exit 0 cg db migrate
'

test_expect_success SERVERS 'the named lock: one run per slot' '
	early_in_minute &&
	burst locked &&
	once_per_slot locked
'

test_expect_success SERVERS 'a lease: one run per slot' '
	early_in_minute &&
	burst leased &&
	once_per_slot leased
'

test_expect_success SERVERS 'once_per: one run per period' '
	burst daily &&
	once_per_slot daily
'

test_done
