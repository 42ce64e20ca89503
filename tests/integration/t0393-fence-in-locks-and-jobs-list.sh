#!/bin/sh
# The fencing token is shown by locks (the holder's, and the
# last one issued in JSON) and by jobs list (the last run's), in text and
# JSON, and it is the token the job got in CRONGUARD_FENCE.
# Cases: setup (two runs of quick, slow left running); locks; jobs list.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
setup()
{
	local qfence run_pid fence
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
	jobs = {
	  slow = { command = [ \"sh\", \"-c\", \"echo \$CRONGUARD_FENCE > $TEST_TMP/fence; echo \$\$ > $TEST_TMP/job.pid; exec sleep 30\" ];
	           lock = \"t0393:slow\"; };
	  quick = { command = [ \"true\" ]; lock = \"t0393:quick\"; };
	  never = { command = [ \"true\" ]; };
	};"
	assert_exit 0 cg db migrate
	assert_exit 0 cg run quick
	assert_exit 0 cg run quick
	qfence=$(mysql_q "SELECT fence FROM cronguard_runs WHERE job = 'quick' ORDER BY id DESC LIMIT 1")
	[ "$qfence" -ge 2 ] || fail "quick's fence $qfence"

	"$CRONGUARD_BIN" -c "$CONF" run slow 2> "$TEST_TMP/run.err" &
	run_pid=$!
	echo "$run_pid" > "$TEST_TMP/run.pid"
	at_exit "[ -s $TEST_TMP/job.pid ] && kill \$(cat $TEST_TMP/job.pid) 2>/dev/null; kill $run_pid 2>/dev/null"
	wait_for 10 test -s "$TEST_TMP/job.pid"
	fence=$(cat "$TEST_TMP/fence")
	assert_eq "$fence" "$(mysql_q "SELECT fence FROM cronguard_runs WHERE job = 'slow'")" "run record's fence"
	echo "$qfence" > "$TEST_TMP/qfence"
}
test_expect_success 'setup: quick run twice, slow running' setup

locks()
{
	local fence qfence
	fence=$(cat "$TEST_TMP/fence")
	qfence=$(cat "$TEST_TMP/qfence")
	assert_exit 0 cg locks
	assert_grep '^LOCK +JOB +STATE +FENCE +HOLDER$' "$OUT"
	assert_grep "^t0393:slow +slow +held +$fence +connection [0-9]+, run [0-9]+ " "$OUT"
	assert_grep '^t0393:quick +quick +free +- +-$' "$OUT"
	assert_exit 0 cg locks --format json
	/usr/bin/python3 -c 'import json, sys
d = {x["lock"]: x for x in json.load(open(sys.argv[1]))}
s, q = d["t0393:slow"], d["t0393:quick"]
assert s["state"] == "held" and s["fence"] == int(sys.argv[2]), s
assert s["last_fence"] == s["fence"] and s["run_id"] > 0 and s["pid"] > 0, s
assert q["state"] == "free" and q["fence"] is None, q
assert q["last_fence"] == int(sys.argv[3]), q' "$OUT" "$fence" "$qfence" || fail "locks json: $(cat "$OUT")"
	assert_exit 64 cg locks --format xml
}
test_expect_success 'locks shows the holder'"'"'s fence, and the last one issued in JSON' \
    locks

jobs_list()
{
	local fence qfence
	fence=$(cat "$TEST_TMP/fence")
	qfence=$(cat "$TEST_TMP/qfence")
	assert_exit 0 cg jobs list
	assert_grep '^JOB +GUARD +LOCK +LAST RUN +OUTCOME +LAST SUCCESS +FENCE$' "$OUT"
	assert_grep "^slow +named_lock +t0393:slow +[0-9-]+ [0-9:]+ +running +- +$fence$" "$OUT"
	assert_grep "^quick +named_lock +t0393:quick +[0-9-]+ [0-9:]+ +success +[0-9-]+ [0-9:]+ +$qfence$" "$OUT"
	assert_grep '^never +named_lock +[^ ]+ +- +- +- +-$' "$OUT"
	assert_exit 0 cg jobs list --format json
	/usr/bin/python3 -c 'import json, sys
d = {x["job"]: x for x in json.load(open(sys.argv[1]))}
assert d["slow"]["fence"] == int(sys.argv[2]) and d["slow"]["last_outcome"] == "running", d
assert d["quick"]["fence"] == int(sys.argv[3]) and d["quick"]["lock"] == "t0393:quick", d
assert d["never"]["fence"] is None and d["never"]["last_run_id"] is None, d' "$OUT" "$fence" "$qfence" || fail "jobs list json: $(cat "$OUT")"
}
test_expect_success 'jobs list shows the last run'"'"'s fence, in text and JSON' \
    jobs_list

# Not a check: the slow job stopped, and its cronguard (started by the
# setup case, so not this shell's child) given 10 s to finish.
kill "$(cat "$TEST_TMP/job.pid")"
n=0
while lib_running "$(cat "$TEST_TMP/run.pid")" && [ "$n" -lt 100 ]; do
	sleep 0.1
	n=$((n + 1))
done

test_done
