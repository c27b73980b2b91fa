#!/bin/bash
# bench_netpair.sh: what the round-robin schedule of the netpair probe buys.
# On an emulated cluster (scripts/emucluster, 1gbit links) it runs the same
# all-pairs matrix for 4 and 8 hosts twice: whole rounds (every pair of a
# round at once) and serial (one pair at a time, --pair-concurrency 1), and
# prints the wall time and the measured bandwidth as a fraction of the shaped
# rate. Needs root and build/ccprobe. Usage: scripts/bench_netpair.sh [HOSTS...]
set -u
cd "$(dirname "$0")/.." || exit 1
EMU=scripts/emucluster
RATE_GBPS=1
RATE=1gbit
HOSTS=("$@")
[ ${#HOSTS[@]} -gt 0 ] || HOSTS=(4 8)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

[ "$(id -u)" -eq 0 ] || { echo "bench_netpair: needs root (network namespaces)" >&2; exit 2; }
[ -x build/ccprobe ] || { echo "bench_netpair: build/ccprobe missing; run make" >&2; exit 2; }
command -v jq >/dev/null || { echo "bench_netpair: needs jq" >&2; exit 2; }
# not under /tmp: every emulated host has its own
TMP=$(mktemp -d /var/tmp/bench_netpair.XXXXXX)
trap '"$EMU" down >/dev/null 2>&1; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

# stat FILE TEST DIVISOR: "min median" of bw_Gbps / DIVISOR over pass-1 records
stat() {
	jq -rs --arg t "$2" --argjson d "$3" '
		[.[] | select(.type == "measurement" and .test == $t and .pass == 1) | .bw_Gbps / $d]
		| sort | if length == 0 then "- -" else
		"\(.[0] * 1000 | round / 1000) \(.[(length / 2 | floor)] * 1000 | round / 1000)" end' "$1"
}

printf 'netpair matrix on emulated %s links (%s cores); bandwidth as a fraction of the shaped rate\n' \
	"$RATE" "$(nproc)"
printf '%-5s %-7s %6s %6s %8s %8s %8s %8s %8s %8s\n' hosts mode pairs rounds run_s matrix_s \
	uni_min uni_med bidir_min bidir_med
for n in "${HOSTS[@]}"; do
	"$EMU" up "$n" --rate "$RATE" >/dev/null || exit 1
	for mode in rounds serial; do
		f=$TMP/$n-$mode.jsonl
		if [ "$mode" = serial ]; then conc=1; else conc=$((n / 2)); fi
		"$EMU" mpirun -np "$n" build/ccprobe -q -o "$f" netpair --pair-retest 0 \
			--pair-concurrency "$conc" >"$f.log" 2>&1
		rc=$?
		[ "$rc" -le 1 ] || { echo "bench_netpair: ccprobe exited $rc (see below)"; tail -5 "$f.log"; }
		run=$(jq -s '[.[] | select(.type == "end") | .elapsed_s] | max // 0' "$f")
		matrix=$(jq -s '[.[] | select(.type == "measurement" and .pass == 1) | .elapsed_s] | max' "$f")
		rounds=$(jq -s '[.[] | select(.type == "measurement" and .pass == 1) | .round] | max + 1' "$f")
		read -r umin umed < <(stat "$f" bw_uni "$RATE_GBPS")
		read -r bmin bmed < <(stat "$f" bw_bidir "$((2 * RATE_GBPS))")
		printf '%-5s %-7s %6s %6s %8.2f %8.2f %8s %8s %8s %8s\n' "$n" "$mode" "$conc" "$rounds" \
			"$run" "$matrix" "$umin" "$umed" "$bmin" "$bmed"
	done
done
"$EMU" down >/dev/null 2>&1
echo "run_s: ccprobe start to end (MPI start-up and teardown excluded); matrix_s: to the last"
echo "all-pairs record; pairs: pairs measured at once (--pair-concurrency)"
echo "bidir as a fraction of twice the shaped rate (both directions at once)"
