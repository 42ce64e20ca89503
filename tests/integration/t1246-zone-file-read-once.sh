#!/bin/sh
# jobs check, jobs list and status over many jobs in a named time zone
# read its file a few times, not once per job or per slot.  Each
# schedule or format call set TZ for its zone and put it back, and glibc
# reads the zone's file again whenever TZ changes (tzset); each job's
# zone was also checked on disk again: 90,000 reads of the file for
# jobs check over 1,000 jobs in Europe/Paris, 2.7 s against 0.7 s in
# UTC.  Counted with strace: the opens of the zone's file.
# Cases: setup; jobs check; jobs list; status.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
test_lazy_prereq STRACE 'command -v strace'
test_ci_prereq STRACE
NJOBS=40
MAX_OPENS=5

setup()
{
	local jobs='' i=1
	while [ $i -le $NJOBS ]; do
		jobs="$jobs
  p$i = { command = [ \"true\" ]; schedule = \"*/5 * * * *\"; timezone = \"Europe/Paris\"; grace = \"1m\"; };"
		i=$((i + 1))
	done
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = {$jobs
};"
	assert_exit 0 cg db migrate
	# A run for each slot from two hours ago to half an hour ago: the
	# newer slots are missed, and listed.
	mysql_q "INSERT INTO cronguard_runs (job, host, pid, started_at,
	    finished_at, outcome, slot, slot_kind, slot_flags)
	  SELECT CONCAT('p', j.seq), 'h', 1, t, t, 'success', t, 'schedule',
	    r.seq = 1
	  FROM seq_1_to_${NJOBS} j, (SELECT seq, FROM_UNIXTIME(FLOOR(
	    UNIX_TIMESTAMP() / 300) * 300 - 300 * (25 - seq)) AS t
	    FROM seq_1_to_18) r ORDER BY t"
}
test_expect_success SERVERS 'setup: 40 jobs in Europe/Paris, their runs' setup

# opens CMD...: how often cg CMD opens the zone's file.
opens()
{
	# LeakSanitizer does not work under ptrace.
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	    strace -f -e trace=open,openat -o "$TEST_TMP/strace" \
	    "$CRONGUARD_BIN" -c "$CONF" "$@" > "$TEST_TMP/opens.out" 2>&1 || true
	grep -c 'zoneinfo/Europe/Paris' "$TEST_TMP/strace" || true
}

check()
{
	local n
	n=$(opens jobs check)
	assert_grep '^JOBS CRITICAL - p1 CRITICAL: slot [0-9-]{10}T[0-9:]{8}\+0[12]:00 missed' "$TEST_TMP/opens.out"
	[ "$n" -le $MAX_OPENS ] ||
	    fail "jobs check opened the zone's file $n times for $NJOBS jobs"
	echo "# jobs check: $n opens of the zone's file"
}
test_expect_success SERVERS,STRACE 'jobs check reads the zone file a few times' check

list()
{
	local n
	n=$(opens jobs list)
	[ "$(grep -c '^p[0-9]' "$TEST_TMP/opens.out")" = $NJOBS ] ||
	    fail "jobs list: $(head -c 300 "$TEST_TMP/opens.out")"
	[ "$n" -le $MAX_OPENS ] ||
	    fail "jobs list opened the zone's file $n times for $NJOBS jobs"
	echo "# jobs list: $n opens"
}
test_expect_success SERVERS,STRACE 'jobs list reads the zone file a few times' list

status()
{
	local n
	n=$(opens status --format json)
	assert_grep '"timezone": "Europe/Paris"' "$TEST_TMP/opens.out"
	[ "$n" -le $MAX_OPENS ] ||
	    fail "status opened the zone's file $n times for $NJOBS jobs"
	echo "# status: $n opens"
}
test_expect_success SERVERS,STRACE 'status reads the zone file a few times' status

test_done
