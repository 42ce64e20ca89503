#!/bin/sh
# The local flock files live in a private directory of the user's own,
# RUNTIME_DIR/cronguard-UID (0700), as tmux keeps its sockets: with a
# shared, world-writable runtime directory (/tmp, the usual cron case)
# another user can neither hold a planted lock file to make every run skip,
# nor plant a symbolic link for cronguard to truncate.  A private directory
# that is not a directory of ours with mode 0700, a lock file that is not
# a regular file of ours, and a runtime directory that cannot be used are
# configuration errors (78) naming the fix.  A holder that cannot be
# identified is logged at warning level each time it makes a run skip.
# Cases: setup; a planted lock file; a planted link; the private
# directory; an unknown holder; a bad private directory; a bad lock file;
# an unusable runtime directory; runs again.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers

shared=$TEST_TMP/tmp
mkdir "$shared"
chmod 1777 "$shared"
lock=$TEST_ID
private=$shared/cronguard-$(id -u)
ran=$TEST_TMP/ran
jobs()	# jobs RUNTIME_DIR
{
	write_config "$CONF" "runtime_dir = \"$1\";
jobs = { j = { command = [ \"sh\", \"-c\", \"echo ran >> $ran\" ];
  lock = \"$lock\"; max_runtime = \"1h\"; grace = \"10m\"; }; };"
}
runs() { cat "$ran" 2>/dev/null | wc -l | tr -d ' '; }
planted=$shared/cronguard-lock-$lock.lock
victim=$TEST_TMP/victim
setup()
{
	jobs "$shared"
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: a shared sticky runtime directory, db migrate' \
    setup

# The name an attacker could predict in the shared directory: a lock file
# held by someone else.  The job still runs.
planted()
{
	local holder
	: > "$planted"
	flock "$planted" sleep 60 &
	holder=$!
	at_exit "kill $holder 2>/dev/null"
	wait_for 5 sh -c "! flock -n '$planted' true"
	assert_exit 0 cg run j
	assert_eq 1 "$(runs)" "runs despite a planted, held lock file"
	kill "$holder"
	wait "$holder" 2>/dev/null || true
	rm -f "$planted"
}
test_expect_success 'a planted, held lock file in the shared directory: the job still runs' \
    planted

# A symbolic link under that name is never followed.
planted_link()
{
	echo precious > "$victim"
	ln -s "$victim" "$planted"
	assert_exit 0 cg run j
	assert_eq precious "$(cat "$victim")" "symlink target untouched"
	assert_eq 2 "$(runs)"
}
test_expect_success 'a planted symbolic link is never followed' planted_link

# The private directory: created 0700, owned by us, the lock file inside.
private()
{
	assert_eq "700 $(id -u)" "$(stat -c '%a %u' "$private")" "private directory"
	assert_eq "600 $(id -u)" \
	    "$(stat -c '%a %u' "$private/lock-$lock.lock")" "lock file"
}
test_expect_success 'the private directory: 0700, ours, the lock file inside' \
    private

# A holder cronguard cannot identify (no live pid in the file): the skip
# is a warning, every time.
unknown()
{
	local holder
	echo garbage > "$private/lock-$lock.lock"
	flock "$private/lock-$lock.lock" sleep 60 &
	holder=$!
	at_exit "kill $holder 2>/dev/null"
	wait_for 5 sh -c "! flock -n '$private/lock-$lock.lock' true"
	for _ in 1 2; do
		assert_exit 0 cg run j
		assert_grep 'level=warn event=job_skipped .*holder="unknown process' "$ERR"
	done
	assert_eq 2 "$(runs)" "skipped while held"
	# Held longer than max_runtime + grace by the file's age: stuck, 75.
	touch -d '2 hours ago' "$private/lock-$lock.lock"
	assert_exit 75 cg run j
	assert_grep 'level=error event=lock_busy_stuck .*unknown process' "$ERR"
	kill "$holder"
	wait "$holder" 2>/dev/null || true
}
test_expect_success 'a holder that cannot be identified: a warning each time; stuck: 75' \
    unknown

# A private directory open to others, one that is a symbolic link, and
# (as root) one owned by another user are refused with 78 and the fix.
bad_dir()
{
	chmod 755 "$private"
	assert_exit 78 cg run j
	assert_grep "event=local_lock_failed .*$private is open to group or others \\(mode 755\\): chmod 700 it" "$ERR"
	chmod 700 "$private"
	mv "$private" "$TEST_TMP/elsewhere"
	ln -s "$TEST_TMP/elsewhere" "$private"
	assert_exit 78 cg run j
	assert_grep "$private is not a directory: remove it" "$ERR"
	rm "$private"
	mv "$TEST_TMP/elsewhere" "$private"
	if [ "$(id -u)" = 0 ]; then
		chown nobody "$private"
		assert_exit 78 cg run j
		assert_grep "$private is owned by uid [0-9]+, not uid 0: remove it" "$ERR"
		chown 0 "$private"
	fi
}
test_expect_success 'a private directory open to others, a link, or not ours: 78' \
    bad_dir

# A lock file that is not a regular file (planted before the directory
# was made private, say): refused, not opened.
bad_file()
{
	rm "$private/lock-$lock.lock"
	mkfifo "$private/lock-$lock.lock"
	assert_exit 78 cg run j
	assert_grep "lock-$lock\\.lock is not a regular file owned by uid [0-9]+: remove it" "$ERR"
	rm "$private/lock-$lock.lock"
	ln -s "$victim" "$private/lock-$lock.lock"
	assert_exit 78 cg run j
	assert_grep "lock-$lock\\.lock is a symbolic link: remove it" "$ERR"
	assert_eq precious "$(cat "$victim")"
	rm "$private/lock-$lock.lock"
	assert_eq 2 "$(runs)" "no run while refused"
}
test_expect_success 'a lock file that is not a regular file: refused, not opened' \
    bad_file

# A runtime directory that cannot be used is a configuration error with
# the fix in the message, not an internal error (70).
unusable()
{
	jobs "$TEST_TMP/no-such-dir"
	assert_exit 78 cg run j
	assert_grep "cannot create $TEST_TMP/no-such-dir/cronguard-[0-9]+: No such file or directory \\(runtime_dir $TEST_TMP/no-such-dir must exist and be writable by uid [0-9]+: create it, or set runtime_dir\\)" "$ERR"
	assert_exit 78 cg exec --lock "$lock" -- true
}
test_expect_success 'an unusable runtime directory: 78 with the fix' unusable

again()
{
	jobs "$shared"
	assert_exit 0 cg run j
	assert_eq 3 "$(runs)"
}
test_expect_success 'the shared directory again: the job runs' again

test_done
