#!/bin/sh
# The attempt log costs no round trip (cronguard-outbox(7), ATTEMPT LOG):
# a finalise with attempt rows is one CALL of cronguard_finalise
# (sql/012), so a dispatch makes as many statements with attempt_log =
# "all" as with "none" (the server's Questions counter, on a server of
# our own), and writes one attempt row a message.  Its reply lost after
# the COMMIT (CRONGUARD_FAULT=call_lost, test builds): the dispatcher
# finds it committed on a new session, nothing is sent or logged twice.
# Without the procedure (dropped) the finalise goes statement by
# statement, says so once, and still writes every attempt row.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
! test_have_prereq SERVERS || db_private_start
test_lazy_prereq FAULTS 'grep -q "^#define ENABLE_FAULT_INJECTION 1" "${CRONGUARD_BUILDDIR:-.}/config.h"'

# conf MODE: pipeline 1, so the statements of a dispatch do not depend
# on how the claims and sends overlap.
conf() {
	write_config "$CONF" "
outbox = { attempt_log = \"$1\"; pipeline = 1; batch_size = 100; };
channels = { hook = { type = \"http\"; url = \"$HTTP_BASE/$1\"; }; };"
	sed -i 's/connect_timeout = "5s";/&\n  connect_retry = "30s";/' "$CONF"
}
questions() { mysql_q "SHOW GLOBAL STATUS LIKE 'Questions'" | cut -f2; }

# dispatch MODE: 300 rows through one dispatch; sets STATEMENTS
dispatch() {
	conf "$1"
	mysql_q "DELETE FROM outbox_messages; DELETE FROM outbox_attempts;
	    INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'hook', 't', JSON_OBJECT('i', seq) FROM seq_1_to_300"
	q0=$(questions)
	assert_exit 0 cg -v outbox dispatch
	q1=$(questions)
	STATEMENTS=$((q1 - q0 - 1)) # minus the first SHOW STATUS
	assert_eq 300 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'SENT'")" \
	    "$1: rows SENT"
}

same_statements() {
	conf none
	assert_exit 0 cg db migrate
	dispatch none
	echo "$STATEMENTS" > "$TEST_TMP/none"
	assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM outbox_attempts")" "none: attempt rows"
	dispatch all
	assert_eq "$(cat "$TEST_TMP/none")" "$STATEMENTS" "statements with attempt_log all"
	assert_eq "300 300" "$(mysql_q "SELECT COUNT(*), COUNT(DISTINCT outbox_id) FROM outbox_attempts
	    WHERE outcome = 'SENT'" | tr '\t' ' ')" "all: one SENT attempt row a message"
}
test_expect_success SERVERS 'as many statements with the attempt log as without' same_statements

call_lost() {
	before=$(http_count "/$TEST_ID/all")
	conf all
	mysql_q "DELETE FROM outbox_messages; DELETE FROM outbox_attempts;
	    INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT 'hook', 't', JSON_OBJECT('i', seq) FROM seq_1_to_300"
	CRONGUARD_FAULT=call_lost cg outbox dispatch 2> "$TEST_TMP/f.err" ||
	    { cat "$TEST_TMP/f.err" >&2; fail "call_lost: dispatch failed"; }
	assert_grep 'event=db_reconnected' "$TEST_TMP/f.err"
	assert_eq 300 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'SENT'")" \
	    "call_lost: rows SENT"
	assert_eq "300 300" "$(mysql_q "SELECT COUNT(*), COUNT(DISTINCT outbox_id) FROM outbox_attempts" |
	    tr '\t' ' ')" "call_lost: attempt rows (each once)"
	assert_eq $((before + 300)) "$(http_count "/$TEST_ID/all")" "call_lost: requests (none twice)"
	if grep -q 'event=outbox_lease_lost' "$TEST_TMP/f.err"; then
		fail "call_lost: a committed finalise was taken for a lost lease"
	fi
}
test_expect_success SERVERS,FAULTS 'a reply lost after the COMMIT is found committed' call_lost

no_procedure() {
	mysql_q "DROP PROCEDURE cronguard_finalise"
	dispatch all
	[ "$STATEMENTS" -gt "$(cat "$TEST_TMP/none")" ] ||
	    fail "no procedure: $STATEMENTS statements, not more than $(cat "$TEST_TMP/none")"
	assert_eq 1 "$(grep -c 'event=outbox_finalise_statements' "$ERR")" "warnings without the procedure"
	assert_eq 300 "$(mysql_q "SELECT COUNT(*) FROM outbox_attempts WHERE outcome = 'SENT'")" \
	    "no procedure: attempt rows"
}
test_expect_success SERVERS 'without the procedure: statement by statement, said once' no_procedure

test_done
