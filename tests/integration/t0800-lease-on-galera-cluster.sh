#!/bin/sh
# guard = "auto" on a real 3-node Galera cluster (scripts/testenv-galera)
# takes the lease.  Three "hosts", one per node, run the same job in a
# loop: the critical sections never overlap and every run's fencing token
# (CRONGUARD_FENCE) is larger than the previous run's.  Then the node of a
# host holding the lease is SIGKILLed: that host's run ends in lease_lost
# (exit 76), and the job on another node runs after the lease expired by
# the database clock, not before.
#   CRONGUARD_TEST_CLUSTER_SECS: length of the loop (default 30).
# Cases: setup; three hosts in a loop; a fence per run record, a token
# per run; the lease holder's node killed; the next run after the expiry.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
. "$CRONGUARD_SRCDIR/scripts/testenv-galera"
testenv_galera_for_test
SECS=${CRONGUARD_TEST_CLUSTER_SECS:-30}
CS=$TEST_TMP/cs
LOG=$TEST_TMP/sections

# The job: enter the critical section (mkdir fails when another host is
# inside), log its fence, stay a moment, leave.
cat > "$TEST_TMP/job" <<'EOF'
#!/bin/sh
mkdir "$1/cs" 2> /dev/null || echo "OVERLAP $CRONGUARD_FENCE" >> "$1/sections"
echo "start $CRONGUARD_FENCE $2" >> "$1/sections"
sleep "$3"
echo "end $CRONGUARD_FENCE $2" >> "$1/sections"
rmdir "$1/cs"
EOF
chmod +x "$TEST_TMP/job"

# host N: its own configuration, runtime directory (so the local flock
# does not serialise the hosts) and node.
host_config()
{
	local n=$1 port sleep=$2 lease=$3
	eval "port=\$GALERA_PORT$n"
	mkdir -p "$TEST_TMP/run$n"
	cat > "$TEST_TMP/host$n.conf" <<-EOF
	database = { host = "127.0.0.1"; port = $port; user = "root";
	             name = "cg_$$"; connect_timeout = "5s";
	             read_timeout = "5s"; write_timeout = "5s"; };
	runtime_dir = "$TEST_TMP/run$n";
	jobs = {
	  j = { command = [ "$TEST_TMP/job", "$TEST_TMP", "host$n", "$sleep" ];
	        guard = "auto"; heartbeat = "1s"; lease = "$lease";
	        max_runtime = "1m"; };
	};
	EOF
}
hcg() { n=$1; shift; "$CRONGUARD_BIN" -c "$TEST_TMP/host$n.conf" "$@"; }
node_q() { testenv_galera_sql "$1" "$GALERA_DIR" "$2"; }

last_is_host1() { tail -n 1 "$LOG" | grep -q "^start .* host1"; }

setup()
{
	node_q 1 "CREATE DATABASE cg_$$"
	for n in 1 2 3; do host_config "$n" 0.2 3s; done
	assert_exit 0 hcg 1 db migrate
	# Nodes 2 and 3 apply the schema a moment later (cronguard(1), db
	# migrate): a run there before that exits 78.
	for n in 2 3; do testenv_galera_caught_up "$n" "$GALERA_DIR" ||
	    fail "node $n did not catch up"; done
}
test_expect_success 'setup: the database on the cluster, db migrate' setup

