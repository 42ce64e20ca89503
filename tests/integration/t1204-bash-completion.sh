#!/bin/sh
# Shell completion, through bash's own machinery: the script that
# `cronguard completion bash` writes is sourced, COMP_WORDS/COMP_CWORD
# set as bash sets them, the function that `complete -p cronguard` names
# called, and COMPREPLY checked: every command of the command table (as
# tests/dump-names lists them), every option of every usage string,
# every "--option a|b" value, and the job, channel and lock names of the
# configuration.  zsh sources the zsh script and completes a command.
# The installed file (make's completions/cronguard) is the same script.
# Cases: setup; the script installed; completion names; bad arguments;
# bash completes; zsh loads the script.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
command -v bash > /dev/null || fail "no bash"
S=$TEST_TMP/cronguard.bash

setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = { nightly = { command = [ \"true\" ]; };
         weekly = { command = [ \"true\" ]; lock = \"app:weekly\"; };
         here = { command = [ \"true\" ]; guard = \"local\"; }; };
channels = { mail = { type = \"smtp\"; url = \"smtp://127.0.0.1:1\"; from = \"a@example.com\"; };
             hook = { type = \"http\"; url = \"http://127.0.0.1:1/\"; }; };"
}
test_expect_success 'setup: three jobs, two channels' setup

installed()
{
	assert_exit 0 cg completion bash
	cp "$OUT" "$S"
	if [ -f "${CRONGUARD_BUILDDIR:-.}/completions/cronguard" ]; then
		cmp "$S" "$CRONGUARD_BUILDDIR/completions/cronguard" ||
		    fail "completions/cronguard differs from 'cronguard completion bash'"
	fi
}
test_expect_success 'completion bash writes the script make installs' installed

listed_names()
{
	assert_exit 0 cg completion names jobs
	assert_eq "nightly weekly here" "$(tr '\n' ' ' < "$OUT" | sed 's/ $//')" "job names"
	assert_exit 0 cg completion names locks
	assert_grep '^app:weekly$' "$OUT"
	assert_grep '^cronguard:test:nightly$|^cronguard:[^:]*:nightly$' "$OUT"
	if grep -q here "$OUT"; then fail "a local-guard job has no lock: $(cat "$OUT")"; fi
}
test_expect_success 'completion names lists the jobs and the locks' listed_names

bad_args()
{
	assert_exit 64 cg completion names widgets
	assert_exit 64 cg completion tcsh
}
test_expect_success 'completion of a foreign kind or shell: exit 64' bad_args

bash_completes()
{
	"$CRONGUARD_BUILDDIR/tests/dump-names" commands > "$TEST_TMP/commands"
	"$CRONGUARD_BUILDDIR/tests/dump-names" usages > "$TEST_TMP/usages"

	bash --norc --noprofile -s "$S" "$CRONGUARD_BIN" "$CONF" "$TEST_TMP" <<'BASH' || fail "bash completion"
set -u
. "$1"
BIN=$2 CONF=$3 T=$4 bad=0 checks=0
fn=$(complete -p cronguard | sed -n 's/.*-F \([^ ]*\) cronguard$/\1/p')
[ -n "$fn" ] || { echo "complete -p cronguard: no -F function"; exit 1; }
# comp WORD...: complete the last WORD (may be empty) of "cronguard -c CONF WORD...".
comp() {
	COMP_WORDS=("$BIN" -c "$CONF" "$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE="${COMP_WORDS[*]}" COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	"$fn" cronguard "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	printf '%s\n' "${COMPREPLY[@]}"
}
# want "WORDS..." "WANT..." : each of WANT is offered for WORDS ('' is
# the empty word being completed)
want() {
	local got w
	local -a words
	read -r -a words <<< "$1"
	[ "${words[${#words[@]} - 1]}" = "''" ] && words[${#words[@]} - 1]=
	got=" $(comp "${words[@]}" | tr '\n' ' ') "
	for w in $2; do
		checks=$((checks + 1))
		case $got in *" $w "*) ;; *)
			echo "cronguard $1<TAB>: '$w' not offered (got:$got)"; bad=1 ;;
		esac
	done
}
# commands: first words, then each family's second words
first=$(cut -d' ' -f1 "$T/commands" | sort -u | tr '\n' ' ')
want "''" "$first"
while read -r a b; do
	[ -n "$b" ] && want "$a ''" "$b"
done < "$T/commands"
# every option of every usage string, after "--"
while IFS="	" read -r name usage; do
	opts=$(printf '%s\n' "$usage" | grep -o -- '--[a-z][a-z-]*' | sort -u | tr '\n' ' ')
	want "$name --" "--help $opts"
	# the values of "--option a|b|c"
	printf '%s\n' "$usage" | grep -o -- '--[a-z][a-z-]* [a-z_]*|[a-z_|]*' |
	while read -r opt vals; do
		want "$name $opt ''" "$(echo "$vals" | tr '|' ' ')"
	done
done < "$T/usages"
# names from the configuration
want "run ''" "nightly weekly here"
want "jobs check --format nagios ''" "nightly weekly"
want "run we" "weekly"
want "exec --lock ''" "app:weekly"
want "outbox dispatch --channel ''" "mail hook"
want "outbox list --status ''" "PENDING FAILED"
want "help ''" "outbox jobs run"
want "completion ''" "bash zsh names"
want "completion names ''" "jobs channels locks"
want "exec --lock x -- tr" "true"
want "--log-format ''" "text json"
# nothing foreign: a value is not offered as an option
got=$(comp outbox check --format '')
case " $(echo $got) " in *" --"*) echo "outbox check --format: options offered: $got"; bad=1 ;; esac
echo "bash completion: $checks checks"
exit $bad
BASH
}
test_expect_success 'bash completes every command, option, value and configured name' \
    bash_completes

# zsh: only that the script loads and registers the function (completing
# needs zsh's line editor, which a script cannot drive without a tty).
zsh_loads()
{
	if command -v zsh > /dev/null; then
		assert_exit 0 cg completion zsh
		cp "$OUT" "$TEST_TMP/cronguard.zsh"
		zsh -f -c 'autoload -U compinit && compinit -u -D
	    . "$1"; print -r -- "$_comps[cronguard]"' zsh "$TEST_TMP/cronguard.zsh" > "$OUT" 2> "$ERR" ||
		    { cat "$ERR"; fail "zsh"; }
		assert_eq "_bash_complete -F _cronguard" "$(cat "$OUT")" "zsh registration"
	fi
}
test_expect_success 'zsh loads the script and registers the function' zsh_loads

test_done
