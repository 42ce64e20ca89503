#!/bin/sh
# One metrics directory, documented with its owner: every --metrics-file
# path in the examples, man pages, README and the Debian files is in it
# (@metricsdir@ in the .in files, /var/lib/cronguard/metrics where the
# Debian paths are spelt out: what the package's tmpfiles.d entry creates,
# owned by cronguard); cronguard(1) lists it under FILES with its owner.
set -eu
top=${CRONGUARD_SRCDIR:?}
status=0
cd "$top"

bad=$(grep -n -- '--metrics-file [^ A-Za-z]' etc/*.in man/*.in README.md \
    debian/cronguard.cron.d debian/README.Debian 2>/dev/null |
    grep -v -e '--metrics-file @metricsdir@/' \
    -e '--metrics-file /var/lib/cronguard/metrics/' \
    -e '--metrics-file \\e$' || true)
if [ -n "$bad" ]; then
	echo "a --metrics-file path outside the one metrics directory:"
	echo "$bad"
	status=1
fi
if grep -n 'node-exporter\|/var/lib/prometheus' etc/*.in man/*.in README.md; then
	echo "the node_exporter package's root-owned directory is named above"
	status=1
fi
grep -q '^d @metricsdir@ [0-7]* cronguard cronguard' etc/cronguard.tmpfiles.in || {
	echo "etc/cronguard.tmpfiles.in does not create @metricsdir@ for cronguard"
	status=1
}
# cronguard(1) FILES: the directory and who owns it.
sed -n '/^\.Sh FILES/,/^\.Sh /p' man/cronguard.1.in > files.$$
grep -q '^\.It Pa @metricsdir@$' files.$$ && grep -q '^\.Li cronguard$' files.$$ || {
	echo "cronguard.1.in: FILES does not list @metricsdir@ and its owner"
	status=1
}
rm -f files.$$
exit $status
