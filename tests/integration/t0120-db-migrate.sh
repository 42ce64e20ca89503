#!/bin/sh
# db migrate on a fresh database applies every sql/NNN_name.sql in order and
# records it; a second run is a no-op; --dry-run changes nothing; db status
# lists applied and pending; a changed applied file is refused; and
# outbox_messages is exactly cronguard-outbox(7), THE TABLE.
# Cases: a fresh database; migrate; again; THE TABLE; an application's
# insert; a new file; a failing one; a changed one; duplicate versions;
# an empty directory; the Unix socket; TLS modes.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
write_config "$CONF"

SQLDIR=${CRONGUARD_SQLDIR:-$CRONGUARD_SRCDIR/sql}
export CRONGUARD_SQLDIR="$SQLDIR"
migrations()
{
	printf '%s\n' "$SQLDIR"/*.sql | sed 's|.*/||' |
	    grep -E '^[0-9]+_[A-Za-z0-9_-]+\.sql$'
}
nfiles=$(migrations | wc -l)
[ "$nfiles" -ge 2 ] || fail "expected migrations in $SQLDIR"

table_exists()
{
	mysql_q "SELECT COUNT(*) FROM information_schema.TABLES
	    WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '$1'"
}

# --- fresh database: status and dry run change nothing
fresh()
{
	assert_exit 0 cg db status
	assert_grep '^001 +pending +- +001_schema\.sql$' "$OUT"
	assert_grep "^0 applied, $nfiles pending$" "$OUT"
	assert_exit 0 cg db migrate --dry-run
	assert_grep '^would apply 001_schema\.sql$' "$OUT"
	assert_grep '^would apply 002_outbox\.sql$' "$OUT"
	assert_eq "$nfiles" "$(grep -c '^would apply' "$OUT")" "dry-run lines"
	assert_eq 0 "$(table_exists cronguard_schema)" "cronguard_schema after dry run"
	assert_eq 0 "$(table_exists outbox_messages)" "outbox_messages after dry run"
}
test_expect_success 'a fresh database: db status and a dry run change nothing' \
    fresh

# --- migrate applies everything, in order, and records checksums
applied()
{
	assert_exit 0 cg db migrate
	assert_eq "$nfiles" "$(grep -c '^applied ' "$OUT")" "applied lines"
	assert_eq "$(migrations | sort |
	    sed 's/^/applied /')" "$(cat "$OUT")" "applied in order"
	assert_eq "$nfiles" "$(mysql_q 'SELECT COUNT(*) FROM cronguard_schema')"
	assert_eq "schema $(sha256sum "$SQLDIR/001_schema.sql" | cut -c1-64)" \
	    "$(mysql_q 'SELECT name, checksum FROM cronguard_schema WHERE version = 1' |
	    tr '\t' ' ')" "recorded name and checksum"
	assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM cronguard_schema
    WHERE applied_at > UTC_TIMESTAMP(6) + INTERVAL 1 MINUTE
       OR applied_at < UTC_TIMESTAMP(6) - INTERVAL 10 MINUTE")" \
	    "applied_at is UTC from the database clock"
}
test_expect_success 'db migrate applies every file, in order, recording its checksum' \
    applied

# --- again: a no-op, quiet on stdout
again()
{
	assert_exit 0 cg db migrate
	assert_eq "" "$(cat "$OUT")" "second migrate output"
	assert_eq "$nfiles" "$(mysql_q 'SELECT COUNT(*) FROM cronguard_schema')"
	assert_exit 0 cg db migrate --dry-run
	assert_grep '^nothing to apply$' "$OUT"
	assert_exit 0 cg db status
	assert_grep '^001 +applied +[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8} +001_schema\.sql$' "$OUT"
	assert_grep "^$nfiles applied, 0 pending$" "$OUT"
}
test_expect_success 'again: a no-op, quiet on stdout' again

