#!/bin/sh
# Ping URLs, healthchecks.io conventions: GET URL/start?rid=R when the job
# starts, GET URL?rid=R on success, POST URL/fail?rid=R with the captured
# output's tail on failure; R is the run's run_uuid.  A 5xx is retried; a
# dead ping server (a closed port, or one that never answers) logs
# ping_failed, never changes the exit status, and delays the run by at
# most the ping timeout (5 s) per ping; ping_url_file holds a URL with a
# secret, read like other secret files.
# Cases: setup; success; failure; a 503; dead ping servers;
# ping_url_file; an SQL job.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
uuid() { mysql_q "SELECT run_uuid FROM cronguard_runs WHERE job = '$1' ORDER BY id DESC LIMIT 1"; }
# pings PREFIX: "METHOD PATH?QUERY" per request, in order
pings() { http_requests "$1" | /usr/bin/python3 -c 'import json, sys
for line in sys.stdin:
    r = json.loads(line)
    print(r["method"], r["path"] + "?" + r["query"])'; }

setup()
{
	local closed
	closed=$(/usr/bin/python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
	printf '%s\n' "$HTTP_BASE/secret-abc" > "$TEST_TMP/ping.url"
	chmod 600 "$TEST_TMP/ping.url"
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
	jobs = {
	  ok = { command = [ \"sh\", \"-c\", \"echo fine\" ];
	    ping_url = \"$HTTP_BASE/ok/\"; };
	  bad = { command = [ \"sh\", \"-c\", \"echo first; echo broken >&2; exit 3\" ];
	    ping_url = \"$HTTP_BASE/bad\"; };
	  raw = { command = [ \"sh\", \"-c\", \"exit 5\" ]; output = \"inherit\";
	    ping_url = \"$HTTP_BASE/raw\"; };
	  flaky = { command = [ \"true\" ];
	    ping_url = \"$HTTP_BASE/flaky/fail-first=1\"; };
	  gone = { command = [ \"sh\", \"-c\", \"exit 4\" ];
	    ping_url = \"http://127.0.0.1:$closed/x\"; };
	  hung = { command = [ \"true\" ]; ping_url = \"$HTTP_BASE/hung/delay=60000\"; };
	  secret = { command = [ \"true\" ]; ping_url_file = \"$TEST_TMP/ping.url\"; };
	  stmt = { sql = \"SELECT 1\"; ping_url = \"$HTTP_BASE/stmt\"; };
	};"
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: eight jobs with ping URLs, db migrate' setup

success()
{
	local rid
	assert_exit 0 cg run ok
	rid=$(uuid ok)
	echo "$rid" | grep -qE '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' ||
		fail "run_uuid '$rid' is not a v4 UUID"
	assert_eq "GET /$TEST_ID/ok/start?rid=$rid
GET /$TEST_ID/ok/?rid=$rid" "$(pings "/$TEST_ID/ok")" "start and success pings (the URL as given)"
}
test_expect_success 'start and success pings, rid the run_uuid' success

failure()
{
	local rid
	assert_exit 3 cg run bad
	rid=$(uuid bad)
	assert_eq "GET /$TEST_ID/bad/start?rid=$rid
POST /$TEST_ID/bad/fail?rid=$rid" "$(pings "/$TEST_ID/bad")" "start and fail pings"
	assert_eq "first
broken" "$(http_field body "/$TEST_ID/bad/fail")" "the fail ping's body is the output"
	# Output not captured: the fail ping has no body (a GET).
	assert_exit 5 cg run raw
	assert_eq "GET /$TEST_ID/raw/start?rid=$(uuid raw)
GET /$TEST_ID/raw/fail?rid=$(uuid raw)" "$(pings "/$TEST_ID/raw")" "uncaptured fail ping"
}
test_expect_success 'start and fail pings; the output the fail ping'"'"'s body' \
    failure

# A 503 is retried.
retried()
{
	assert_exit 0 cg run flaky
	assert_eq 4 "$(http_count "/$TEST_ID/flaky")" "each ping once more after its 503"
	assert_eq "503 200 503 200" "$(http_field status "/$TEST_ID/flaky" | tr '\n' ' ' | sed 's/ $//')"
	if grep -q 'event=ping_failed' "$ERR"; then fail "a retried ping is not a failure"; fi
}
test_expect_success 'a 503 is retried, not a failure' retried

# Dead ping servers: logged, the job's status kept, bounded delay.
dead()
{
	local start took
	start=$(date +%s)
	assert_exit 4 cg run gone
	took=$(( $(date +%s) - start ))
	assert_grep 'level=warn event=ping_failed job=gone ping=start' "$ERR"
	assert_grep 'event=ping_failed job=gone ping=fail' "$ERR"
	[ "$took" -le 11 ] || fail "a closed ping port delayed the run by ${took}s"
	start=$(date +%s)
	assert_exit 0 cg run hung
	took=$(( $(date +%s) - start ))
	echo "a ping server that never answers: the run took ${took}s (2 pings of at most 5s)"
	assert_grep 'event=ping_failed job=hung ping=start' "$ERR"
	assert_grep 'event=ping_failed job=hung ping=success' "$ERR"
	[ "$took" -ge 9 ] || fail "the ping timeout passed too early (${took}s)"
	[ "$took" -le 13 ] || fail "a hung ping server delayed the run by ${took}s"
}
test_expect_success 'dead ping servers: logged, the status kept, the delay bounded' \
    dead

# ping_url_file: read when the job runs, and kept private.
url_file()
{
	assert_exit 0 cg run secret
	assert_eq 2 "$(http_count "/$TEST_ID/secret-abc")" "pings to the URL in the file"
	if grep -q 'secret-abc' "$ERR"; then fail "the secret URL was logged"; fi
	chmod 604 "$TEST_TMP/ping.url"
	assert_exit 78 cg run secret
	assert_grep 'readable by others' "$ERR"
	assert_exit 0 cg run ok   # other jobs do not need that file
}
test_expect_success 'ping_url_file: read when the job runs, kept private' \
    url_file

# SQL jobs ping too (no output, no body).
sql_job()
{
	assert_exit 0 cg run stmt
	assert_eq "GET /$TEST_ID/stmt/start?rid=$(uuid stmt)
GET /$TEST_ID/stmt?rid=$(uuid stmt)" "$(pings "/$TEST_ID/stmt")" "SQL job pings"
}
test_expect_success 'SQL jobs ping too' sql_job

test_done
