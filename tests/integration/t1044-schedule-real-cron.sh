#!/bin/sh
# A real cron daemon (Debian's cron) runs the file that `jobs crontab`
# generates, two entries for the job (two "hosts": their own
# configuration and runtime directory) on "* * * * *", for at least three
# minutes: the run history has exactly one success per slot, and the job
# saw each slot once.  Needs root (cron.d is root's) and about 3-4 min.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
if [ "$(id -u)" -ne 0 ] || ! command -v cron > /dev/null; then
	[ "${CI:-}" = true ] && fail "needs root and Debian's cron"
	echo "SKIP: needs root and Debian's cron"
	exit 77
fi

SLOTS=$TEST_TMP/slots
touch "$SLOTS"
chmod 666 "$SLOTS"
for h in a b; do
	mkdir -p "$TEST_TMP/run-$h"
	write_config "$TEST_TMP/$h.conf" "runtime_dir = \"$TEST_TMP/run-$h\";
jobs = { tick = { command = [ \"sh\", \"-c\", \"echo \$CRONGUARD_SLOT >> $SLOTS; sleep 0.3\" ];
  schedule = \"* * * * *\"; timezone = \"+00:00\"; };
  unscheduled = { command = [ \"true\" ]; }; };"
done
CONF=$TEST_TMP/a.conf
assert_exit 0 cg db migrate

# The generated file, for each host, with the binary under test.
CRONTAB=/etc/cron.d/cronguard-t1044-$$
at_exit "rm -f '$CRONTAB'"
assert_exit 0 "$CRONGUARD_BIN" -c "$TEST_TMP/a.conf" jobs crontab --user root
assert_grep '^\* \* \* \* \* root cronguard -c [^ ]*/a.conf run tick$' "$OUT"
assert_grep '^# .*unscheduled' "$OUT"
cp "$OUT" "$TEST_TMP/a.cron"
assert_exit 0 "$CRONGUARD_BIN" -c "$TEST_TMP/b.conf" jobs crontab --user root
{
	echo 'MAILTO=""'
	echo "ASAN_OPTIONS=detect_leaks=0"
	sed -n '/^[^#A-Z]/p' "$TEST_TMP/a.cron" "$OUT" |
	    sed "s|root cronguard |root $CRONGUARD_BIN |"
} > "$TEST_TMP/cron.d"
echo "--- the cron.d file:"
cat "$TEST_TMP/cron.d"
install -m 644 -o root -g root "$TEST_TMP/cron.d" "$CRONTAB"

# A cron daemon: the system's, or one of our own.
if ! pgrep -x cron > /dev/null; then
	cron -L 0
	at_exit "pkill -x cron"
fi

# Three full slots after the file is read (cron rescans at each minute).
start=$(mysql_q "SELECT DATE_FORMAT(UTC_TIMESTAMP() + INTERVAL 1 MINUTE, '%Y-%m-%d %H:%i:00')")
wait_slots()
{
	[ "$(mysql_q "SELECT COUNT(DISTINCT slot) FROM cronguard_runs
	    WHERE slot > '$start' AND outcome = 'success'")" -ge 3 ]
}
wait_for 300 wait_slots
sleep 5
rm -f "$CRONTAB"

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
echo "PASS: $TEST_NAME"
