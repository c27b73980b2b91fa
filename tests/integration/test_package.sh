#!/bin/bash
# The Debian package (make deb, scripts/mkdeb.sh) as a user gets it: built from
# this tree's binaries, installed with `apt-get install ./ccdiag_*.deb`, then the
# installed tools run from their installed paths in a folder with no profiles/
# (so they find /usr/share/ccdiag/profiles themselves): ccdiag's plan, ccprobe
# --version, a 2-rank ccprobe and ccreport on its results; the man pages hold
# every option of --help. Then `apt-get purge`, and the machine is as it was:
# the package, every file it installed, and any package apt pulled in with it are
# gone, and the dpkg database lists the same packages as before.
# Root only (it installs a package), and never on a machine where a ccdiag
# package or any of its files is already there (it would replace them). Two runs
# (two checkouts' make check) take turns: /run/lock/ccdiag-package.lock.
# shellcheck source=SCRIPTDIR/../lib.sh disable=SC1091
source "$(dirname "$0")/../lib.sh"

if ! t_is_root; then
	t_skip "the package test installs a Debian package: needs root"
	t_done
	exit
fi
for t in apt-get dpkg-deb dpkg-shlibdeps help2man; do
	if ! command -v "$t" >/dev/null; then
		t_fail "$t is not installed (scripts/deps.sh installs it)"
		t_done
		exit
	fi
done
exec 9>/run/lock/ccdiag-package.lock
if ! flock -w 600 9; then
	t_fail "another package test held /run/lock/ccdiag-package.lock for 10 minutes"
	t_done
	exit
fi
T0=$SECONDS

if dpkg-query -W -f='${Status}' ccdiag 2>/dev/null | grep -q 'installed'; then
	t_skip "a ccdiag package is installed on this machine: not replaced by the test's ($(dpkg-query -W -f='${Version}' ccdiag))"
	t_done
	exit
fi

