#!/bin/sh
# The command line: --help, help COMMAND, COMMAND --help, version, and
# usage errors (exit 64, usage on stderr).  Needs no server.
set -u
cg=${CRONGUARD_BIN:?}
fails=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

# expect CODE STREAM PATTERN -- ARGS...: exit code and a pattern on a stream
expect() {
	code=$1 stream=$2 pattern=$3
	shift 4
	"$cg" "$@" >"$out" 2>"$err"
	rc=$?
	f=$out
	[ "$stream" = stderr ] && f=$err
	if [ "$rc" -ne "$code" ]; then
		echo "FAIL: cronguard $*: exit $rc, want $code"
		cat "$err"
		fails=$((fails + 1))
	elif ! grep -Eq -- "$pattern" "$f"; then
		echo "FAIL: cronguard $*: $stream lacks /$pattern/"
		cat "$f"
		fails=$((fails + 1))
	fi
}

expect 0 stdout '^usage: cronguard' -- --help
expect 0 stdout 'outbox dispatch' -- --help
expect 0 stdout 'usage: .* outbox dispatch \[--for' -- help outbox dispatch
expect 0 stdout 'usage: .* outbox dispatch' -- outbox dispatch --help
expect 0 stdout 'usage: .* exec --lock' -- exec --help
expect 0 stdout 'usage: .* run job' -- help run
expect 0 stdout '^libmariadb [0-9]' -- version
expect 0 stdout '^libcurl [0-9]' -- version
expect 0 stdout '^libconfig [0-9]' -- version
expect 0 stdout '^jansson [0-9]' -- version
expect 0 stdout '^OpenSSL [0-9]' -- version
expect 64 stderr "unknown command 'frobnicate'" -- frobnicate
expect 64 stderr '^usage: cronguard' -- frobnicate
expect 64 stderr 'needs a subcommand' -- outbox
expect 64 stderr '^usage: cronguard' -- --no-such-option version
expect 64 stderr 'text or json' -- --log-format xml version
expect 64 stderr 'exclude' -- -q -v version
expect 64 stderr 'unknown command' -- help frobnicate
expect 64 stderr 'usage: .*version' -- version extra
# stdout stays empty on usage errors: scripts that parse stdout see nothing
"$cg" frobnicate >"$out" 2>/dev/null
if [ -s "$out" ]; then
	echo "FAIL: usage error wrote to stdout"
	fails=$((fails + 1))
fi
[ "$fails" -eq 0 ] && echo "ok: command line"
exit $((fails != 0))
