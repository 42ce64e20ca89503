#!/bin/sh
# doctor's first line is its verdict, the line a Nagios service shows as
# its status (cronguard(1), doctor): "DOCTOR STATUS - name: finding",
# the worst result and what it is about, then one line per check; JSON
# has the same text as "summary".  Before, the first line was "OK server:
# ..." whatever the verdict.  Cases: a fresh database (migrations
# pending), one migration row removed, everything OK.
# Servers: MariaDB.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
: "${CRONGUARD_SQLDIR:=$CRONGUARD_SRCDIR/sql}"
export CRONGUARD_SQLDIR

# first_line REGEX: doctor's first line (text and --format nagios), the
# rest one line per check
first_line()
{
	local fmt
	for fmt in "" "--format nagios"; do
		# shellcheck disable=SC2086
		assert_exit "$want" cg doctor $fmt
		head -n 1 "$OUT" > "$TEST_TMP/first"
		assert_grep "$1" "$TEST_TMP/first"
		if tail -n +2 "$OUT" |
		    grep -vqE '^(OK|WARNING|CRITICAL|UNKNOWN) [a-z_]+: .+'; then
			cat "$OUT"
			fail "a check line is not STATUS name: finding"
		fi
	done
	assert_exit "$want" cg doctor --format json
	"$LIB_PY" - "$OUT" "$TEST_TMP/first" <<-'PY' || fail "doctor json summary"
	import json, sys
	d = json.load(open(sys.argv[1]))
	first = open(sys.argv[2]).read().rstrip("\n")
	assert first == "DOCTOR %s - %s" % (d["status"], d["summary"]), (first, d)
	PY
}

fresh()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = { nightly = { command = [ \"/bin/true\" ]; }; };"
	want=2 first_line '^DOCTOR CRITICAL - migrations: [0-9]+ migration\(s\) pending; [0-9]+ more problems? below$'
	assert_exit 2 cg doctor
	assert_grep '^CRITICAL migrations: [0-9]+ migration\(s\) pending; fix: cronguard db migrate$' "$OUT"
}
test_expect_success SERVERS 'a fresh database: CRITICAL migrations first' fresh

removed()
{
	assert_exit 0 cg db migrate
	# Kept aside, to be put back: a migration need not run twice.
	mysql_q "CREATE TABLE t1251_saved AS SELECT * FROM cronguard_schema
	    ORDER BY version DESC LIMIT 1"
	mysql_q "DELETE FROM cronguard_schema ORDER BY version DESC LIMIT 1"
	want=2 first_line '^DOCTOR CRITICAL - migrations: 1 migration\(s\) pending$'
}
test_expect_success SERVERS 'one migration row removed: CRITICAL' removed

green()
{
	mysql_q "INSERT INTO cronguard_schema SELECT * FROM t1251_saved"
	assert_exit 0 cg db migrate
	want=0 first_line '^DOCTOR OK - [0-9]+ checks passed$'
}
test_expect_success SERVERS 'all well: OK and how many checks' green

test_done
