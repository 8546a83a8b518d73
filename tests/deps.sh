#!/bin/sh
# Install the Debian packages causeway needs to build and test, if any are
# missing. Run as root on Debian 12 (make test and make demo call this).
set -eu
PKGS="make gcc clang llvm libbpf-dev bpftool libelf-dev libdw-dev liblz4-dev
libsqlite3-dev liburing-dev sqlite3 pkg-config zlib1g-dev linux-perf procps time strace
systemtap-sdt-dev postgresql-15 gnuplot-nox bc python3
golang-go gdb protobuf-compiler graphviz chromium"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
# The browser test (tests/export/browser.sh) installs speedscope with npm:
# Debian's Node.js and npm where the machine has none of its own.
command -v npm >/dev/null 2>&1 || missing="$missing nodejs npm"
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing Debian packages:$missing" >&2
	echo "deps: run as root, or: sudo apt-get install$missing" >&2
	exit 1
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
