#!/bin/sh
# The README's first command: scripts/demo runs to its end with the binary
# under test (CRONGUARD_BUILDDIR: nothing to build), starting and stopping
# its own MariaDB, SMTP and HTTP servers.  It exits 0 only when every step
# behaved as it says (an order's rows committed with it and one rolled back
# leaving none, mail and webhooks delivered and a 503 retried, one of two
# "hosts" running the guarded job, the fenced UPDATE of a stale writer
# changing 0 rows, the schedule skipping the second launch), and it leaves no
# server running.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
[ -x "$CRONGUARD_BUILDDIR/cronguard" ] ||
    fail "no cronguard in CRONGUARD_BUILDDIR ($CRONGUARD_BUILDDIR)"
before=$(pgrep -c -f 'cgdemo\.' 2>/dev/null || true)
# The demo installs nothing here: scripts/test did.
rc=0
bash "$CRONGUARD_SRCDIR/scripts/demo" > "$OUT" 2> "$ERR" || rc=$?
if [ "$rc" != 0 ]; then
	grep '^!! ' "$OUT" >&2
	tail -n 20 "$ERR" >&2
	fail "scripts/demo exited $rc"
fi
assert_grep 'every step behaved as expected' "$OUT"
assert_grep 'employees updated' "$OUT"
assert_grep 'JOBS OK' "$OUT"
if grep '^!! ' "$OUT" >&2; then
	fail "a demo step reported a failure"
fi
assert_eq "${before:-0}" "$(pgrep -c -f 'cgdemo\.' 2>/dev/null || true)" \
    "demo server processes left running"
echo "PASS: $TEST_NAME"
