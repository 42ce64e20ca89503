#!/bin/sh
# Rejects functions the style bans (doc/style.md; git's banned.h list plus
# atoi, strtok, gets).  src/banned.h makes them compile errors; this grep
# is the backstop for code built without it (fuzz/, tests/).  Comments are
# ignored.  Lists each use as file:line: text, and fails.
srcdir=${CRONGUARD_SRCDIR:-${srcdir:-.}}
found=0
for f in "$srcdir"/src/*.c "$srcdir"/src/*.h "$srcdir"/tests/*.c \
    "$srcdir"/tests/unit/*.c "$srcdir"/tests/unit/*.h "$srcdir"/fuzz/*.c; do
	[ -f "$f" ] || continue
	case $f in */src/banned.h) continue ;; esac
	# Blank out comments but keep line numbers, then look for calls.
	hits=$(perl -0777 -pe 's{/\*.*?\*/}{(my $c = $&) =~ s/[^\n]//g; $c}gse;
	    s{//[^\n]*}{}g' "$f" |
	    grep -nE '\b(atoi|v?sprintf|str(n?cpy|n?cat|tok)|gets|gmtime|localtime|(as)?ctime(_r)?)[[:space:]]*\(') ||
	    continue
	printf '%s\n' "$hits" | sed "s|^|${f#"$srcdir"/}:|"
	found=1
done
if [ "$found" -ne 0 ]; then
	echo "banned functions used (see doc/style.md): use parse_ll/parse_ull," \
	    "snprintf, struct buf, strsep/strtok_r, gmtime_r/localtime_r, strftime" >&2
	exit 1
fi
exit 0
