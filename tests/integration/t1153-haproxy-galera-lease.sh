#!/bin/sh
# HAProxy (TCP mode, balance first) in front of a 3-node Galera cluster
# (scripts/testenv-galera): three "hosts" run a job with guard = "auto"
# (the lease, on Galera) through HAProxy in a loop while the backend in
# use is disabled and its sessions shut down every few seconds, as a
# failed health check does.  The critical sections never overlap, every
# run's token (CRONGUARD_FENCE) is above the one before, and a run whose
# session HAProxy cut ends in lease_lost (76) with its job stopped, never
# beside another run.  Then a dispatcher drains 5,000 messages through
# HAProxy while the backends switch the same way (started again as cron
# would): every message SENT and at the sink (a batch whose session was
# cut after its claim is recovered after the lease), the duplicates
# (sent again after a cut finalise) counted.
#   CRONGUARD_TEST_CLUSTER_SECS: length of the loop (default 20).
# Cases: setup; three hosts through the switches; a stopped run was a
# lost lease; a dispatcher through the switches.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
command -v haproxy > /dev/null 2>&1 || {
	[ "${CI:-}" = true ] && fail "haproxy not installed"
	echo "SKIP: haproxy not installed"; exit 77; }
. "$CRONGUARD_SRCDIR/scripts/testenv-galera"
testenv_galera_for_test
SECS=${CRONGUARD_TEST_CLUSTER_SECS:-20}
LOG=$TEST_TMP/sections
HA_PORT=$("$CRONGUARD_SRCDIR/scripts/free-port")
HA_SOCK=$TEST_TMP/haproxy.sock
cat > "$TEST_TMP/haproxy.cfg" <<EOF
global
	stats socket $HA_SOCK mode 600 level admin
defaults
	mode tcp
	timeout connect 2s
	timeout client 60s
	timeout server 60s
listen galera
	bind 127.0.0.1:$HA_PORT
	balance first
	server n1 127.0.0.1:$GALERA_PORT1 check inter 500ms
	server n2 127.0.0.1:$GALERA_PORT2 check inter 500ms
	server n3 127.0.0.1:$GALERA_PORT3 check inter 500ms
EOF
haproxy -f "$TEST_TMP/haproxy.cfg" -D -p "$TEST_TMP/haproxy.pid" ||
    fail "haproxy did not start"
at_exit "kill \$(cat \"$TEST_TMP/haproxy.pid\") 2> /dev/null"
ha() { echo "$1" | socat stdio "unix-connect:$HA_SOCK"; }

# The job: enter the critical section (mkdir fails when another host is
# inside), log its fence, stay a moment, leave; stopped (lease lost), it
# leaves the section and says so.
cat > "$TEST_TMP/job" <<'EOF'
#!/bin/sh
mkdir "$1/cs" 2> /dev/null || echo "OVERLAP $CRONGUARD_FENCE" >> "$1/sections"
echo "start $CRONGUARD_FENCE $2" >> "$1/sections"
trap 'echo "stopped $CRONGUARD_FENCE $2" >> "$1/sections"; rmdir "$1/cs"; exit 143' TERM
sleep 1.2 & wait $!
echo "end $CRONGUARD_FENCE $2" >> "$1/sections"
rmdir "$1/cs"
EOF
chmod +x "$TEST_TMP/job"
for n in 1 2 3; do
	mkdir -p "$TEST_TMP/run$n"
	cat > "$TEST_TMP/host$n.conf" <<-EOF
	database = { host = "127.0.0.1"; port = $HA_PORT; user = "root";
	             name = "cg_$$"; connect_timeout = "5s";
	             read_timeout = "5s"; write_timeout = "5s"; };
	runtime_dir = "$TEST_TMP/run$n";
	jobs = { j = { command = [ "$TEST_TMP/job", "$TEST_TMP", "host$n" ];
	               guard = "auto"; heartbeat = "500ms"; lease = "3s";
	               max_runtime = "1m"; }; };
	EOF
done
hcg() { n=$1; shift; "$CRONGUARD_BIN" -c "$TEST_TMP/host$n.conf" "$@"; }

setup()
{
	testenv_galera_sql 1 "$GALERA_DIR" "CREATE DATABASE cg_$$"
	assert_exit 0 hcg 1 db migrate
	# The nodes HAProxy did not send it to apply the schema a moment later
	# (cronguard(1), db migrate): a run there before that exits 78.
	for n in 1 2 3; do testenv_galera_caught_up "$n" "$GALERA_DIR" ||
	    fail "node $n did not catch up"; done
}
test_expect_success 'setup: the database on the cluster, db migrate' setup

loop()
{
	local n=$1 end rc
	end=$(($(date +%s) + SECS))
	while [ "$(date +%s)" -lt "$end" ]; do
		rc=0
		hcg "$n" run j 2>> "$TEST_TMP/err$n" || rc=$?
		echo "$rc" >> "$TEST_TMP/exits"
	done
}

