#!/bin/sh
# scripts/version.sh: what this source tree is, for the build (core/version.c),
# the package (scripts/mkdeb.sh) and the tests.
#
#   scripts/version.sh version   0.1.0: CCDIAG_VERSION of core/version.h
#   scripts/version.sh commit    the git commit, 12 hex digits, "-dirty" when tracked
#                                files differ from it; in a tarball made by `git archive`
#                                (no .git) the commit git wrote into core/commit.txt
#                                (export-subst, .gitattributes); else "unknown"
#   scripts/version.sh deb       the Debian package version: VERSION+gitN.gHASH (N = the
#                                commits up to it, so a later build sorts after; "+dirty"
#                                appended), or VERSION when git cannot tell
#
# The commit is taken from git only when this tree is the top of its own
# repository (a tarball unpacked inside another checkout is not that checkout).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd -P)

version() {
	sed -n 's/^#define CCDIAG_VERSION "\([^"]*\)".*/\1/p' "$top/core/version.h"
}

# git_here: git answers for this tree (and not for a repository above it)
git_here() {
	[ -e "$top/.git" ] && command -v git >/dev/null 2>&1 &&
		[ "$(git -C "$top" rev-parse --show-toplevel 2>/dev/null)" = "$top" ]
}

# dirty: a tracked file differs from the commit (git diff compares contents, so a
# file only touched is not a change)
dirty() {
	! git -C "$top" diff --quiet HEAD -- 2>/dev/null
}

commit() {
	if git_here && c=$(git -C "$top" rev-parse --short=12 HEAD 2>/dev/null); then
		if dirty; then echo "$c-dirty"; else echo "$c"; fi
		return
	fi
	c=$(head -c 40 "$top/core/commit.txt" 2>/dev/null || :)
	case $c in
	*[!0-9a-f]* | '') echo unknown ;;
	*) printf '%.12s\n' "$c" ;;
	esac
}

case ${1:-} in
version) version ;;
commit) commit ;;
deb)
	v=$(version)
	if git_here && n=$(git -C "$top" rev-list --count HEAD 2>/dev/null) &&
		h=$(git -C "$top" rev-parse --short=12 HEAD 2>/dev/null); then
		v="$v+git$n.g$h"
		if dirty; then v="$v+dirty"; fi
	fi
	echo "$v"
	;;
*)
	echo "usage: scripts/version.sh version|commit|deb" >&2
	exit 2
	;;
esac
