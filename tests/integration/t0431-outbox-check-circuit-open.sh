#!/bin/sh
# What an operator sees when a circuit is open: `outbox check` names the
# channel (nagios text and perfdata, json "channels", prometheus
# cronguard_outbox_circuit_open{channel=...}) and says WARNING; half-open
# (cooldown over, no probe yet) is still WARNING; once a probe succeeds the
# check is OK again.  Quota use is shown per channel.  The state of a
# channel this configuration does not name is not this check's alarm.
# Cases: setup; OK; the circuit opens; WARNING in each format; half-open;
# closed again.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
http_private_start
setup()
{
	write_config "$CONF" "
	outbox = { batch_size = 10; poll_interval = \"200ms\";
	  backoff = { initial = \"1ms\"; jitter = 0.0; }; };
	channels = {
	  hook = { type = \"http\"; url = \"$HTTP_BASE/c\"; timeout = \"2s\"; concurrency = 1;
	    daily_quota = 1000; circuit = { failures = 2; cooldown = \"2s\"; }; };
	};"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'hook', 't', JSON_OBJECT('i', seq) FROM seq_1_to_5"
	# an open circuit of a channel not in this configuration
	mysql_q "INSERT INTO cronguard_channels (name, circuit_failures, circuit_open_until)
	    VALUES ('elsewhere', 9, NOW(6) + INTERVAL 1 HOUR)"
}
test_expect_success 'setup: an HTTP channel with a circuit, five messages; another channel open' \
    setup

ok()
{
	assert_exit 0 cg outbox check
	assert_grep '^OUTBOX OK - .*\| .* circuit_open=0;0$' "$OUT"
}
test_expect_success 'all well: OK, circuit_open=0' ok

opens()
{
	http_private_stop
	assert_exit 0 cg outbox dispatch
	assert_grep 'event=circuit_open channel=hook failures=2' "$ERR"
}
test_expect_success 'the server gone: the circuit opens' opens

warning()
{
	assert_exit 1 cg outbox check
	cat "$OUT"
	assert_grep '^OUTBOX WARNING - stuck=0 stale=0 pending=5 due=[0-9]+ failed=0 oldest_due=[0-9]+s circuit_open=hook \| ' "$OUT"
	assert_grep ' circuit_open=1;0 quota_used_hook=0$' "$OUT"
	assert_exit 1 cg outbox check --format json
	"$LIB_PY" - "$OUT" <<'PY' || fail "json: $(cat "$OUT")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["status"] == "WARNING", j
assert j["circuit_open"] == 1, j
h = j["channels"]["hook"]
assert h["circuit"] == "open" and h["failures"] == 2, h
assert 0 < h["open_for_seconds"] <= 2, h
assert "error" in h and h["error"], h
assert "elsewhere" not in j["channels"], j
PY
	assert_exit 1 cg outbox check --format prometheus
	assert_grep '^cronguard_outbox_circuit_open\{channel="hook"\} 1$' "$OUT"
	assert_grep '^cronguard_outbox_quota_used\{channel="hook"\} 0$' "$OUT"
	assert_grep '^cronguard_outbox_check_status 1$' "$OUT"
	if grep -q elsewhere "$OUT"; then fail "unconfigured channel reported"; fi
}
test_expect_success 'an open circuit: WARNING naming the channel, in each format' \
    warning

# cooldown over, nobody probed yet: half-open, still a WARNING
half_open()
{
	sleep 2.2
	assert_exit 1 cg outbox check --format json
	assert_grep '"hook":\{"circuit":"half-open"' "$OUT"
}
test_expect_success 'cooldown over, no probe yet: half-open, still WARNING' \
    half_open

# server back: a probe closes it and everything goes out
closed()
{
	http_private_start
	assert_exit 0 cg -v outbox dispatch --for 2s
	assert_grep 'event=circuit_closed channel=hook' "$ERR"
	assert_eq 5 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'SENT'")" "all sent"
	assert_exit 0 cg outbox check
	assert_grep '^OUTBOX OK - .* circuit_open=0;0 quota_used_hook=5$' "$OUT"
	assert_exit 0 cg outbox check --format prometheus
	assert_grep '^cronguard_outbox_circuit_open\{channel="hook"\} 0$' "$OUT"
	assert_grep '^cronguard_outbox_quota_used\{channel="hook"\} 5$' "$OUT"
}
test_expect_success 'the server back: a probe closes it, all sent, OK' closed

test_done
