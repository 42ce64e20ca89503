#!/bin/sh
# lib.sh's named cases behave as doc/howto.md says, under sh and bash:
# each case prints "ok N - NAME" or "not ok N - NAME" and the script goes
# on; a failing command or fail ends its case only; a missing
# prerequisite is a skip, or a failure under CI=true for SERVERS and
# those named by test_ci_prereq; a lazy prerequisite is asked once; what a case sets
# ends with it, but at_exit from a case runs at exit; test_done exits 1
# after a failure, 77 when every case was skipped, 0 otherwise.  Runs
# small scripts of its own; needs no server.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

inner=$TEST_TMP/inner
mkdir "$inner"
# The scripts below find lib.sh and this directory through these.
LIB=$CRONGUARD_SRCDIR/tests/integration/lib.sh
export LIB inner

cat > "$inner/mixed.sh" <<'EOF'
. "$LIB"
test_expect_success 'passes' 'true'
test_expect_success 'a failing command ends the case' '
	false
	touch "$inner/$SH.after-false"
'
test_expect_success 'fail ends the case' '
	fail boom
	touch "$inner/$SH.after-fail"
'
test_expect_success 'goes on after a failure' 'touch "$inner/$SH.went-on"'
test_expect_success NOPE 'missing prerequisite' 'touch "$inner/$SH.nope"'
test_set_prereq YES
test_expect_success YES 'a set prerequisite' 'true'
test_lazy_prereq LAZY 'echo asked >> "$inner/$SH.lazy"'
test_expect_success LAZY 'a lazy prerequisite' 'true'
test_expect_success YES,LAZY 'both' 'true'
test_lazy_prereq NEVER 'false'
test_expect_success YES,NEVER 'one of two missing' 'touch "$inner/$SH.never"'
test_expect_success 'a case sets a variable' 'v=1; at_exit "touch \"$inner/$SH.at-exit\""'
test_expect_success 'the next case does not see it' '[ -z "${v:-}" ]'
test_done
EOF

cat > "$inner/skipped.sh" <<'EOF'
. "$LIB"
if [ "${OTHER_IN_CI:-}" = 1 ]; then test_ci_prereq OTHER; fi
test_expect_success SERVERS 'needs the servers' 'true'
test_expect_success OTHER 'needs another thing' 'true'
test_done
EOF

cat > "$inner/passed.sh" <<'EOF'
. "$LIB"
test_expect_success 'one' 'true'
test_expect_success NOPE 'skipped' 'false'
test_done
EOF

cat > "$inner/none.sh" <<'EOF'
. "$LIB"
test_done
EOF

# run SH SCRIPT [VAR=VALUE...]: the script under the shell SH with no
# servers and no CI (unless given), output in $inner/SH.SCRIPT.out, exit
# status in $inner/SH.SCRIPT.rc.
run()
{
	local sh=$1 script=$2 rc=0
	shift 2
	env -u CRONGUARD_TEST_SERVERS -u CI SH="$sh" \
	    "$@" "$sh" "$inner/$script.sh" > "$inner/$sh.$script.out" 2>&1 ||
	    rc=$?
	echo "$rc" > "$inner/$sh.$script.rc"
}

# has SH SCRIPT LINE: the output holds LINE, whole.
has()
{
	grep -qxF -- "$3" "$inner/$1.$2.out" || {
		cat "$inner/$1.$2.out"
		fail "$1 $2.sh: no line '$3'"
	}
}

for sh in sh bash; do
	test_expect_success "$sh: each case reports, the script goes on" '
		run $sh mixed &&
		assert_eq 1 "$(cat "$inner/$sh.mixed.rc")" "exit status" &&
		has $sh mixed "ok 1 - passes" &&
		has $sh mixed "not ok 2 - a failing command ends the case" &&
		has $sh mixed "not ok 3 - fail ends the case" &&
		has $sh mixed "ok 4 - goes on after a failure" &&
		has $sh mixed "1..11" &&
		has $sh mixed "# mixed: 7 passed, 2 failed, 2 skipped" &&
		test -e "$inner/$sh.went-on"
	'
	test_expect_success "$sh: a failure ends its case only" '
		has $sh mixed "FAIL: mixed (fail ends the case): boom" &&
		test ! -e "$inner/$sh.after-false" &&
		test ! -e "$inner/$sh.after-fail"
	'
	test_expect_success "$sh: prerequisites" '
		has $sh mixed "ok 5 # skip missing prerequisite (missing NOPE)" &&
		has $sh mixed "ok 6 - a set prerequisite" &&
		has $sh mixed "ok 7 - a lazy prerequisite" &&
		has $sh mixed "ok 8 - both" &&
		has $sh mixed "ok 9 # skip one of two missing (missing YES,NEVER)" &&
		test ! -e "$inner/$sh.nope" && test ! -e "$inner/$sh.never" &&
		assert_eq 1 "$(wc -l < "$inner/$sh.lazy")" "lazy asked"
	'
	test_expect_success "$sh: variables end with the case, at_exit does not" '
		has $sh mixed "ok 11 - the next case does not see it" &&
		test -e "$inner/$sh.at-exit"
	'
	test_expect_success "$sh: every case skipped is 77; CI=true needs SERVERS" '
		run $sh skipped &&
		assert_eq 77 "$(cat "$inner/$sh.skipped.rc")" "all skipped" &&
		has $sh skipped "ok 1 # skip needs the servers (missing SERVERS)" &&
		run $sh skipped CI=true &&
		assert_eq 1 "$(cat "$inner/$sh.skipped.rc")" "under CI" &&
		has $sh skipped "not ok 1 - needs the servers" &&
		has $sh skipped "ok 2 # skip needs another thing (missing OTHER)" &&
		run $sh skipped CI=true OTHER_IN_CI=1 &&
		has $sh skipped "not ok 2 - needs another thing"
	'
	test_expect_success "$sh: passed is 0, a skip among them too; no case is 1" '
		run $sh passed &&
		assert_eq 0 "$(cat "$inner/$sh.passed.rc")" "passed" &&
		has $sh passed "ok 2 # skip skipped (missing NOPE)" &&
		run $sh none &&
		assert_eq 1 "$(cat "$inner/$sh.none.rc")" "no case"
	'
done
test_done
