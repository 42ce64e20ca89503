#!/bin/sh
# locks shows every lock cronguard holds, from its run records: the
# configured jobs' locks and those of `exec --lock NAME`, which no
# configuration names.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = { nightly = { command = [ \"true\" ]; lock = \"t0383:nightly\"; }; };"
assert_exit 0 cg db migrate

"$CRONGUARD_BIN" -c "$CONF" exec --lock t0383:reindex -- \
    sh -c "echo \$\$ > $TEST_TMP/job.pid; exec sleep 30" 2> "$TEST_TMP/exec.err" &
exec_pid=$!
at_exit "[ -s $TEST_TMP/job.pid ] && kill \$(cat $TEST_TMP/job.pid) 2>/dev/null; kill $exec_pid 2>/dev/null"
wait_for 10 test -s "$TEST_TMP/job.pid"
run_id=$(mysql_q "SELECT id FROM cronguard_runs WHERE lock_name = 't0383:reindex'")

assert_exit 0 cg locks
assert_grep '^LOCK +JOB +STATE +FENCE +HOLDER$' "$OUT"
assert_grep '^t0383:nightly +nightly +free +- +-$' "$OUT"
assert_grep "^t0383:reindex +t0383:reindex +held +[0-9]+ +connection [0-9]+, run $run_id on [^ ]+ pid [0-9]+.*, since " "$OUT"

# Finished: the exec lock is gone from the list, the configured one stays.
kill "$(cat "$TEST_TMP/job.pid")"
wait "$exec_pid" 2>/dev/null || true
assert_exit 0 cg locks
assert_grep '^t0383:nightly +nightly +free +- +-$' "$OUT"
grep -q 't0383:reindex' "$OUT" && fail "a released exec lock is still listed: $(cat "$OUT")"
echo "PASS: $TEST_NAME"