switches()
{
	local p1 p2 p3 end cur switches prev runs stopped bad
	loop 1 & p1=$!
	loop 2 & p2=$!
	loop 3 & p3=$!
	# The switches: the backend in use goes away (its sessions cut), the one
	# before comes back.
	end=$(($(date +%s) + SECS - 2))
	cur=1 switches=0
	while [ "$(date +%s)" -lt "$end" ]; do
		sleep 2
		ha "disable server galera/n$cur" > /dev/null
		ha "shutdown sessions server galera/n$cur" > /dev/null
		prev=$cur
		cur=$((cur % 3 + 1))
		sleep 1
		ha "enable server galera/n$prev" > /dev/null
		switches=$((switches + 1))
	done
	wait "$p1" "$p2" "$p3"
	grep -q OVERLAP "$LOG" && { cat "$LOG"; fail "critical sections overlapped"; }
	runs=$(grep -c '^start' "$LOG")
	stopped=$(grep -c '^stopped' "$LOG" || true)
	echo "runs: $runs, stopped by a lost lease: $stopped, backend switches: $switches"
	echo "exit statuses: $(sort "$TEST_TMP/exits" | uniq -c | tr '\n' ' ')"
	[ "$runs" -ge 5 ] || fail "only $runs runs in ${SECS}s"
	bad=$(grep -cvE '^(0|76|69)$' "$TEST_TMP/exits" || true)
	[ "$bad" = 0 ] || { cat "$TEST_TMP"/err*; fail "unexpected exit statuses"; }
	awk '
	$1 == "start" { if (open != "") bad = "start inside " open
	                if ($2 + 0 <= last) bad = "fence " $2 " after " last
	                open = $2; last = $2 + 0 }
	$1 == "end" || $1 == "stopped" {
	                if ($2 != open) bad = $1 " " $2 " while " open
	                open = "" }
	bad != "" { print NR ": " bad; exit 1 }' "$LOG" ||
	    { cat "$LOG"; fail "sections out of order or fences not increasing"; }
	echo "$cur" > "$TEST_TMP/cur"
}
test_expect_success 'three hosts through the switches: no overlap, every fence above the last' \
    switches

# A stopped run was a lost lease, reported as one.
lease_lost()
{
	local stopped
	stopped=$(grep -c '^stopped' "$LOG" || true)
	[ "$stopped" = 0 ] || grep -q 'event=lease_lost' "$TEST_TMP"/err* ||
	    fail "a run was stopped without a lease_lost incident"
}
test_expect_success 'a run stopped by a cut session was a lost lease, reported' \
    lease_lost

# ------------------------------------ 2. a dispatcher through the switches
M=${CRONGUARD_TEST_HAPROXY_MESSAGES:-5000}
unsent() { testenv_galera_sql 1 "$GALERA_DIR" "SELECT COUNT(*) FROM
    cg_$$.outbox_messages WHERE status <> 'SENT'"; }

dispatched()
{
	local cur dp switches prev sent unique total
	cur=$(cat "$TEST_TMP/cur" 2> /dev/null || echo 1)
	# A short lease: a batch claimed just before its session was cut stays
	# PROCESSING until then, and the next pass recovers it.
	printf '%s\n' 'outbox = { batch_size = 50; lease = "10s"; };' \
	    "channels = { hook = { type = \"http\"; url = \"$HTTP_BASE/ok\";" \
	    '    concurrency = 8; timeout = "5s"; }; };' >> "$TEST_TMP/host1.conf"
	testenv_galera_sql 1 "$GALERA_DIR" "INSERT INTO cg_$$.outbox_messages
    (channel, event_type, payload) SELECT 'hook', 't', JSON_OBJECT('n', seq)
    FROM cg_$$.seq_1_to_$M"

	(
		# As cron would: start it again when it gave up (69).
		end=$(($(date +%s) + 120))
		until [ "$(unsent)" = 0 ] || [ "$(date +%s)" -ge "$end" ]; do
			rc=0
			hcg 1 outbox dispatch 2>> "$TEST_TMP/disp.err" || rc=$?
			echo "$rc" >> "$TEST_TMP/disp.exits"
			sleep 1
		done
	) &
	dp=$!
	switches=0
	while kill -0 "$dp" 2> /dev/null && [ "$switches" -lt 30 ]; do
		sleep 1
		ha "disable server galera/n$cur" > /dev/null
		ha "shutdown sessions server galera/n$cur" > /dev/null
		prev=$cur
		cur=$((cur % 3 + 1))
		sleep 0.5
		ha "enable server galera/n$prev" > /dev/null
		switches=$((switches + 1))
	done
	wait "$dp"
	sent=$(testenv_galera_sql 1 "$GALERA_DIR" "SELECT COUNT(*) FROM
    cg_$$.outbox_messages WHERE status = 'SENT'")
	unique=$(http_field headers.webhook-id | sort -u | wc -l)
	total=$(http_count)
	echo "dispatch: $sent SENT, $unique distinct at the sink," \
	    "$((total - unique)) duplicates, $switches switches, exits:" \
	    "$(sort "$TEST_TMP/disp.exits" | uniq -c | tr '\n' ' ')"
	assert_eq "$M" "$sent" "rows SENT"
	assert_eq "$M" "$unique" "distinct messages at the sink"
	testenv_galera_sql 2 "$GALERA_DIR" "DROP DATABASE cg_$$"
}
test_expect_success 'a dispatcher through the switches: every message SENT and at the sink' \
    dispatched

test_done
