#!/bin/sh
# rate = 50 holds across processes: two dispatchers sending for 10 s
# together deliver within 15 % of 50 messages/s (timed at the server), and
# both take part.
# Cases: setup; two dispatchers at the rate; the control without it.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
export CRONGUARD_SQLDIR="${CRONGUARD_SQLDIR:-$CRONGUARD_SRCDIR/sql}"
setup()
{
	write_config "$CONF" "outbox = { batch_size = 20; poll_interval = \"100ms\"; };
	channels = { mail = { type = \"smtp\"; url = \"$SMTP_URL\"; from = \"noreply@example.com\";
	  connections = 4; rate = 50.0; }; };"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'mail', 'rate', JSON_OBJECT('to', CONCAT('u', seq, '@$MAIL_DOMAIN'), 'text', 'x')
	    FROM seq_1_to_600"
}
test_expect_success 'setup: rate 50, 600 messages' setup

rate()
{
	local a b
	cg outbox dispatch --for 10s > "$TEST_TMP/a.out" 2>&1 & a=$!
	cg outbox dispatch --for 10s > "$TEST_TMP/b.out" 2>&1 & b=$!
	wait $a || { cat "$TEST_TMP/a.out"; fail "dispatcher a failed"; }
	wait $b || { cat "$TEST_TMP/b.out"; fail "dispatcher b failed"; }

	assert_eq 2 "$(mysql_q "SELECT COUNT(DISTINCT claimed_by) FROM outbox_messages WHERE status = 'SENT'")" "dispatchers that sent"
	smtp_envelopes > "$TEST_TMP/env"
	"$LIB_PY" - "$TEST_TMP/env" <<'PY' || fail "rate out of bounds"
import json, sys
t = sorted(json.loads(l)["time"] for l in open(sys.argv[1]))
rate = (len(t) - 1) / (t[-1] - t[0])
print("received %d in %.2f s: %.1f/s" % (len(t), t[-1] - t[0], rate))
assert len(t) > 300, len(t)
assert 42.5 <= rate <= 57.5, rate
# no second much faster than the limit anywhere
for i in range(len(t)):
    j = i
    while j < len(t) and t[j] < t[i] + 1.0:
        j += 1
    assert j - i <= 50 * 1.15 + 1, ("burst", j - i, t[i])
PY
}
test_expect_success 'two dispatchers together within 15 % of 50/s, both sending' \
    rate

# The same measurement without `rate` fails the bound: the limit, not the
# machine, held the rate above.
control()
{
	write_config "$CONF" "outbox = { batch_size = 20; };
	channels = { mail = { type = \"smtp\"; url = \"$SMTP_URL\"; from = \"noreply@example.com\";
	  connections = 4; }; };"
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'mail', 'norate', JSON_OBJECT('to', CONCAT('u', seq, '@norate.$MAIL_DOMAIN'), 'text', 'x')
	    FROM seq_1_to_300"
	assert_exit 0 cg outbox dispatch
	smtp_envelopes "@norate.$MAIL_DOMAIN" > "$TEST_TMP/env2"
	"$LIB_PY" - "$TEST_TMP/env2" <<'PY' || fail "unlimited run was not faster than the limit"
import json, sys
t = sorted(json.loads(l)["time"] for l in open(sys.argv[1]))
rate = (len(t) - 1) / (t[-1] - t[0])
print("without rate: %d in %.2f s: %.1f/s" % (len(t), t[-1] - t[0], rate))
assert len(t) == 300 and rate > 57.5, rate
PY
}
test_expect_success 'the control: without rate the bound fails' control

test_done
