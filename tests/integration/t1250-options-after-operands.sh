#!/bin/sh
# Every command takes its options before or after its operands
# (cronguard(1), COMMANDS): jobs runs JOB --limit 5, jobs check JOB
# --format json, outbox list --limit 5 --format json; "--" still ends the
# options, and exec keeps its command line whole.
# Servers: MariaDB.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
channels = { hook = { type = \"http\"; url = \"http://127.0.0.1:1/\"; }; };
jobs = { hello = { command = [ \"true\" ]; }; };"
	CRONGUARD_SQLDIR="${CRONGUARD_SQLDIR:-$CRONGUARD_SRCDIR/sql}" \
	    assert_exit 0 cg db migrate
	for _ in 1 2 3 4 5 6 7; do assert_exit 0 cg run hello; done
	for _ in 1 2 3 4 5 6 7; do
		assert_exit 0 cg outbox enqueue --channel hook --type t \
		    --payload '{}'
	done
}
test_expect_success SERVERS 'setup: seven runs, seven rows' setup

after()
{
	assert_exit 0 cg jobs runs hello --limit 5
	assert_eq 6 "$(wc -l < "$OUT" | tr -d ' ')" "header and five runs"
	assert_exit 0 cg jobs check hello --format json
	/usr/bin/python3 -c 'import json, sys; json.load(open(sys.argv[1]))' \
	    "$OUT" || fail "jobs check json: $(cat "$OUT")"
	assert_exit 0 cg outbox list --limit 5 --format json
	assert_eq 5 "$(/usr/bin/python3 -c 'import json, sys
print(len(json.load(open(sys.argv[1]))))' "$OUT")" "rows listed"
	# between operands, and the same under POSIXLY_CORRECT
	POSIXLY_CORRECT=1 assert_exit 0 cg jobs runs --limit 2 hello \
	    --format json
	assert_eq 2 "$(/usr/bin/python3 -c 'import json, sys
print(len(json.load(open(sys.argv[1]))))' "$OUT")" "runs listed"
}
test_expect_success SERVERS 'options after the operands' after

ends()
{
	# after "--" an option is an operand: a job of that name has no runs
	assert_exit 0 cg jobs runs -- --limit
	assert_eq 1 "$(wc -l < "$OUT" | tr -d ' ')" "the header alone"
	# exec: what follows the command is the command's
	assert_exit 0 cg exec --lock "t1250:$TEST_ID" sh -c 'test "$1" = --timeout' sh --timeout
}
test_expect_success SERVERS '"--" ends the options; exec keeps its command line' ends

test_done
