#!/bin/sh
# A message whose send timed out after the server took it is sent again on
# retry (at least once): both copies carry the same Message-ID,
# <message_id@cronguard>, and the same Date, so a receiver can dedupe.
# Cases: setup; a send that times out; the retry; the two copies.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
export CRONGUARD_SQLDIR="${CRONGUARD_SQLDIR:-$CRONGUARD_SRCDIR/sql}"
count_is() { [ "$(smtp_count)" = "$1" ]; }
setup()
{
	write_config "$CONF" "channels = { mail = { type = \"smtp\"; url = \"$SMTP_URL\";
	  from = \"noreply@example.com\"; timeout = \"1s\"; }; };"
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: an SMTP channel with a 1 s timeout, db migrate' \
    setup

timed_out()
{
	local ID
	# slow-1500: the server answers DATA after 1.5 s, then stores the message.
	assert_exit 0 cg outbox enqueue --channel mail --type slow --payload \
	    "{\"to\": \"slow-1500@$MAIL_DOMAIN\", \"subject\": \"재시도\", \"text\": \"x\"}"
	ID=$(cut -f2 -d' ' "$OUT")
	assert_exit 0 cg outbox dispatch
	assert_eq "PENDING 1" "$(mysql_q "SELECT status, attempts FROM outbox_messages" | tr '\t' ' ')"
	mysql_q "SELECT last_error FROM outbox_messages" | grep -qi 'timeout\|timed out' ||
	    fail "last_error: $(mysql_q 'SELECT last_error FROM outbox_messages')"
	wait_for 10 count_is 1
	echo "$ID" > "$TEST_TMP/id"
}
test_expect_success 'a send that times out after the server took it: PENDING, one attempt' \
    timed_out

retried()
{
	mysql_q "UPDATE outbox_messages SET next_attempt_at = NOW(6)"
	assert_exit 0 cg outbox dispatch
	assert_eq "PENDING 2" "$(mysql_q "SELECT status, attempts FROM outbox_messages" | tr '\t' ' ')"
	wait_for 10 count_is 2
}
test_expect_success 'the retry sends it again' retried

same_id()
{
	local ID
	ID=$(cat "$TEST_TMP/id")
	smtp_messages > "$TEST_TMP/files"
	"$LIB_PY" - "$TEST_TMP/files" "$ID" <<'PY' || fail "copies differ"
import sys, email
from email import policy
paths = open(sys.argv[1]).read().split()
ms = [email.message_from_bytes(open(p, 'rb').read(), policy=policy.default) for p in paths]
ids = {m['Message-ID'] for m in ms}
dates = {str(m['Date']) for m in ms}
print(ids, dates)
assert ids == {'<%s@cronguard>' % sys.argv[2]}, ids
assert len(dates) == 1, dates
assert all(str(m['Subject']) == '재시도' for m in ms)
PY
}
test_expect_success 'both copies carry the same Message-ID and Date' same_id

test_done
