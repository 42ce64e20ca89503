#!/bin/sh
# --metrics-file is written to a fresh temporary file (mkstemp) beside the
# target and renamed over it: a symbolic link planted under a predictable
# temporary name is not followed, and a target that is not a regular file
# (a symbolic link, a FIFO, a device node) is refused, not replaced.
# Cases: setup; a planted temporary name; targets not regular files.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
dir=$TEST_TMP/metrics
M=$dir/cronguard.prom
victim=$TEST_TMP/victim
umask 022
setup()
{
	write_config "$CONF" 'channels = { hook = { type = "http"; url = "http://127.0.0.1:1/"; }; };'
	assert_exit 0 cg db migrate
	mkdir "$dir"
	echo precious > "$victim"
}
test_expect_success 'setup: db migrate, a metrics directory, a victim file' \
    setup

# The temporary name of the old code, PATH.tmp.PID, planted as a link
# (exec keeps the shell's pid for cronguard).
planted()
{
	local ino
	assert_exit 0 sh -c 'ln -s "$1" "$2.tmp.$$"; exec "$3" -c "$4" outbox check --metrics-file "$2"' \
	    sh "$victim" "$M" "$CRONGUARD_BIN" "$CONF"
	assert_eq precious "$(cat "$victim")" "link target after a planted temp name"
	assert_grep '^cronguard_outbox_up 1$' "$M"
	assert_eq "644 regular file" "$(stat -c '%a %F' "$M")" "metrics file mode"
	rm -f "$dir"/cronguard.prom.tmp.*
	ino=$(stat -c %i "$M")
	assert_exit 0 cg outbox check --metrics-file "$M"
	[ "$(stat -c %i "$M")" != "$ino" ] || fail "metrics file not replaced by rename"
	assert_eq "cronguard.prom" "$(ls "$dir")" "no temporary file left"
}
test_expect_success 'a link planted under the old temporary name is not followed' \
    planted

# The target itself a symbolic link, a FIFO, a device node: refused
# (UNKNOWN), left as it was.
refused()
{
	rm "$M"
	ln -s "$victim" "$M"
	assert_exit 3 cg outbox check --metrics-file "$M"
	assert_grep "metrics file $M: $M is not a regular file: not replacing it" "$ERR"
	assert_eq precious "$(cat "$victim")"
	[ -L "$M" ] || fail "the symbolic link was replaced"
	assert_exit 3 cg jobs check --metrics-file "$M"
	[ -L "$M" ] || fail "jobs check replaced the symbolic link"
	rm "$M"
	mkfifo "$M"
	assert_exit 3 cg outbox check --metrics-file "$M"
	assert_grep "is not a regular file: not replacing it" "$ERR"
	[ -p "$M" ] || fail "the FIFO was replaced"
	rm "$M"
	if [ "$(id -u)" = 0 ]; then
		mknod "$M" c 1 3	# /dev/null's numbers
		assert_exit 3 cg outbox check --metrics-file "$M"
		[ -c "$M" ] || fail "the device node was replaced"
		rm "$M"
	fi
	assert_eq "" "$(ls "$dir")" "no temporary file left after refusals"
}
test_expect_success 'a target that is a link, a FIFO or a device node: refused, left as it was' \
    refused

test_done
