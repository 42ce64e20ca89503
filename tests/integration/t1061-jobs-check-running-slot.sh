#!/bin/sh
# A running slot is not missed (cronguard(1), jobs check): a 20 s job with
# grace 5s is OK while it runs within max_runtime (8s), though its slot is
# past grace without a success; past max_runtime + grace it is CRITICAL
# (stuck), as any run.  Needs the MariaDB test server.
# Cases: setup; running within max_runtime; running past it.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/slot-lib.sh"

mkdir -p "$TEST_TMP/run"
setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP/run\";
jobs = { j = { command = [ \"sleep\", \"20\" ]; schedule = \"* * * * *\";
  timezone = \"UTC\"; grace = \"5s\"; max_runtime = \"8s\";
  heartbeat = \"2s\"; }; };"
	assert_exit 0 cg db migrate
}
test_expect_success SERVERS 'setup: db migrate' setup

# Launch at the start of a minute, after a success of the slot before.
running()
{
	while [ "$(mysql_q "SELECT SECOND(NOW()) BETWEEN 1 AND 3")" != 1 ]; do
		sleep 0.5
	done
	run_of 1 success
	cg run j > "$TEST_TMP/run.out" 2>&1 &
	echo $! > "$TEST_TMP/run.pid"
	at_exit "kill $(cat "$TEST_TMP/run.pid") 2>/dev/null || true"
	sleep 6
	assert_exit 0 cg jobs check j
	assert_exit 0 cg jobs check --format json j
	/usr/bin/python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["running"] is True, j
assert j["schedule"]["missed"] == [], j' "$OUT" || fail "json: $(cat "$OUT")"
}
test_expect_success SERVERS 'a running slot past grace is not missed' running

stuck()
{
	sleep 8
	assert_exit 2 cg jobs check j
	assert_grep 'past max_runtime 8s \+ grace' "$OUT"
	if grep -q missed "$OUT"; then
		fail "a running slot was reported missed: $(cat "$OUT")"
	fi
	wait "$(cat "$TEST_TMP/run.pid")" || true
}
test_expect_success SERVERS 'past max_runtime + grace it is stuck, not missed' \
    stuck

test_done
