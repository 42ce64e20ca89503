#!/bin/sh
# SIGHUP (an operator's ssh session dropping during dispatch --for) stops
# the dispatcher as SIGTERM does: t0460 with SIGHUP in place of SIGTERM,
# its named cases (test_expect_success) run as they are.
STOP_SIGNAL=HUP
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/t0460-outbox-sigterm-releases-claims.sh"
