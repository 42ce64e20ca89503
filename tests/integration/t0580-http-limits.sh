#!/bin/sh
# The limits hold for HTTP channels too: 503s open the circuit after
# `failures` (no attempts burned while open), a 200 probe after the
# cooldown closes it and everything is delivered; daily_quota caps the
# webhooks sent per UTC day.
# Cases: setup; the circuit opens; it closes; the quota.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
conf()
{
	write_config "$CONF" "outbox = { batch_size = 10; poll_interval = \"200ms\";
  backoff = { initial = \"1s\"; max = \"1s\"; jitter = 0.0; }; };
channels = {
  hook = { type = \"http\"; url = \"$HTTP_BASE/circuit/$1\"; concurrency = 1;
    circuit = { failures = 3; cooldown = \"4s\"; }; };
  capped = { type = \"http\"; url = \"$HTTP_BASE/quota\"; daily_quota = 5; };
};"
}
export CRONGUARD_SQLDIR="${CRONGUARD_SQLDIR:-$CRONGUARD_SRCDIR/sql}"
setup()
{
	conf status=503
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'hook', 'circuit', JSON_OBJECT('n', seq) FROM seq_1_to_10;
	    INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'capped', 'quota', JSON_OBJECT('n', seq) FROM seq_1_to_10"
}
test_expect_success 'setup: a 503 hook with a circuit, a capped hook; ten rows each' \
    setup

opens()
{
	assert_exit 0 cg outbox dispatch --channel hook
	assert_grep 'event=circuit_open channel=hook failures=3' "$ERR"
	assert_eq 3 "$(mysql_q "SELECT SUM(attempts) FROM outbox_messages WHERE channel = 'hook'")" "attempts to open"
	assert_eq 3 "$(http_count "/$TEST_ID/circuit")" "requests"
	# The rows are due again (backoff 1s), the circuit still open: the
	# cooldown (4s) leaves room for a slow start under a loaded machine.
	sleep 1.1
	assert_exit 0 cg outbox dispatch --channel hook
	assert_eq 3 "$(http_count "/$TEST_ID/circuit")" "requests while open"
}
test_expect_success '503s open the circuit; nothing attempted while open' \
    opens

# The cooldown ends within --for: a probe, then the rest.
closes()
{
	conf status=200
	sleep 1
	assert_exit 0 cg -v outbox dispatch --channel hook --for 6s
	assert_grep 'event=circuit_closed channel=hook' "$ERR"
	assert_eq 10 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE channel = 'hook' AND status = 'SENT'")" "hook delivered"
	assert_eq 13 "$(mysql_q "SELECT SUM(attempts) FROM outbox_messages WHERE channel = 'hook'")" "attempts in total"
}
test_expect_success 'after the cooldown a probe closes it and everything goes' \
    closes

quota()
{
	assert_exit 0 cg outbox dispatch --channel capped
	assert_eq "PENDING 0 5
SENT 1 5" "$(mysql_q "SELECT status, attempts, COUNT(*) FROM outbox_messages WHERE channel = 'capped' GROUP BY status, attempts ORDER BY status" | tr '\t' ' ')"
	assert_eq 5 "$(http_count "/$TEST_ID/quota")" "capped requests"
}
test_expect_success 'daily_quota caps the webhooks of a day' quota

test_done
