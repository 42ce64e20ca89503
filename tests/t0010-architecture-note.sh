#!/bin/sh
# doc/architecture.md stays true: it places every src/*.c (by name, or
# cmd-*.c for the command files), every file it cites exists, and every
# snake_case name it cites in backquotes (a function, a key, a table, an
# index, a test helper) still exists in the code: in src/ (comments
# stripped), sql/ or tests/.
set -eu
top=${CRONGUARD_SRCDIR:?}
note=$top/doc/architecture.md
[ -f "$note" ] || { echo "$note missing"; exit 1; }
command -v gcc > /dev/null || { echo "gcc missing"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

for f in "$top"/src/*.c; do
	b=${f##*/}
	case $b in
	cmd-*.c) grep -qF 'cmd-*.c' "$note" && continue ;;
	esac
	grep -qF "$b" "$note" && continue
	echo "unplaced: src/$b is not named in doc/architecture.md"
	fail=1
done

# Every file it cites exists (but for another project's, named here, and
# placeholders in capitals).
other='do_command.c'
grep -oE '(^|[^A-Za-z0-9_-])[a-z0-9][a-z0-9_-]*\.[ch]\b' "$note" |
    sed 's/^[^a-z0-9]//' | sort -u | while read -r f; do
	case " $other " in *" $f "*) continue ;; esac
	[ -n "$(find "$top/src" "$top/tests" "$top/fuzz" -name "$f" 2> /dev/null)" ] ||
	    echo "stale: doc/architecture.md cites $f, which is not in src/, tests/ or fuzz/"
done > "$tmp/files"
if [ -s "$tmp/files" ]; then
	cat "$tmp/files"
	fail=1
fi

# The names the code holds: identifiers of src/ without its comments, and
# of sql/ and tests/ as they are.
for f in "$top"/src/*.c "$top"/src/*.h; do
	sed -e :a -e '/\\$/N; s/\\\n/ /; ta' "$f" |
	    gcc -std=c11 -fpreprocessed -dD -E -P -x c - 2> /dev/null ||
	    { echo "cannot read $f"; exit 1; }
done > "$tmp/code"
cat "$top"/sql/*.sql "$top"/tests/unit/*.c "$top"/tests/integration/*.sh \
    >> "$tmp/code"
grep -oE '[A-Za-z_][A-Za-z0-9_]*' "$tmp/code" | sort -u > "$tmp/names"

grep -oE '`[a-z][a-z0-9]*_[a-z0-9_]+`' "$note" | tr -d '`' | sort -u |
    while read -r name; do
	grep -qx "$name" "$tmp/names" ||
	    echo "stale: doc/architecture.md cites \`$name\`, which nothing in src/, sql/ or tests/ defines"
done > "$tmp/stale"
if [ -s "$tmp/stale" ]; then
	cat "$tmp/stale"
	fail=1
fi
exit $fail
