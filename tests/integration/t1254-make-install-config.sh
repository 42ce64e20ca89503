#!/bin/sh
# make install creates $(sysconfdir)/cronguard/cronguard.conf from the
# example when there is none (mode 0640, group cronguard when that group
# exists), never overwrites one, and make uninstall leaves a changed one
# but removes the example unchanged (README, Install; cronguard.conf(5),
# FILES).  Before, a source install had no configuration at all and the
# first config check failed.  Into a throwaway DESTDIR; no server.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

# mk TARGET: make in the build directory, into $D, outside make check's
# own make
mk()
{
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
	    make -s -C "$CRONGUARD_BUILDDIR" "$1" DESTDIR="$D" > "$OUT" 2> "$ERR" ||
	    { cat "$OUT" "$ERR"; fail "make $1"; }
}

installs()
{
	D=$TEST_TMP/dest
	mkdir "$D"
	mk install
	conf=$(find "$D" -path '*/etc/cronguard/cronguard.conf')
	[ -n "$conf" ] || fail "no etc/cronguard/cronguard.conf installed"
	assert_eq 640 "$(stat -c %a "$conf")" "mode"
	if getent group cronguard > /dev/null && [ "$(id -u)" = 0 ]; then
		assert_eq cronguard "$(stat -c %G "$conf")" "group"
	fi
	cmp -s "$CRONGUARD_SRCDIR/etc/cronguard.conf" "$conf" ||
	    fail "not the example"
	# a second install keeps a changed one
	printf '# changed by the operator\n' >> "$conf"
	chmod 600 "$conf"
	mk install
	assert_grep "^keeping $conf\$" "$OUT"
	assert_eq 1 "$(grep -c '^# changed by the operator$' "$conf")" "the change"
	assert_eq 600 "$(stat -c %a "$conf")" "mode kept"
	# uninstall leaves it, changed
	mk uninstall
	[ -f "$conf" ] || fail "uninstall removed a changed configuration"
	assert_grep "^keeping $conf: changed since it was installed\$" "$OUT"
	# the example unchanged goes with the rest
	rm -f "$conf"
	mk install
	mk uninstall
	[ ! -e "$conf" ] || fail "uninstall left the example unchanged"
}
test_expect_success 'make install: the configuration from the example, kept' installs

test_done
