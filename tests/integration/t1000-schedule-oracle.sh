#!/bin/sh
# The schedule evaluator (src/schedule.c) against an independent
# implementation, Debian's python3-croniter: 12,000 random (expression,
# zone, instant) triples, every macro, Europe/Berlin and America/New_York
# across both transitions of 2026 and 2027.  The rules that excuse a
# mismatch (croniter's DST handling and two of its February errors) are
# at the top of schedule-oracle.py and in cronguard.conf(5), "Schedules";
# any other mismatch fails.  Needs no server.
# Cases: the oracle; the DST cases checked.
. "${CRONGUARD_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"

driver=${CRONGUARD_BUILDDIR:-.}/tests/schedule-oracle
[ -x "$driver" ] || fail "no $driver (make check builds it)"
if ! "$LIB_PY" -c 'import croniter, dateutil' 2> /dev/null; then
	[ "${CI:-}" = true ] && fail "python3-croniter is not installed"
	echo "python3-croniter missing: skipped"
	exit 77
fi
[ -f /usr/share/zoneinfo/Europe/Berlin ] || fail "tzdata is not installed"

oracle()
{
	local rc
	rc=0
	"$LIB_PY" "$CRONGUARD_SRCDIR/tests/integration/schedule-oracle.py" \
	    "$driver" 12000 > "$OUT" 2>&1 || rc=$?
	cat "$OUT"
	[ "$rc" -eq 0 ] || fail "mismatches with croniter (exit $rc)"
	assert_grep '^counts: triples 12000, ' "$OUT"
	assert_grep ' undocumented 0,' "$OUT"
}
test_expect_success '12,000 triples: no mismatch with croniter that is not documented' \
    oracle

# The DST cases were there to be checked.
dst()
{
	local n
	n=$(sed -n 's/.* rule checked \([0-9]*\),.*/\1/p' "$OUT")
	[ "${n:-0}" -ge 1000 ] || fail "only ${n:-0} triples near a transition checked by the rule"
}
test_expect_success 'the triples near a transition were checked by the rule' \
    dst

test_done
