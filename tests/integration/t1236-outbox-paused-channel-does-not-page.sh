#!/bin/sh
# A paused channel does not page through its backlog (cronguard-outbox(7),
# PAUSING A CHANNEL): with rows of the paused channel 30 s due and
# oldest_due_crit = "10s", outbox check is below CRITICAL and names the
# pause (who, since, until, why) and the rows it holds (paused_pending);
# its rows count in neither pending nor due nor oldest_due.  The rows
# of a channel that is not paused still count, and once the pause ends
# the backlog pages again.  Servers: MariaDB.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

setup()
{
	write_config "$CONF" "outbox = { thresholds = { pending_warn = 5;
  pending_crit = 10; oldest_due_warn = \"5s\"; oldest_due_crit = \"10s\"; }; };
channels = {
  billing = { type = \"http\"; url = \"http://127.0.0.1:1/\"; };
  mail = { type = \"http\"; url = \"http://127.0.0.1:1/\"; };
};"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload,
	    next_attempt_at) SELECT 'billing', 't', '{}',
	    NOW(6) - INTERVAL 30 SECOND FROM seq_1_to_12"
	assert_exit 0 cg outbox pause billing --for 10m --reason "ledger migration"
}
test_expect_success SERVERS 'setup: 12 billing rows 30 s due, billing paused' setup

paused()
{
	assert_exit 0 cg outbox check
	assert_grep '^OUTBOX OK - .* pending=0 due=0 .*oldest_due=0s paused=billing\(since [0-9-]+ [0-9:.]+ by [^ ]+ until [0-9-]+ [0-9:.]+: ledger migration\) paused_pending=12 \|' "$OUT"
	assert_exit 0 cg outbox check --format json
	"$LIB_PY" - "$OUT" <<'PY' || fail "outbox check --format json"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["status"] == "OK", j
assert (j["pending"], j["due"], j["oldest_due_age_seconds"],
        j["paused_pending"]) == (0, 0, 0, 12), j
p = j["paused"][0]
assert p["channel"] == "billing" and p["reason"] == "ledger migration", p
assert p["until"] and p["since"] and p["by"], p
PY
}
test_expect_success SERVERS 'paused: OK, the pause and its rows in the message' paused

others()
{
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload,
	    next_attempt_at) VALUES ('mail', 't', '{}',
	    NOW(6) - INTERVAL 6 SECOND)"
	assert_exit 1 cg outbox check
	assert_grep '^OUTBOX WARNING - .* pending=1 due=1 .*oldest_due=[67]s paused=billing' "$OUT"
}
test_expect_success SERVERS 'a channel not paused still counts' others

resumed()
{
	assert_exit 0 cg outbox resume billing
	assert_exit 2 cg outbox check
	assert_grep '^OUTBOX CRITICAL - .* pending=13 due=13 .*oldest_due=3[0-9]s' "$OUT"
}
test_expect_success SERVERS 'resumed: the backlog pages again' resumed

test_done
