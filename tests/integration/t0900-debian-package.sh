#!/bin/sh
# The Debian package: scripts/package builds it from HEAD (a clean export),
# `apt-get install ./cronguard_*.deb` installs it, and with the test servers
# the installed cronguard runs `version`, `config check` on the shipped
# example edited to point at them, `db migrate` from /usr/share/cronguard/sql
# (from /, CRONGUARD_SQLDIR unset), one guarded job and one dispatch as
# user cronguard, with a database user holding only the README's GRANTs.
# The units pass `systemd-analyze verify` and score below 3.0 in
# `systemd-analyze security`; `apt-get purge` leaves only the cronguard
# user and group.  It changes the machine (a package installed and purged
# system-wide, /etc/cronguard and /usr/bin/cronguard among its files), so
# it runs only when asked: CRONGUARD_TEST_INSTALL_PACKAGE=1 (scripts/test
# --install-package), or CI=true; otherwise it is skipped, saying so.
# Needs root; outside CI it is skipped when dpkg-buildpackage is missing,
# a cronguard package is already installed or files of a source install
# are where the package puts its own; with CI=true it installs the build
# tools.
# Cases: build and install; the layout; the units; setup: a database
# user and secrets; the installed cronguard as user cronguard; purge.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

skip() {
	[ "${CI:-}" = true ] && fail "$*"
	echo "SKIP: $*"
	exit 77
}
if [ "${CI:-}" != true ] && [ "${CRONGUARD_TEST_INSTALL_PACKAGE:-}" != 1 ]; then
	echo "SKIP: installs and purges the cronguard package system-wide;" \
	    "to run it, set CRONGUARD_TEST_INSTALL_PACKAGE=1" \
	    "(scripts/test --install-package; on under CI=true)"
	exit 77
fi
APT="apt-get -q -y -o DPkg::Lock::Timeout=300"
export DEBIAN_FRONTEND=noninteractive

[ "$(id -u)" -eq 0 ] || skip "needs root to install a package"
command -v git > /dev/null && [ -e "$CRONGUARD_SRCDIR/.git" ] ||
    skip "needs a git checkout (scripts/package exports HEAD)"
if ! command -v dpkg-buildpackage > /dev/null ||
    ! dpkg-checkbuilddeps "$CRONGUARD_SRCDIR/debian/control" 2> /dev/null; then
	[ "${CI:-}" = true ] || skip "dpkg-buildpackage or the Build-Depends missing"
	$APT install --no-install-recommends dpkg-dev debhelper fakeroot > "$TEST_TMP/apt.log" 2>&1 &&
	    (cd "$CRONGUARD_SRCDIR" && $APT build-dep ./) >> "$TEST_TMP/apt.log" 2>&1 ||
	    { tail -20 "$TEST_TMP/apt.log"; fail "cannot install the build tools"; }
fi
if dpkg-query -W -f='${Status}' cronguard 2> /dev/null | grep -q installed; then
	skip "a cronguard package is installed already; not replacing it"
fi
# A source install (make install --sysconfdir=/etc, or into /usr): the
# package would take its place and purge would remove it.
for f in /etc/cronguard /usr/bin/cronguard; do
	[ ! -e "$f" ] || skip "$f exists (not from a package); not replacing it"
done
need_servers
# The package makes the cronguard user and group and purge leaves them
# (Debian policy): the test removes them after, unless they were here.
getent group cronguard > /dev/null ||
    at_exit "groupdel cronguard > /dev/null 2>&1"
getent passwd cronguard > /dev/null ||
    at_exit "userdel cronguard > /dev/null 2>&1"

# The database user and the directories the cases below make.
DB_USER=cgpkg_$$
DB_PASS=pw$$
SEC=$TEST_TMP/secrets
RUN=$TEST_TMP/run
as_cronguard() { (cd / && env -u CRONGUARD_SQLDIR -u CRONGUARD_CONFIG runuser -u cronguard -- "$@"); }

