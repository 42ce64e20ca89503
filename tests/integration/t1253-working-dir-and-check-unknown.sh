#!/bin/sh
# Where a command runs does not matter (cronguard.conf(5), FILES): a
# working directory this user cannot read or enter (cron or runuser
# started in another user's 0700 home) is no error; before, every command
# exited 78 "cannot open the working directory".  And the monitoring
# checks map a configuration they cannot load to UNKNOWN (3) with the
# reason in their own format, inside the Nagios range; before, 78.
# The first case needs root (runuser); the others no server.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

unreadable_cwd()
{
	chmod 711 "$TEST_TMP"
	cp "$CRONGUARD_BIN" "$TEST_TMP/cronguard"
	chmod 755 "$TEST_TMP/cronguard"
	cat > "$TEST_TMP/open.conf" <<-EOF
	database = { host = "127.0.0.1"; user = "app"; name = "app"; };
	jobs = { hello = { command = [ "/bin/true" ]; }; };
	EOF
	chmod 644 "$TEST_TMP/open.conf"
	mkdir -m 700 "$TEST_TMP/private"
	( cd "$TEST_TMP/private" &&
	    runuser -u nobody -- "$TEST_TMP/cronguard" \
	    -c "$TEST_TMP/open.conf" config check ) > "$OUT" 2> "$ERR" ||
	    { cat "$ERR"; fail "config check in an unreadable directory"; }
	assert_grep 'hello' "$OUT"
	( cd "$TEST_TMP/private" &&
	    runuser -u nobody -- "$TEST_TMP/cronguard" \
	    -c "$TEST_TMP/open.conf" jobs list --format json ) > "$OUT" 2> "$ERR" &&
	    fail "jobs list without a server exited 0"
	if grep -q 'working directory' "$ERR"; then
		cat "$ERR"
		fail "jobs list: the working directory"
	fi
}
test_expect_success ROOT 'a working directory nobody may read: no error' unreadable_cwd

check_unknown()
{
	local fmt
	for fmt in nagios json; do
		assert_exit 3 "$CRONGUARD_BIN" -c "$TEST_TMP/none.conf" jobs check --format $fmt
		assert_grep "cannot load the configuration: $TEST_TMP/none\\.conf: No such file or directory" "$OUT"
	done
	# the metrics say the check is down, as for a database down
	assert_exit 3 "$CRONGUARD_BIN" -c "$TEST_TMP/none.conf" jobs check --format prometheus
	assert_grep '^cronguard_jobs_up 0$' "$OUT"
	assert_grep '^cronguard_jobs_check_status 3$' "$OUT"
	assert_exit 3 "$CRONGUARD_BIN" -c "$TEST_TMP/none.conf" jobs check
	assert_grep "^JOBS UNKNOWN - cannot load the configuration: $TEST_TMP/none\\.conf: No such file or directory\$" "$OUT"
	printf 'jobs = { broken = {\n' > "$TEST_TMP/broken.conf"
	chmod 600 "$TEST_TMP/broken.conf"
	assert_exit 3 "$CRONGUARD_BIN" -c "$TEST_TMP/broken.conf" outbox check
	assert_grep "^OUTBOX UNKNOWN - cannot load the configuration: $TEST_TMP/broken\\.conf:[0-9]+: " "$OUT"
	assert_exit 3 "$CRONGUARD_BIN" -c "$TEST_TMP/broken.conf" jobs check --format json
	"$LIB_PY" -c 'import json, sys
d = json.load(open(sys.argv[1])); assert d["status"] == "UNKNOWN", d' "$OUT" ||
	    fail "jobs check json"
	# a command that is not a check still refuses it: 78
	assert_exit 78 "$CRONGUARD_BIN" -c "$TEST_TMP/broken.conf" jobs list
	# and a bad option is still a usage error
	assert_exit 64 "$CRONGUARD_BIN" -c "$TEST_TMP/none.conf" jobs check --format yaml
}
test_expect_success 'a configuration the checks cannot load: UNKNOWN (3)' check_unknown

test_done
