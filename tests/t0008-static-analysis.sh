#!/bin/sh
# The product is clean under cppcheck (the project's settings) and the
# Clang static analyzer (scan-build --status-bugs over the product build):
# scripts/analyze, every finding a failure.  About two minutes on two
# cores.  Skipped when cppcheck or scan-build is missing, a failure under
# CI=true (scripts/test installs both: clang-tools, cppcheck).
set -eu
top=${CRONGUARD_SRCDIR:?}
for tool in cppcheck scan-build; do
	if ! command -v "$tool" > /dev/null; then
		echo "$tool missing"
		[ "${CI:-}" = true ] && exit 1
		exit 77
	fi
done
exec sh "$top/scripts/analyze" cppcheck scan-build
