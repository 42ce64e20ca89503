#!/bin/sh
# The README's first command: scripts/demo runs to its end with the binary
# under test (CRONGUARD_BUILDDIR: nothing to build), starting and stopping
# its own MariaDB, SMTP and HTTP servers.  It exits 0 only when every step
# behaved as it says (an order's rows committed with it and one rolled back
# leaving none, mail and webhooks delivered and a 503 retried, one of two
# "hosts" running the guarded job, the fenced UPDATE of a stale writer
# changing 0 rows, the schedule skipping the second launch), and it leaves no
# server running.  The README's samples of its output are lines it printed.
# Cases: the demo runs to its end; the README's samples are lines it printed.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
[ -x "$CRONGUARD_BUILDDIR/cronguard" ] ||
    fail "no cronguard in CRONGUARD_BUILDDIR ($CRONGUARD_BUILDDIR)"

demo()
{
	local before rc
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
}
test_expect_success 'scripts/demo runs to its end and leaves no server running' \
    demo

# The README's samples of the demo's output (its "[host X]" lines and the
# stale writer's table): each is a line the demo printed, in shape
# (timestamps as T, numbers as N, runs of blanks as one, either host;
# log lines by their event and key names).
samples()
{
	"$LIB_PY" - "$CRONGUARD_SRCDIR/README.md" "$OUT" <<'PY' ||
import re, sys
readme, out = open(sys.argv[1], encoding="utf-8").read(), open(sys.argv[2]).read()
def shape(l):
    # Which host wins the lock varies from run to run.
    l = re.sub(r"^\[host [AB]\]", "[host]", l)
    l = re.sub(r"\d{4}-\d\d-\d\d[T ][\d:.]+(Z|[+-]\d\d:\d\d)?", "T", l)
    l = re.sub(r"\d+", "N", l)
    if "event=" in l:
        l = re.sub(r"=(\"[^\"]*\"|\S+)", "=", l)
    return re.sub(r"\s+", " ", l.strip())
got = {shape(l) for l in out.split("\n")}
blocks, cur = [], None
for l in readme.split("\n"):
    if cur is None and l.lstrip().startswith("```"):
        cur = []
    elif cur is not None and l.strip() == "```":
        blocks.append(cur)
        cur = None
    elif cur is not None:
        cur.append(l.strip())
want = []
for lines in blocks:
    want += [l for l in lines if l.startswith("[host ")]
    if any("rows the stale writer changed" in l for l in lines):
        want += [l for l in lines if l.startswith(("+-", "| "))]
bad = [w for w in want if shape(w) not in got]
for w in bad:
    print("README line not in the demo's output: " + w)
print("%d README lines of the demo's output, %d not printed" % (len(want), len(bad)))
sys.exit(1 if bad or len(want) < 8 else 0)
PY
	    fail "a README sample of the demo's output differs"
}
test_expect_success 'the README'"'"'s samples of the demo'"'"'s output are lines it printed' \
    samples

test_done
