#!/bin/sh
# doctor checks what a first run would trip over, each with its own fix:
# INSERT/UPDATE/DELETE/EXECUTE missing on the schema (a SELECT-only user
# passed doctor, then every run failed), the time zones jobs name (a
# named zone needs the server's tables, an offset does not), a socket path
# that does not exist (fails at once, names Debian's socket), an unknown
# database (doctor and db migrate say CREATE DATABASE), a wrong password.
# Cases: setup; privileges; time zones; a missing socket; an unknown
# database; a wrong password.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
: "${CRONGUARD_SQLDIR:=$CRONGUARD_SRCDIR/sql}"
export CRONGUARD_SQLDIR

jobs='jobs = { berlin = { command = [ "/bin/true" ]; once_per = "1d"; timezone = "Europe/Berlin"; };
  tokyo = { command = [ "/bin/true" ]; once_per = "1d"; timezone = "+09:00"; }; };'

# user CONF-FILE NAME GRANTS: a throwaway database user and a configuration
user()
{
	at_exit "mysql_admin \"DROP USER IF EXISTS '$2'@'%'\""
	mysql_admin "CREATE USER '$2'@'%' IDENTIFIED BY 'pw$$';
	    GRANT $3 ON \`$TEST_DB\`.* TO '$2'@'%'" || fail "cannot create $2"
	printf 'pw%s\n' "$$" > "$TEST_TMP/$2.pw"
	chmod 600 "$TEST_TMP/$2.pw"
	cat > "$1" <<-CONF
	runtime_dir = "$TEST_TMP";
	database = { host = "$CRONGUARD_TEST_DB_HOST"; port = $CRONGUARD_TEST_DB_PORT;
	  user = "$2"; password_file = "$TEST_TMP/$2.pw"; name = "$TEST_DB"; };
	$jobs
	CONF
	chmod 600 "$1"
}

setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\"; $jobs"
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: two jobs, one in a named zone, db migrate' setup

# --- privileges
privileges()
{
	local rc
	user "$TEST_TMP/ro.conf" "cgro$$" "SELECT"
	assert_exit 2 "$CRONGUARD_BIN" -c "$TEST_TMP/ro.conf" doctor
	assert_grep "^CRITICAL privileges: INSERT, UPDATE, DELETE, EXECUTE missing on the schema: without INSERT: run, exec and outbox enqueue exit 77, and outbox dispatch exits 77 after sending, .*; without UPDATE: .*; fix: GRANT INSERT, UPDATE, DELETE, EXECUTE ON $TEST_DB\\.\\* TO the user cgro$$@%" "$OUT"
	user "$TEST_TMP/noexec.conf" "cgnx$$" "SELECT, INSERT, UPDATE, DELETE"
	assert_exit 1 "$CRONGUARD_BIN" -c "$TEST_TMP/noexec.conf" doctor
	assert_grep "^WARNING privileges: EXECUTE missing on the schema: without EXECUTE: nothing fails, but the lock's fencing token costs a second statement .*; fix: GRANT EXECUTE " "$OUT"
	user "$TEST_TMP/rw.conf" "cgrw$$" "SELECT, INSERT, UPDATE, DELETE, EXECUTE"
	rc=0
	"$CRONGUARD_BIN" -c "$TEST_TMP/rw.conf" doctor > "$OUT" 2> "$ERR" || rc=$?
	assert_grep "^OK privileges: SELECT, INSERT, UPDATE, DELETE and EXECUTE on the schema\$" "$OUT"
	rc=0
	cg doctor > "$OUT" 2> "$ERR" || rc=$?
	assert_grep "^OK privileges: " "$OUT"
	echo "$rc" > "$TEST_TMP/doctor.rc"
}
test_expect_success 'doctor names the privileges missing on the schema, with the GRANT' \
    privileges

# --- time zones: an offset always; a name only with the server's tables
zones()
{
	local rc
	rc=$(cat "$TEST_TMP/doctor.rc")
	assert_grep "^OK timezone: job tokyo: the server knows \\+09:00\$" "$OUT"
	if [ "$(mysql_admin "SELECT CONVERT_TZ('2001-01-01', '+00:00', 'UTC') IS NULL")" = 1 ]; then
		assert_eq 2 "$rc" "doctor exit without time-zone tables"
		assert_grep "^CRITICAL timezone: job berlin: the server does not know the time zone Europe/Berlin \\(it has no time-zone tables\\): its first run would exit 78; fix: load the server's time-zone tables: mariadb-tzinfo-to-sql /usr/share/zoneinfo \\| mariadb mysql" "$OUT"
	else
		assert_grep "^OK timezone: job berlin: the server knows Europe/Berlin\$" "$OUT"
	fi
	sed -i 's|timezone = "Europe/Berlin"|timezone = "Nowhere/Atlantis"|' "$CONF"
	assert_exit 2 cg doctor
	assert_grep "^CRITICAL timezone: job berlin: the server does not know the time zone Nowhere/Atlantis" "$OUT"
}
test_expect_success 'doctor: an offset zone always known, a named one only with the tables' \
    zones

# --- a socket that does not exist: at once, naming Debian's socket
no_socket()
{
	local t0
	cat > "$CONF" <<CONF
runtime_dir = "$TEST_TMP";
database = { socket = "$TEST_TMP/no.sock"; connect_retry = "30s";
  user = "$CRONGUARD_TEST_DB_USER"; name = "$TEST_DB"; };
CONF
	t0=$(date +%s)
	assert_exit 3 cg doctor
	[ $(( $(date +%s) - t0 )) -lt 10 ] || fail "a missing socket waited for connect_retry"
	assert_grep "^UNKNOWN database: cannot connect to socket $TEST_TMP/no\\.sock: it does not exist .*/run/mysqld/mysqld\\.sock.*; fix: correct database\\.socket \\(Debian's MariaDB: /run/mysqld/mysqld\\.sock\\)" "$OUT"
}
test_expect_success 'a socket that does not exist: UNKNOWN at once, naming Debian'"'"'s' \
    no_socket

# --- an unknown database: doctor and db migrate say CREATE DATABASE
no_database()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";"
	sed -i "s|^  name = .*|  name = \"nodb_$$\";|" "$CONF"
	assert_exit 3 cg doctor
	assert_grep "^UNKNOWN database: .*Unknown database 'nodb_$$' \\(create it first: CREATE DATABASE \`nodb_$$\` CHARACTER SET utf8mb4\\); fix: create the database first" "$OUT"
	assert_exit 69 cg db migrate
	assert_grep "Unknown database 'nodb_$$' \\(create it first: CREATE DATABASE \`nodb_$$\` CHARACTER SET utf8mb4\\)" "$ERR"
}
test_expect_success 'an unknown database: doctor and db migrate say CREATE DATABASE' \
    no_database

# --- a wrong password
wrong_password()
{
	printf 'wrong\n' > "$TEST_TMP/cgrw$$.pw"
	assert_exit 3 "$CRONGUARD_BIN" -c "$TEST_TMP/rw.conf" doctor
	assert_grep "^UNKNOWN database: .*Access denied for user 'cgrw$$'.*\\(password from $TEST_TMP/cgrw$$\\.pw\\); fix: check database\\.user and its password" "$OUT"
}
test_expect_success 'a wrong password: UNKNOWN naming the password file' \
    wrong_password

test_done
