#!/bin/sh
# A run record always fits the server: with output_max at its maximum
# (16 MiB - 1) and the server's default max_allowed_packet (16 MiB), a job
# printing 20 MB is recorded once, finished as a success, with the newest
# bytes of its output cut to what the server takes and output_bytes
# counting them all (the marker jobs show prints); a second launch in the
# slot finds it done; doctor warns about output_max.  Before, the finishing
# UPDATE was over the packet: "server has gone away", the record stayed
# running, and every later launch in the slot ran the job again.
#
# Cases: setup; the record is finished and cut; the slot stays done;
# doctor warns.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

total=20000000
export total

test_expect_success SERVERS 'setup: a job printing 20 MB, output_max at its maximum' '
	cat > "$TEST_TMP/job.sh" <<-JOB &&
	#!/bin/sh
	head -c $total /dev/zero | tr "\\\\0" x
	echo ran >> "$TEST_TMP/runs"
	JOB
	chmod 755 "$TEST_TMP/job.sh" &&
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = { big = { command = [ \"$TEST_TMP/job.sh\" ]; schedule = \"0 0 * * *\";
  grace = \"23h\"; output = \"on_failure\"; output_max = 16777215; }; };" &&
	assert_exit 0 cg db migrate &&
	pkt=$(mysql_q "SELECT @@GLOBAL.max_allowed_packet") &&
	[ "$pkt" -le 16777216 ] || fail "the server takes packets of $pkt: no test"
'

test_expect_success SERVERS 'the record is finished, its output cut with the count kept' '
	assert_exit 0 cg run big &&
	assert_eq 1 "$(wc -l < "$TEST_TMP/runs")" "runs" &&
	assert_eq "success $total" "$(mysql_q "SELECT outcome, output_bytes
	    FROM cronguard_runs WHERE job = '"'"'big'"'"'" | tr "\t" " ")" "the record" &&
	kept=$(mysql_q "SELECT LENGTH(output) FROM cronguard_runs") &&
	echo "kept $kept of $total bytes" &&
	[ "$kept" -gt 1000000 ] || fail "only $kept bytes kept" &&
	[ "$kept" -lt 8388608 ] || fail "$kept bytes kept: over half the packet" &&
	if grep -q "event=run_record" "$ERR"; then fail "the record needed a retry"; fi
'

test_expect_success SERVERS 'the slot stays done' '
	assert_exit 0 cg -v run big &&
	assert_grep "event=job_already_done" "$ERR" &&
	assert_eq 1 "$(wc -l < "$TEST_TMP/runs")" "runs"
'

test_expect_success SERVERS 'doctor warns about output_max' '
	"$CRONGUARD_BIN" -c "$CONF" doctor > "$OUT" 2> "$ERR" || true
	assert_grep "max_allowed_packet.*job big: output_max 16777215 is above" "$OUT"
'

test_done