# ---- build and install
build_install()
{
	local deb
	"$CRONGUARD_SRCDIR/scripts/package" "$TEST_TMP/dist" > "$TEST_TMP/package.log" 2>&1 ||
	    { tail -30 "$TEST_TMP/package.log"; fail "scripts/package failed"; }
	deb=$(ls "$TEST_TMP"/dist/cronguard_*_*.deb)
	at_exit "$APT purge cronguard > /dev/null 2>&1"
	$APT install "$deb" > "$TEST_TMP/install.log" 2>&1 ||
	    { tail -20 "$TEST_TMP/install.log"; fail "apt-get install failed"; }
	assert_grep "cronguard db migrate" "$TEST_TMP/install.log"
}
test_expect_success 'build the package from HEAD, apt-get install it' build_install

# ---- layout
layout()
{
	local f
	for f in /usr/bin/cronguard /usr/share/man/man1/cronguard.1.gz \
	    /usr/share/man/man5/cronguard.conf.5.gz \
	    /usr/share/man/man7/cronguard-outbox.7.gz \
	    /usr/share/cronguard/sql/001_schema.sql \
	    /usr/share/doc/cronguard/examples/crontab.example \
	    /usr/lib/systemd/system/cronguard-dispatch.timer \
	    /usr/lib/systemd/system/cronguard-job@.timer /etc/cron.d/cronguard \
	    /usr/share/cronguard/prometheus/cronguard.rules.yml \
	    /usr/share/cronguard/nagios/cronguard.cfg \
	    /usr/share/cronguard/icinga2/cronguard.conf \
	    /usr/share/bash-completion/completions/cronguard; do
		[ -e "$f" ] || fail "$f not installed"
	done
	assert_eq "$(ls "$CRONGUARD_SRCDIR"/sql/*.sql | wc -l)" \
	    "$(ls /usr/share/cronguard/sql/*.sql | wc -l)" "installed migrations"
	assert_eq "640 root cronguard" "$(stat -c '%a %U %G' /etc/cronguard/cronguard.conf)" "conffile"
	assert_eq "3775 root cronguard" "$(stat -c '%a %U %G' /run/cronguard)" "runtime directory"
	assert_eq "755 cronguard cronguard" "$(stat -c '%a %U %G' /var/lib/cronguard/metrics)" "metrics directory"
	assert_eq "" "$(grep -v '^#' /etc/cron.d/cronguard | grep -E '^[*0-9]')" "active cron.d lines"
	grep -q '/etc/cronguard/cronguard.conf' /usr/share/man/man1/cronguard.1.gz 2> /dev/null ||
	    zgrep -q 'etc/cronguard/cronguard.conf' /usr/share/man/man1/cronguard.1.gz ||
	    fail "cronguard(1) does not name /etc/cronguard/cronguard.conf"
}
test_expect_success 'the layout: the files, their modes, no active cron.d line, the man page' \
    layout

