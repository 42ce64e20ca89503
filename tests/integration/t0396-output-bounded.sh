#!/bin/sh
# A job printing 100 MB costs bounded memory: cronguard keeps the last
# output_max bytes (64 KiB by default) and counts all of them; its peak
# RSS stays within a few MiB of a run that prints one line (measured with
# GNU time; an ASan build has a large but fixed base).
# Cases: setup; 100 MB of output.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
[ -x /usr/bin/time ] || { echo "SKIP: no /usr/bin/time"; exit 77; }
total=104857600
setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
	jobs = {
	  big = { command = [ \"sh\", \"-c\",
	    \"head -c $total /dev/zero | tr '\\\\000' x; echo; echo THE-END\" ]; };
	  small = { command = [ \"echo\", \"one line\" ]; };
	};"
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: a job printing 100 MB, one printing a line; db migrate' \
    setup

rss_kb() # JOB: peak RSS of "cronguard run JOB" in KiB; its exit in rc.JOB
{
	local rc=0
	timeout 300 /usr/bin/time -f '%M' -o "$TEST_TMP/rss" \
	    "$CRONGUARD_BIN" -c "$CONF" run "$1" > "$OUT" 2> "$ERR" || rc=$?
	echo "$rc" > "$TEST_TMP/rc.$1"
	tail -n 1 "$TEST_TMP/rss"
}

bounded()
{
	local small big start took
	small=$(rss_kb small)
	start=$(date +%s)
	big=$(rss_kb big)
	took=$(( $(date +%s) - start ))
	echo "peak RSS: one line ${small} KiB, 100 MB ${big} KiB; 100 MB took ${took}s"
	[ $((big - small)) -lt 16384 ] ||
		fail "peak RSS grew by $((big - small)) KiB for 100 MB of output"
	assert_eq "0 0" "$(cat "$TEST_TMP/rc.small") $(cat "$TEST_TMP/rc.big")" \
	    "exit statuses of the runs ($(cat "$ERR"))"
	assert_eq "" "$(cat "$OUT")" "on_failure: nothing printed on success"
	assert_eq "$((total + 9)) 65536" "$(mysql_q "SELECT output_bytes, LENGTH(output)
	    FROM cronguard_runs WHERE job = 'big'" | tr '\t' ' ')" \
	    "output_bytes counts all, output holds output_max"
	assert_eq "78780A5448452D454E440A" "$(mysql_q "SELECT HEX(RIGHT(output, 11))
	    FROM cronguard_runs WHERE job = 'big'")" "the tail is the end: xx\\nTHE-END\\n"
	[ "$took" -lt 60 ] || fail "100 MB of output took ${took}s"
}
test_expect_success '100 MB of output: bounded RSS, all counted, the last output_max kept' \
    bounded

test_done
