#!/bin/sh
# The shipped Nagios and Icinga 2 definitions (etc/nagios/cronguard.cfg,
# etc/icinga2/cronguard.conf) pass `nagios4 -v` on a minimal nagios.cfg
# that includes them and `icinga2 daemon -C` with them; a service whose
# check_command names no command fails both (mutants).  Every command
# line they define runs against the test database and gives a plugin
# answer (a status word first, exit 0 here).  nagios_minimal_config in
# t1203 starts a real Nagios on the same files.
# Cases: setup; Nagios: the definitions pass, a mutant fails, each command
# line answers; Icinga 2: the same.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
for t in nagios4 icinga2; do
	command -v "$t" > /dev/null && continue
	[ "${CI:-}" = true ] && fail "$t not installed (Debian packages nagios4-core, icinga2-bin)"
	echo "SKIP: $t not installed"; exit 77
done
need_servers
. "$CRONGUARD_SRCDIR/tests/integration/nagios-lib.sh"

setup()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = { nightly = { command = [ \"true\" ]; expect_every = \"1d\"; }; };
channels = { hook = { type = \"http\"; url = \"$HTTP_BASE/ok\"; }; };"
	assert_exit 0 cg db migrate
	assert_exit 0 cg run nightly
}
test_expect_success 'setup: db migrate, a run' setup

# ---------------------------------------------------------------- Nagios
N=$TEST_TMP/nagios

nagios_ok()
{
	nagios_minimal_config "$N"
	assert_exit 0 nagios4 -v "$N/nagios.cfg"
	assert_grep '^Total Errors: +0$' "$OUT"
	assert_grep '^Total Warnings: +0$' "$OUT"
	assert_grep 'Checked 3 services' "$OUT"
	assert_grep 'Checked 3 commands|Checked 4 commands' "$OUT"
}
test_expect_success 'nagios4 -v passes the shipped definitions' nagios_ok

nagios_mutant()
{
	# mutant: a service naming a command that is not defined
	sed -i 's/check_command\t\tcheck_cronguard_outbox$/check_command\t\tcheck_cronguard_outbx/' "$N/cronguard.cfg"
	grep -q check_cronguard_outbx "$N/cronguard.cfg" || fail "mutant not applied"
	assert_exit 1 nagios4 -v "$N/nagios.cfg"
	assert_grep "check_cronguard_outbx" "$OUT"
	nagios_minimal_config "$N"
}
test_expect_success 'nagios4 -v fails a service naming no command (mutant)' \
    nagios_mutant

# Each command_line, with $ARGn$ empty, as Nagios would run it.
nagios_lines()
{
	local line
	sed -n 's/^\tcommand_line\t//p' "$N/cronguard.cfg" | sed 's/\$ARG[0-9]\$//g' > "$TEST_TMP/lines"
	assert_eq 3 "$(wc -l < "$TEST_TMP/lines" | tr -d ' ')" "command lines"
	while read -r line; do
		assert_exit 0 sh -c "$line"
		assert_grep '^(JOBS |OUTBOX )?OK' "$OUT"
	done < "$TEST_TMP/lines"
}
test_expect_success 'each Nagios command line answers OK' nagios_lines

# --------------------------------------------------------------- Icinga 2
I=$TEST_TMP/icinga2
# As root, icinga2 reads its configuration as ICINGA2_USER (Debian:
# nagios), who cannot enter this test's private directory.
ICINGA2_USER=$(id -un) ICINGA2_GROUP=$(id -gn)
export ICINGA2_USER ICINGA2_GROUP

icinga_ok()
{
	mkdir "$I"
	cg_subst_test "$CRONGUARD_SRCDIR/etc/icinga2/cronguard.conf.in" > "$I/cronguard.conf"
	cat > "$I/icinga2.conf" <<EOF
include <itl>
object Host "db1" {
	address = "127.0.0.1"
	check_command = "dummy"
	vars.cronguard = true
	vars.cronguard_jobs = [ "nightly" ]
}
include "$I/cronguard.conf"
EOF
	assert_exit 0 icinga2 daemon -C -c "$I/icinga2.conf"
	assert_grep 'Instantiated 3 Services' "$OUT"
}
test_expect_success 'icinga2 daemon -C passes the shipped definitions' icinga_ok

icinga_mutant()
{
	cp "$I/cronguard.conf" "$I/good.conf"
	sed -i 's/check_command = "cronguard-outbox"/check_command = "cronguard-outbx"/' "$I/cronguard.conf"
	grep -q cronguard-outbx "$I/cronguard.conf" || fail "mutant not applied"
	assert_exit 1 icinga2 daemon -C -c "$I/icinga2.conf"
	assert_grep "Object 'cronguard-outbx' of type 'CheckCommand' does not exist" "$OUT"
	cp "$I/good.conf" "$I/cronguard.conf"
}
test_expect_success 'icinga2 daemon -C fails a service naming no command (mutant)' \
    icinga_mutant

# Each CheckCommand's command array, with its vars, as Icinga would run it
# (cronguard_jobs as the host above sets it).
icinga_lines()
{
	local line
	"$LIB_PY" - "$I/cronguard.conf" > "$TEST_TMP/argv" <<'PY'
import re, shlex, sys
text = open(sys.argv[1]).read()
for name, body in re.findall(r'object CheckCommand "([^"]+)" \{(.*?)\n\}', text, re.S):
    argv = re.findall(r'"([^"]*)"', re.search(r'command = \[(.*?)\]', body).group(1))
    conf = re.search(r'vars.cronguard_config = "([^"]*)"', body).group(1)
    argv = [conf if a == "$cronguard_config$" else a for a in argv]
    if "$cronguard_jobs$" in body:
        argv.append("nightly")
    print(" ".join(shlex.quote(a) for a in argv))
PY
	assert_eq 3 "$(wc -l < "$TEST_TMP/argv" | tr -d ' ')" "check commands"
	while read -r line; do
		assert_exit 0 sh -c "$line"
		assert_grep '^(JOBS |OUTBOX )?OK' "$OUT"
	done < "$TEST_TMP/argv"
	grep -q 'jobs check nightly$' "$TEST_TMP/argv" || fail "jobs check without its job: $(cat "$TEST_TMP/argv")"
}
test_expect_success 'each Icinga CheckCommand answers OK' icinga_lines

test_done
