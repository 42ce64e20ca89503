#!/bin/sh
# A job that died of a signal is recorded as killed with 128 + signal, and
# jobs runs / jobs show name the signal: "killed (SIGKILL)", not "failure
# 137"; JSON has "signal".  A job that exits 137 by itself stays failure.
# Cases: setup; the run records; jobs runs; jobs show; JSON.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
	jobs = {
	  selfkill = { command = [ \"sh\", \"-c\", \"kill -9 \$\$\" ]; };
	  selfterm = { command = [ \"sh\", \"-c\", \"kill -TERM \$\$\" ]; };
	  exits137 = { command = [ \"sh\", \"-c\", \"exit 137\" ]; };
	};"
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: jobs killed by SIGKILL and SIGTERM, one exiting 137' \
    setup

recorded()
{
	local kill_id
	assert_exit 137 cg run selfkill
	kill_id=$(mysql_q "SELECT MAX(id) FROM cronguard_runs")
	assert_exit 143 cg run selfterm
	assert_exit 137 cg run exits137
	assert_eq "killed 137 killed by SIGKILL (signal 9)" \
	    "$(mysql_q "SELECT outcome, exit_status, error FROM cronguard_runs WHERE id = $kill_id" | tr '\t' ' ')" \
	    "run record"
	echo "$kill_id" > "$TEST_TMP/kill_id"
}
test_expect_success 'a job killed by a signal: killed, 128 + signal, the signal named' \
    recorded

runs()
{
	assert_exit 0 cg jobs runs
	cat "$OUT"
	assert_grep '^ID +JOB +HOST +STARTED +DURATION +OUTCOME +EXIT +FENCE +SLOT$' "$OUT"
	assert_grep '^[0-9]+ +selfkill +.* killed \(SIGKILL\) +137 ' "$OUT"
	assert_grep '^[0-9]+ +selfterm +.* killed \(SIGTERM\) +143 ' "$OUT"
	assert_grep '^[0-9]+ +exits137 +.* failure +137 ' "$OUT"
}
test_expect_success 'jobs runs names the signal; exit 137 by itself stays failure' \
    runs

show()
{
	local kill_id
	kill_id=$(cat "$TEST_TMP/kill_id")
	assert_exit 0 cg jobs show "$kill_id"
	assert_grep '^outcome: +killed \(SIGKILL\)$' "$OUT"
	assert_grep '^exit_status: +137$' "$OUT"
}
test_expect_success 'jobs show names the signal' show

json()
{
	local kill_id
	kill_id=$(cat "$TEST_TMP/kill_id")
	assert_exit 0 cg jobs runs --format json
	/usr/bin/python3 -c 'import json, sys
d = {r["job"]: r for r in json.load(open(sys.argv[1]))}
assert d["selfkill"]["outcome"] == "killed" and d["selfkill"]["signal"] == "SIGKILL", d["selfkill"]
assert d["selfterm"]["signal"] == "SIGTERM", d["selfterm"]
assert d["exits137"]["outcome"] == "failure" and d["exits137"]["signal"] is None, d["exits137"]' \
	    "$OUT" || fail "jobs runs json: $(cat "$OUT")"
	assert_exit 0 cg jobs show --format json "$kill_id"
	/usr/bin/python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["signal"] == "SIGKILL" and d["exit_status"] == 137, d' \
	    "$OUT" || fail "jobs show json: $(cat "$OUT")"
}
test_expect_success 'JSON has "signal"' json

test_done
