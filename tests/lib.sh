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
T_PUB=
trap 'rm -rf "$T_TMP" ${T_PUB:+"$T_PUB"}' EXIT

# each line ends with the seconds since the suite started: where a suite's time goes
t_pass() { T_PASS=$((T_PASS + 1)); printf 'PASS %s: %s [%d s]\n' "$T_SUITE" "$*" "$SECONDS"; }
t_fail() { T_FAIL=$((T_FAIL + 1)); printf 'FAIL %s: %s [%d s]\n' "$T_SUITE" "$*" "$SECONDS"; }
t_skip() { T_SKIP=$((T_SKIP + 1)); printf 'SKIP %s: %s [%d s]\n' "$T_SUITE" "$*" "$SECONDS"; }

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

# t_load: the machine's load, measured here (tests/busy.sh: run queue, load average, a short
# CPU-availability probe), never taken from CCDIAG_TEST_HOG: a CI machine is busy for reasons
# of its own. Sets T_BUSY (1 busy, 0 quiet) and T_LOAD, what was measured, for the log.
t_load() {
	if T_LOAD=$("$T_ROOT/tests/busy.sh"); then T_BUSY=1; else T_BUSY=0; fi
}

# t_as_nobody CMD...: CMD as the unprivileged user nobody (setpriv, else su)
t_as_nobody() {
	if command -v setpriv >/dev/null 2>&1; then
		setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
	else
		su nobody -s /bin/bash -c "$(printf '%q ' "$@")"
	fi
}

# t_user_copy FILE...: copies the FILEs into $T_PUB, a folder under /tmp that every
# user can enter and read (0755), for what another user must run or read (nobody
# in test_emucluster, apt's _apt in test_package): a checkout cloned into root's
# home (0700) is out of their reach. Removed on exit. Returns 1 when the folder
# cannot be made.
t_user_copy() {
	if [ -z "$T_PUB" ]; then
		T_PUB=$(mktemp -d /tmp/ccdiag-pub.XXXXXX) && chmod 755 "$T_PUB" || return 1
	fi
	cp "$@" "$T_PUB/" && chmod -R a+rX "$T_PUB"
}

# t_make_lean: builds ccprobe without libibverbs and without cuBLASLt (CUDA and NCCL
# kept) into build-lean: one build for the suites that check what a probe says when
# its library was left out (test_gemm_fake: gemm; test_ib: ib). make's output is left
# in $T_TMP/make.log; the exit code is make's, and 1 when the compiler warned. Two
# suites may build it at once (tests/run.sh's lanes): one waits for the other (a lock).
T_LEAN=$T_ROOT/build-lean
t_make_lean() {
	mkdir -p "$T_LEAN" || return
	flock -w 600 "$T_LEAN/.lock" make -C "$T_ROOT" --no-print-directory -j2 USE_VERBS=no USE_CUBLASLT=no \
		B=build-lean build-lean/ccprobe >"$T_TMP/make.log" 2>&1 || return
	! grep -qE 'warning|error' "$T_TMP/make.log"
}

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
	trap '"$EMU" down >/dev/null 2>&1; rm -rf "$T_TMP" "$T_TMP_LOCAL" ${T_PUB:+"$T_PUB"}' EXIT
	trap 'exit 130' INT TERM
}

# Open MPI refuses root unless told; tests run as root in CI.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Keep loopback runs off UCX/verbs so they work on any machine.
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp OMPI_MCA_osc=^ucx
export OMPI_MCA_btl_base_warn_component_unused=0

# The CUDA/NVML/NCCL test double (tests/fakes/fake.h), for mpirun:
#   mpirun ... "${T_FAKECUDA[@]}" -x CCDIAG_FAKECUDA_GPUS=2 build/ccprobe ...
# Empty (and t_fakecuda_built false) when build/tests/libfakecuda.so is missing.
T_FAKELIB=$T_ROOT/build/tests/libfakecuda.so
T_FAKECUDA=()
[ -f "$T_FAKELIB" ] && T_FAKECUDA=(-x LD_PRELOAD="$T_FAKELIB" -x LD_LIBRARY_PATH="$T_ROOT/build/tests/fakecuda")
t_fakecuda_built() { [ -f "$T_FAKELIB" ]; }
# per-rank visibility as Slurm's --gpus-per-task=1 gives it: run "$T_ONE_GPU" before ccprobe
T_ONE_GPU=$T_ROOT/tests/fakes/one-gpu-per-rank.sh
# a socket's GPUs per rank, as Slurm's --gpu-bind=closest gives it: "$T_GPU_SOCKET" before ccprobe
T_GPU_SOCKET=$T_ROOT/tests/fakes/gpus-per-socket.sh

# t_chrome_check NAME PAGE: opens PAGE (an HTML file ccreport wrote) in headless
# Chromium once: no console message may come from the page (a script that ran, or a
# Content-Security-Policy block, logs one), and the parsed DOM must hold no <script>
# and every chart of the file as an <svg>. Skips when Chromium is not installed.
t_chrome_check() {
	local name=$1 page chrome want got
	page=$(realpath "$2")
	chrome=$(command -v chromium || command -v chromium-browser)
	if [ -z "$chrome" ]; then
		t_skip "$name: chromium is not installed (optional in scripts/deps.sh): page not opened"
		return
	fi
	timeout 120 "$chrome" --headless --disable-gpu --no-sandbox --no-first-run \
		--user-data-dir="$T_TMP/chrome-$name" --enable-logging=stderr --v=0 --dump-dom \
		"file://$page" >"$T_TMP/$name.dom" 2>"$T_TMP/$name.chrome.log"
	want=$(grep -c '^<svg' "$page")
	got=$(grep -o '<svg' "$T_TMP/$name.dom" | wc -l)
	if [ ! -s "$T_TMP/$name.dom" ]; then
		t_fail "$name: chromium gave no DOM: $(tail -c 300 "$T_TMP/$name.chrome.log")"
	elif grep 'CONSOLE' "$T_TMP/$name.chrome.log" | grep -qF "$page"; then
		t_fail "$name: console messages from the page: $(grep 'CONSOLE' "$T_TMP/$name.chrome.log" | head -3)"
	elif grep -qi '<script' "$T_TMP/$name.dom" || [ "$got" -ne "$want" ]; then
		t_fail "$name: parsed page: $(grep -ci '<script' "$T_TMP/$name.dom") <script>, $got of $want <svg>"
	else
		t_pass "$name: $(basename "$page") in chromium: no console message, no <script>, all $want charts as <svg>"
	fi
}
