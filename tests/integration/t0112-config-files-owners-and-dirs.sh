#!/bin/sh
# Files only their owners can write (cronguard.conf(5), FILES): the
# configuration, every @include and every secret file must be owned by
# root or by the user cronguard runs as, and no directory on their way may
# be writable by anyone else unless it is sticky and root's (as /tmp).
# An @include owned by another user, a configuration in a 0777 directory,
# a secret file owned by another user: exit 78 from config check, doctor
# and run, naming the file, its owner or mode and the fix, and the job
# does not run.  Root-owned files in root's directories under /tmp pass.
# The owner cases need root (chown); the rest runs as any user.  Needs
# the test servers for the runs that pass.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

# The database for the runs that pass, when the servers are up.
test_have_prereq SERVERS || true
D=$TEST_TMP/etc
RAN=$TEST_TMP/ran
mkdir -m 755 "$D"
chmod 711 "$TEST_TMP"

# The configuration in $D: a job that leaves $RAN behind, included from
# jobs.conf, and a channel's signing secret file.
setup()
{
	write_config "$D/cronguard.conf" "@include \"jobs.conf\"
channels = { hook = { type = \"http\"; url = \"http://127.0.0.1:9/x\";
  signing_secret_file = \"$D/hook.secret\"; }; };"
	printf 'jobs = { j = { command = [ "/usr/bin/touch", "%s" ]; }; };\n' \
	    "$RAN" > "$D/jobs.conf"
	chmod 644 "$D/jobs.conf"
	(umask 077 && echo whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw > "$D/hook.secret")
	CONF=$D/cronguard.conf
	assert_exit 0 cg config check
}
test_expect_success 'the configuration under /tmp (sticky, root-owned) loads' \
    setup
CONF=$D/cronguard.conf

# refused WANT CMD...: exit 78 from config check, doctor and run j, with
# WANT (a regular expression) on stderr, and the job not run.
refused()
{
	local want=$1 c
	for c in "config check" "doctor" "run j"; do
		# shellcheck disable=SC2086 # $c is a command and its arguments
		assert_exit 78 cg $c
		assert_grep "$want" "$ERR"
	done
	[ ! -e "$RAN" ] || fail "the job ran"
}

include_owner()
{
	chown nobody "$D/jobs.conf"
	refused "$CONF:[0-9]+: @include \"jobs.conf\" \\($D/jobs.conf\\): $D/jobs.conf is owned by nobody \\(uid [0-9]+\\), not by root.* \\(chown [a-z0-9_]+ $D/jobs.conf\\)"
	chown "$(id -u)" "$D/jobs.conf"
	assert_exit 0 cg config check
}
test_expect_success ROOT 'an @include owned by another user: 78, nothing run' \
    include_owner

open_dir()
{
	chmod 777 "$D"
	refused "$CONF is in $D, writable by others \\(mode 0777\\) \\(chmod go-w $D, or move $CONF to a directory only root can write\\)"
	chmod 775 "$D"
	refused "$CONF is in $D, writable by its group \\(mode 0775\\)"
	chmod 755 "$D"
	assert_exit 0 cg config check
}
test_expect_success 'a configuration in a 0777 or 0775 directory: 78' open_dir

sticky_not_roots()
{
	chown nobody "$D"
	chmod 1777 "$D"
	refused "$CONF is in $D, owned by nobody \\(uid [0-9]+\\), not by root"
	chown 0 "$D"
	# Sticky and root's, as /tmp: fine.
	assert_exit 0 cg config check
	chmod 755 "$D"
}
test_expect_success ROOT 'a sticky directory not root'"'"'s: 78; root'"'"'s: fine' \
    sticky_not_roots

# A parent further up counts too, and a symbolic link is judged by the
# directories of its own name as well as by those of its target.
parent_and_link()
{
	mkdir -m 777 "$TEST_TMP/open"
	mkdir -m 755 "$TEST_TMP/open/sub"
	cp -p "$D/cronguard.conf" "$D/jobs.conf" "$TEST_TMP/open/sub/"
	assert_exit 78 "$CRONGUARD_BIN" -c "$TEST_TMP/open/sub/cronguard.conf" \
	    config check
	assert_grep "is in $TEST_TMP/open, writable by others \\(mode 0777\\)" "$ERR"
	ln -s "$CONF" "$TEST_TMP/open/link.conf"
	assert_exit 78 "$CRONGUARD_BIN" -c "$TEST_TMP/open/link.conf" \
	    config check
	assert_grep "$TEST_TMP/open/link.conf is in $TEST_TMP/open, writable by others" "$ERR"
	ln -s "$TEST_TMP/open/sub/cronguard.conf" "$D/back.conf"
	assert_exit 78 "$CRONGUARD_BIN" -c "$D/back.conf" config check
	assert_grep "$D/back.conf is in $TEST_TMP/open, writable by others" "$ERR"
	rm -f "$D/back.conf"
}
test_expect_success 'a parent directory others can write; symbolic links' \
    parent_and_link

# A channel's secret is needed only where outbox dispatch runs: config
# check warns, dispatch refuses, doctor is critical.
secret_owner()
{
	local want="$D/hook.secret is owned by nobody \\(uid [0-9]+\\), not by root.* \\(chown [a-z0-9_]+ $D/hook.secret\\)"
	chown nobody "$D/hook.secret"
	assert_exit 0 cg config check
	assert_grep "warning: .*signing_secret_file: $want" "$ERR"
	assert_exit 78 cg outbox dispatch
	assert_grep "signing_secret_file: $want" "$ERR"
	cg doctor > "$OUT" 2>&1 || true
	assert_grep "^CRITICAL secret_file: $D/hook.secret is owned by nobody \\(uid [0-9]+\\), not by root.*; fix: chown [a-z0-9_]+ $D/hook.secret\$" "$OUT"
	chown "$(id -u)" "$D/hook.secret"
}
test_expect_success ROOT 'a channel secret owned by another user: dispatch 78' \
    secret_owner

# A job's secret (ping_url_file) is read where the job runs.
job_secret_owner()
{
	echo "$HTTP_BASE/ping" > "$D/ping.url"
	chmod 600 "$D/ping.url"
	sed -i 's|command = |ping_url_file = "'"$D"'/ping.url"; command = |' \
	    "$D/jobs.conf"
	chown nobody "$D/ping.url"
	assert_exit 78 cg run j
	assert_grep "jobs\\.j\\.ping_url_file: $D/ping.url is owned by nobody" "$ERR"
	[ ! -e "$RAN" ] || fail "the job ran"
	chown "$(id -u)" "$D/ping.url"
}
test_expect_success ROOT 'a job secret owned by another user: 78, nothing run' \
    job_secret_owner

runs()
{
	assert_exit 0 cg db migrate
	assert_exit 0 cg run j
	[ -e "$RAN" ] || fail "the job did not run"
}
test_expect_success SERVERS 'with every file in order the job runs' runs

test_done
