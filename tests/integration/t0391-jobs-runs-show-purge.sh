#!/bin/sh
# Run history: jobs runs lists runs newest first (text and JSON), jobs show
# prints one run with its output's raw bytes (and valid JSON when the
# output is not UTF-8 or holds only the tail), jobs purge deletes finished
# runs older than --before but never a running run nor a job's newest
# success, and keep_runs prunes a job's runs after each run, keeping its
# newest success.
# Cases: setup; keep_runs; jobs runs; jobs show; jobs purge.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
count() { mysql_q "SELECT COUNT(*) FROM cronguard_runs WHERE job = '$1'"; }

setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
	jobs = {
	  hello = { command = [ \"true\" ]; keep_runs = 3; output = \"inherit\"; };
	  flaky = { command = [ \"sh\", \"-c\", \"exit \${FAIL:-0}\" ]; keep_runs = 2; };
	  all = { command = [ \"true\" ]; keep_runs = 0; };
	  dflt = { command = [ \"true\" ]; };
	};"
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: four jobs, db migrate' setup

# keep_runs: the newest three runs stay, one DELETE after each run.
keep_runs()
{
	local newest ok
	for _ in 1 2 3 4 5; do assert_exit 0 cg run hello; done
	assert_eq 3 "$(count hello)" "hello runs kept"
	newest=$(mysql_q "SELECT MAX(id) FROM cronguard_runs WHERE job = 'hello'")
	assert_eq 3 "$(mysql_q "SELECT COUNT(*) FROM cronguard_runs WHERE job = 'hello' AND id > $newest - 3")" "the newest kept"
	# The newest success stays when failures push it out of the count.
	assert_exit 0 cg run flaky
	ok=$(mysql_q "SELECT MAX(id) FROM cronguard_runs WHERE job = 'flaky'")
	for _ in 1 2 3; do FAIL=1 assert_exit 1 cg run flaky; done
	assert_eq 3 "$(count flaky)" "flaky: two newest and the success"
	assert_eq 1 "$(mysql_q "SELECT COUNT(*) FROM cronguard_runs WHERE id = $ok")" "newest success pruned"
	# 0 keeps everything; the default (1000) is shown by config check.
	for _ in 1 2 3 4; do assert_exit 0 cg run all; done
	assert_eq 4 "$(count all)" "keep_runs = 0"
	assert_exit 0 cg config check
	assert_grep 'keep_runs = 1000' "$OUT"
	echo "$newest" > "$TEST_TMP/newest"
}
test_expect_success 'keep_runs prunes after each run, keeping the newest success' \
    keep_runs

# jobs runs: newest first, --limit, one job, JSON.
jobs_runs()
{
	local newest
	newest=$(cat "$TEST_TMP/newest")
	assert_exit 0 cg jobs runs
	assert_grep '^ID +JOB +HOST +STARTED +DURATION +OUTCOME +EXIT +FENCE +SLOT$' "$OUT"
	assert_grep "^[0-9]+ +all +[^ ]+ +20[0-9-]+ [0-9:]+ +[0-9a-z]+ +success +0 +[0-9]+ +-$" "$OUT"
	assert_exit 0 cg jobs runs --limit 2 hello
	assert_eq 3 "$(wc -l < "$OUT" | tr -d ' ')" "header and two runs"
	assert_grep "^$newest +hello " "$OUT"
	assert_exit 0 cg jobs runs --format json
	/usr/bin/python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
ids = [r["id"] for r in d]
assert ids == sorted(ids, reverse=True), ids
r = d[0]
assert r["job"] == "all" and r["outcome"] == "success" and r["exit_status"] == 0, r
assert isinstance(r["fence"], int) and r["fence"] > 0, r
assert isinstance(r["duration_ms"], int) and r["duration_ms"] >= 0, r
for k in ("host", "pid", "started_at", "finished_at", "run_uuid", "output_bytes"):
    assert k in r, k' "$OUT" || fail "jobs runs json: $(cat "$OUT")"
	assert_exit 64 cg jobs runs --limit 0
	assert_exit 64 cg jobs runs --format yaml
}
test_expect_success 'jobs runs: newest first, --limit, one job, JSON' \
    jobs_runs

jobs_show()
{
	local newest bin
	newest=$(cat "$TEST_TMP/newest")
	# jobs show: a run with binary output that holds only its tail (inserted
	# directly: captured output is written by the guard).
	mysql_q "INSERT INTO cronguard_runs (job, host, pid, started_at, finished_at,
	    outcome, exit_status, error, run_uuid, output, output_bytes)
	    VALUES ('bin', 'h1', 7, NOW(6) - INTERVAL 1 MINUTE, NOW(6), 'failure', 3,
	    'exit 3', '6f1c1f4e-2b1a-4c51-9a8e-0d7b4f1e2a3b',
	    X'6F6B0A00FFC3A90AE282AC', 1000)"
	bin=$(mysql_q "SELECT MAX(id) FROM cronguard_runs WHERE job = 'bin'")
	assert_exit 0 cg jobs show "$bin"
	assert_grep '^run_uuid: +6f1c1f4e-2b1a-4c51-9a8e-0d7b4f1e2a3b$' "$OUT"
	assert_grep '^output: +the last 11 of 1000 bytes' "$OUT"
	assert_grep '^exit_status: +3$' "$OUT"
	# The output's bytes exactly, after the blank line that ends the fields.
	sed '1,/^$/d' "$OUT" > "$TEST_TMP/tail"
	printf 'ok\n\000\377\303\251\n\342\202\254' > "$TEST_TMP/want"
	cmp "$TEST_TMP/tail" "$TEST_TMP/want" || fail "jobs show output bytes: $(od -c "$TEST_TMP/tail")"
	assert_exit 0 cg jobs show --format json "$bin"
	/usr/bin/python3 -c 'import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
assert d["output"] == "ok\n\x00\ufffd\u00e9\n\u20ac", repr(d["output"])
assert d["output_lossy"] is True and d["output_truncated"] is True, d
assert d["output_bytes"] == 1000 and d["output_length"] == 11, d
assert d["error"] == "exit 3", d
assert d["exit_status"] == 3 and d["job"] == "bin", d' "$OUT" || fail "jobs show json: $(cat "$OUT")"
	# A run without captured output says so.
	assert_exit 0 cg jobs show "$newest"
	assert_grep '^output: +not captured$' "$OUT"
	assert_exit 0 cg jobs show --format json "$newest"
	/usr/bin/python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["output"] is None and d["output_truncated"] is False, d' "$OUT" || fail "json: $(cat "$OUT")"
	assert_exit 65 cg jobs show 999999999
	assert_grep 'no run 999999999' "$ERR"
	assert_exit 64 cg jobs show x1
}
test_expect_success 'jobs show: the output'"'"'s raw bytes, valid JSON, "not captured"' \
    jobs_show

jobs_purge()
{
	local keep before
	# jobs purge: runs of ten days ago go, except the running one and each
	# job's newest success.
	mysql_q "INSERT INTO cronguard_runs (job, host, pid, started_at, finished_at, outcome)
	    VALUES ('old', 'h', 1, NOW(6) - INTERVAL 12 DAY, NOW(6) - INTERVAL 12 DAY, 'success'),
	           ('old', 'h', 1, NOW(6) - INTERVAL 11 DAY, NOW(6) - INTERVAL 11 DAY, 'success'),
	           ('old', 'h', 1, NOW(6) - INTERVAL 10 DAY, NOW(6) - INTERVAL 10 DAY, 'failure'),
	           ('old', 'h', 1, NOW(6) - INTERVAL 10 DAY, NULL, 'running'),
	           ('gone', 'h', 1, NOW(6) - INTERVAL 10 DAY, NOW(6) - INTERVAL 10 DAY, 'failure')"
	keep=$(mysql_q "SELECT id FROM cronguard_runs WHERE job = 'old' AND started_at < NOW(6) - INTERVAL 11 DAY + INTERVAL 1 HOUR AND started_at > NOW(6) - INTERVAL 11 DAY - INTERVAL 1 HOUR")
	before=$(mysql_q "SELECT COUNT(*) FROM cronguard_runs")
	assert_exit 0 cg jobs purge --before 7d
	assert_grep '^deleted 3 runs$' "$OUT"
	assert_eq $((before - 3)) "$(mysql_q "SELECT COUNT(*) FROM cronguard_runs")" "rows after purge"
	assert_eq 1 "$(mysql_q "SELECT COUNT(*) FROM cronguard_runs WHERE id = $keep")" "newest success purged"
	assert_eq 1 "$(mysql_q "SELECT COUNT(*) FROM cronguard_runs WHERE job = 'old' AND outcome = 'running'")" "running run purged"
	assert_eq 0 "$(count gone)" "gone"
	assert_exit 0 cg jobs purge --before 7d
	assert_grep '^deleted 0 runs$' "$OUT"
	assert_exit 64 cg jobs purge
	assert_exit 64 cg jobs purge --before soon
}
test_expect_success 'jobs purge: old runs go, never a running run nor a newest success' \
    jobs_purge

test_done
