#!/bin/sh
# Slots come from the database clock, never the host's: a "host" whose
# clock runs 5 minutes ahead and one 3 minutes behind (Debian's faketime)
# launched in the same minute as a host with the right time run a
# "* * * * *" job once, and each sees the database's slot.
# Cases: setup; three hosts in one minute.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
command -v faketime > /dev/null || {
	[ "${CI:-}" = true ] && fail "faketime is not installed"
	echo "SKIP: faketime is not installed"
	exit 77
}
# libfaketime is preloaded before the sanitizer's runtime.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS

SLOTS=$TEST_TMP/slots
export SLOTS
# shellcheck disable=SC2034 # cg reads it
CONF=$TEST_TMP/a.conf
setup()
{
	for h in a b c; do
		mkdir -p "$TEST_TMP/run-$h"
		write_config "$TEST_TMP/$h.conf" "runtime_dir = \"$TEST_TMP/run-$h\";
	jobs = { j = { command = [ \"sh\", \"-c\", \"echo \$CRONGUARD_SLOT >> \$SLOTS\" ];
	  schedule = \"* * * * *\"; timezone = \"+00:00\"; }; };"
	done
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: three hosts'"'"' configurations, db migrate' setup

skewed()
{
	local want
	while [ "$(mysql_q "SELECT SECOND(UTC_TIMESTAMP()) BETWEEN 1 AND 40")" != 1 ]; do
		sleep 1
	done
	want=$(mysql_q "SELECT DATE_FORMAT(UTC_TIMESTAMP(), '%Y-%m-%dT%H:%i:00+00:00')")
	assert_exit 0 faketime -f '+5m' "$CRONGUARD_BIN" -c "$TEST_TMP/b.conf" run j
	assert_exit 0 "$CRONGUARD_BIN" -c "$TEST_TMP/a.conf" -v run j
	assert_grep 'event=job_already_done' "$ERR"
	assert_exit 0 faketime -f '-3m' "$CRONGUARD_BIN" -c "$TEST_TMP/c.conf" -v run j
	assert_grep 'event=job_already_done' "$ERR"
	echo "host clocks +5m, 0, -3m: $(wc -l < "$SLOTS") run(s): $(cat "$SLOTS")"
	assert_eq "$want" "$(cat "$SLOTS")" "one run, for the database's slot"
}
test_expect_success 'clocks +5m, 0 and -3m: one run, for the database'"'"'s slot' \
    skewed

test_done
