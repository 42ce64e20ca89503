#!/bin/sh
# The command line: --help, help COMMAND, COMMAND --help, version, and
# usage errors (exit 64, usage on stderr).  Needs no server.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
cg=${CRONGUARD_BIN:?}

# expect CODE STREAM PATTERN -- ARGS...: cronguard ARGS exits CODE with a
# line matching PATTERN on STREAM; a mismatch is said and counted in
# $fails, and the case goes on, so that it reports every mismatch.
fails=0
expect()
{
	local code=$1 stream=$2 pattern=$3 rc=0 f=$OUT
	shift 4
	"$cg" "$@" > "$OUT" 2> "$ERR" || rc=$?
	[ "$stream" = stderr ] && f=$ERR
	if [ "$rc" -ne "$code" ]; then
		echo "FAIL: cronguard $*: exit $rc, want $code"
		cat "$ERR"
		fails=$((fails + 1))
	elif ! grep -Eq -- "$pattern" "$f"; then
		echo "FAIL: cronguard $*: $stream lacks /$pattern/"
		cat "$f"
		fails=$((fails + 1))
	fi
}

# Each case's body is a function that ends with its count of mismatches.
help_texts()
{
	expect 0 stdout '^usage: cronguard' -- --help
	expect 0 stdout 'outbox dispatch' -- --help
	expect 0 stdout 'usage: .* outbox dispatch \[--for' -- help outbox dispatch
	expect 0 stdout 'usage: .* outbox dispatch' -- outbox dispatch --help
	expect 0 stdout 'usage: .* exec --lock' -- exec --help
	expect 0 stdout 'usage: .* run job \[--slot time\]' -- help run
	[ "$fails" -eq 0 ]
}
test_expect_success 'help: --help, help COMMAND, COMMAND --help' help_texts

version_libraries()
{
	expect 0 stdout '^libmariadb [0-9]' -- version
	expect 0 stdout '^libcurl [0-9]' -- version
	expect 0 stdout '^libconfig [0-9]' -- version
	expect 0 stdout '^jansson [0-9]' -- version
	expect 0 stdout '^OpenSSL [0-9]' -- version
	[ "$fails" -eq 0 ]
}
test_expect_success 'version names the libraries' version_libraries

unknown_commands()
{
	expect 64 stderr "unknown command 'frobnicate'" -- frobnicate
	expect 64 stderr '^usage: cronguard' -- frobnicate
	expect 64 stderr 'needs a subcommand' -- outbox
	expect 64 stderr "outbox: unknown subcommand 'lst'" -- outbox lst
	expect 64 stderr '^usage: cronguard' -- --no-such-option version
	[ "$fails" -eq 0 ]
}
test_expect_success 'unknown commands and subcommands: 64 and the usage' \
    unknown_commands

# One wording for a bad option, global or a command's, then its usage.
bad_options()
{
	expect 64 stderr "^cronguard: unknown option '--no-such-option'$" -- --no-such-option version
	expect 64 stderr "^cronguard: unknown option '-x'$" -- -x version
	expect 64 stderr "^cronguard: option '-c' needs a value$" -- -c
	expect 64 stderr "^cronguard: unknown option '--bogus'$" -- db migrate --bogus
	expect 64 stderr '^usage: .* db migrate \[--dry-run\]$' -- db migrate --bogus
	expect 64 stderr "^cronguard: unknown option '--bogus'$" -- exec --bogus=1 -- true
	expect 64 stderr "^cronguard: unknown option '-z'$" -- exec -z -- true
	expect 64 stderr "^cronguard: option '--lock' needs a value$" -- exec --lock
	expect 64 stderr "^cronguard: unknown option '--bogus'$" -- locks --bogus
	expect 64 stderr "^cronguard: unknown option '--bogus'$" -- run --bogus job
	expect 64 stderr "^cronguard: unknown option '--bogus'$" -- outbox list --bogus
	expect 64 stderr "^cronguard: unknown option '--bogus'$" -- outbox check --bogus
	expect 64 stderr "^cronguard: unknown option '--bogus'$" -- outbox dispatch --bogus
	expect 64 stderr "^cronguard: unknown option '--bogus'$" -- jobs check --bogus
	expect 64 stderr "^cronguard: option '--format' needs a value$" -- jobs check --format
	expect 64 stderr "^cronguard: unknown option '--bogus'$" -- outbox retry --bogus 1
	expect 64 stderr "^cronguard: unknown option '--bogus'$" -- outbox purge --bogus
	expect 64 stderr "^cronguard: unknown option '--bogus'$" -- outbox enqueue --bogus
	expect 64 stderr "^cronguard: unknown option '--bogus'$" -- outbox show --bogus 1
	expect 64 stderr "^cronguard: unknown option '--bogus'$" -- db status --bogus
	expect 64 stderr "^cronguard: unknown option '--bogus'$" -- jobs list --bogus
	expect 64 stderr "^cronguard: unknown option '--bogus'$" -- jobs pause --bogus a
	expect 64 stderr "^cronguard: unknown option '--bogus'$" -- jobs pause a --bogus
	expect 64 stderr "^cronguard: option '--for' needs a value$" -- jobs pause a --for
	expect 64 stderr "^cronguard: unknown option '--bogus'$" -- jobs resume a --bogus
	expect 64 stderr "^cronguard: unknown option '--bogus'$" -- jobs ack a --bogus
	expect 64 stderr "^cronguard: unknown option '--bogus'$" -- config check --bogus
	expect 64 stderr "^cronguard: unknown option '--bogus'$" -- version --bogus
	[ "$fails" -eq 0 ]
}
test_expect_success "one wording for a bad option, global or a command's" \
    bad_options

# Operand counts come from the command table.
operand_counts()
{
	expect 64 stderr "^cronguard: missing argument$" -- run
	expect 64 stderr "^cronguard: unexpected argument 'b'$" -- run a b
	expect 64 stderr "^cronguard: unexpected argument 'x'$" -- locks x
	expect 64 stderr "^cronguard: missing argument$" -- jobs ack
	expect 64 stderr "^cronguard: unexpected argument 'b'$" -- jobs ack a b --reason x
	expect 64 stderr "^cronguard: missing argument$" -- exec --lock l
	expect 64 stderr "^cronguard: unexpected argument 'c'$" -- help a b c
	[ "$fails" -eq 0 ]
}
test_expect_success 'operand counts come from the command table' \
    operand_counts

global_options()
{
	expect 64 stderr 'text or json' -- --log-format xml version
	expect 64 stderr 'exclude' -- -q -v version
	expect 64 stderr 'unknown command' -- help frobnicate
	expect 64 stderr 'usage: .*version' -- version extra
	[ "$fails" -eq 0 ]
}
test_expect_success 'bad global options, help of no command, version with an operand' \
    global_options

# stdout stays empty on usage errors: scripts that parse stdout see nothing
test_expect_success 'a usage error writes nothing to stdout' '
	"$cg" frobnicate > "$OUT" 2> /dev/null || :
	test ! -s "$OUT" || fail "usage error wrote to stdout"
'

test_done
