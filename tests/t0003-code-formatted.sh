#!/bin/sh
# Every C file is formatted with the repository's .clang-format
# (scripts/format applies it).  Skipped when clang-format is missing.
set -eu
top=${CRONGUARD_SRCDIR:?}
command -v clang-format > /dev/null || { echo "clang-format missing"; exit 77; }
cd "$top"
status=0
for f in src/*.c src/*.h tests/*.c tests/unit/*.c tests/unit/*.h \
    tests/integration/*.c fuzz/*.c; do
	[ -e "$f" ] || continue
	if ! clang-format --dry-run --Werror "$f" 2> /dev/null; then
		echo "$f: not formatted (run scripts/format)"
		status=1
	fi
done
exit $status
