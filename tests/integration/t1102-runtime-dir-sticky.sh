#!/bin/sh
# The shared runtime directory must keep one user from moving another's
# private lock directory: cronguard refuses a runtime_dir that group or
# others can write without the sticky bit, or that is owned by another
# user (exit 78 with the fix); with the package's 3775 root:cronguard, a
# second user of the group can neither rename the first one's private
# directory nor get a planted one accepted.  Needs no database (guard
# "local", no database section).  The two-user cases run as root (two
# throwaway users and a group, prerequisite ROOT); without root they are
# skipped, under CI=true that is a failure.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

# local_conf FILE RUNTIME_DIR: one guard = "local" job, no database.
local_conf()
{
	(umask 077; cat > "$1" <<CONF
runtime_dir = "$2";
jobs = { j = { command = [ "sh", "-c", "echo ran" ]; guard = "local"; }; };
CONF
	)
}

# As this user: group-writable without the sticky bit is refused; with
# it (and owned by us), fine; a private runtime_dir is not checked.
shared_needs_sticky()
{
	local shared=$TEST_TMP/shared
	mkdir "$shared"
	local_conf "$CONF" "$shared"
	chmod 2775 "$shared"
	assert_exit 78 cg run j
	assert_grep "runtime_dir $shared is writable by group or others \\(mode 2775\\) but not sticky: .*chmod \\+t it" "$ERR"
	[ ! -e "$shared/cronguard-$(id -u)" ] || fail "private directory created in a non-sticky runtime_dir"
	chmod 0777 "$shared"
	assert_exit 78 cg run j
	chmod 3775 "$shared"
	assert_exit 0 cg run j
	chmod 0700 "$shared"
	assert_exit 0 cg run j
}
test_expect_success 'a shared runtime_dir must be sticky; a private one is not checked' \
    shared_needs_sticky

# The two-user part: two throwaway users in a throwaway group, as the
# package's users of group cronguard, and a world-traversable place for
# the runtime directory, the binary and each user's configuration.
grp=cgt$$
ua=cgta$$
ub=cgtb$$
top=$(mktemp -d /tmp/cg-t1102.XXXXXX)
at_exit "rm -rf $top"
run=$top/run
as() { u=$1; shift; runuser -u "$u" -- "$@"; }
uid() { id -u "$1"; }

two_users()
{
	local u
	groupadd "$grp"
	at_exit "groupdel $grp 2>/dev/null"
	useradd -M -N -g "$grp" -d /nonexistent -s /bin/sh "$ua"
	at_exit "userdel $ua 2>/dev/null"
	useradd -M -N -g "$grp" -d /nonexistent -s /bin/sh "$ub"
	at_exit "userdel $ub 2>/dev/null"
	chmod 755 "$top"
	cp "$CRONGUARD_BIN" "$top/cronguard"
	chmod 755 "$top/cronguard"
	mkdir "$run"
	chown root:"$grp" "$run"
	chmod 3775 "$run"
	for u in "$ua" "$ub"; do
		local_conf "$top/$u.conf" "$run"
		chown "$u" "$top/$u.conf"
	done
}
test_expect_success ROOT 'two users of one group, a 3775 runtime directory' \
    two_users

# A runs: its private directory, 0700, its own.  B can neither rename
# nor remove it (sticky), nor plant a replacement.
private_dir_kept()
{
	assert_exit 0 as "$ua" "$top/cronguard" -c "$top/$ua.conf" run j
	assert_eq "$(uid "$ua")" "$(stat -c '%u' "$run/cronguard-$(uid "$ua")")" "owner of A's private directory"
	assert_exit 1 as "$ub" mv "$run/cronguard-$(uid "$ua")" "$run/moved"
	assert_exit 1 as "$ub" rmdir "$run/cronguard-$(uid "$ua")"
	[ -d "$run/cronguard-$(uid "$ua")" ] || fail "B moved A's private directory"
	assert_exit 0 as "$ua" "$top/cronguard" -c "$top/$ua.conf" run j
}
test_expect_success ROOT "B can neither move nor remove A's private directory" \
    private_dir_kept

# A directory planted under A's name (before A's first run) is refused.
planted_dir_refused()
{
	local uida
	uida=$(uid "$ua")
	rm -rf "$run/cronguard-$uida"
	as "$ub" mkdir -m 755 "$run/cronguard-$uida"
	assert_exit 78 as "$ua" "$top/cronguard" -c "$top/$ua.conf" run j
	assert_grep "cronguard-$uida is owned by uid $(uid "$ub"), not uid $uida: remove it" "$ERR"
	chmod 700 "$run/cronguard-$uida"
	assert_exit 78 as "$ua" "$top/cronguard" -c "$top/$ua.conf" run j
	rm -rf "$run/cronguard-$uida"
}
test_expect_success ROOT "a directory B planted under A's name is refused" \
    planted_dir_refused

# Without the sticky bit (the old 2775), B could have moved it; cronguard
# refuses to use such a directory at all.  Sticky, but owned by B: B may
# rename anything in it.
unsafe_runtime_dir()
{
	chmod 2775 "$run"
	assert_exit 78 as "$ua" "$top/cronguard" -c "$top/$ua.conf" run j
	assert_grep "not sticky" "$ERR"
	chmod 3775 "$run"
	chown "$ub" "$run"
	assert_exit 78 as "$ua" "$top/cronguard" -c "$top/$ua.conf" run j
	assert_grep "owned by uid $(uid "$ub"), who could rename or replace" "$ERR"
}
test_expect_success ROOT 'a runtime directory not sticky, or owned by B, is refused' \
    unsafe_runtime_dir

test_done
