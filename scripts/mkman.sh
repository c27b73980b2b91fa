#!/bin/sh
# scripts/mkman.sh OUT BINARY NAME_LINE [SUBCOMMAND...]: the man page of BINARY,
# written to OUT by help2man from BINARY --help and --version, so that --help stays
# the one source of what the page says. NAME_LINE is the page's one-line NAME.
# Each SUBCOMMAND's own --help (ccreport compare --help...) becomes a section of
# the page, as printed. BINARY runs behind a wrapper that puts its usage block in
# the words help2man reads as the SYNOPSIS (below); nothing else is changed.
# Exit 0, or 2 with one line when help2man is missing (scripts/deps.sh installs it)
# or BINARY does not answer --help.
set -eu
[ $# -ge 3 ] || { echo "usage: scripts/mkman.sh OUT BINARY NAME_LINE [SUBCOMMAND...]" >&2; exit 2; }
out=$1 bin=$(realpath "$2") name=$3
shift 3
prog=$(basename "$bin")
if ! command -v help2man >/dev/null 2>&1; then
	echo "mkman.sh: help2man is not installed: the man pages need it (scripts/deps.sh as root, or apt-get install -y help2man)" >&2
	exit 2
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ccdiag-man.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# the wrapper help2man runs, named as the program so that the page is named after
# it (the binary's path reaches it in the environment, never inside its text).
# help2man's SYNOPSIS is "Usage: PROG ..." and "  or: PROG ..." lines: our first
# block (up to a blank or unindented line) says "usage:" and indents its other
# forms, and a form that does not fit one line goes on, indented, on the next:
# the wrapper rewrites that block alone
cat >"$tmp/$prog" <<'WRAPPER'
#!/bin/sh
"$CCDIAG_MAN_BIN" "$@" | awk -v prog="$CCDIAG_MAN_PROG" '
NR == 1 && sub(/^usage:/, "Usage:") { head = 1; line = $0; next }
head && /^([ \t]*$|[^ \t])/ { print line; head = 0; print; next }
head {
	t = $0
	sub(/^[ \t]+/, "", t)
	if (index(t, prog " ") == 1) { print line; line = "  or: " t } else line = line " " t
	next
}
{ print }
END { if (head) print line }'
WRAPPER
chmod 755 "$tmp/$prog"
export CCDIAG_MAN_BIN="$bin" CCDIAG_MAN_PROG="$prog"
"$bin" --help >/dev/null 2>&1 || { echo "mkman.sh: '$bin --help' failed" >&2; exit 2; }

# roff_text: lines as printed (no filling), a backslash, a leading dot or quote escaped
roff_text() {
	printf '.nf\n'
	sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
	printf '.fi\n'
}
: >"$tmp/include"
for sub; do
	"$bin" "$sub" --help >"$tmp/sub" 2>&1 || { echo "mkman.sh: '$bin $sub --help' failed" >&2; exit 2; }
	{
		printf '[%s %s]\n' "$(echo "$prog" | tr '[:lower:]' '[:upper:]')" "$(echo "$sub" | tr '[:lower:]' '[:upper:]')"
		roff_text <"$tmp/sub"
	} >>"$tmp/include"
done
cat >>"$tmp/include" <<'EOF'
[SEE ALSO]
.BR ccprobe (1),
.BR ccreport (1),
.BR ccdiag (1);
README.md and docs/ in share/doc/ccdiag (the package: /usr/share/doc/ccdiag).
EOF

# a page dated by the commit, not by the build (the same source gives the same page)
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
	SOURCE_DATE_EPOCH=$(git -C "$(dirname "$0")/.." log -1 --format=%ct 2>/dev/null || :)
	if [ -n "$SOURCE_DATE_EPOCH" ]; then export SOURCE_DATE_EPOCH; else unset SOURCE_DATE_EPOCH; fi
fi
# the footer names the program and version, the first two words of --version (the
# commit after them would run into the date at 80 columns)
src=$("$bin" --version 2>/dev/null | head -n 1 | cut -d ' ' -f 1-2)
help2man -N --no-discard-stderr -n "$name" -S "$src" -i "$tmp/include" -o "$out.tmp" "$tmp/$prog" >/dev/null 2>&1 ||
	{ echo "mkman.sh: help2man failed on $bin" >&2; rm -f "$out.tmp"; exit 2; }
mv "$out.tmp" "$out"
