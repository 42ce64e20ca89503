# scripts/common.sh: shared by scripts/test and scripts/demo (bash).
# shellcheck shell=bash
#
#   cg_install_deps   install the Debian packages the build and tests need
#                     (apt-get update once, only when something is missing)
#   cg_build [-n]     autoreconf, configure ($CG_CONFIGURE, by default
#                     --enable-debug --enable-asan --enable-fault-injection)
#                     and make in $CG_BUILDDIR; -n: skip autoreconf and
#                     configure when the build directory is configured
#   cg_say / cg_warn / cg_die   messages
#
# CG_SRCDIR is the source tree; CG_BUILDDIR is $CRONGUARD_BUILDDIR, else
# $CG_SRCDIR/build.

CG_SRCDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CG_BUILDDIR=${CRONGUARD_BUILDDIR:-$CG_SRCDIR/build}
CG_JOBS=${CRONGUARD_JOBS:-2}
# The crash points (src/faultpoint.h) cost a getenv where they are and
# nothing without CRONGUARD_FAULT: the test build has them for scripts/chaos.
CG_CONFIGURE="--enable-debug --enable-asan --enable-fault-injection"
CG_PACKAGES="build-essential autoconf automake pkg-config libmariadb-dev
	libcurl4-openssl-dev libconfig-dev libjansson-dev libssl-dev check faketime cron
	libsubunit-dev mariadb-server mariadb-client python3-aiosmtpd
	nginx-light hyperfine curl clang-format mandoc groff-base shellcheck
	librabbitmq-dev rabbitmq-server amqp-tools python3-pika galera-4 rsync
	prometheus python3-yaml bash-completion zsh nagios4-core icinga2-bin chromium
	python3-croniter tzdata haproxy socat clang-tools cppcheck strace"

cg_say() { printf '==> %s\n' "$*"; }
cg_warn() { printf '%s: warning: %s\n' "${0##*/}" "$*" >&2; }
cg_die() { printf '%s: error: %s\n' "${0##*/}" "$*" >&2; exit 1; }

cg_missing_packages()
{
	local p
	for p in $CG_PACKAGES; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
		    grep -q 'install ok installed' || printf '%s ' "$p"
	done
}

cg_install_deps()
{
	local missing sudo='' policy=/usr/sbin/policy-rc.d added=''
	command -v dpkg-query > /dev/null ||
	    { cg_warn "not a Debian system: install the equivalent of: $CG_PACKAGES"; return 0; }
	missing=$(cg_missing_packages)
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo > /dev/null ||
		    cg_die "missing packages: $missing (run as root, or install them)"
		sudo=sudo
	fi
	cg_say "installing: $missing"
	# The tests start their own servers: keep the packages' system
	# services (mariadb, nginx) from starting during the install.
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" > /dev/null &&
		    $sudo chmod 755 "$policy" && added=1
	fi
	export DEBIAN_FRONTEND=noninteractive
	if ! { $sudo apt-get update -q &&
	    $sudo apt-get install -y -q --no-install-recommends $missing; }; then
		[ -n "$added" ] && $sudo rm -f "$policy"
		cg_die "apt-get install failed"
	fi
	[ -n "$added" ] && $sudo rm -f "$policy"
	missing=$(cg_missing_packages)
	[ -z "$missing" ] || cg_die "still missing after install: $missing"
}

cg_build()
{
	local quick=
	[ "${1:-}" = -n ] && quick=1
	if [ -f "$CG_SRCDIR/config.status" ] &&
	    [ "$CG_BUILDDIR" != "$CG_SRCDIR" ]; then
		cg_die "$CG_SRCDIR is configured in-tree; run 'make distclean' there first"
	fi
	if [ -z "$quick" ] || [ ! -x "$CG_SRCDIR/configure" ]; then
		cg_say "autoreconf -fi"
		(cd "$CG_SRCDIR" && autoreconf -fi) || cg_die "autoreconf failed"
	fi
	mkdir -p "$CG_BUILDDIR" || cg_die "cannot create $CG_BUILDDIR"
	if [ -z "$quick" ] || [ ! -f "$CG_BUILDDIR/config.status" ]; then
		cg_say "configure $CG_CONFIGURE (in $CG_BUILDDIR)"
		# shellcheck disable=SC2086 # CG_CONFIGURE is a list
		(cd "$CG_BUILDDIR" && "$CG_SRCDIR/configure" -q $CG_CONFIGURE) ||
		    cg_die "configure failed (see $CG_BUILDDIR/config.log)"
	fi
	cg_say "make -j$CG_JOBS"
	make -C "$CG_BUILDDIR" -j"$CG_JOBS" || cg_die "build failed"
}

# Sanitizer settings for everything the tests run: fail on the first
# report, with a stack trace.
# cg_bench_binary: BIN, a release build (-O2, no sanitizers) of this
# tree for the benchmarks, in $CRONGUARD_BENCH_BUILDDIR (default
# build-bench in the tree: a directory shared by two trees would build,
# and measure, whichever tree configured it first); $CRONGUARD_BIN
# instead when set.
cg_bench_binary()
{
	local bdir=${CRONGUARD_BENCH_BUILDDIR:-$CG_SRCDIR/build-bench}

	if [ -n "${CRONGUARD_BIN:-}" ]; then
		BIN=$CRONGUARD_BIN
		return 0
	fi
	[ -x "$CG_SRCDIR/configure" ] || (cd "$CG_SRCDIR" && autoreconf -fi)
	if [ -f "$bdir/config.status" ] &&
	    ! grep -qxF "srcdir='$CG_SRCDIR'" "$bdir/config.status"; then
		cg_say "$bdir was configured for another tree: configuring anew"
		rm -rf "$bdir"
	fi
	mkdir -p "$bdir"
	if [ ! -f "$bdir/config.status" ]; then
		cg_say "configure (release: -O2, no sanitizers) in $bdir"
		(cd "$bdir" && "$CG_SRCDIR/configure" -q CFLAGS="-O2 -g") ||
		    cg_die "configure failed"
	fi
	cg_say "make cronguard"
	make -s -C "$bdir" -j"$CG_JOBS" cronguard || cg_die "build failed"
	# shellcheck disable=SC2034 # BIN: for the calling script
	BIN=$bdir/cronguard
}

cg_sanitizer_env()
{
	export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1:halt_on_error=1}
	export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
}
