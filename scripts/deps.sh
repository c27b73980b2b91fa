#!/bin/sh
# scripts/deps.sh: installs the Debian packages ccdiag builds, tests and runs
# with. Idempotent: installs only what is missing. As root it runs apt-get;
# otherwise it prints the apt-get line and exits 1.
set -eu

PACKAGES="gcc make pkg-config openmpi-bin libopenmpi-dev libjansson-dev libcmocka-dev
jq iproute2 util-linux iputils-ping gnuplot-nox libibverbs-dev librdmacm-dev libinih-dev"

missing=""
for p in $PACKAGES; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: missing packages:$missing" >&2
	echo "deps.sh: run as root: apt-get install -y$missing" >&2
	exit 1
fi
echo "deps.sh: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >&2
