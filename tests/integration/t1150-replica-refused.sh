#!/bin/sh
# A configuration pointed at a read-only asynchronous replica
# (scripts/testenv-replica, the user root with SUPER, so read_only alone
# would stop none of its writes) never guards anything there: run and
# exec exit 69 with event=db_read_only naming the replica before the job
# starts; outbox dispatch and db migrate exit 69 and change nothing; the
# replica's GTID position stays the primary's (no errant transaction).
# A replica left writable (read_only off) whose SQL thread runs is
# refused too.  doctor reports the role: primary OK, replica CRITICAL.
# Cases: setup; read_only: every writing command refused; reading
# commands; a writable replica; nothing written; replication runs; doctor.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
. "$CRONGUARD_SRCDIR/scripts/testenv-replica"
testenv_replica_for_test
DB=cg_$$
q() { testenv_replica_sql "$1" "$REPL_DIR" "$2"; }
sync_replica() { testenv_replica_sync "$REPL_DIR" || fail "replica lags"; }

host_config()
{
	mkdir -p "$TEST_TMP/run$1"
	cat > "$TEST_TMP/$1.conf" <<-EOF
	database = { host = "127.0.0.1"; port = $2; user = "root";
	             name = "$DB"; connect_timeout = "5s"; };
	runtime_dir = "$TEST_TMP/run$1";
	channels = { hook = { type = "http"; url = "$HTTP_BASE/hook"; }; };
	jobs = {
	  j = { command = [ "sh", "-c", "echo ran >> $TEST_TMP/ran" ];
	        heartbeat = "1s"; };
	  l = { command = [ "sh", "-c", "echo ran >> $TEST_TMP/ran" ];
	        guard = "lease"; lease = "10s"; heartbeat = "1s"; };
	};
	EOF
}
host_config primary "$PRIMARY_PORT"
host_config replica "$REPLICA_PORT"
p() { "$CRONGUARD_BIN" -c "$TEST_TMP/primary.conf" "$@"; }
r() { "$CRONGUARD_BIN" -c "$TEST_TMP/replica.conf" "$@"; }

refused()
{
	assert_grep "event=db_read_only .*server=127\.0\.0\.1:$REPLICA_PORT .*reason=$1" "$ERR"
}

setup()
{
	q 1 "CREATE DATABASE $DB"
	assert_exit 0 p db migrate
	assert_exit 0 p run j
	assert_exit 0 p outbox enqueue --channel hook --type t --payload '{"n":1}'
	# A run record left running by a cronguard that died: jobs list and jobs
	# check close such records as they go, but not on a replica.
	q 1 "INSERT INTO $DB.cronguard_runs (job, lock_name, host, pid, connection_id)
	    VALUES ('j', 'cronguard:$DB:j', 'gone', 1, 999999)"
	sync_replica
	rm -f "$TEST_TMP/ran"
}
test_expect_success 'setup: db migrate, a run, a row, a dead run record; replicated' \
    setup

pos=$(q 1 "SELECT @@gtid_current_pos")
runs=$(q 2 "SELECT COUNT(*) FROM $DB.cronguard_runs")
leases=$(q 2 "SELECT GROUP_CONCAT(name, '=', fence) FROM $DB.cronguard_leases")

# 1. read_only = 1 (as a replica is run), every writing command.
read_only()
{
	assert_exit 69 r run j
	refused read_only
	assert_exit 69 r run l
	refused read_only
	assert_exit 69 r exec --lock x -- sh -c "echo ran >> $TEST_TMP/ran"
	refused read_only
	assert_exit 69 r outbox dispatch
	refused read_only
	assert_exit 69 r db migrate
	refused read_only
	assert_exit 69 r outbox enqueue --channel hook --type t --payload '{"n":2}'
	refused read_only
}
test_expect_success 'a read-only replica: every writing command exits 69 naming it' \
    read_only

# Commands that only read still work on a replica, and write nothing.
reading()
{
	assert_exit 0 r jobs list
	assert_exit 0 r outbox list
	r jobs check > /dev/null 2>&1 || true
	assert_eq running "$(q 2 "SELECT outcome FROM $DB.cronguard_runs WHERE host = 'gone'")" "the dead run's record on the replica"
}
test_expect_success 'commands that only read work on a replica and write nothing' \
    reading

# 2. A replica left writable: its running SQL thread names it.
writable()
{
	q 2 "SET GLOBAL read_only = 0"
	assert_exit 69 r run j
	refused replica_sql_running
	assert_exit 69 r outbox dispatch
	refused replica_sql_running
	q 2 "SET GLOBAL read_only = 1"
}
test_expect_success 'a writable replica whose SQL thread runs is refused too' \
    writable

nothing()
{
	[ ! -e "$TEST_TMP/ran" ] || fail "a job ran on the replica"
	assert_eq 0 "$(http_count)" "webhooks sent by a dispatcher on the replica"
	assert_eq "$runs" "$(q 2 "SELECT COUNT(*) FROM $DB.cronguard_runs")" "run records on the replica"
	assert_eq "$leases" "$(q 2 "SELECT GROUP_CONCAT(name, '=', fence) FROM $DB.cronguard_leases")" "fencing counters on the replica"
	assert_eq PENDING "$(q 2 "SELECT status FROM $DB.outbox_messages")" "the row on the replica"
	assert_eq PENDING "$(q 1 "SELECT status FROM $DB.outbox_messages")" "the row on the primary"
	# No errant transaction: the replica's GTID position is the primary's,
	# and it logged nothing of its own (server_id 2).
	assert_eq "$pos" "$(q 2 "SELECT @@gtid_current_pos")" "replica's gtid_current_pos"
	assert_eq "$pos" "$(q 1 "SELECT @@gtid_current_pos")" "primary's gtid_current_pos"
	case $(q 2 "SELECT @@gtid_binlog_pos") in
	*-2-*) fail "the replica logged a transaction of its own" ;;
	esac
}
test_expect_success 'nothing ran, was sent or written on the replica; no errant transaction' \
    nothing

# Replication still runs (an errant transaction under gtid_strict_mode
# would stop it at the next conflicting event).
replicating()
{
	assert_exit 0 p run j
	sync_replica
	assert_eq "$(q 1 "SELECT @@gtid_current_pos")" "$(q 2 "SELECT @@gtid_current_pos")" "positions after another run"
}
test_expect_success 'replication still runs' replicating

# 3. doctor: the role.
doctor_role()
{
	p doctor > "$OUT" 2> "$ERR" || true
	assert_grep '^OK role: 127\.0\.0\.1:[0-9]+ is a writable primary' "$OUT"
	assert_exit 2 r doctor
	assert_grep "^CRITICAL role: 127\.0\.0\.1:$REPLICA_PORT is read-only \(read_only,replica_sql_running\), replica of 127\.0\.0\.1:$PRIMARY_PORT \(SQL thread Yes, lag [0-9]+s\)" "$OUT"
}
test_expect_success 'doctor: the primary OK, the replica CRITICAL naming its role' \
    doctor_role

test_done