# ------------------------------------------------ 1. three hosts, a loop
loop()
{
	local n=$1 end rc
	end=$(($(date +%s) + SECS))
	while [ "$(date +%s)" -lt "$end" ]; do
		rc=0
		hcg "$n" run j 2>> "$TEST_TMP/err$n" || rc=$?
		[ "$rc" -eq 0 ] || echo "host$n exit $rc" >> "$TEST_TMP/bad"
	done
}
three_hosts()
{
	local p1 p2 p3 runs hosts
	loop 1 & p1=$!
	loop 2 & p2=$!
	loop 3 & p3=$!
	wait "$p1" "$p2" "$p3"
	[ ! -e "$TEST_TMP/bad" ] || { cat "$TEST_TMP"/bad "$TEST_TMP"/err*; fail "a run failed"; }
	grep -q OVERLAP "$LOG" && { cat "$LOG"; fail "critical sections overlapped"; }
	runs=$(grep -c '^start' "$LOG")
	hosts=$(awk '$1 == "start" { print $3 }' "$LOG" | sort -u | wc -l)
	echo "runs: $runs on $hosts hosts in ${SECS}s"
	echo "$runs" > "$TEST_TMP/runs"
	[ "$runs" -ge 5 ] || fail "only $runs runs in ${SECS}s"
	# Alternating start/end of one fence, the fences strictly increasing.
	awk '
	$1 == "start" { if (open != "") bad = "start inside " open
	                if ($2 + 0 <= last) bad = "fence " $2 " after " last
	                open = $2; last = $2 + 0 }
	$1 == "end"   { if ($2 != open) bad = "end " $2 " while " open
	                open = "" }
	bad != "" { print NR ": " bad; exit 1 }' "$LOG" ||
	    { cat "$LOG"; fail "sections out of order or fences not increasing"; }
}
test_expect_success 'three hosts in a loop: every run exits 0, no overlap, fences increasing' \
    three_hosts

fences()
{
	local runs
	runs=$(cat "$TEST_TMP/runs")
	# Each run's fence is in its run record; the runs used the lease.
	assert_eq "$runs" "$(node_q 2 "SELECT COUNT(DISTINCT fence) FROM
    cg_$$.cronguard_runs WHERE outcome = 'success'")" "fenced run records"
	# One token per run: neither a busy attempt nor guard "auto"'s first try
	# of the named lock on a Galera node (cronguard_get_lock) took one.
	assert_eq "$runs" "$(node_q 3 "SELECT MAX(fence) FROM cg_$$.cronguard_leases")" \
	    "tokens issued"
}
test_expect_success 'each run'"'"'s fence in its run record, one token per run' fences

# ------------------------------------- 2. the lease holder's node is killed
killed()
{
	local rc1 k1 expires
	for n in 1 2 3; do host_config "$n" 60 4s; done
	mv "$LOG" "$LOG.loop"
	rc1=0
	hcg 1 run j 2> "$TEST_TMP/kill1" & k1=$!
	wait_for 20 last_is_host1
	testenv_galera_kill 1 "$GALERA_DIR"
	wait "$k1" || rc1=$?
	rmdir "$CS" # the killed job's section
	assert_eq 76 "$rc1" "exit of the host on the killed node"
	grep -q 'event=lease_lost' "$TEST_TMP/kill1" ||
	    { cat "$TEST_TMP/kill1"; fail "no lease_lost incident"; }
	# The last expiry the cluster saw; host 2 tries until its job runs.
	expires=$(node_q 2 "SELECT expires_at FROM cg_$$.cronguard_leases")
	echo "$expires" > "$TEST_TMP/expires"
	[ "$expires" != NULL ] || fail "the lease was released, not lost"
}
test_expect_success 'the lease holder'"'"'s node killed: its host exits 76, lease_lost' \
    killed

after_expiry()
{
	local expires end fence1 fence2 started
	expires=$(cat "$TEST_TMP/expires")
	for n in 2 3; do host_config "$n" 0.1 4s; done
	end=$(($(date +%s) + 60))
	until grep -q "^end .* host2" "$LOG"; do
		[ "$(date +%s)" -lt "$end" ] || fail "host2 never ran"
		hcg 2 run j 2>> "$TEST_TMP/err2" || fail "host2 run failed"
		sleep 0.1
	done
	grep -q OVERLAP "$LOG" && { cat "$LOG"; fail "critical sections overlapped"; }
	fence2=$(awk '$1 == "start" && $3 == "host2" { print $2 }' "$LOG")
	fence1=$(awk '$1 == "start" && $3 == "host1" { print $2 }' "$LOG")
	[ "$fence2" -gt "$fence1" ] || fail "fence $fence2 after $fence1"
	started=$(node_q 2 "SELECT started_at FROM cg_$$.cronguard_runs
    WHERE fence = $fence2")
	echo "lease expired at $expires; next run started at $started"
	assert_eq 1 "$(node_q 2 "SELECT TIMESTAMP('$started') >= TIMESTAMP('$expires')")" \
	    "the next run started after the lease expired"
	node_q 2 "DROP DATABASE cg_$$"
}
test_expect_success 'another node'"'"'s host runs after the lease expired by the database clock' \
    after_expiry

test_done
