#!/bin/bash
# One version and one git commit for a build: ccprobe, ccreport and ccdiag
# --version print them, and every header they write carries them (ccprobe's run
# header, ccreport's summary.json, compare.json and history.json; ccdiag's
# header of a phase not run is in test_ccdiag.sh). The commit comes from
# scripts/version.sh at build time: git's HEAD (12 hex digits, "-dirty" for a
# changed tree); in a tarball of `git archive`, which has no .git, the commit git
# wrote into core/commit.txt, also when it is unpacked inside another checkout;
# "unknown" when neither tells.
# shellcheck source=SCRIPTDIR/../lib.sh disable=SC1091
source "$(dirname "$0")/../lib.sh"

B=$T_ROOT/build
version=$(sed -n 's/^#define CCDIAG_VERSION "\([^"]*\)".*/\1/p' "$T_ROOT/core/version.h")
commit=$("$T_ROOT/scripts/version.sh" commit)
t_check "scripts/version.sh version is core/version.h's ($version)" test "$("$T_ROOT/scripts/version.sh" version)" = "$version"
if git -C "$T_ROOT" rev-parse --git-dir >/dev/null 2>&1 &&
	[ "$(git -C "$T_ROOT" rev-parse --show-toplevel)" = "$(cd "$T_ROOT" && pwd -P)" ]; then
	head=$(git -C "$T_ROOT" rev-parse --short=12 HEAD)
	t_check "the commit is git's HEAD ($commit)" bash -c "[ '$commit' = '$head' ] || [ '$commit' = '$head-dirty' ]"
	in_git=1
else
	t_check "outside git the commit is core/commit.txt's or unknown ($commit)" \
		bash -c "[ '$commit' = unknown ] || [[ '$commit' =~ ^[0-9a-f]{12}$ ]]"
	in_git=0
fi

# ---- --version of the three tools: the same version, the same commit
for t in ccprobe ccreport ccdiag; do
	"$B/$t" --version >"$T_TMP/$t.version" 2>&1
	t_check "$t --version: '$t $version (git $commit...'" grep -qxE "$t $version \\(git $commit(, results schema [0-9]+)?\\)" "$T_TMP/$t.version"
done

# ---- the headers: ccprobe's run, ccreport's summary, history and compare
cd "$T_TMP" || exit 1
mpirun --oversubscribe -np 2 "$B/ccprobe" -q -b 1K -e 16K -o r.jsonl all_reduce >probe.out 2>&1
t_check "ccprobe's run header: version $version, commit $commit" \
	jq -e -s --arg v "$version" --arg c "$commit" '.[0].type == "run" and .[0].version == $v and .[0].commit == $c' r.jsonl
"$B/ccreport" -q -p emu-1g --history h.db -o rep r.jsonl >report.out 2>&1
t_check "ccreport's summary.json: version, commit" \
	jq -e --arg v "$version" --arg c "$commit" '.tool == "ccreport" and .version == $v and .commit == $c' rep/summary.json
t_check "ccreport's report names the commit" grep -qF "(git $commit)" rep/report.md
"$B/ccreport" history h.db -q -o hist >hist.out 2>&1
t_check "ccreport history's history.json: version, commit" \
	jq -e --arg v "$version" --arg c "$commit" '.version == $v and .commit == $c' hist/history.json
"$B/ccreport" compare -q -o cmp A=rep B=rep >cmp.out 2>&1
t_check "ccreport compare's compare.json: version, commit" \
	jq -e --arg v "$version" --arg c "$commit" '.version == $v and .commit == $c' cmp/compare.json

# ---- a tarball of `git archive`: no .git, the commit from core/commit.txt
if [ "$in_git" -eq 1 ]; then
	full=$(git -C "$T_ROOT" rev-parse HEAD)
	mkdir -p outer/tar
	git -C outer init -q
	git -C "$T_ROOT" archive HEAD | tar -x -C outer/tar
	t_check "git archive: core/commit.txt holds the commit ($(head -c 12 outer/tar/core/commit.txt))" \
		grep -qx "$full" outer/tar/core/commit.txt
	t_check "a tarball (unpacked inside another git checkout): scripts/version.sh commit is the tarball's, ${full:0:12}" \
		test "$(outer/tar/scripts/version.sh commit)" = "${full:0:12}"
	t_check "a tarball: the package version is the plain version, $version" \
		test "$(outer/tar/scripts/version.sh deb)" = "$version"
	# the build's own path: make compiles core/version.c with that commit
	env -u MAKEFLAGS -u MFLAGS make -C outer/tar --no-print-directory B=b b/robj/core/version.o >make.out 2>&1
	t_check "a tarball: make builds core/version.c with the commit ${full:0:12}" \
		bash -c "grep -qx '#define CCDIAG_COMMIT \"${full:0:12}\"' outer/tar/b/gen/ccdiag_commit.h &&
			strings outer/tar/b/robj/core/version.o | grep -qx '${full:0:12}'"
	# a copy with neither .git nor a commit git wrote
	mkdir plain
	git -C "$T_ROOT" ls-files -z core/version.h core/commit.txt scripts/version.sh |
		(cd "$T_ROOT" && xargs -0 cp --parents -t "$T_TMP/plain")
	t_check "a copy without .git or an archived commit: unknown" test "$(plain/scripts/version.sh commit)" = unknown
else
	t_skip "git archive cases: $T_ROOT is not a git checkout"
fi
t_done
