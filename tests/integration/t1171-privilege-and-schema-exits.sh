#!/bin/sh
# Distinct failures, distinct exit codes (cronguard(1), EXIT STATUS): a
# statement the server refuses for want of a privilege exits 77 naming the
# privilege and the table; a schema behind the binary (a cronguard table or
# column the server does not know) exits 78 with "run cronguard db
# migrate"; jobs check and outbox check say UNKNOWN naming the pending
# migrations; an unreachable server stays 69.
# Cases: setup; a SELECT-only user; the schema behind; migrations pending;
# an SQL job's own missing table; an unreachable server.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
RO=cg1171_$$

setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = { hello = { command = [ \"/bin/true\" ]; }; };"
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: one job, db migrate' setup

# --- a SELECT-only user: run exits 77, naming the privilege and the table
select_only()
{
	at_exit "mysql_admin \"DROP USER IF EXISTS '$RO'@'%'\""
	mysql_admin "CREATE USER '$RO'@'%' IDENTIFIED BY 'pw$$';
	    GRANT SELECT ON \`$TEST_DB\`.* TO '$RO'@'%'" || fail "cannot create $RO"
	printf 'pw%s\n' "$$" > "$TEST_TMP/ro.password"
	chmod 600 "$TEST_TMP/ro.password"
	cat > "$TEST_TMP/ro.conf" <<CONF
runtime_dir = "$TEST_TMP";
database = { host = "$CRONGUARD_TEST_DB_HOST"; port = $CRONGUARD_TEST_DB_PORT;
  user = "$RO"; password_file = "$TEST_TMP/ro.password"; name = "$TEST_DB"; };
jobs = { hello = { command = [ "/bin/true" ]; }; };
CONF
	chmod 600 "$TEST_TMP/ro.conf"
	assert_exit 77 "$CRONGUARD_BIN" -c "$TEST_TMP/ro.conf" run hello
	assert_grep "(INSERT|UPDATE) command denied to user '$RO'.* for table .*cronguard_" "$ERR"
	assert_exit 77 "$CRONGUARD_BIN" -c "$TEST_TMP/ro.conf" outbox enqueue \
	    --channel x --type t --payload '{}'
	assert_grep "INSERT command denied to user '$RO'.* for table .*outbox_messages" "$ERR"
	# Reading is allowed: the checks work
	assert_exit 0 "$CRONGUARD_BIN" -c "$TEST_TMP/ro.conf" outbox check
}
test_expect_success 'a SELECT-only user: exit 77 naming the privilege and the table' \
    select_only

# --- the schema behind the binary: 78 and "run cronguard db migrate"
schema_behind()
{
	mysql_q "ALTER TABLE cronguard_runs DROP COLUMN fence"
	assert_exit 78 cg run hello
	assert_grep "Unknown column .*fence.* \\(the schema is behind this cronguard: run cronguard db migrate\\)" "$ERR"
	mysql_q "DROP DATABASE \`$TEST_DB\`; CREATE DATABASE \`$TEST_DB\`"
	assert_exit 78 cg outbox enqueue --channel x --type t --payload '{}'
	assert_grep "outbox_messages' doesn't exist \\(the schema is behind this cronguard: run cronguard db migrate\\)" "$ERR"
}
test_expect_success 'a column or table the server lacks: exit 78, run db migrate' \
    schema_behind

# --- migrations pending: the checks are UNKNOWN and say why
pending()
{
	assert_exit 3 cg jobs check
	assert_grep "UNKNOWN.*[0-9]+ migration\\(s\\) pending: run cronguard db migrate" "$OUT"
	assert_exit 3 cg outbox check
	assert_grep "^OUTBOX UNKNOWN - [0-9]+ migration\\(s\\) pending: run cronguard db migrate" "$OUT"
	assert_exit 0 cg db migrate
	assert_exit 0 cg jobs check
	assert_exit 0 cg outbox check
}
test_expect_success 'migrations pending: the checks say UNKNOWN and why' pending

# --- an SQL job's own missing table is the job's error, not the schema's
own_table()
{
	local rc
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = { bad = { sql = \"SELECT * FROM no_such_table_of_the_app\"; }; };"
	rc=0
	cg run bad > "$OUT" 2> "$ERR" || rc=$?
	case $rc in 77|78) fail "an SQL job's own error exited $rc" ;; esac
}
test_expect_success 'an SQL job'"'"'s own missing table is not exit 77 or 78' \
    own_table

# --- unreachable stays 69
unreachable()
{
	local closed
	closed=$("$LIB_PY" -c 'import socket; s = socket.socket()
s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
	sed -i "s|^  port = .*|  port = $closed;|" "$CONF"
	sed -i "s|^database = {|database = { connect_retry = \"0s\";|" "$CONF"
	assert_exit 69 cg outbox enqueue --channel x --type t --payload '{}'
}
test_expect_success 'an unreachable server: exit 69' unreachable

test_done
