#!/bin/sh
# Failover drill on a primary and its asynchronous replica
# (scripts/testenv-replica; root with SUPER): host A is configured with
# the primary, host B with the replica.  A runs the job (B refuses: a
# replica); then the primary is demoted (read_only = 1), the replica
# catches up and is promoted (STOP SLAVE; RESET SLAVE ALL; read_only =
# 0).  Now A, still pointed at the old primary, refuses with 69
# (db_read_only), B runs, and CRONGUARD_FENCE keeps growing across the
# switch: B's first token is above every token A was given, because the
# counter (cronguard_leases) replicated.  The job's own fenced write (the
# resource keeps the highest token it saw) then refuses A's last token
# on the new primary: 0 rows.  Prints the time from the promotion to the
# first successful guarded run on the new primary.
# Cases: setup; A runs, B refuses; the promotion; A refuses; the tokens;
# an unsynchronised fail-back.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
. "$CRONGUARD_SRCDIR/scripts/testenv-replica"
testenv_replica_for_test
DB=cg_$$
q() { testenv_replica_sql "$1" "$REPL_DIR" "$2"; }
sync_replica() { testenv_replica_sync "$REPL_DIR" || fail "replica lags"; }

# The job: a fenced write to the resource (app_resource, on the server
# the host is configured with), then the token to a log.
cat > "$TEST_TMP/job" <<'EOF'
#!/bin/sh
n=$(mariadb --no-defaults --protocol=tcp -h 127.0.0.1 -P "$2" -uroot -N -B "$3" -e "
  UPDATE app_resource SET fence = $CRONGUARD_FENCE, writer = '$1'
   WHERE id = 1 AND fence < $CRONGUARD_FENCE; SELECT ROW_COUNT()") || exit 3
echo "$1 $CRONGUARD_FENCE $n" >> "$4/fences"
EOF
chmod +x "$TEST_TMP/job"
host_config()
{
	mkdir -p "$TEST_TMP/run$1"
	cat > "$TEST_TMP/$1.conf" <<-EOF
	database = { host = "127.0.0.1"; port = $2; user = "root";
	             name = "$DB"; connect_timeout = "5s"; };
	runtime_dir = "$TEST_TMP/run$1";
	jobs = { j = { command = [ "$TEST_TMP/job", "$1", "$2", "$DB",
	                           "$TEST_TMP" ];
	               heartbeat = "1s"; }; };
	EOF
}
host_config A "$PRIMARY_PORT"
host_config B "$REPLICA_PORT"
a() { "$CRONGUARD_BIN" -c "$TEST_TMP/A.conf" "$@"; }
b() { "$CRONGUARD_BIN" -c "$TEST_TMP/B.conf" "$@"; }
last_a=3

setup()
{
	q 1 "CREATE DATABASE $DB;
	    CREATE TABLE $DB.app_resource (id INT PRIMARY KEY, fence BIGINT UNSIGNED,
	        writer VARCHAR(8));
	    INSERT INTO $DB.app_resource VALUES (1, 0, NULL)"
	assert_exit 0 a db migrate
}
test_expect_success 'setup: the resource on the primary, db migrate' setup

before()
{
	for _ in 1 2 3; do assert_exit 0 a run j; done
	assert_exit 69 b run j
	assert_grep "event=db_read_only .*server=127\.0\.0\.1:$REPLICA_PORT" "$ERR"
	assert_eq "A 1 1 A 2 1 A 3 1" "$(tr '\n' ' ' < "$TEST_TMP/fences" | sed 's/ $//')" "A's runs"
}
test_expect_success 'host A runs on the primary; host B refuses: a replica' \
    before

# The drill: demote, let the replica apply everything, promote.
promoted()
{
	local t0 t1
	q 1 "SET GLOBAL read_only = 1"
	sync_replica
	q 2 "STOP SLAVE; RESET SLAVE ALL; SET GLOBAL read_only = 0"
	t0=$(date +%s%N)
	until b run j > "$OUT" 2> "$ERR"; do
		[ $(( ($(date +%s%N) - t0) / 1000000000 )) -lt 20 ] ||
		    { cat "$ERR"; fail "no run on the new primary within 20 s"; }
		sleep 0.05
	done
	t1=$(date +%s%N)
	echo "failover: promotion to first successful guarded run: $(( (t1 - t0) / 1000000 )) ms"
}
test_expect_success 'demoted, caught up, promoted: host B runs within 20 s' \
    promoted

# The host still pointed at the old primary refuses; nothing was written
# there (its GTID position did not move).
stale_host()
{
	local pos
	pos=$(q 1 "SELECT @@gtid_current_pos")
	assert_exit 69 a run j
	assert_grep "event=db_read_only .*server=127\.0\.0\.1:$PRIMARY_PORT .*reason=read_only" "$ERR"
	assert_eq "$pos" "$(q 1 "SELECT @@gtid_current_pos")" "old primary's GTID position"
}
test_expect_success 'host A, on the old primary, refuses and writes nothing there' \
    stale_host

tokens()
{
	assert_exit 0 b run j
	assert_eq "A 1 1 A 2 1 A 3 1 B 4 1 B 5 1" "$(tr '\n' ' ' < "$TEST_TMP/fences" | sed 's/ $//')" "tokens across the failover"
	assert_eq 5 "$(q 2 "SELECT fence FROM $DB.cronguard_leases WHERE name = 'cronguard:$DB:j'")" "counter on the new primary"
	# The stale host's last token, written on the new primary: refused.
	assert_eq 0 "$(q 2 "UPDATE $DB.app_resource SET fence = $last_a, writer = 'A'
	    WHERE id = 1 AND fence < $last_a; SELECT ROW_COUNT()")" "rows a stale token changed"
	assert_eq "5 B" "$(q 2 "SELECT fence, writer FROM $DB.app_resource" | tr '\t' ' ')" "the resource"
}
test_expect_success 'the tokens grow across the failover; A'"'"'s last one changes 0 rows' \
    tokens

# The window asynchronous replication leaves: fail back to the old
# primary, now a replica of B's server, without letting it catch up.
# B's last token never reached it, so the next token there repeats it;
# the remedy (cronguard(1), REPLICATION AND FAILOVER): raise the counter
# past what the lag could hold before the first run.
back_to_a()
{
	q 1 "SET GLOBAL gtid_slave_pos = @@gtid_current_pos;
	    CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = $REPLICA_PORT,
	        MASTER_USER = 'root', MASTER_USE_GTID = slave_pos,
	        MASTER_CONNECT_RETRY = 1;
	    START SLAVE"
	testenv_replica_sync "$REPL_DIR" 2 1 || fail "the old primary does not replicate"
	q 1 "STOP SLAVE SQL_THREAD"
	assert_exit 0 b run j
	q 2 "SET GLOBAL read_only = 1"
	q 1 "STOP SLAVE; RESET SLAVE ALL; SET GLOBAL read_only = 0"
	assert_exit 0 a run j
	assert_eq "B 6 1 A 6 1" "$(tail -n 2 "$TEST_TMP/fences" | tr '\n' ' ' | sed 's/ $//')" "a token repeated across an unsynchronised failover"
	q 1 "UPDATE $DB.cronguard_leases SET fence = fence + 1000"
	assert_exit 0 a run j
	assert_eq "A 1007 1" "$(tail -n 1 "$TEST_TMP/fences")" "the first token after the operator's remedy"
}
test_expect_success 'a fail-back without catching up repeats a token; raising the counter' \
    back_to_a

test_done
