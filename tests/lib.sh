# tests/lib.sh: shared helpers for the shell test suites (sourced, not run).
# Each suite calls t_pass/t_fail/t_skip per case and ends with t_done, which
# prints "<suite>: N passed, N failed, N skipped" and exits 1 on any failure.
# tests/run.sh adds the per-suite counts into the final "check:" line.

T_SUITE=${T_SUITE:-$(basename "$0" .sh)}
T_PASS=0
T_FAIL=0
T_SKIP=0
T_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/ccdiag-test.XXXXXX")
trap 'rm -rf "$T_TMP"' EXIT

t_pass() { T_PASS=$((T_PASS + 1)); printf 'PASS %s: %s\n' "$T_SUITE" "$*"; }
t_fail() { T_FAIL=$((T_FAIL + 1)); printf 'FAIL %s: %s\n' "$T_SUITE" "$*"; }
t_skip() { T_SKIP=$((T_SKIP + 1)); printf 'SKIP %s: %s\n' "$T_SUITE" "$*"; }

# t_check DESC CMD...: pass when CMD exits 0.
t_check() {
	local desc=$1; shift
	if "$@" >/dev/null; then t_pass "$desc"; else t_fail "$desc"; fi
}

t_done() {
	printf '%s: %d passed, %d failed, %d skipped\n' "$T_SUITE" "$T_PASS" "$T_FAIL" "$T_SKIP"
	[ "$T_FAIL" -eq 0 ]
}

t_is_root() { [ "$(id -u)" -eq 0 ]; }

# t_emu_suite DESC: the rest of the suite runs on the emulated cluster ($EMU,
# scripts/emucluster): without root, skips DESC and ends the suite; as root,
# takes the cluster down on every exit, an interrupt included.  Every emulated
# host has its own /tmp, as real nodes do: from here on $T_TMP is a directory
# that all hosts and the machine see (under /var/tmp).
t_emu_suite() {
	if ! t_is_root; then
		t_skip "$1"
		t_done
		exit
	fi
	T_TMP_LOCAL=$T_TMP
	T_TMP=$(mktemp -d /var/tmp/ccdiag-test.XXXXXX) || { t_fail "cannot create a directory in /var/tmp"; t_done; exit; }
	trap '"$EMU" down >/dev/null 2>&1; rm -rf "$T_TMP" "$T_TMP_LOCAL"' EXIT
	trap 'exit 130' INT TERM
}

# Open MPI refuses root unless told; tests run as root in CI.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Keep loopback runs off UCX/verbs so they work on any machine.
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp OMPI_MCA_osc=^ucx
export OMPI_MCA_btl_base_warn_component_unused=0
