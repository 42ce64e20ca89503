#!/bin/sh
# The default outbox.pipeline is 3; every other outbox test runs at it.
# This one reruns the crash, fencing, SIGTERM/SIGHUP, ordering and
# four-dispatcher and hot-key tests at pipeline = 1 (the serial path: claim, send,
# finalise in turn on one connection), through lib.sh's
# CRONGUARD_TEST_PIPELINE, so both paths keep those guarantees.
# Cases: one a test rerun.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
dir=$CRONGUARD_SRCDIR/tests/integration
# at_pipeline_1 TEST: TEST at pipeline = 1 exits 0.
at_pipeline_1()
{
	local t=$1 rc
	echo "=== $t at pipeline = 1"
	rc=0
	CRONGUARD_TEST_PIPELINE=1 sh "$dir/$t.sh" || rc=$?
	assert_eq 0 "$rc" "$t at pipeline = 1: exit status"
}
for t in t0420-outbox-killed-dispatcher-recovered t0421-outbox-lease-fencing \
    t0422-outbox-sends-start-within-lease t0440-outbox-per-key-ordering \
    t0460-outbox-sigterm-releases-claims t0461-outbox-sighup-releases-claims \
    t0401-outbox-four-dispatchers t1126-outbox-hot-key-runs; do
	test_expect_success "$t at pipeline = 1" "at_pipeline_1 $t"
done

test_done
