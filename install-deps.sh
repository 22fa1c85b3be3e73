#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Install the Debian packages hwtrace needs to build, test and demo.
# Says what it installs; installs nothing when everything is present;
# stops with a clear message on systems it does not know.

set -eu

PKGS="build-essential clang libclang-rt-14-dev pkg-config
libarchive-dev libzstd-dev zlib1g-dev zstd libjansson-dev
libipt-dev libopencsd-dev libopencsd-bin
libsqlite3-dev sqlite3 libpq-dev postgresql libelf-dev libdw-dev libzydis-dev
libiberty-dev libdebuginfod-dev liblzma-dev dwz xz-utils
kyua atf-sh libatf-dev mandoc valgrind g++ lcov python3 time
gdb libc6-dbg linux-perf lld mold rustc golang-go chromium cpuid"
# hwtrace report's page inlines d3-flame-graph, which make installs with
# npm at build time (query/report/package-lock.json); a machine whose
# node and npm come from elsewhere (NodeSource's nodejs ships npm) keeps
# them.
command -v npm >/dev/null 2>&1 || PKGS="$PKGS nodejs npm"

die() { echo "install-deps: $*" >&2; exit 1; }

[ "$(uname -s)" = Linux ] || die "hwtrace builds on Debian Linux; this is $(uname -s)"
[ -r /etc/os-release ] || die "cannot tell which system this is (/etc/os-release missing)"
. /etc/os-release
case "${ID:-}:${VERSION_ID:-}" in
debian:12|debian:13) ;;
*) die "unknown system '${PRETTY_NAME:-$ID}': hwtrace knows Debian 12 (bookworm); install by hand:
  $(echo $PKGS)" ;;
esac
[ "$(uname -m)" = x86_64 ] || die "hwtrace's build needs x86-64; this is $(uname -m)"

missing=""
for p in $PKGS; do
	s=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$s" = installed ] || missing="$missing $p"
done
[ -n "$missing" ] || exit 0

echo "install-deps: installing Debian packages:$missing"
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 || die "not root and no sudo: as root run apt-get install$missing"
	SUDO=sudo
else
	SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || die "apt-get update failed"
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing ||
	die "apt-get install failed for:$missing"
echo "install-deps: done"
