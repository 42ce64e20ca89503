#!/bin/sh
# Every command of cmd_table is documented in cronguard(1), and every
# configuration key the parser accepts in cronguard.conf(5).
set -euf
top=${CRONGUARD_SRCDIR:?}
dump=${CRONGUARD_BUILDDIR:?}/tests/dump-names
status=0

"$dump" commands > cmds.$$
while read -r name; do
	# ".It Ic outbox dispatch" or ".It Xo Ic outbox dispatch"
	if ! grep -Eq "^\.It (Xo )?Ic $name( |\$)" "$top/man/cronguard.1"; then
		echo "cronguard.1: command '$name' is not documented"
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
		    "$top/man/cronguard.conf.5"; then
			echo "cronguard.conf.5: key '$key' ('$part') is not documented"
			status=1
		fi
	done
done < keys.$$
rm -f cmds.$$ keys.$$
exit $status
