#!/bin/sh
# outbox list --status and outbox purge --sent-before stay flat in the
# history of SENT rows (issue 37): on ix_outbox_phase_sent (sql/015) a
# listing of one status reads the rows it prints (PROCESSING rows, few,
# on ix_outbox_claimed) and a purge and its --dry-run count read the rows
# they delete, not the 20,000 newer SENT rows beside them.  Measured as the server's Handler_read_* counters around the
# command, on a server of this test's own so that no other client moves
# it; doctor EXPLAINs the same statements (history_index).  With the
# index replaced by an unrelated one of its name the same commands read
# the history and doctor warns; with none the listing says to migrate.
# Cases: setup; the listing; the dry-run count; the purge; another index
# of its name; without the index.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
db_private_start

# rows_read: the rows the server's handlers have read (index entries
# and rows, every way: Handler_read_*).
rows_read()
{
	mysql_admin "SHOW GLOBAL STATUS LIKE 'Handler_read%'" |
	    awk '{ n += $2 } END { print n }'
}
# What rows_read itself costs, measured the same way.
r0=$(rows_read)
r1=$(rows_read)
self=$((r1 - r0))

# read_by CMD...: the rows cg CMD reads (its output in $OUT).
read_by()
{
	local before after
	before=$(rows_read)
	cg "$@" > "$OUT" 2> "$ERR" || fail "cg $*: $(cat "$ERR")"
	after=$(rows_read)
	echo $((after - before - self))
}

# history: 5 FAILED rows, 20 PROCESSING, 3,000 PENDING, then 1,000 rows
# SENT 30 days ago, then 20,000 SENT a minute ago, then 1 CANCELLED 30
# days ago: by primary key a listing of the PENDING rows walks past
# 21,000 newer rows, on ix_outbox_due it reads all 3,000 to sort them; a
# listing of the PROCESSING rows walking the OPEN phase would read the
# 3,000 PENDING ones newer than them.  (The listing case
# sends the first old row again, so 999 old SENT rows and the CANCELLED
# one are purged.)
history()
{
	mysql_q "TRUNCATE outbox_messages;
	    INSERT INTO outbox_messages (channel, event_type, payload, status,
	      last_error) SELECT 'hook', 'f', '{}', 'FAILED', 'http 500'
	      FROM seq_1_to_5;
	    INSERT INTO outbox_messages (channel, event_type, payload, status,
	      attempts, claim_token, claimed_by, claimed_at)
	      SELECT 'hook', 'w', '{}', 'PROCESSING', 1, UUID(), 'elsewhere:1',
	      NOW(6) FROM seq_1_to_20;
	    INSERT INTO outbox_messages (channel, event_type, payload)
	      SELECT 'hook', 'p', '{}' FROM seq_1_to_3000;
	    INSERT INTO outbox_messages (channel, event_type, payload, status,
	      attempts, sent_at) SELECT 'hook', 'old', '{}', 'SENT', 1,
	      NOW(6) - INTERVAL 30 DAY + INTERVAL seq SECOND
	      FROM seq_1_to_1000;
	    INSERT INTO outbox_messages (channel, event_type, payload, status,
	      attempts, sent_at) SELECT 'hook', 'new', '{}', 'SENT', 1,
	      NOW(6) - INTERVAL 1 MINUTE FROM seq_1_to_20000;
	    INSERT INTO outbox_messages (channel, event_type, payload, status,
	      claimed_at) VALUES ('hook', 'c', '{}', 'CANCELLED',
	      NOW(6) - INTERVAL 30 DAY);
	    ANALYZE TABLE outbox_messages" > /dev/null
}

test_expect_success SERVERS 'setup: 24,026 rows' '
	write_config "$CONF" "channels = { hook = { type = \"http\"; url = \"http://127.0.0.1:1/\"; }; };" &&
	assert_exit 0 cg db migrate &&
	history
'

