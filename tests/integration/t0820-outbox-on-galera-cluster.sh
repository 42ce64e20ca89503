#!/bin/sh
# The outbox on a real 3-node Galera cluster (scripts/testenv-galera):
# three dispatchers, one per node, drain 20,000 messages to the HTTP test
# server at once.  Their claims collide (SKIP LOCKED is node-local, so
# two nodes may pick the same rows; certification lets one commit and
# fails the other with 1213): the loser retries with jittered backoff and
# never sends the rows it did not get.  Every message is delivered once
# (counted at the sink by message id), every pass exits 0, and the
# conflicts retried are printed from the passes' summaries.  The channel
# has a daily quota, so every batch also updates the limiter's row, from
# all three nodes: its count ends exactly at the messages sent (a conflict
# is retried, never counted twice).
#   CRONGUARD_TEST_CLUSTER_MESSAGES: how many (default 20000).
# Cases: setup; three dispatchers at once; every row SENT at the first
# attempt, the quota exact; every message at the sink once.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
. "$CRONGUARD_SRCDIR/scripts/testenv-galera"
testenv_galera_for_test
N=${CRONGUARD_TEST_CLUSTER_MESSAGES:-20000}
DB=cg_$$

host_config()
{
	local n=$1 port
	eval "port=\$GALERA_PORT$n"
	cat > "$TEST_TMP/host$n.conf" <<-EOF
	database = { host = "127.0.0.1"; port = $port; user = "root";
	             name = "$DB"; connect_timeout = "5s"; };
	outbox = { batch_size = 100; };
	channels = {
	  hook = { type = "http"; url = "$HTTP_BASE/ok"; concurrency = 16;
	           timeout = "10s"; daily_quota = 1000000; };
	};
	EOF
}
hcg() { n=$1; shift; "$CRONGUARD_BIN" -c "$TEST_TMP/host$n.conf" "$@"; }
node_q() { testenv_galera_sql "$1" "$GALERA_DIR" "$2"; }

synced() { [ "$(node_q "$1" "SELECT COUNT(*) FROM $DB.outbox_messages")" = "$N" ]; }

setup()
{
	node_q 1 "CREATE DATABASE $DB"
	at_exit "testenv_galera_sql 1 \"$GALERA_DIR\" 'DROP DATABASE IF EXISTS $DB'"
	for n in 1 2 3; do host_config "$n"; done
	assert_exit 0 hcg 1 db migrate
	node_q 1 "INSERT INTO $DB.outbox_messages (channel, event_type, payload)
    SELECT 'hook', 'test.event', JSON_OBJECT('n', seq)
    FROM $DB.seq_1_to_$N"
	# Every node has every row before the race starts.
	for n in 2 3; do wait_for 60 synced "$n"; done
}
test_expect_success 'setup: the database on the cluster, the rows on every node' setup

race()
{
	local start pids took conflicts rc line sent c
	start=$(date +%s)
	pids=
	for n in 1 2 3; do
		(
			rc=0
			hcg "$n" -v outbox dispatch 2> "$TEST_TMP/err$n" || rc=$?
			echo "$rc" > "$TEST_TMP/rc$n"
		) &
		pids="$pids $!"
	done
	# Only these: the cluster's servers are children of this shell too.
	# shellcheck disable=SC2086 # a list of pids
	wait $pids
	took=$(($(date +%s) - start))

	conflicts=0
	for n in 1 2 3; do
		rc=$(cat "$TEST_TMP/rc$n")
		[ "$rc" -eq 0 ] || { cat "$TEST_TMP/err$n" >&2; fail "dispatcher $n exited $rc"; }
		line=$(grep 'event=outbox_dispatched' "$TEST_TMP/err$n") ||
		    fail "dispatcher $n printed no summary"
		sent=$(echo "$line" | sed -n 's/.* sent=\([0-9]*\) .*/\1/p')
		c=$(echo "$line" | sed -n 's/.* conflicts=\([0-9]*\) .*/\1/p')
		[ -n "$c" ] || fail "no conflicts= in: $line"
		echo "node $n: sent=$sent conflicts=$c"
		conflicts=$((conflicts + c))
	done
	echo "$N messages by 3 dispatchers on 3 nodes in ${took}s," \
	    "$conflicts conflicts retried"
}
test_expect_success 'three dispatchers on three nodes at once: each exits 0, conflicts retried' \
    race

rows()
{
	assert_eq "$N" "$(node_q 2 "SELECT COUNT(*) FROM $DB.outbox_messages
    WHERE status = 'SENT' AND attempts = 1")" "rows SENT at the first attempt"
	assert_eq "$N" "$(node_q 3 "SELECT quota_used FROM $DB.cronguard_channels
    WHERE name = 'hook'")" "quota used"
}
test_expect_success 'every row SENT at the first attempt, the quota used counts each once' \
    rows

sink()
{
	http_field headers.webhook-id | sort > "$TEST_TMP/got"
	assert_eq "$N" "$(sort -u "$TEST_TMP/got" | wc -l | tr -d ' ')" "ids received"
	assert_eq "" "$(uniq -d "$TEST_TMP/got" | head -n 5)" "ids received twice"
	assert_eq "$N" "$(wc -l < "$TEST_TMP/got" | tr -d ' ')" "requests"
}
test_expect_success 'every message at the sink exactly once' sink

test_done