# ---- units
check_units()
{
	local units u score
	units="/usr/lib/systemd/system/cronguard-dispatch.service
/usr/lib/systemd/system/cronguard-dispatch.timer
/usr/lib/systemd/system/cronguard-job@.service
/usr/lib/systemd/system/cronguard-job@.timer"
	# shellcheck disable=SC2086
	systemd-analyze verify --man=no $units > "$TEST_TMP/verify" 2>&1 ||
	    { cat "$TEST_TMP/verify"; fail "systemd-analyze verify"; }
	assert_eq "" "$(cat "$TEST_TMP/verify")" "systemd-analyze verify output"
	cp /usr/lib/systemd/system/cronguard-job@.service "$TEST_TMP/cronguard-job@x.service"
	for u in /usr/lib/systemd/system/cronguard-dispatch.service "$TEST_TMP/cronguard-job@x.service"; do
		score=$(systemd-analyze security --offline=yes "$u" 2>&1 |
		    sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
		[ -n "$score" ] || fail "no security score for $u"
		echo "systemd-analyze security ${u##*/}: $score"
		awk -v s="$score" 'BEGIN { exit !(s < 3.0) }' || fail "$u scores $score"
	done
}
test_expect_success 'the units: systemd-analyze verify clean, security below 3.0' check_units

# ---- a database user with the README's GRANTs, secrets for user cronguard
setup_user()
{
	at_exit "mysql_admin \"DROP USER IF EXISTS '$DB_USER'@'%'\""
	mysql_admin "CREATE USER '$DB_USER'@'%' IDENTIFIED BY '$DB_PASS';
    GRANT SELECT, INSERT, UPDATE, DELETE, EXECUTE, CREATE, ALTER, INDEX,
    DROP, CREATE ROUTINE, ALTER ROUTINE ON \`$TEST_DB\`.* TO '$DB_USER'@'%'" || fail "cannot create $DB_USER"
	chmod 711 "$TEST_TMP"
	mkdir -m 750 "$SEC" && chgrp cronguard "$SEC"
	mkdir -m 755 "$RUN" && chown cronguard "$RUN"
	printf '%s' "$DB_PASS" > "$SEC/db.password"
	printf 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n' > "$SEC/billing.secret"
	chgrp cronguard "$SEC"/* && chmod 640 "$SEC"/*

	sed -i -e "s|port = 3306;|port = $CRONGUARD_TEST_DB_PORT;|" \
	    -e "s|host = \"127.0.0.1\";|host = \"$CRONGUARD_TEST_DB_HOST\";|" \
	    -e "s|user = \"cronguard\";|user = \"$DB_USER\";|" \
	    -e "s|name = \"app\";|name = \"$TEST_DB\";|" \
	    -e "s|/etc/cronguard/db.password|$SEC/db.password|" \
	    -e "s|/etc/cronguard/billing.secret|$SEC/billing.secret|" \
	    -e "s|smtp://127.0.0.1:2525|$SMTP_URL|" \
	    -e "s|https://hooks.example.com/billing|$HTTP_BASE/ok|" \
	    -e "s|\"/usr/local/bin/accrue-leave\", \"--today\"|\"/usr/bin/touch\", \"$RUN/ran\"|" \
	    /etc/cronguard/cronguard.conf
}
test_expect_success 'setup: a database user with the README'"'"'s GRANTs, secrets, the example edited' \
    setup_user

installed()
{
	assert_exit 0 /usr/bin/cronguard version
	assert_exit 0 /usr/bin/cronguard -c /etc/cronguard/cronguard.conf config check
	assert_exit 0 as_cronguard /usr/bin/cronguard config check
	assert_exit 0 as_cronguard /usr/bin/cronguard db migrate
	assert_eq "$(ls /usr/share/cronguard/sql/*.sql | wc -l)" \
	    "$(mysql_q 'SELECT COUNT(*) FROM cronguard_schema')" "migrations applied"
	assert_exit 0 as_cronguard /usr/bin/cronguard run leave-accrual
	[ -e "$RUN/ran" ] || fail "the guarded job did not run"
	# The README's runtime GRANTs include EXECUTE: the lock and its fencing
	# token in one round trip (cronguard_get_lock), no fallback warning.
	! grep -q lock_fence_extra_statement "$ERR" || { cat "$ERR"; fail "fence fallback"; }
	assert_eq "success" "$(mysql_q "SELECT outcome FROM cronguard_runs WHERE job = 'leave-accrual'")" "run record"
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
    VALUES ('billing', 'test.event', JSON_OBJECT('n', 1))"
	assert_exit 0 as_cronguard /usr/bin/cronguard outbox dispatch
	assert_eq 1 "$(http_count)" "webhook requests"
	assert_eq SENT "$(mysql_q 'SELECT status FROM outbox_messages')" "outbox row"
}
test_expect_success 'the installed cronguard as user cronguard: migrate, a guarded job, a dispatch' \
    installed

# ---- purge: only the cronguard user and group stay (Debian policy)
purge()
{
	local f
	$APT purge cronguard > "$TEST_TMP/purge.log" 2>&1 ||
	    { tail -20 "$TEST_TMP/purge.log"; fail "apt-get purge failed"; }
	for f in /usr/bin/cronguard /etc/cronguard /etc/cron.d/cronguard \
	    /usr/share/cronguard /usr/share/doc/cronguard /var/lib/cronguard \
	    /run/cronguard /usr/lib/tmpfiles.d/cronguard.conf \
	    /usr/lib/sysusers.d/cronguard.conf; do
		[ ! -e "$f" ] || fail "$f left after purge"
	done
	if dpkg-query -W -f='${Status}' cronguard 2> /dev/null | grep -qv not-installed; then
		fail "dpkg still knows cronguard after purge"
	fi
	getent passwd cronguard > /dev/null || fail "purge removed the cronguard user"
}
test_expect_success 'apt-get purge leaves only the cronguard user and group' purge

test_done