# --- outbox_messages is cronguard-outbox(7), THE TABLE: columns, defaults, keys, engine
# (plus ix_outbox_ordering_status of sql/005 and ix_outbox_ordering_channel
# of sql/011, for the per-key ordering check; expires_at of sql/011;
# the virtual phase and ix_outbox_phase_sent of sql/015, for outbox list
# and outbox purge, in place of sql/014's ix_outbox_status_sent)
the_table()
{
	local cols want keys
	cols=$(mysql_q "SELECT CONCAT_WS('|', COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE,
        IFNULL(LOWER(REPLACE(COLUMN_DEFAULT, '''', '')), '-'), EXTRA)
    FROM information_schema.COLUMNS
    WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'outbox_messages'
    ORDER BY ORDINAL_POSITION")
	want='id|bigint(20) unsigned|NO|-|auto_increment
message_id|char(36)|NO|uuid()|
channel|varchar(64)|NO|-|
event_type|varchar(128)|NO|-|
ordering_key|varchar(191)|YES|null|
payload|longtext|NO|-|
status|enum('"'PENDING','PROCESSING','SENT','FAILED','CANCELLED'"')|NO|pending|
attempts|int(10) unsigned|NO|0|
next_attempt_at|datetime(6)|NO|current_timestamp(6)|
claim_token|char(36)|YES|null|
claimed_by|varchar(255)|YES|null|
claimed_at|datetime(6)|YES|null|
last_error|text|YES|null|
created_at|datetime(6)|NO|current_timestamp(6)|
sent_at|datetime(6)|YES|null|
expires_at|datetime(6)|YES|null|
phase|varchar(10)|YES|null|VIRTUAL GENERATED'
	assert_eq "$want" "$cols" "outbox_messages columns"
	# MariaDB's JSON is LONGTEXT with a JSON_VALID check.
	assert_eq 1 "$(mysql_q "SELECT COUNT(*) FROM information_schema.CHECK_CONSTRAINTS
    WHERE CONSTRAINT_SCHEMA = DATABASE() AND TABLE_NAME = 'outbox_messages'
      AND CHECK_CLAUSE LIKE '%json_valid(\`payload\`)%'")" "payload is JSON"
	keys=$(mysql_q "SELECT CONCAT_WS('|', INDEX_NAME, NON_UNIQUE,
        GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX))
    FROM information_schema.STATISTICS
    WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'outbox_messages'
    GROUP BY INDEX_NAME, NON_UNIQUE ORDER BY INDEX_NAME")
	want='PRIMARY|0|id
ix_outbox_claimed|1|status,claimed_at
ix_outbox_due|1|status,next_attempt_at
ix_outbox_ordering_channel|1|ordering_key,channel,status,id
ix_outbox_ordering_status|1|ordering_key,status,id
ix_outbox_ordering|1|ordering_key,id
ix_outbox_phase_sent|1|phase,sent_at,id
uq_outbox_message_id|0|message_id'
	keys=$(printf '%s\n' "$keys" | LC_ALL=C sort)
	assert_eq "$want" "$keys" "outbox_messages keys"
	assert_eq "InnoDB utf8mb4" "$(mysql_q "SELECT ENGINE, CCSA.CHARACTER_SET_NAME
    FROM information_schema.TABLES T
    JOIN information_schema.COLLATION_CHARACTER_SET_APPLICABILITY CCSA
      ON CCSA.COLLATION_NAME = T.TABLE_COLLATION
    WHERE T.TABLE_SCHEMA = DATABASE() AND T.TABLE_NAME = 'outbox_messages'" |
	    tr '\t' ' ')" "engine and charset"
}
test_expect_success 'outbox_messages is THE TABLE: columns, keys, engine' \
    the_table

# The application's insert from cronguard-outbox(7), THE TABLE works and gets the defaults.
app_insert()
{
	mysql_q "INSERT INTO outbox_messages (channel, event_type, ordering_key, payload)
    VALUES ('mail', 'reservation.confirmed', 'reservation:42',
      JSON_OBJECT('to', JSON_ARRAY('kim@example.com'), 'subject', '예약 확정', 'text', '...'))"
	assert_eq "36 PENDING 0 1 1" "$(mysql_q "SELECT LENGTH(message_id), status,
        attempts, next_attempt_at <= NOW(6), created_at <= NOW(6)
    FROM outbox_messages" | tr '\t' ' ')" "defaults of an application insert"
}
test_expect_success 'the application'"'"'s insert works and gets the defaults' \
    app_insert

# --- a new file is pending, and only it is applied
new_file()
{
	mkdir "$TEST_TMP/sql"
	cp "$SQLDIR"/*.sql "$TEST_TMP/sql/"
	echo "not a migration" > "$TEST_TMP/sql/README"
	printf 'CREATE TABLE t0120_extra (id INT);\nINSERT INTO t0120_extra VALUES (1);\n' \
	    > "$TEST_TMP/sql/900_t0120_extra.sql"
	export CRONGUARD_SQLDIR="$TEST_TMP/sql"
	assert_exit 0 cg db status
	assert_grep '^900 +pending +- +900_t0120_extra\.sql$' "$OUT"
	assert_grep "^$nfiles applied, 1 pending$" "$OUT"
	assert_exit 0 cg db migrate
	assert_eq "applied 900_t0120_extra.sql" "$(cat "$OUT")" "only the new one"
	assert_eq 1 "$(mysql_q 'SELECT COUNT(*) FROM t0120_extra')"
}
test_expect_success 'a new file is pending, and only it is applied' new_file

# --- a failing migration is not recorded and names the file
bad_file()
{
	export CRONGUARD_SQLDIR="$TEST_TMP/sql"
	printf 'CREATE TABLE t0120_bad (id INT);\nSELEC broken;\n' \
	    > "$TEST_TMP/sql/901_t0120_bad.sql"
	assert_exit 70 cg db migrate
	assert_grep '901_t0120_bad\.sql' "$ERR"
	assert_eq 0 "$(mysql_q 'SELECT COUNT(*) FROM cronguard_schema WHERE version = 901')"
	rm "$TEST_TMP/sql/901_t0120_bad.sql"
	mysql_q 'DROP TABLE t0120_bad'
}
test_expect_success 'a migration that errs is not recorded and names its file' \
    bad_file

# --- an applied file that changed is refused, and shown by status
changed_file()
{
	export CRONGUARD_SQLDIR="$TEST_TMP/sql"
	echo "-- edited after it was applied" >> "$TEST_TMP/sql/900_t0120_extra.sql"
	printf 'CREATE TABLE t0120_later (id INT);\n' > "$TEST_TMP/sql/902_t0120_later.sql"
	assert_exit 65 cg db migrate
	assert_grep '900_t0120_extra\.sql was changed after it was applied' "$ERR"
	assert_eq 0 "$(table_exists t0120_later)" "nothing applied past a changed file"
	assert_exit 0 cg db status
	assert_grep '^900 +changed ' "$OUT"
	assert_grep '^902 +pending ' "$OUT"
}
test_expect_success 'an applied file that changed is refused, and shown by status' \
    changed_file

# --- two duplicate versions are an error before touching the database
same_version()
{
	export CRONGUARD_SQLDIR="$TEST_TMP/sql"
	cp "$TEST_TMP/sql/902_t0120_later.sql" "$TEST_TMP/sql/902_t0120_dup.sql"
	assert_exit 70 cg db migrate --dry-run
	assert_grep 'same version' "$ERR"
}
test_expect_success 'two files of one version: an error before touching the database' \
    same_version

# --- an empty migrations directory: every recorded migration is listed
# as without a file (and the empty set is never handed to qsort)
empty_dir()
{
	mkdir "$TEST_TMP/empty"
	export CRONGUARD_SQLDIR="$TEST_TMP/empty"
	assert_exit 0 cg db status
	assert_grep '^001 +missing ' "$OUT"
	assert_grep "^$((nfiles + 1)) applied, 0 pending, $((nfiles + 1)) without a file$" "$OUT"
}
test_expect_success 'an empty directory: every recorded migration is without a file' \
    empty_dir

# --- the same through the server's Unix socket
unix_socket()
{
	local password
	export CRONGUARD_SQLDIR="$SQLDIR"
	if [ -n "${CRONGUARD_TEST_DB_SOCKET:-}" ]; then
		password=
		[ -n "${CRONGUARD_TEST_DB_PASSWORD:-}" ] &&
		    password="password = \"$CRONGUARD_TEST_DB_PASSWORD\";"
		cat > "$CONF" <<-CONF
		database = {
		  socket = "$CRONGUARD_TEST_DB_SOCKET";
		  user = "${CRONGUARD_TEST_DB_USER:-root}";
		  $password
		  name = "$TEST_DB";
		};
		CONF
		assert_exit 0 cg db status
		assert_grep '^002 +applied ' "$OUT"
	fi
}
test_expect_success 'the same through the server'"'"'s Unix socket' unix_socket

# --- TLS modes: "required" never falls back to plain text
tls_conf()
{
	write_config "$CONF"
	sed -i "s|^ *connect_timeout = .*|&\\n  tls = { mode = \"$1\"; };|" "$CONF"
}
tls_modes()
{
	tls_conf disabled
	assert_exit 0 cg db status
	if [ "$(mysql_q 'SELECT @@have_ssl')" = YES ]; then
		tls_conf required
		assert_exit 0 cg db status
	else
		tls_conf preferred
		assert_exit 0 cg db status
		tls_conf required
		assert_exit 69 cg db status
		assert_grep "cannot connect to .*:$CRONGUARD_TEST_DB_PORT: .*(tls|SSL)" "$ERR"
		tls_conf verify_identity
		assert_exit 69 cg db status
	fi
}
test_expect_success 'TLS: "required" never falls back to plain text' tls_modes

test_done
