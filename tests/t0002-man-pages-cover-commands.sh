#!/bin/sh
# Every command of cmd_table is documented in cronguard(1) with every
# option of its usage string, every exit code of src/cmd.h is in the EXIT
# STATUS list, and every configuration key the parser accepts is in
# cronguard.conf(5).
set -euf
top=${CRONGUARD_SRCDIR:?}
dump=${CRONGUARD_BUILDDIR:?}/tests/dump-names
status=0

"$dump" commands > cmds.$$
while read -r name; do
	# ".It Ic outbox dispatch" or ".It Xo Ic outbox dispatch"
	if ! grep -Eq "^\.It (Xo )?Ic $name( |\$)" "$top/man/cronguard.1.in"; then
		echo "cronguard.1.in: command '$name' is not documented"
		status=1
	fi
done < cmds.$$

"$dump" keys > keys.$$
[ -s keys.$$ ] || { echo "no configuration keys listed"; status=1; }
while read -r key; do
	# Each named part of "channels.*.circuit.failures" must be an item or
	# heading of cronguard.conf(5).
	for part in $(echo "$key" | tr '.' ' '); do
		[ "$part" = "*" ] && continue
		if ! grep -Eq "^\.(It|Ss|Sh)( Xo)? (Ic|Cm|Li|Va) $part( |\$)" \
		    "$top/man/cronguard.conf.5.in"; then
			echo "cronguard.conf.5.in: key '$key' ('$part') is not documented"
			status=1
		fi
	done
done < keys.$$
# Options: "--for" in a usage string must be "Fl -for" in the page.
"$dump" usages | tr '\t' ' ' | grep -o -- '--[a-z][a-z-]*' | sort -u > opts.$$
[ -s opts.$$ ] || { echo "no options found in usage strings"; status=1; }
while read -r opt; do
	if ! grep -q -- "Fl -${opt#--}\( \|\$\)" "$top/man/cronguard.1.in"; then
		echo "cronguard.1: option '$opt' is not documented"
		status=1
	fi
done < opts.$$

# Exit codes: each EXIT_* value is an item of the EXIT STATUS section.
sed -n '/^\.Sh EXIT STATUS/,/^\.Sh /p' "$top/man/cronguard.1.in" > exits.$$
for code in $(sed -n 's/^#define EXIT_[A-Z]*[[:space:]]*\([0-9][0-9]*\).*/\1/p' \
    "$top/src/cmd.h" "$top/src/exitcode.h"); do
	if ! grep -q "^\.It $code\( \|\$\)" exits.$$; then
		echo "cronguard.1: exit code $code is not in EXIT STATUS"
		status=1
	fi
done
rm -f cmds.$$ keys.$$ opts.$$ exits.$$
exit $status
