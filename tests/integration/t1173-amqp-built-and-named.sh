#!/bin/sh
# AMQP is part of the package, not an accident of the build machine:
# debian/control Build-Depends names librabbitmq-dev and the description
# names AMQP; configure fails without librabbitmq unless --without-amqp;
# cronguard version lists the channels built in; cronguard(1) and
# cronguard.conf(5) name the amqp type; make install creates
# $(sysconfdir)/cronguard, which First setup writes into; First setup says
# CREATE DATABASE; the chaos crash row says what it checks.  No servers.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
top=$CRONGUARD_SRCDIR
: "${CRONGUARD_BUILDDIR:?}"

package_names_amqp()
{
	sed -n '/^Build-Depends:/,/^[A-Z]/p' "$top/debian/control" > "$TEST_TMP/bd"
	assert_grep '^ +librabbitmq-dev' "$TEST_TMP/bd"
	sed -n '/^Description:/,$p' "$top/debian/control" > "$TEST_TMP/desc"
	assert_grep 'AMQP' "$TEST_TMP/desc"
}
test_expect_success 'debian/control builds with librabbitmq and names AMQP' \
    package_names_amqp

pages_name_amqp()
{
	sed -n '/^\.Sh DESCRIPTION/,/^\.Sh /p' "$top/man/cronguard.1.in" > "$TEST_TMP/d1"
	assert_grep 'AMQP' "$TEST_TMP/d1"
	sed -n '/^\.It Ic type Pq string, required/,/^\.It /p' "$top/man/cronguard.conf.5.in" > "$TEST_TMP/t5"
	assert_grep '^\.Qq amqp' "$TEST_TMP/t5"
}
test_expect_success 'cronguard(1) and cronguard.conf(5) name the amqp type' \
    pages_name_amqp

version_channels()
{
	assert_exit 0 "$CRONGUARD_BIN" version
	if grep -q '^#define HAVE_AMQP 1' "$CRONGUARD_BUILDDIR/config.h"; then
		assert_grep '^channels: smtp http amqp$' "$OUT"
		assert_grep '^librabbitmq [0-9]' "$OUT"
	else
		assert_grep '^channels: smtp http ' "$OUT"
	fi
}
test_expect_success 'version names the channels built in' version_channels

# No librabbitmq is an error unless --without-amqp.  A pkg-config that
# knows every module but librabbitmq stands in for a machine without
# librabbitmq-dev.
configure_needs_amqp()
{
	local real rc=0
	real=$(command -v pkg-config || command -v pkgconf) || fail "no pkg-config"
	cat > "$TEST_TMP/pkg-config" <<EOF
#!/bin/sh
for a in "\$@"; do
	case \$a in librabbitmq*) exit 1 ;; esac
done
exec $real "\$@"
EOF
	chmod +x "$TEST_TMP/pkg-config"
	mkdir "$TEST_TMP/b1" "$TEST_TMP/b2"
	(cd "$TEST_TMP/b1" && PKG_CONFIG="$TEST_TMP/pkg-config" \
	    "$top/configure" -q > out 2> err) || rc=$?
	[ "$rc" != 0 ] || fail "configure without librabbitmq succeeded"
	assert_grep 'librabbitmq not found: install package librabbitmq-dev .*--without-amqp' "$TEST_TMP/b1/err"
	assert_exit 0 sh -c "cd '$TEST_TMP/b2' && PKG_CONFIG='$TEST_TMP/pkg-config' '$top/configure' -q --without-amqp"
	if grep -q '^#define HAVE_AMQP' "$TEST_TMP/b2/config.h"; then
		fail "--without-amqp built amqp"
	fi
}
test_expect_success 'configure: no librabbitmq is an error unless --without-amqp' \
    configure_needs_amqp

install_makes_confdir()
{
	local sysconf prefix
	assert_exit 0 make -s -C "$CRONGUARD_BUILDDIR" install-data DESTDIR="$TEST_TMP/root"
	sysconf=$(sed -n 's/^sysconfdir = //p' "$CRONGUARD_BUILDDIR/Makefile")
	prefix=$(sed -n 's/^prefix = //p' "$CRONGUARD_BUILDDIR/Makefile")
	sysconf=$(printf '%s' "$sysconf" | sed "s|\${prefix}|$prefix|")
	[ -d "$TEST_TMP/root$sysconf/cronguard" ] ||
	    fail "make install did not create $sysconf/cronguard"
}
test_expect_success 'make install creates the configuration directory' \
    install_makes_confdir

# README First setup creates the database; the chaos crash label says
# what its check checks (at most two copies of a message).
setup_and_chaos_say_it()
{
	sed -n '/^## First setup/,/^## /p' "$top/README.md" > "$TEST_TMP/setup"
	assert_grep '^ *CREATE DATABASE ' "$TEST_TMP/setup"
	grep -A2 '\[ "\$maxc" -le 2 \]' "$top/scripts/chaos" > "$TEST_TMP/chaos"
	assert_grep 'each delivered at most twice' "$TEST_TMP/chaos"
}
test_expect_success "README's First setup creates the database; chaos says what it checks" \
    setup_and_chaos_say_it

test_done
