#!/bin/sh
# Output capture: run's default on_failure prints nothing on success and
# the job's interleaved stdout and stderr after a failure or a timeout;
# capture prints after the end; inherit (exec's default) leaves the job
# its own stdout and stderr.  The tail (output_max) and the byte count
# are in the run record, bytes exact (NUL and invalid UTF-8 too); an SQL
# job has no output.
# Cases: setup; on_failure on success, on failure, on a timeout; capture;
# inherit; order; bytes; output_max; exec; an SQL job.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
# 200 alternating lines on stdout and stderr: their order must survive.
alt='i=0; while [ $i -lt 200 ]; do echo o$i; echo e$i >&2; i=$((i+1)); done'
setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
	jobs = {
	  quiet = { command = [ \"sh\", \"-c\", \"echo out; echo err >&2\" ]; };
	  loud = { command = [ \"sh\", \"-c\", \"echo out; echo err >&2; exit 3\" ]; };
	  slow = { command = [ \"sh\", \"-c\", \"echo before; sleep 30\" ];
	    timeout = \"1s\"; };
	  shown = { command = [ \"sh\", \"-c\", \"echo out; echo err >&2\" ];
	    output = \"capture\"; };
	  own = { command = [ \"sh\", \"-c\", \"echo out; echo err >&2\" ];
	    output = \"inherit\"; };
	  alt = { command = [ \"sh\", \"-c\", \"$alt\" ]; output = \"capture\"; };
	  bytes = { command = [ \"printf\", \"a\\\\000\\\\377\\\\001z\" ];
	    output = \"capture\"; };
	  tail = { command = [ \"sh\", \"-c\",
	    \"i=0; while [ \$i -lt 1000 ]; do printf %09d \$i; i=\$((i+1)); done\" ];
	    output_max = \"1K\"; };
	  tailfail = { command = [ \"sh\", \"-c\",
	    \"i=0; while [ \$i -lt 1000 ]; do printf '%09d\\\\n' \$i; i=\$((i+1)); done; exit 1\" ];
	    output_max = 100; };
	  stmt = { sql = \"SELECT 1\"; };
	};"
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: ten jobs, db migrate' setup

row() # JOB: "output_bytes HEX(output)" of its last run
{
	mysql_q "SELECT IFNULL(output_bytes, 'NULL'), IFNULL(HEX(output), 'NULL')
	    FROM cronguard_runs WHERE job = '$1' ORDER BY id DESC LIMIT 1" |
	    tr '\t' ' '
}
hex() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n' | tr a-f A-F; }

# on_failure (run's default): quiet on success, but the run keeps it.
quiet()
{
	assert_exit 0 cg run quiet
	assert_eq "" "$(cat "$OUT")" "on_failure, success: stdout"
	assert_eq "" "$(grep -v 'level=' "$ERR" || true)" "on_failure, success: stderr"
	assert_eq "8 $(hex "out
err
")" "$(row quiet)" "on_failure keeps the output in the run record"
}
test_expect_success 'on_failure, success: nothing printed, the run keeps it' \
    quiet

# ...and on failure the whole of it, in order, on stdout.
loud()
{
	assert_exit 3 cg run loud
	assert_eq "out
err" "$(cat "$OUT")" "on_failure, failure: the output"
	assert_eq "" "$(grep -v 'level=' "$ERR" || true)" "nothing but logs on stderr"
}
test_expect_success 'on_failure, failure: the whole output, in order, on stdout' \
    loud

# A timeout is a failure: what the job printed before it is shown.
slow()
{
	assert_exit 124 cg run slow
	assert_eq "before" "$(cat "$OUT")" "on_failure, timeout"
}
test_expect_success 'a timeout is a failure: what the job printed is shown' \
    slow

# capture: printed after the end, also on success.
shown()
{
	assert_exit 0 cg run shown
	assert_eq "out
err" "$(cat "$OUT")" "capture"
}
test_expect_success 'capture: printed after the end, also on success' shown

# inherit: the job's own stdout and stderr, nothing stored.
own()
{
	assert_exit 0 cg run own
	assert_eq "out" "$(cat "$OUT")" "inherit: stdout"
	assert_eq "err" "$(grep -v 'level=' "$ERR")" "inherit: stderr"
	assert_eq "NULL NULL" "$(row own)" "inherit stores nothing"
}
test_expect_success 'inherit: the job'"'"'s own stdout and stderr, nothing stored' \
    own

# One pipe for both: the job's writes keep their order.
alt_case()
{
	assert_exit 0 cg run alt
	/usr/bin/python3 -c 'for i in range(200): print("o%d\ne%d" % (i, i))' \
	    > "$TEST_TMP/alt.want"
	cmp "$TEST_TMP/alt.want" "$OUT" || fail "stdout and stderr interleaved out of order"
	assert_eq "$(od -An -tx1 "$TEST_TMP/alt.want" | tr -d ' \n' | tr a-f A-F)" \
	    "$(mysql_q "SELECT HEX(output) FROM cronguard_runs WHERE job = 'alt'")" \
	    "stored output in order"
}
test_expect_success 'one pipe for both: the job'"'"'s writes keep their order' \
    alt_case

# Bytes are bytes: NUL and invalid UTF-8 stored and printed exactly.
bytes_case()
{
	assert_exit 0 cg run bytes
	assert_eq "5 6100FF017A" "$(row bytes)" "binary output stored exactly"
	assert_eq "6100ff017a" "$(od -An -tx1 "$OUT" | tr -d ' \n')" "binary output printed"
}
test_expect_success 'bytes are bytes: NUL and invalid UTF-8 stored and printed exactly' \
    bytes_case

# output_max: the last bytes only, the count of all of them.
tail_case()
{
	assert_exit 0 cg run tail
	assert_eq "9000 1024" "$(mysql_q "SELECT output_bytes, LENGTH(output)
	    FROM cronguard_runs WHERE job = 'tail'" | tr '\t' ' ')" "output_max 1K"
	assert_eq "000999" "$(mysql_q "SELECT RIGHT(output, 6) FROM cronguard_runs
	    WHERE job = 'tail'")" "the tail is the end"
	assert_exit 1 cg run tailfail
	assert_eq "[cronguard: output truncated: the last 100 of 10000 bytes follow]" \
	    "$(head -n 1 "$OUT")" "truncation noted"
	assert_eq "000000999" "$(tail -n 1 "$OUT")" "the tail printed"
	assert_eq "11 000000990" "$(wc -l < "$OUT" | tr -d ' ') $(sed -n 2p "$OUT")" \
	    "the note, then the last 100 bytes"
}
test_expect_success 'output_max: the last bytes only, the count of all of them' \
    tail_case

# exec inherits by default; --output on_failure captures.
exec_output()
{
	assert_exit 0 cg exec --lock t0395:x -- sh -c 'echo hello'
	assert_eq "hello" "$(cat "$OUT")" "exec inherits"
	assert_exit 0 cg exec --lock t0395:x --output on_failure -- sh -c 'echo hello'
	assert_eq "" "$(cat "$OUT")" "exec --output on_failure, success"
	assert_eq "6 $(hex "hello
")" "$(row t0395:x)"
	assert_exit 4 cg exec --lock t0395:x --output on_failure -- sh -c 'echo bye; exit 4'
	assert_eq "bye" "$(cat "$OUT")" "exec --output on_failure, failure"
	assert_exit 64 cg exec --lock t0395:x --output mail -- true
}
test_expect_success 'exec inherits by default; --output on_failure captures' \
    exec_output

# An SQL job has no output.
stmt()
{
	assert_exit 0 cg run stmt
	assert_eq "NULL NULL" "$(row stmt)" "SQL job"
}
test_expect_success 'an SQL job has no output' stmt

test_done
