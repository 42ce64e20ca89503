#!/bin/sh
# Rejects functions the style bans (STYLE.md, as curl does): atoi, sprintf
# and vsprintf (use snprintf), strcat, strtok, gets.  Comments are ignored.
# Lists each use as file:line: text, and fails.
srcdir=${CRONGUARD_SRCDIR:-${srcdir:-.}}
found=0
for f in "$srcdir"/src/*.c "$srcdir"/src/*.h; do
	[ -f "$f" ] || continue
	# Blank out comments but keep line numbers, then look for calls.
	hits=$(perl -0777 -pe 's{/\*.*?\*/}{(my $c = $&) =~ s/[^\n]//g; $c}gse;
	    s{//[^\n]*}{}g' "$f" |
	    grep -nE '\b(atoi|v?sprintf|strcat|strtok|gets)[[:space:]]*\(') ||
	    continue
	printf '%s\n' "$hits" | sed "s|^|${f#"$srcdir"/}:|"
	found=1
done
if [ "$found" -ne 0 ]; then
	echo "banned functions used (see STYLE.md): use parse_ll/parse_ull," \
	    "snprintf, struct buf, strsep/strtok_r" >&2
	exit 1
fi
exit 0
