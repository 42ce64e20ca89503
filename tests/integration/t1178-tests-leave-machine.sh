#!/bin/sh
# The test suite leaves the machine as it found it (tests/README.md):
# a cron daemon that ran before a test with a cron daemon of its own
# (cron_private_start, t1044) still runs after it, and the test's own is
# gone; before, t1044 stopped every cron with `pkill -x cron`.  A test that
# runs cronguard as another user works from a tree in a 0700 directory
# (user_copy, t1170, t1175); before, `runuser: failed to execute
# .../build/cronguard: Permission denied`.  The Debian package test (t0900)
# installs nothing unless asked, and says how to ask.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

# machine_cron: the PID of a cron daemon in this mount namespace (the
# machine's), if one runs.
machine_cron()
{
	local p me
	me=$(readlink /proc/self/ns/mnt)
	for p in $(pgrep -x cron); do
		[ "$(readlink "/proc/$p/ns/mnt" 2> /dev/null)" = "$me" ] &&
		    lib_running "$p" && { echo "$p"; return 0; }
	done
	return 1
}

test_expect_success CRON 'a cron daemon running before still runs after' '
	if pre=$(machine_cron); then
		echo "the machine runs cron, pid $pre"
	else
		# None: start one as the machine would, and stop it after.
		[ -e /run/crond.pid ] ||
		    at_exit "rm -f /run/crond.pid"
		cron -f -L 0 < /dev/null > "$TEST_TMP/pre.out" 2>&1 &
		pre=$!
		at_exit "lib_stop_pid $pre"
		wait_for 30 lib_is_cron "$pre"
		sleep 1
		echo "started cron, pid $pre, as the machine'\''s"
	fi
	lib_running "$pre" || fail "the first cron did not stay up"
	ls /etc/cron.d > "$TEST_TMP/crond.before"
	mkdir -m 755 "$TEST_TMP/cron.d" &&
	echo "* * * * * root touch $TEST_TMP/ran" > "$TEST_TMP/cron.d/t1178" &&
	chmod 644 "$TEST_TMP/cron.d/t1178" &&
	cron_private_start "$TEST_TMP/cron.d" &&
	[ "$CRON_PID" != "$pre" ] || fail "no cron of its own"
	lib_running "$pre" || fail "starting a private cron stopped the first"
	ls /etc/cron.d > "$TEST_TMP/crond.during"
	cmp "$TEST_TMP/crond.before" "$TEST_TMP/crond.during" ||
	    fail "the machine'\''s /etc/cron.d changed"
	cron_private_stop &&
	! lib_running "$CRON_PID" || fail "the private cron still runs"
	lib_running "$pre" || fail "stopping the private cron stopped the first"
'

test_expect_success ROOT 'another user runs cronguard from a 0700 tree' '
	tree=$TEST_TMP/home/clone/build &&
	mkdir -p "$tree" && chmod 700 "$TEST_TMP/home" &&
	cp "$CRONGUARD_BIN" "$tree/cronguard" &&
	chmod 711 "$TEST_TMP" &&
	mkdir -m 755 "$TEST_TMP/etc" &&
	printf "%s\n" "database = { host = \"127.0.0.1\"; user = \"app\"; name = \"app\"; };" \
	    "jobs = { hello = { command = [ \"/bin/true\" ]; }; };" \
	    > "$TEST_TMP/etc/cronguard.conf" &&
	chmod 644 "$TEST_TMP/etc/cronguard.conf" &&
	CRONGUARD_BIN=$tree/cronguard &&
	(cd / && runuser -u nobody -- "$CRONGUARD_BIN" version) \
	    > "$OUT" 2> "$ERR" && fail "nobody ran a binary in a 0700 tree"
	assert_grep "Permission denied" "$ERR" &&
	user_copy &&
	assert_exit 0 runuser -u nobody -- "$CRONGUARD_BIN" \
	    -c "$TEST_TMP/etc/cronguard.conf" config check &&
	assert_grep hello "$OUT"
'

test_expect_success ROOT,SERVERS 'another user migrates with the copied migrations' '
	user_copy &&
	write_config "$CONF" &&
	chmod 644 "$CONF" &&
	case $CONF in "$TEST_TMP"/*) ;; *) fail "CONF not in TEST_TMP" ;; esac &&
	assert_exit 0 runuser -u nobody -- "$CRONGUARD_BIN" -c "$CONF" db migrate &&
	assert_eq "$(ls "$CRONGUARD_SRCDIR"/sql/*.sql | wc -l)" \
	    "$(mysql_q "SELECT COUNT(*) FROM cronguard_schema")" "migrations applied"
'

test_expect_success 'the package test installs nothing unless asked' '
	before=$(dpkg-query -W -f="\${Status}" cronguard 2> /dev/null || true) &&
	rc=0 &&
	env -u CI -u CRONGUARD_TEST_INSTALL_PACKAGE \
	    sh "$CRONGUARD_SRCDIR/tests/integration/t0900-debian-package.sh" \
	    > "$OUT" 2> "$ERR" || rc=$?
	cat "$OUT" "$ERR"
	assert_eq 77 "$rc" "t0900 exit status" &&
	assert_grep "^SKIP: .*system-wide.*CRONGUARD_TEST_INSTALL_PACKAGE=1" "$OUT" &&
	assert_eq "$before" \
	    "$(dpkg-query -W -f="\${Status}" cronguard 2> /dev/null || true)" \
	    "the cronguard package status"
'

test_done