# ---- make deb
env -u MAKEFLAGS -u MFLAGS make -C "$T_ROOT" --no-print-directory deb >"$T_TMP/deb.out" 2>&1
rc=$?
debs=("$T_ROOT"/build/ccdiag_*.deb)
if [ "$rc" -ne 0 ] || [ ${#debs[@]} -ne 1 ] || [ ! -f "${debs[0]}" ]; then
	t_fail "make deb: exit $rc, ${#debs[@]} package(s): $(tail -n 3 "$T_TMP/deb.out")"
	t_done
	exit
fi
t_pass "make deb: $(grep '^deb: /' "$T_TMP/deb.out" | sed 's/^deb: //; s/;.*//')"
# apt reads a local package as its own user (_apt): a folder it can enter
if ! t_user_copy "${debs[0]}"; then
	t_fail "cannot copy the package into a folder under /tmp"
	t_done
	exit
fi
pub=$T_PUB
deb=$(basename "${debs[0]}")

commit=$("$T_ROOT/scripts/version.sh" commit)
version=$("$T_ROOT/scripts/version.sh" version)
field() { dpkg-deb -f "$pub/$deb" "$1"; }
t_check "control: Version is scripts/version.sh deb's" \
	test "$(field Version)" = "$("$T_ROOT/scripts/version.sh" deb)"
# Depends: what the binaries link (dpkg-shlibdeps), and the launcher; a library
# not linked (CUDA, NCCL: no Debian package in any case) is never a Depends
dep=$(field Depends)
want_dep=1
for lib in libjansson4 libinih1 libopenmpi3 libc6 openmpi-bin; do
	[[ "$dep" == *"$lib"* ]] || want_dep=0
done
if [ "$want_dep" -eq 1 ] && [[ "$dep" != *cuda* && "$dep" != *nccl* ]]; then
	t_pass "control: Depends from the linked libraries and openmpi-bin: $dep"
else
	t_fail "control: Depends: $dep"
fi
if objdump -p "$T_ROOT/build/ccprobe" | grep -q 'NEEDED *libibverbs'; then
	t_check "control: ccprobe links libibverbs, so Depends names libibverbs1" grep -q libibverbs1 <<<"$dep"
else
	t_check "control: ccprobe does not link libibverbs, so no Depends names it" bash -c "! grep -q ibverbs <<<'$dep'"
fi
if objdump -p "$T_ROOT/build/ccprobe" | grep -q 'NEEDED *libcudart'; then
	t_check "control: the description names libcudart, linked but from no Debian package" \
		bash -c "dpkg-deb -f '$pub/$deb' Description | grep -q 'libcudart'"
fi

# ---- the machine before: its packages, and which of the package's paths exist
# the packages, and their states (dpkg may keep a purged package's name as
# "not-installed": that is no trace of it on the machine)
pkgs() { dpkg-query -W -f='${Package} ${Status}\n' | grep -v ' not-installed$' | sort; }
pkgs >"$T_TMP/pkgs.before"
dpkg-deb -c "$pub/$deb" | awk '{ print $6 }' | sed 's|^\./|/|; s|/$||' | grep -v '^$' >"$T_TMP/paths"
: >"$T_TMP/present.before"
while read -r p; do
	[ -e "$p" ] || [ -L "$p" ] || continue
	if [ -d "$p" ] && [ ! -L "$p" ]; then
		echo "$p" >>"$T_TMP/present.before"
	else
		echo "$p" >>"$T_TMP/files.before"
	fi
done <"$T_TMP/paths"
if [ -s "$T_TMP/files.before" ]; then
	t_skip "files of the package are already on this machine (not ours to replace): $(head -n 3 "$T_TMP/files.before" | tr '\n' ' ')"
	t_done
	exit
fi

# purge_all: the package, then whatever apt installed beside it; run on every exit
purge_all() {
	DEBIAN_FRONTEND=noninteractive apt-get purge -y -q -o DPkg::Lock::Timeout=300 ccdiag >>"$T_TMP/purge.out" 2>&1
	pkgs >"$T_TMP/pkgs.mid"
	local extra
	extra=$(comm -13 <(awk '$NF == "installed" { print $1 }' "$T_TMP/pkgs.before") \
		<(awk '$NF == "installed" { print $1 }' "$T_TMP/pkgs.mid"))
	if [ -n "$extra" ]; then
		# shellcheck disable=SC2086  # a list of package names
		DEBIAN_FRONTEND=noninteractive apt-get purge -y -q -o DPkg::Lock::Timeout=300 $extra >>"$T_TMP/purge.out" 2>&1
	fi
}
trap 'purge_all; rm -rf "$T_TMP" "$T_PUB"' EXIT
trap 'exit 130' INT TERM

# ---- install, as a user would
(cd "$pub" && DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=300 "./$deb") \
	>"$T_TMP/install.out" 2>&1
rc=$?
if [ "$rc" -ne 0 ] || ! dpkg-query -W -f='${Status}' ccdiag 2>/dev/null | grep -q 'ok installed'; then
	t_fail "apt-get install -y ./$deb: exit $rc: $(grep -E '^E:|error' "$T_TMP/install.out" | head -n 3)"
	t_done
	exit
fi
t_pass "apt-get install -y ./$deb"

# the installed tools, from a folder without profiles/ and without the checkout's
# variables: what they find, they find from where they are installed
run=$(mktemp -d "$T_TMP/run.XXXXXX")
cd "$run" || exit 1
unset CCREPORT_PROFILES CCPROBE CCREPORT EMUCLUSTER
for t in ccprobe ccreport ccdiag; do
	t_check "installed $t is /usr/bin/$t and prints version $version, commit $commit" \
		bash -c "[ \"\$(command -v $t)\" = /usr/bin/$t ] && /usr/bin/$t --version | grep -qF '$t $version (git $commit'"
done
/usr/bin/ccdiag run -p emu-1g --dry-run >"$T_TMP/plan" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q '^ccdiag: plan for profile emu-1g' "$T_TMP/plan" && grep -q '^  phase 1/.* ~ ' "$T_TMP/plan"; then
	t_pass "ccdiag run -p emu-1g --dry-run: the plan, from /usr/share/ccdiag/profiles"
else
	t_fail "ccdiag run -p emu-1g --dry-run: exit $rc: $(head -c 400 "$T_TMP/plan")"
fi
mpirun --oversubscribe -np 2 /usr/bin/ccprobe -q -b 1K -e 64K -o "$run/r.jsonl" all_reduce >"$T_TMP/probe.out" 2>&1
rc=$?
t_check "2-rank /usr/bin/ccprobe all_reduce: exit 0, a run header with version and commit" \
	bash -c "[ $rc -eq 0 ] && jq -e -s '.[0].type == \"run\" and .[0].version == \"$version\" and .[0].commit == \"$commit\" and
		.[0].world_size == 2 and .[-1].type == \"end\"' '$run/r.jsonl' >/dev/null"
/usr/bin/ccreport -q -p emu-1g -o "$run/rep" "$run/r.jsonl" >"$T_TMP/report.out" 2>&1
rc=$?
# (a verdict, whichever: one all_reduce run leaves most of emu-1g's criteria unjudged)
ppath=$(jq -r '.profile.path' "$run/rep/summary.json" 2>/dev/null)
t_check "/usr/bin/ccreport -p emu-1g: judged (exit $rc) with $ppath, the report written" \
	bash -c "[ $rc -eq 0 ] || [ $rc -eq 1 ] || [ $rc -eq 4 ]; [ \$? -eq 0 ] &&
		[ \"\$(realpath '$ppath')\" = /usr/share/ccdiag/profiles/emu-1g.ini ] &&
		jq -e '.commit == \"$commit\"' '$run/rep/summary.json' >/dev/null && [ -s '$run/rep/index.html' ]"
# the man pages: installed where man finds them, and each holds every long option its --help names
for t in ccprobe ccreport ccdiag; do
	page=$(man -w "$t" 2>/dev/null)
	if [ "$page" != "/usr/share/man/man1/$t.1.gz" ]; then
		t_fail "man -w $t: '$page', not /usr/share/man/man1/$t.1.gz"
		continue
	fi
	zcat "$page" | sed 's/\\-/-/g; s/\\f[BIRP]//g' >"$T_TMP/$t.roff"
	missing=$(/usr/bin/$t --help | grep -oE -- '--[a-z][a-z_-]+' | sort -u | while read -r o; do
		grep -qF -- "$o" "$T_TMP/$t.roff" || printf '%s ' "$o"
	done)
	t_check "man $t: every option of $t --help is in the page${missing:+ (missing: $missing)}" test -z "$missing"
done
t_check "docs and the emulated cluster's script are installed" \
	test -s /usr/share/doc/ccdiag/README.md -a -x /usr/share/ccdiag/scripts/emucluster
cd /

# ---- purge: the machine as it was
purge_all
if dpkg-query -W -f='${Status}' ccdiag 2>/dev/null | grep -q 'installed'; then
	t_fail "apt-get purge ccdiag: still installed: $(tail -n 3 "$T_TMP/purge.out")"
else
	t_pass "apt-get purge ccdiag"
fi
left=
while read -r p; do
	grep -qxF "$p" "$T_TMP/present.before" && continue
	if [ -e "$p" ] || [ -L "$p" ]; then left="$left $p"; fi
done <"$T_TMP/paths"
t_check "purged: nothing of the package is left on the machine${left:+ (left:$left)}" test -z "$left"
while read -r p; do
	[ -d "$p" ] || left="$left $p"
done <"$T_TMP/present.before"
t_check "purged: the folders that were there before are still there${left:+ (gone:$left)}" test -z "$left"
pkgs >"$T_TMP/pkgs.after"
t_check "purged: the dpkg database lists the same packages as before$(diff "$T_TMP/pkgs.before" "$T_TMP/pkgs.after" | grep '^[<>]' | head -n 3 | tr '\n' ' ')" \
	cmp -s "$T_TMP/pkgs.before" "$T_TMP/pkgs.after"
trap 'rm -rf "$T_TMP" "$T_PUB"' EXIT
echo "package test: $((SECONDS - T0)) s from make deb to purge"
t_done
