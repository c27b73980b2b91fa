#!/bin/bash
# Docs that stay true: every example a doc quotes from a command (the marked blocks of
# scripts/docs-examples: the h100 plan table, ccprobe --plan, ccdiag's usage and drain line,
# ccreport's terminal summary, the demo's result paths) is what the command prints today, and
# a doctored example is caught; README.md says what to do after each verdict and what
# --hosts needs.
# shellcheck source=SCRIPTDIR/../lib.sh disable=SC1091
source "$(dirname "$0")/../lib.sh"
X=$T_ROOT/scripts/docs-examples

"$X" --check >"$T_TMP/check" 2>&1
rc=$?
while read -r word name file; do
	case $word in
	ok) t_pass "docs: block '$name' $file matches what its command prints" ;;
	skipped) t_skip "docs: block '$name' $file: $(sed -n "s/^skipped $name //p" "$T_TMP/check")" ;;
	esac
done <"$T_TMP/check"
if [ "$rc" -eq 0 ]; then
	t_check "docs-examples --check: at least 5 blocks compared" \
		test "$(grep -c '^ok ' "$T_TMP/check")" -ge 5
else
	t_fail "docs-examples --check (exit $rc): $(grep -A12 '^differs' "$T_TMP/check" | head -c 1500)"
fi

# a quoted figure that no longer matches its command fails the check, naming the doc
cp "$T_ROOT/docs/report.md" "$T_TMP/report.md"
sed -i '/^<!-- docs-examples: report-terminal /,/^<!-- \/docs-examples -->/s/0\.0942 Gb\/s/0.0925 Gb\/s/' "$T_TMP/report.md"
(cd "$T_ROOT" && "$X" --check "$T_TMP/report.md") >"$T_TMP/doctored" 2>&1
rc=$?
t_check "a doctored example (0.0942 -> 0.0925 Gb/s in the terminal summary): --check exits 1 and names the doc (exit $rc)" \
	bash -c "[ $rc -eq 1 ] && grep -q '^differs: $T_TMP/report.md' '$T_TMP/doctored' && grep -q '^+.*0.0942 Gb/s' '$T_TMP/doctored'"
t_check "no doc quotes the demo's old single results file (results/demo/results.jsonl)" \
	bash -c "! grep -rn 'results/demo/results.jsonl' '$T_ROOT/README.md' '$T_ROOT/docs'"
t_check "docs/report.md's examples name a results file make demo writes (results/demo/phase-K-NAME.jsonl)" \
	grep -qE 'results/demo/phase-[0-9]+-collectives-mpi\.jsonl' "$T_ROOT/docs/report.md"

# README: what to do after each verdict, and what --hosts needs
R=$T_ROOT/README.md
t_check "README: a section 'What to do after PASS, WARN, FAIL or INCOMPLETE' with a paragraph per verdict" \
	bash -c "grep -q '^## What to do after PASS, WARN, FAIL or INCOMPLETE$' '$R' &&
		for v in PASS WARN FAIL INCOMPLETE; do
			sed -n '/^## What to do after/,/^## /p' '$R' | grep -q \"^- \\*\\*\$v\\*\\* (exit [0-9])\" || exit 1
		done"
t_check "README: --hosts needs passwordless ssh (BatchMode) and the same ccprobe at the same path on every node" \
	bash -c "sed -n '/^### A real cluster with \`--hosts\`/,/^## /p' '$R' >'$T_TMP/hosts.md' &&
		grep -q 'ssh needs no password' '$T_TMP/hosts.md' && grep -q 'ssh -o BatchMode=yes HOST true' '$T_TMP/hosts.md' &&
		grep -q 'the same ccprobe is at the same path on every node' '$T_TMP/hosts.md'"
t_done
