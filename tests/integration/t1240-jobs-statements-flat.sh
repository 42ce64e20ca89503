#!/bin/sh
# jobs check, jobs list and locks over 300 configured jobs cost a few
# statements, not a few per job (issue 37): the server's Questions
# counter, on a server of this test's own so that no other client moves
# it, goes up by fewer than 40 for each.  A job's verdict over the fleet is the one it
# gets checked alone.
# Cases: setup; jobs check, jobs list and locks; jobs check's index
# look-ups; flagged jobs; the verdicts.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
db_private_start

jobs=
i=1
while [ $i -le 100 ]; do
	jobs="$jobs
  s$i = { command = [ \"true\" ]; schedule = \"*/5 * * * *\"; timezone = \"UTC\"; grace = \"2m\"; };
  e$i = { command = [ \"true\" ]; expect_every = \"1h\"; };
  l$i = { command = [ \"true\" ]; guard = \"local\"; expect_every = \"1d\"; };"
	i=$((i + 1))
done

setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = {$jobs
};"
	assert_exit 0 cg db migrate

	# 20 runs a job, every tenth job's newest a failure, the scheduled ones
	# one per slot up to 15 minutes ago (the newer slots missed); one job
	# paused, one missed slot acknowledged.
	mysql_q "INSERT INTO cronguard_runs (job, host, pid, started_at, finished_at,
	    outcome, slot, slot_kind)
	  SELECT CONCAT(k.p, j.seq), 'h', 1,
	    FROM_UNIXTIME(FLOOR(UNIX_TIMESTAMP() / 300) * 300 - 300 * (23 - r.seq)),
	    FROM_UNIXTIME(FLOOR(UNIX_TIMESTAMP() / 300) * 300 - 300 * (23 - r.seq) + 1),
	    IF(r.seq = 20 AND j.seq % 10 = 0, 'failure', 'success'),
	    IF(k.p = 's', FROM_UNIXTIME(FLOOR(UNIX_TIMESTAMP() / 300) * 300
	      - 300 * (23 - r.seq)), NULL),
	    IF(k.p = 's', 'schedule', NULL)
	  FROM seq_1_to_100 j, seq_1_to_20 r,
	    (SELECT 's' AS p UNION ALL SELECT 'e' UNION ALL SELECT 'l') k
	  ORDER BY 4"
	assert_eq 6000 "$(mysql_q 'SELECT COUNT(*) FROM cronguard_runs')"
	assert_exit 0 cg jobs pause e3 --reason "t1240"
	assert_exit 0 cg jobs ack s4 --reason "t1240" --slot \
	    "$(mysql_q "SELECT DATE_FORMAT(MAX(slot) + INTERVAL 5 MINUTE,
	        '%Y-%m-%dT%H:%i:%sZ') FROM cronguard_runs WHERE job = 's4'")"
}
test_expect_success 'setup: 300 jobs, 6,000 runs, a pause and an acknowledged slot' \
    setup

questions() { mysql_admin "SHOW GLOBAL STATUS LIKE 'Questions'" | cut -f2; }
# What questions itself costs, measured the same way.
q0=$(questions)
q1=$(questions)
self=$((q1 - q0))

# statements CMD...: the statements cg CMD sends.
statements()
{
	local before after
	before=$(questions)
	cg "$@" > "$TEST_TMP/stmt.out" 2> "$TEST_TMP/stmt.err" || true
	after=$(questions)
	echo $((after - before - self))
}

jobs_stmts()
{
	local n
	n=$(statements jobs check)
	grep -q '^JOBS CRITICAL - ' "$TEST_TMP/stmt.out" ||
	    fail "jobs check: $(head -c 300 "$TEST_TMP/stmt.out")"
	[ "$n" -lt 40 ] || fail "jobs check over 300 jobs sent $n statements"
	echo "# jobs check, 300 jobs: $n statements"
}
test_expect_success 'jobs check over 300 jobs: fewer than 40 statements' jobs_stmts

listed()
{
	local n
	n=$(statements jobs list)
	[ "$(grep -c '^[sel][0-9]' "$TEST_TMP/stmt.out")" = 300 ] ||
	    fail "jobs list: $(head -c 300 "$TEST_TMP/stmt.out")"
	[ "$n" -lt 40 ] || fail "jobs list over 300 jobs sent $n statements"
	echo "# jobs list, 300 jobs: $n statements"
}
test_expect_success 'jobs list over 300 jobs: fewer than 40 statements' listed

locks_stmts()
{
	local n
	n=$(statements locks)
	[ "$(grep -c '^cronguard:' "$TEST_TMP/stmt.out")" = 200 ] ||
	    fail "locks: $(head -c 300 "$TEST_TMP/stmt.out")"
	[ "$n" -lt 40 ] || fail "locks over 200 locks sent $n statements"
	echo "# locks, 200 locks: $n statements"
}
test_expect_success 'locks over 200 locks: fewer than 40 statements' locks_stmts

# And few index look-ups a job (Handler_read_key, the server's count of
# them): each statement's table of the jobs is a table of its own (its
# LIMIT), so that each job's dives run once.  Merged into the statement's
# joins, the newest-run and the first-run dives ran three times a job
# (doc/architecture.md): 9,111 look-ups here against 7,811.
lookups() { mysql_admin "SHOW GLOBAL STATUS LIKE 'Handler_read_key'" | cut -f2; }
dives()
{
	local before after self n
	before=$(lookups)
	after=$(lookups)
	self=$((after - before))
	before=$(lookups)
	cg jobs check > /dev/null 2>&1 || true
	after=$(lookups)
	n=$((after - before - self))
	echo "# jobs check, 300 jobs: $n index look-ups"
	[ "$n" -lt 8500 ] || fail "jobs check over 300 jobs made $n index look-ups"
}
test_expect_success 'jobs check over 300 jobs: each job'"'"'s dives once' dives

# With the runs' flags (sql/016) a scheduled job's latest runs are read
# for every flagged job in one statement, and are enough for its verdict
# when they show the end of its failing streak: jobs check then sends no
# more statements than with every run read (the full read of a job whose
# latest runs are not enough is a statement more).
flagged()
{
	local full with
	full=$(statements jobs check)
	mysql_q "UPDATE cronguard_runs r JOIN (SELECT job, MIN(id) AS id
	    FROM cronguard_runs WHERE slot IS NOT NULL GROUP BY job) f
	    ON f.job = r.job SET r.slot_flags = (r.id = f.id)"
	with=$(statements jobs check)
	mysql_q "UPDATE cronguard_runs SET slot_flags = NULL"
	[ "$with" -le "$full" ] ||
	    fail "jobs check sent $with statements with flags, $full without"
	echo "# jobs check, 300 jobs: $with statements flagged, $full not"
}
test_expect_success 'flagged jobs: no statement more than without flags' \
    flagged

# The fleet's verdicts are each job's own: a missed, a failed, a paused,
# an acknowledged and a clean job, checked alone and among the 300.
verdicts()
{
	local j
	assert_exit 2 cg jobs check --format json
	cp "$OUT" "$TEST_TMP/all.json"
	for j in s1 s4 s10 e3 e10 l10 l11; do
		cg jobs check --format json "$j" > "$TEST_TMP/$j.json" || true
		"$LIB_PY" - "$TEST_TMP/all.json" "$TEST_TMP/$j.json" "$j" <<'PY' ||
import json, sys
def norm(d):
    d = dict(d)
    for k in list(d):
        if k.endswith("age_seconds"):
            del d[k]
    return d
every = {j["job"]: norm(j) for j in json.load(open(sys.argv[1]))["jobs"]}
alone = [norm(j) for j in json.load(open(sys.argv[2]))["jobs"]]
assert len(alone) == 1 and every[sys.argv[3]] == alone[0], (every[sys.argv[3]], alone)
PY
		fail "$j: checked among 300 it is not what it is alone"
	done
	assert_grep '"message": "slot [^"]* missed: no run started \([0-9] missed slots\)' "$TEST_TMP/s1.json"
	assert_grep '"message": "paused by ' "$TEST_TMP/e3.json"
	assert_grep '"message": "last run [0-9]+: failure at ' "$TEST_TMP/e10.json"
}
test_expect_success 'each job'"'"'s verdict among 300 is its verdict alone' \
    verdicts

test_done
