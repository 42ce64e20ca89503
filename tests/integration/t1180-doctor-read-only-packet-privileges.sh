#!/bin/sh
# doctor says what is true (issue 36, item 2), on a MariaDB of its own:
# on a read-only server (read_only=ON, a user with the README's GRANTs)
# the claim's check says the server refuses the claim there, not "run db
# migrate"; max_allowed_packet is checked against each channel's max_size
# (a payload near the packet is refused by the server before max_size
# applies: measured here); each missing privilege is stated with what it
# does, and what doctor states is measured here against a user without it.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

JOBS='jobs = { hello = { command = [ "/bin/true" ]; }; };'
CHANNEL="channels = { hook = { type = \"http\"; url = \"$HTTP_BASE/ok\"; }; };"

# user NAME GRANTS [TEXT]: a throwaway database user and $TEST_TMP/NAME.conf
user()
{
	at_exit "mysql_admin \"DROP USER IF EXISTS '$1'@'%'\""
	mysql_admin "CREATE USER '$1'@'%' IDENTIFIED BY 'pw$$';
	    GRANT $2 ON \`$TEST_DB\`.* TO '$1'@'%'" || fail "cannot create $1"
	printf 'pw%s\n' "$$" > "$TEST_TMP/$1.pw"
	chmod 600 "$TEST_TMP/$1.pw"
	cat > "$TEST_TMP/$1.conf" <<-CONF
	runtime_dir = "$TEST_TMP";
	database = { host = "$CRONGUARD_TEST_DB_HOST"; port = $CRONGUARD_TEST_DB_PORT;
	  user = "$1"; password_file = "$TEST_TMP/$1.pw"; name = "$TEST_DB"; };
	$JOBS
	$CHANNEL
	${3:-}
	CONF
	chmod 600 "$TEST_TMP/$1.conf"
}
as() { n=$1; shift; "$CRONGUARD_BIN" -c "$TEST_TMP/$n.conf" "$@"; }

# A server of its own: the cases set read_only and max_allowed_packet.
if test_have_prereq SERVERS; then
	db_private_start
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\"; $JOBS $CHANNEL"
	assert_exit 0 cg db migrate
fi

test_expect_success SERVERS 'read-only: the claim is not checked, and no migration is suggested' '
	user cgro$$ "SELECT, INSERT, UPDATE, DELETE, EXECUTE" &&
	mysql_admin "SET GLOBAL read_only = ON" &&
	rc=0 && { as cgro$$ doctor > "$OUT" 2> "$ERR" || rc=$?; } &&
	mysql_admin "SET GLOBAL read_only = OFF" &&
	cat "$OUT" &&
	assert_eq 2 "$rc" "doctor on a read-only server" &&
	assert_grep "^DOCTOR CRITICAL - role: .* is read-only" "$OUT" &&
	assert_grep "^CRITICAL claim_index: not checked: the server takes no writes from this user, .*refused here .*read-only.*; fix: point database.host at the writable primary" "$OUT" &&
	! grep "^CRITICAL claim_index" "$OUT" | grep -q "db migrate" ||
	    fail "claim_index suggests a migration on a read-only server"
'

test_expect_success SERVERS 'max_allowed_packet against max_size, as measured' '
	mysql_admin "SET GLOBAL max_allowed_packet = 1048576" &&
	user cgpk$$ "SELECT, INSERT, UPDATE, DELETE, EXECUTE" &&
	rc=0 && { as cgpk$$ doctor > "$OUT" 2> "$ERR" || rc=$?; } &&
	assert_grep "^WARNING max_allowed_packet: channel hook: max_size 10485760 is not below max_allowed_packet 1048576: a payload near 1048576 bytes cannot be enqueued" "$OUT" &&
	"$LIB_PY" -c "import sys; sys.stdout.write(\"{\\\"a\\\":\\\"\" + \"x\" * 1100000 + \"\\\"}\")" \
	    > "$TEST_TMP/big.json" &&
	rc=0 &&
	{ as cgpk$$ outbox enqueue --channel hook --type big \
	    --payload-file "$TEST_TMP/big.json" > "$OUT" 2> "$ERR" || rc=$?; } &&
	cat "$ERR" &&
	[ "$rc" -ne 0 ] || fail "a payload over max_allowed_packet was enqueued"
	assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages")" "rows enqueued" &&
	user cgpk2$$ "SELECT, INSERT, UPDATE, DELETE, EXECUTE" &&
	sed -i "s|url = \"$HTTP_BASE/ok\"; };|url = \"$HTTP_BASE/ok\"; max_size = 500000; };|" \
	    "$TEST_TMP/cgpk2$$.conf" &&
	rc=0 && { as cgpk2$$ doctor > "$OUT" 2> "$ERR" || rc=$?; } &&
	assert_grep "^OK max_allowed_packet: max_allowed_packet 1048576: every job.s output_max fits a run record, every channel.s max_size a payload" "$OUT"
	mysql_admin "SET GLOBAL max_allowed_packet = 16777216"
'

# measure USER CMD...: the exit status of CMD as USER, and its stderr.
measure()
{
	n=$1
	shift
	rc=0
	as "$n" "$@" > "$OUT" 2> "$ERR" < /dev/null || rc=$?
	echo "without $n: $* exited $rc"
}

# one_row: the outbox holds one new PENDING row, due now.
one_row()
{
	mysql_q "DELETE FROM outbox_messages; INSERT INTO outbox_messages
	    (channel, event_type, payload) VALUES ('hook', 't', '{}')"
}

test_expect_success SERVERS 'each missing privilege does what doctor says' '
	for p in SELECT INSERT UPDATE DELETE EXECUTE; do
		g=$(echo SELECT INSERT UPDATE DELETE EXECUTE | tr " " "\n" |
		    grep -vx "$p" | paste -sd, | sed "s/,/, /g")
		user "$p$$" "$g" "outbox = { keep_sent = false; };" || exit 1
	done
	one_row &&
	rc=0 && { as SELECT$$ doctor > "$OUT" || rc=$?; } &&
	assert_grep "^CRITICAL privileges: SELECT missing on the schema: without SELECT: run, exec, outbox dispatch and jobs list exit 77, jobs check and outbox check say UNKNOWN" "$OUT" &&
	measure SELECT$$ run hello && assert_eq 77 "$rc" &&
	measure SELECT$$ exec --lock x -- true && assert_eq 77 "$rc" &&
	measure SELECT$$ outbox dispatch && assert_eq 77 "$rc" &&
	measure SELECT$$ jobs list && assert_eq 77 "$rc" &&
	measure SELECT$$ jobs check && assert_eq 3 "$rc" &&
	measure SELECT$$ outbox check && assert_eq 3 "$rc" &&
	rc=0 && { as INSERT$$ doctor > "$OUT" || rc=$?; } &&
	assert_grep "^CRITICAL privileges: INSERT missing on the schema: without INSERT: run, exec and outbox enqueue exit 77, and outbox dispatch exits 77 after sending, leaving its rows PROCESSING to be sent again after the lease" "$OUT" &&
	measure INSERT$$ run hello && assert_eq 77 "$rc" &&
	measure INSERT$$ exec --lock x -- true && assert_eq 77 "$rc" &&
	one_row && sent=$(http_count) &&
	measure INSERT$$ outbox dispatch && assert_eq 77 "$rc" &&
	assert_eq $((sent + 1)) "$(http_count)" "webhooks sent" &&
	assert_eq PROCESSING "$(mysql_q "SELECT status FROM outbox_messages")" "the row after it" &&
	measure INSERT$$ outbox enqueue --channel hook --type t --payload "{}" &&
	assert_eq 77 "$rc" &&
	rc=0 && { as UPDATE$$ doctor > "$OUT" || rc=$?; } &&
	assert_grep "^CRITICAL privileges: UPDATE missing on the schema: without UPDATE: run, exec and outbox dispatch exit 77" "$OUT" &&
	measure UPDATE$$ run hello && assert_eq 77 "$rc" &&
	measure UPDATE$$ exec --lock x -- true && assert_eq 77 "$rc" &&
	one_row && sent=$(http_count) &&
	measure UPDATE$$ outbox dispatch && assert_eq 77 "$rc" &&
	assert_eq "$sent" "$(http_count)" "webhooks sent" &&
	rc=0 && { as DELETE$$ doctor > "$OUT" || rc=$?; } &&
	assert_grep "^CRITICAL privileges: DELETE missing on the schema: without DELETE: outbox dispatch exits 77 after sending, leaving its rows PROCESSING .*old runs are not pruned \\(runs_prune_failed\\), jobs purge and outbox resume exit 77" "$OUT" &&
	one_row && sent=$(http_count) &&
	measure DELETE$$ outbox dispatch && assert_eq 77 "$rc" &&
	assert_eq $((sent + 1)) "$(http_count)" "webhooks sent" &&
	assert_eq PROCESSING "$(mysql_q "SELECT status FROM outbox_messages")" "the row after it" &&
	measure DELETE$$ run hello && assert_eq 0 "$rc" &&
	assert_grep "event=runs_prune_failed" "$ERR" &&
	measure DELETE$$ jobs purge --before 1d && assert_eq 77 "$rc" &&
	measure DELETE$$ outbox resume hook && assert_eq 77 "$rc" &&
	sed -i "/keep_sent = false/d" "$TEST_TMP/DELETE$$.conf" &&
	rc=0 && { as DELETE$$ doctor > "$OUT" || rc=$?; } &&
	assert_grep "^WARNING privileges: DELETE missing on the schema: without DELETE: old runs are not pruned" "$OUT" &&
	rc=0 && { as EXECUTE$$ doctor > "$OUT" || rc=$?; } &&
	assert_grep "^WARNING privileges: EXECUTE missing on the schema: without EXECUTE: nothing fails, but the lock.s fencing token costs a second statement \\(lock_fence_extra_statement\\)" "$OUT" &&
	measure EXECUTE$$ exec --lock x -- true && assert_eq 0 "$rc" &&
	assert_grep "event=lock_fence_extra_statement" "$ERR" &&
	one_row &&
	measure EXECUTE$$ outbox dispatch && assert_eq 0 "$rc" &&
	assert_grep "event=outbox_finalise_statements" "$ERR"
'

test_done
