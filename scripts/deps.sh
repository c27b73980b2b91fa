#!/bin/sh
# scripts/deps.sh: installs the Debian packages ccdiag builds, tests and runs
# with (libsqlite3-dev: ccreport's history; libssl-dev: the SHA-256 of each input, libcrypto;
# sqlite3 and prometheus, whose promtool validates the --prom exposition: the tests;
# libopenblas-dev: the host matmuls of ccprobe's trainstep; python3-torch:
# workloads/torch_step.py, Debian's PyTorch 1.13, CPU and gloo, ~220 MB installed, ~75 s
# to install). Idempotent: installs only what is missing. As root it runs apt-get;
# otherwise it prints the apt-get line and exits 1. OPTIONAL packages (a
# browser for tests/integration/test_report_html.sh) are tried when the
# package is known to apt; failing to get them never fails this script.
# --missing-build prints the missing packages that a plain `make` needs (the
# Makefile's check: as root it runs this script, otherwise it stops with one
# line naming them) and exits 0; --missing-packaging those that `make install`,
# `make man` and `make deb` need besides. CCDIAG_DPKG_ADMINDIR (tests) points
# dpkg-query at another database.
set -eu

# what `make` alone needs to build ccprobe and ccreport
BUILD="gcc make openmpi-bin libopenmpi-dev libjansson-dev libinih-dev libsqlite3-dev libssl-dev"
# what `make install` and `make deb` need beyond it: help2man writes the man pages from
# --help, dpkg-dev's dpkg-shlibdeps the package's Depends
PACKAGING="help2man dpkg-dev"
PACKAGES="$BUILD $PACKAGING pkg-config libcmocka-dev
jq iproute2 util-linux iputils-ping gnuplot-nox libibverbs-dev librdmacm-dev
glusterfs-server glusterfs-client fio sqlite3 prometheus
munge slurmctld slurmd slurm-client libopenblas-dev python3-torch"

OPTIONAL="chromium"

installed() {
	dpkg-query ${CCDIAG_DPKG_ADMINDIR:+--admindir="$CCDIAG_DPKG_ADMINDIR"} -W -f='${Status}' "$1" \
		2>/dev/null | grep -q "ok installed"
}

case ${1:-} in
--missing-build | --missing-packaging)
	if [ "$1" = --missing-build ]; then list=$BUILD; else list=$PACKAGING; fi
	for p in $list; do
		installed "$p" || printf '%s ' "$p"
	done
	exit 0
	;;
esac

# optional: only when apt knows the package; a failure is a note, not an error
optional() {
	local p
	for p in $OPTIONAL; do
		installed "$p" && continue
		if ! apt-cache policy "$p" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
			echo "deps.sh: optional package $p is not available; its tests will skip" >&2
			continue
		fi
		if [ "$(id -u)" -ne 0 ]; then
			echo "deps.sh: optional package $p is missing (as root: apt-get install -y $p)" >&2
			continue
		fi
		echo "deps.sh: installing optional $p" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$p" >&2 ||
			echo "deps.sh: optional package $p could not be installed; its tests will skip" >&2
	done
	return 0
}

missing=""
for p in $PACKAGES; do
	installed "$p" || missing="$missing $p"
done
if [ -z "$missing" ]; then
	optional
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: missing packages:$missing; run scripts/deps.sh as root (apt-get install -y$missing)" >&2
	exit 1
fi
echo "deps.sh: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >&2
optional
