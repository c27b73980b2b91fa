#!/bin/sh
# scripts/mkdeb.sh B: the Debian package of the binaries built in B (`make deb`,
# which first installs them with PREFIX=/usr into B/deb/debian/ccdiag, the tree
# packaged here). Writes B/ccdiag_VERSION_ARCH.deb (VERSION: scripts/version.sh deb)
# and prints one line: the file, its size, its Depends.
#
# Depends: what dpkg-shlibdeps finds for the libraries the binaries link, so a
# build without CUDA, NCCL or verbs depends on none of them, plus openmpi-bin (the
# launcher ccdiag runs). A linked library that no Debian package provides (the
# CUDA toolkit's libcudart, NCCL, under /usr/local/cuda) cannot be a Depends: the
# package's description names it, and so does this script's line; build with
# USE_CUDA=no (docs: README.md, Building) for a package that runs without it.
# CCDIAG_FEATURES (the Makefile's features line) goes into the description;
# CCDIAG_DEB_MAINTAINER overrides the Maintainer (default: the author of the
# commit built). Exit 0, or 2 with one line.
set -eu
die() { echo "mkdeb.sh: $*" >&2; exit 2; }
[ $# -eq 1 ] || die "usage: scripts/mkdeb.sh B"
top=$(cd "$(dirname "$0")/.." && pwd -P)
b=$(cd "$1" && pwd -P) || die "no build folder '$1'"
work=$b/deb
root=$work/debian/ccdiag
bins="ccprobe ccreport ccdiag"
for t in dpkg-deb dpkg-shlibdeps objdump; do
	command -v "$t" >/dev/null 2>&1 || die "$t is not installed (scripts/deps.sh as root installs dpkg-dev and binutils)"
done
for t in $bins; do
	[ -x "$root/usr/bin/$t" ] || die "$root/usr/bin/$t is missing: run make deb, which installs it there first"
done

version=$("$top/scripts/version.sh" deb)
commit=$("$top/scripts/version.sh" commit)
arch=$(dpkg --print-architecture)
maint=${CCDIAG_DEB_MAINTAINER:-$(git -C "$top" log -1 --format='%an <%ae>' 2>/dev/null || :)}
maint=${maint:-ccdiag builder <root@localhost>}

# as Debian ships them: man pages compressed, binaries without their debug
# sections, directories 0755 and files 0644 or 0755 whatever the umask was
gzip -9nf "$root"/usr/share/man/man1/*.1
for t in $bins; do
	strip --remove-section=.comment --remove-section=.note "$root/usr/bin/$t"
done
chmod -R u+rwX,go+rX,go-w "$root"

# the libraries the binaries need, each from a package (a Depends) or not
printf 'Source: ccdiag\n\nPackage: ccdiag\nArchitecture: any\n' >"$work/debian/control"
shlibs=$(cd "$work" && dpkg-shlibdeps -O --ignore-missing-info \
	debian/ccdiag/usr/bin/ccprobe debian/ccdiag/usr/bin/ccreport debian/ccdiag/usr/bin/ccdiag 2>"$work/shlibdeps.log" |
	sed -n 's/^shlibs:Depends=//p') || die "dpkg-shlibdeps failed: $(tail -n 1 "$work/shlibdeps.log")"
[ -n "$shlibs" ] || die "dpkg-shlibdeps found no library: $(tail -n 1 "$work/shlibdeps.log")"
depends="$shlibs, openmpi-bin"

# the libraries each binary names (NEEDED), where this machine finds them, and
# whether a package owns that file (merged /usr: /lib and /usr/lib are one; a
# package may list either, or the name the symbolic link points to). One
# dpkg-query for all of them: each call reads the whole database.
for t in $bins; do
	ldd "$root/usr/bin/$t" >"$work/ldd.$t" 2>/dev/null || :
	for lib in $(objdump -p "$root/usr/bin/$t" | awk '$1 == "NEEDED" { print $2 }'); do
		path=$(awk -v l="$lib" '$1 == l && $2 == "=>" { print $3 }' "$work/ldd.$t")
		echo "$t $lib ${path:--}"
	done
done >"$work/needed"
awk '$3 != "-" { print $3 }' "$work/needed" | sort -u | while read -r p; do
	r=$(realpath "$p" 2>/dev/null || echo "$p")
	printf '%s\n' "$p" "$r" "/usr$p" "/usr$r" "${p#/usr}" "${r#/usr}"
done | sort -u >"$work/paths"
# shellcheck disable=SC2046  # one argument per path, none with a space
dpkg-query -S $(cat "$work/paths") 2>/dev/null | sed 's/^.*: //' | sort -u >"$work/owned" || :
outside=
while read -r t lib path; do
	case " $outside " in *" $lib ("*) continue ;; esac
	if [ "$path" = - ]; then
		outside="$outside $lib ($t, not found here)"
		continue
	fi
	r=$(realpath "$path" 2>/dev/null || echo "$path")
	owned=0
	for q in "$path" "$r" "/usr$path" "/usr$r" "${path#/usr}" "${r#/usr}"; do
		grep -qxF "$q" "$work/owned" && owned=1
	done
	[ "$owned" -eq 1 ] || outside="$outside $lib ($t, $path)"
done <"$work/needed"
outside=${outside# }

size=$(du -sk "$root" | cut -f1)
mkdir -p "$root/DEBIAN"
chmod 755 "$root/DEBIAN"
(cd "$root" && find usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
{
	echo "Package: ccdiag"
	echo "Version: $version"
	echo "Architecture: $arch"
	echo "Maintainer: $maint"
	echo "Installed-Size: $size"
	echo "Depends: $depends"
	echo "Recommends: gnuplot-nox | gnuplot, openssh-client"
	echo "Suggests: slurm-client, iproute2, glusterfs-client, python3-torch"
	echo "Section: utils"
	echo "Priority: optional"
	echo "Description: acceptance tests of a GPU cluster for large-model training"
	echo " ccprobe measures collectives and probes GPUs, the network and storage under"
	echo " MPI; ccreport judges the results against an acceptance profile and writes"
	echo " the report; ccdiag plans, prices and runs the whole acceptance test phase by"
	echo " phase. With the shipped profiles, man pages and docs (/usr/share/doc/ccdiag)."
	echo " ."
	echo "Built from git commit $commit; ${CCDIAG_FEATURES:-features: unknown}." | fold -s -w 76 | sed 's/ *$//; s/^/ /'
	if [ -n "$outside" ]; then
		echo " ."
		echo " Linked with libraries that no Debian package provides (so they are not in"
		echo " Depends); every node needs them where they were at build time, or a"
		echo " package built with USE_CUDA=no, which links neither CUDA nor NCCL:"
		printf '%s\n' "$outside." | fold -s -w 76 | sed 's/ *$//; s/^/ /'
	fi
} >"$root/DEBIAN/control"
chmod 644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"

deb=$b/ccdiag_${version}_${arch}.deb
rm -f "$b"/ccdiag_*.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >"$work/dpkg-deb.log" 2>&1 ||
	die "dpkg-deb failed: $(tail -n 1 "$work/dpkg-deb.log")"
echo "deb: $deb ($(($(stat -c %s "$deb") / 1024)) KiB); Depends: $depends"
[ -z "$outside" ] || echo "deb: not from any Debian package, so not in Depends: $outside"
