#!/bin/sh
# A real Nagios 4 runs the shipped service definitions against the test
# database, checks every 2 s (interval_length 1): its status file shows
# "cronguard outbox" and "cronguard jobs" OK, then "cronguard outbox"
# CRITICAL with stuck=1 once a row is left PROCESSING, claimed an hour
# ago; and OK again after the row is recovered.  Bounded: each wait is at
# most 30 s.
# Cases: setup; outbox and jobs OK; a stuck row: CRITICAL; recovered: OK.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
command -v nagios4 > /dev/null || {
	[ "${CI:-}" = true ] && fail "nagios4 not installed (Debian package nagios4-core)"
	echo "SKIP: nagios4 not installed"; exit 77
}
need_servers
. "$CRONGUARD_SRCDIR/tests/integration/nagios-lib.sh"
N=$TEST_TMP/nagios

setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = { nightly = { command = [ \"true\" ]; expect_every = \"1d\"; }; };
channels = { hook = { type = \"http\"; url = \"$HTTP_BASE/ok\"; }; };"
	assert_exit 0 cg db migrate
	assert_exit 0 cg run nightly
	NAGIOS_INTERVAL=2 nagios_minimal_config "$N"
	assert_exit 0 nagios4 -v "$N/nagios.cfg"
}
test_expect_success 'setup: db migrate, a run, a minimal Nagios configuration' \
    setup

nagios4 "$N/nagios.cfg" > "$N/stdout" 2>&1 &
NAGIOS_PID=$!
at_exit "kill $NAGIOS_PID 2>/dev/null; wait $NAGIOS_PID 2>/dev/null"

# state SERVICE: "current_state checks plugin_output" of SERVICE in status.dat
state()
{
	[ -f "$N/status.dat" ] || return 0
	awk -v svc="$1" '
	/^servicestatus \{/ { inside = 1; d = ""; s = ""; o = ""; n = 0; next }
	inside && /^\t}/ { if (d == svc) print s, n, o; inside = 0; next }
	inside { sub(/^\t/, "") }
	inside && /^service_description=/ { d = substr($0, 21) }
	inside && /^current_state=/ { s = substr($0, 15) }
	inside && /^has_been_checked=/ { n = substr($0, 18) }
	inside && /^plugin_output=/ { o = substr($0, 15) }' "$N/status.dat" || true
}
# wait_state SERVICE STATE REGEX: within 30 s, SERVICE checked with
# current_state STATE and its output matching REGEX.
wait_state()
{
	local n=300 s
	while [ "$n" -gt 0 ]; do
		s=$(state "$1")
		case $s in
		"$2 1 "*) echo "${s#* 1 }" | grep -qE "$3" && {
			echo "$1: $s"; return 0; } ;;
		esac
		kill -0 "$NAGIOS_PID" 2>/dev/null || { cat "$N/stdout"; fail "nagios exited"; }
		sleep 0.1
		n=$((n - 1))
	done
	cat "$N/nagios.log"
	fail "$1 not in state $2 ($3) within 30 s; last: $s"
}
start=$(date +%s)

both_ok()
{
	wait_state "cronguard outbox" 0 '^OUTBOX OK - stuck=0 '
	wait_state "cronguard jobs" 0 '^JOBS OK - 1 job ok'
}
test_expect_success 'Nagios says cronguard outbox and cronguard jobs OK' both_ok

# The row of the runbook: PROCESSING, claimed an hour ago, no dispatcher.
stuck()
{
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload, status,
	    claim_token, claimed_at) VALUES ('hook', 't', '{}', 'PROCESSING', UUID(),
	    NOW() - INTERVAL 1 HOUR)"
	wait_state "cronguard outbox" 2 '^OUTBOX CRITICAL - stuck=1 '
	grep -q "SERVICE ALERT: db1;cronguard outbox;CRITICAL;HARD;1;OUTBOX CRITICAL - stuck=1" "$N/nagios.log" ||
	    { cat "$N/nagios.log"; fail "no hard CRITICAL alert logged"; }
}
test_expect_success 'a row stuck in PROCESSING: CRITICAL, and a hard alert logged' \
    stuck

# A dispatcher recovers it (and sends it): OK again.
recovered()
{
	assert_exit 0 cg outbox dispatch
	wait_state "cronguard outbox" 0 '^OUTBOX OK - stuck=0 '
	echo "nagios run: $(($(date +%s) - start)) s, $(grep -c 'SERVICE ALERT' "$N/nagios.log") service alerts"
}
test_expect_success 'recovered by a dispatcher: OK again' recovered

test_done
