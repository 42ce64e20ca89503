#!/bin/sh
# A real cron daemon (Debian's cron) runs the file that `jobs crontab`
# generates, two entries for the job (two "hosts": their own
# configuration and runtime directory) on "* * * * *", for at least three
# minutes: the run history has exactly one success per slot, and the job
# saw each slot once.  The daemon is the test's own (cron_private_start:
# its own /etc/cron.d, stopped by its PID); a cron daemon the machine runs
# is neither used nor stopped.  Needs root, Debian's cron and unshare, and
# about 3-4 min.
# Cases: setup; the generated file; a private cron for three slots; one
# success per slot.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
if ! test_have_prereq CRON; then
	[ "${CI:-}" = true ] && fail "needs root, Debian's cron and unshare"
	echo "SKIP: needs root, Debian's cron and unshare (mount namespaces)"
	exit 77
fi

SLOTS=$TEST_TMP/slots
# shellcheck disable=SC2034 # cg reads it
CONF=$TEST_TMP/a.conf
# The generated file, for each host, with the binary under test, in the
# private daemon's /etc/cron.d.
CROND=$TEST_TMP/cron.d
CRONTAB=$CROND/cronguard-t1044-$$

setup()
{
	touch "$SLOTS"
	chmod 666 "$SLOTS"
	for h in a b; do
		mkdir -p "$TEST_TMP/run-$h"
		write_config "$TEST_TMP/$h.conf" "runtime_dir = \"$TEST_TMP/run-$h\";
jobs = { tick = { command = [ \"sh\", \"-c\", \"echo \$CRONGUARD_SLOT >> $SLOTS; sleep 0.3\" ];
  schedule = \"* * * * *\"; timezone = \"+00:00\"; };
  unscheduled = { command = [ \"true\" ]; }; };"
	done
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: two hosts'"'"' configurations, db migrate' setup

generated()
{
	mkdir -m 755 "$CROND"
	assert_exit 0 "$CRONGUARD_BIN" -c "$TEST_TMP/a.conf" jobs crontab --user root
	assert_grep "^\\* \\* \\* \\* \\* root cronguard -c '?[^ ]*/a\\.conf'? run tick$" "$OUT"
	assert_grep '^# .*unscheduled' "$OUT"
	cp "$OUT" "$TEST_TMP/a.cron"
	assert_exit 0 "$CRONGUARD_BIN" -c "$TEST_TMP/b.conf" jobs crontab --user root
	{
		echo 'MAILTO=""'
		echo "ASAN_OPTIONS=detect_leaks=0"
		sed -n '/^[^#A-Z]/p' "$TEST_TMP/a.cron" "$OUT" |
		    sed "s|root cronguard |root $CRONGUARD_BIN |"
	} > "$TEST_TMP/crontab"
}
test_expect_success 'jobs crontab: an entry for the scheduled job, a comment for the other' \
    generated

# wait_slots: three slots after $start succeeded.
wait_slots()
{
	[ "$(mysql_q "SELECT COUNT(DISTINCT slot) FROM cronguard_runs
	    WHERE slot > '$start' AND outcome = 'success'")" -ge 3 ]
}
daemon()
{
	echo "--- the cron.d file:"
	cat "$TEST_TMP/crontab"
	install -m 644 -o root -g root "$TEST_TMP/crontab" "$CRONTAB"
	cron_private_start "$CROND"

	# Three full slots after the file is read (cron rescans at each minute).
	start=$(mysql_q "SELECT DATE_FORMAT(UTC_TIMESTAMP() + INTERVAL 1 MINUTE, '%Y-%m-%d %H:%i:00')")
	wait_for 300 wait_slots
	sleep 5
	cron_private_stop
}
test_expect_success 'a private cron daemon runs the file for three slots' daemon

once()
{
	echo "--- the job saw:"
	cat "$SLOTS"
	echo "--- the run history (slot, successes, runs):"
	mysql_q "SELECT slot, SUM(outcome = 'success'), COUNT(*) FROM cronguard_runs
	    GROUP BY slot ORDER BY slot"
	assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM (SELECT slot FROM cronguard_runs
	    WHERE outcome = 'success' GROUP BY slot HAVING COUNT(*) > 1) x")" \
	    "slots with more than one success"
	assert_eq "$(sort "$SLOTS" | uniq | wc -l)" "$(wc -l < "$SLOTS")" \
	    "slots the job saw twice"
	[ "$(wc -l < "$SLOTS")" -ge 3 ] || fail "fewer than 3 slots ran"
}
test_expect_success 'one success per slot, and the job saw each slot once' once

test_done
