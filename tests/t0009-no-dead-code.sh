#!/bin/sh
# No dead code, kept so: every global function the product defines (the
# `T` symbols of libcronguard.a and main.o, as nm lists them) is named
# somewhere in the product's sources (src/*.c and src/*.h, comments
# stripped by the preprocessor) besides its own definition.  A function
# only the unit tests call must be on the short list below, with why.
#
# The sources are read, not the objects: the build inlines calls within a
# file (-O2), so a call leaves no trace an object can show.
set -eu
top=${CRONGUARD_SRCDIR:?}
build=${CRONGUARD_BUILDDIR:?}

# Test-only helpers: product API the unit suites use and the product does
# not (yet), each with its reason.
test_only='
conf_keys          check_conf walks the one key table through it
conf_keys_free     its pair
db_txn             check_db_live: a transaction without a commit check
incident_set_sink  check_log and fakelock read the incidents reported
report_text_dup    check_report tests the one control-character escaper through it
'

for t in nm gcc; do
	command -v "$t" > /dev/null || { echo "$t missing"; exit 77; }
done
lib=$build/libcronguard.a
main=$build/src/main.o
[ -f "$lib" ] && [ -f "$main" ] || { echo "no build in $build"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

nm -g --defined-only "$lib" "$main" 2> /dev/null |
    awk '$2 == "T" { print $3 }' | sort -u > "$tmp/defined"
[ -s "$tmp/defined" ] || { echo "nm listed no functions in $lib"; exit 1; }

# The .c files with comments out and macros unexpanded (-fpreprocessed
# -dD), and the #define lines of the headers (continuations joined,
# comments cut), so that a call made through a macro counts; declarations
# in headers do not.
for f in "$top"/src/*.c; do
	sed -e :a -e '/\\$/N; s/\\\n/ /; ta' "$f" |
	    gcc -std=c11 -fpreprocessed -dD -E -P -x c - 2> /dev/null ||
	    { echo "cannot read $f"; exit 1; }
done > "$tmp/src"
for f in "$top"/src/*.h; do
	sed -e :a -e '/\\$/N; s/\\\n/ /; ta' "$f" | grep '^#define' |
	    sed 's,/\*.*\*/,,g'
done >> "$tmp/src" || true
[ -s "$tmp/src" ] || { echo "no sources read under $top/src"; exit 1; }

# Every identifier with its count, and every identifier that starts a
# line followed by "(": the definitions (the style puts the name of a
# function at the start of its line).
grep -oE '[A-Za-z_][A-Za-z0-9_]*' "$tmp/src" | sort | uniq -c |
    awk '{ print $2, $1 }' > "$tmp/uses"
grep -oE '^[A-Za-z_][A-Za-z0-9_]*\(' "$tmp/src" | tr -d '(' | sort |
    uniq -c | awk '{ print $2, $1 }' > "$tmp/defs"

fail=0
while read -r fn; do
	[ "$fn" = main ] && continue
	n=$(awk -v f="$fn" '$1 == f { print $2 }' "$tmp/uses")
	d=$(awk -v f="$fn" '$1 == f { print $2 }' "$tmp/defs")
	refs=$(( ${n:-0} - ${d:-0} ))
	[ "$refs" -gt 0 ] && continue
	if printf '%s\n' "$test_only" | grep -qE "^$fn "; then
		continue
	fi
	echo "dead: $fn is defined but nothing in src/ calls it (delete it, or add it to test_only in $0 with why)"
	fail=1
done < "$tmp/defined"

# The list holds only what is still test-only.
printf '%s\n' "$test_only" | awk 'NF { print $1 }' | while read -r fn; do
	grep -qx "$fn" "$tmp/defined" ||
	    echo "stale: $fn is on the test-only list but no longer defined"
done | grep . && fail=1
exit $fail
