#!/bin/sh
# The generated man pages are clean under `mandoc -Tlint` (warnings too)
# and `groff -ww`, are plain ASCII (special characters as escapes), and
# show no unsubstituted @path@ from their .in.
set -euf
build=${CRONGUARD_BUILDDIR:?}
status=0
pages="$build/man/cronguard.1 $build/man/cronguard.conf.5 $build/man/cronguard-outbox.7"
for p in $pages; do
	[ -s "$p" ] || { echo "$p: missing (make builds it from $p.in)"; exit 1; }
	if grep -n '@[a-z]*dir@' "$p"; then
		echo "$p: unsubstituted path"
		status=1
	fi
	if LC_ALL=C grep -n '[^ -~	]' "$p"; then
		echo "$p: raw non-ASCII text (use a groff escape such as \\(:u)"
		status=1
	fi
done
if command -v mandoc > /dev/null; then
	out=$(mandoc -Tlint -Wwarning $pages 2>&1) || true
	[ -z "$out" ] || { printf '%s\n' "$out"; status=1; }
else
	[ "${CI:-}" = true ] && { echo "mandoc missing"; exit 1; }
	echo "mandoc not installed: lint skipped"
fi
if command -v groff > /dev/null; then
	for p in $pages; do
		out=$(LC_ALL=C groff -ww -z -mandoc -Tutf8 "$p" 2>&1) || true
		[ -z "$out" ] || { printf '%s: %s\n' "$p" "$out"; status=1; }
	done
else
	[ "${CI:-}" = true ] && { echo "groff missing"; exit 1; }
	echo "groff not installed: groff check skipped"
fi
exit $status
