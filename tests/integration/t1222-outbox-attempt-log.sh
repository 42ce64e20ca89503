#!/bin/sh
# The attempt log (cronguard-outbox(7), ATTEMPT LOG): a sink that answers
# 503 then 200 gives each message two rows in outbox_attempts, RETRY 503
# then SENT 200, written by the finalise with the dispatcher and claim
# token, listed by outbox show; with attempt_log = "failures" only the
# RETRY row, with "none" no row.  A transport error has no status code.
# outbox purge removes a message's attempts with it.  Cases: setup;
# attempt_log "all", "failures", "none"; a transport error; outbox purge.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

# conf MODE TAG
conf() {
	write_config "$CONF" "
outbox = { attempt_log = \"$1\"; backoff = { initial = \"1ms\"; jitter = 0.0; }; };
channels = {
  hook = { type = \"http\"; url = \"$HTTP_BASE/$2/fail-first=1\"; };
  dead = { type = \"http\"; url = \"http://127.0.0.1:1/\"; timeout = \"2s\"; };
};"
}
test_expect_success SERVERS 'setup: db migrate' '
	conf all a &&
	assert_exit 0 cg db migrate
'

# run TAG: three messages through 503 and 200.
run() {
	mysql_q "DELETE FROM outbox_messages; DELETE FROM outbox_attempts;
	    INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'hook', 't', JSON_OBJECT('i', seq) FROM seq_1_to_3"
	assert_exit 0 cg outbox dispatch
	sleep 0.1
	assert_exit 0 cg outbox dispatch
	assert_eq 3 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'SENT'")" "$1: SENT"
}

mode_all()
{
	local id
	conf all a
	run a
	assert_eq "1 RETRY 503 2 SENT 200" "$(mysql_q "SELECT a.attempt, a.outcome, a.status_code
	    FROM outbox_attempts a JOIN outbox_messages m ON m.id = a.outbox_id
	    WHERE m.id = (SELECT MIN(id) FROM outbox_messages) ORDER BY a.id" | tr '\t\n' '  ' | sed 's/ $//')" "attempts of one message"
	assert_eq 6 "$(mysql_q "SELECT COUNT(*) FROM outbox_attempts")" "attempt rows"
	assert_eq 6 "$(mysql_q "SELECT COUNT(*) FROM outbox_attempts a JOIN outbox_messages m
	    ON m.id = a.outbox_id WHERE a.claim_token IS NOT NULL AND a.dispatcher LIKE '%:%'
	    AND a.started_at <= NOW(6) AND a.started_at > NOW(6) - INTERVAL 1 MINUTE")" "rows with dispatcher, token, time"
	assert_eq 3 "$(mysql_q "SELECT COUNT(*) FROM outbox_attempts WHERE outcome = 'RETRY' AND detail LIKE '%503%'")" "RETRY detail"
	id=$(mysql_q "SELECT MIN(id) FROM outbox_messages")
	assert_exit 0 cg outbox show "$id"
	assert_grep '^attempts logged: 2$' "$OUT"
	assert_grep '^  1 [0-9-]+ [0-9:.]+ [0-9]+ms RETRY 503 [^ ]+:[0-9]+: http 503' "$OUT"
	assert_grep '^  2 [0-9-]+ [0-9:.]+ [0-9]+ms SENT 200 [^ ]+:[0-9]+$' "$OUT"
}
test_expect_success SERVERS 'attempt_log = "all": RETRY 503 then SENT 200, listed by outbox show' \
    mode_all

mode_failures()
{
	conf failures b
	run b
	assert_eq "RETRY 503" "$(mysql_q "SELECT DISTINCT outcome, status_code FROM outbox_attempts" | tr '\t' ' ')" "failures mode"
	assert_eq 3 "$(mysql_q "SELECT COUNT(*) FROM outbox_attempts")" "failures mode rows"
}
test_expect_success SERVERS 'attempt_log = "failures": only the RETRY rows' \
    mode_failures

mode_none()
{
	conf none c
	run c
	assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM outbox_attempts")" "none mode rows"
}
test_expect_success SERVERS 'attempt_log = "none": no row' mode_none

# A transport error: no status code.  A long, invalid UTF-8 answer: the
# detail is cut to 1 KiB and valid.
transport_error()
{
	conf all d
	mysql_q "DELETE FROM outbox_messages"
	assert_exit 0 cg outbox enqueue --channel dead --type t --payload '{"d":1}'
	assert_exit 0 cg outbox dispatch
	assert_eq "RETRY NULL" "$(mysql_q "SELECT outcome, status_code FROM outbox_attempts a
	    JOIN outbox_messages m ON m.id = a.outbox_id WHERE m.channel = 'dead' AND a.attempt = 1" | tr '\t' ' ')" "transport error"
}
test_expect_success SERVERS 'a transport error: no status code' transport_error

# outbox purge takes the attempts along.
purge_takes_attempts()
{
	local before
	conf all d
	mysql_q "UPDATE outbox_messages SET status = 'FAILED'"
	before=$(mysql_q "SELECT COUNT(*) FROM outbox_attempts")
	[ "$before" -gt 0 ] || fail "no attempts to purge"
	assert_exit 0 cg outbox purge --failed-before 0s
	assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM outbox_attempts")" "attempts purged"
}
test_expect_success SERVERS 'outbox purge takes the attempts along' \
    purge_takes_attempts

test_done