test_expect_success SERVERS 'outbox list --status reads the rows it prints' '
	n=$(read_by outbox list --status failed --limit 3) &&
	echo "# outbox list --status failed --limit 3: $n rows read" &&
	[ "$(grep -c " FAILED " "$OUT")" = 3 ] || fail "listing: $(cat "$OUT")"
	[ "$n" -lt 100 ] || fail "outbox list --status failed read $n rows"
	# id order, newest first, for a status other than SENT
	assert_eq "$(mysql_q "SELECT id FROM outbox_messages WHERE status = \"FAILED\"
	    ORDER BY id DESC LIMIT 3" | tr "\n" " ")" \
	    "$(awk "NR > 1 { printf \"%s \", \$1 }" "$OUT")" "FAILED rows newest first" &&
	n=$(read_by outbox list --status pending --limit 50) &&
	echo "# outbox list --status pending --limit 50: $n rows read" &&
	[ "$(grep -c " PENDING " "$OUT")" = 50 ] || fail "listing: $(cat "$OUT")"
	[ "$n" -lt 200 ] || fail "outbox list --status pending read $n rows"
	n=$(read_by outbox list --status processing --limit 5) &&
	echo "# outbox list --status processing --limit 5: $n rows read" &&
	[ "$(grep -c " PROCESSING " "$OUT")" = 5 ] || fail "listing: $(cat "$OUT")"
	[ "$n" -lt 100 ] || fail "outbox list --status processing read $n rows"
	assert_eq "$(mysql_q "SELECT id FROM outbox_messages WHERE status = \"PROCESSING\"
	    ORDER BY id DESC LIMIT 5" | tr "\n" " ")" \
	    "$(awk "NR > 1 { printf \"%s \", \$1 }" "$OUT")" "PROCESSING rows newest first" &&
	# SENT rows: the latest sent first
	old=$(mysql_q "SELECT MIN(id) FROM outbox_messages WHERE event_type = \"old\"") &&
	mysql_q "UPDATE outbox_messages SET sent_at = NOW(6) WHERE id = $old" &&
	n=$(read_by outbox list --status sent --limit 2) &&
	[ "$n" -lt 100 ] || fail "outbox list --status sent read $n rows"
	sed -n 2p "$OUT" | grep -Eq "^$old +SENT " ||
	    fail "the latest sent is not first: $(cat "$OUT")"
	cg doctor > "$OUT" 2> "$ERR" || true
	assert_grep "^OK history_index: outbox list --status and outbox purge --sent-before read their rows on ix_outbox_phase_sent$" "$OUT"
'

test_expect_success SERVERS 'outbox purge --dry-run counts on the index' '
	n=$(read_by outbox purge --sent-before 7d --dry-run) &&
	echo "# outbox purge --sent-before 7d --dry-run: $n rows read" &&
	assert_eq "would delete 1000 SENT or CANCELLED and 0 FAILED messages" "$(cat "$OUT")" "the count" &&
	[ "$n" -lt 3000 ] || fail "the count read $n rows"
'

test_expect_success SERVERS 'outbox purge reads the rows it deletes' '
	n=$(read_by outbox purge --sent-before 7d) &&
	echo "# outbox purge --sent-before 7d: $n rows read" &&
	assert_eq "deleted 1000 SENT or CANCELLED and 0 FAILED messages" "$(cat "$OUT")" "the purge" &&
	[ "$n" -lt 6000 ] || fail "the purge read $n rows" &&
	assert_eq "1 20000" "$(mysql_q "SELECT SUM(event_type IN (\"old\", \"c\")),
	    SUM(event_type = \"new\") FROM outbox_messages" | tr "\t" " ")" "what is left"
'

test_expect_success SERVERS 'on another index of its name they read the history, and doctor warns' '
	history &&
	mysql_q "ALTER TABLE outbox_messages DROP INDEX ix_outbox_phase_sent,
	    ADD KEY ix_outbox_phase_sent (channel, id)" &&
	n=$(read_by outbox list --status pending --limit 50) &&
	echo "# on another index: outbox list --status pending: $n rows read" &&
	[ "$n" -ge 3000 ] || fail "read only $n rows without the index" &&
	n=$(read_by outbox purge --sent-before 7d --dry-run) &&
	echo "# on another index: the dry-run count: $n rows read" &&
	[ "$n" -gt 20000 ] || fail "read only $n rows without the index" &&
	cg doctor > "$OUT" 2> "$ERR" || true
	assert_grep "^WARNING history_index: outbox list --status reads key .*, not ix_outbox_phase_sent; fix: cronguard db migrate \(sql/015_outbox_phase_index.sql" "$OUT"
'

test_expect_success SERVERS 'without the index the listing says to migrate' '
	mysql_q "DROP INDEX ix_outbox_phase_sent ON outbox_messages" &&
	assert_exit 78 cg outbox list --status sent &&
	assert_grep "ix_outbox_phase_sent.*run cronguard db migrate" "$ERR"
'

test_done
