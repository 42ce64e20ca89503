#!/bin/sh
# Every shell script (scripts/, .ci/run, tests/) is clean under
# `shellcheck -S warning`.  Skipped when shellcheck is missing, a failure
# under CI=true.
set -eu
top=${CRONGUARD_SRCDIR:?}
if ! command -v shellcheck > /dev/null; then
	echo "shellcheck missing"
	[ "${CI:-}" = true ] && exit 1
	exit 77
fi
cd "$top"
set --
for f in scripts/* .ci/run tests/*.sh tests/integration/*.sh; do
	[ -f "$f" ] || continue
	case $f in
	*.sh) ;;
	*) head -n 1 "$f" | grep -qE '^#!.*/(env )?(ba|da)?sh' ||
	    grep -q '^# shellcheck shell=' "$f" || continue ;;
	esac
	set -- "$@" "$f"
done
[ $# -gt 0 ] || { echo "no shell scripts found under $top"; exit 1; }
shellcheck -S warning "$@"
