#!/bin/bash
# bench_storage.sh: the storage probe against fio (Debian's fio) on the same
# directory, the same transfer size, the same number of writers and bytes:
# sequential write with a final fsync, then O_DIRECT sequential read; prints
# both figures in GB/s (1e9 bytes/s) and the ratio probe / fio (target: within
# 10 %). Prints figures, asserts nothing.
# Usage: scripts/bench_storage.sh [--emu] [DIR]
#   DIR     a directory to test (default /var/tmp/ccdiag-bench-storage, made
#           and removed here)
#   --emu   on the emulated GlusterFS volume instead (root: emucluster up 2
#           --storage 1; one rank and one fio job on node0)
# Environment: NP (writers, default 2; 1 with --emu), SIZE (bytes per writer,
# default 512M), BLOCK (transfer, default 4M), REPS (default 3).
set -u
cd "$(dirname "$0")/.." || exit 1
EMU=scripts/emucluster
emu=0
[ "${1:-}" = --emu ] && { emu=1; shift; }
NP=${NP:-$([ $emu -eq 1 ] && echo 1 || echo 2)}
SIZE=${SIZE:-512M}
BLOCK=${BLOCK:-4M}
REPS=${REPS:-3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp OMPI_MCA_osc=^ucx OMPI_MCA_btl_base_warn_component_unused=0

for t in fio jq mpirun; do command -v $t >/dev/null || { echo "bench_storage: needs $t (scripts/deps.sh)" >&2; exit 2; }; done
[ -x build/ccprobe ] || { echo "bench_storage: build/ccprobe missing; run make" >&2; exit 2; }
TMP=$(mktemp -d /var/tmp/bench_storage.XXXXXX)
made=
if [ $emu -eq 1 ]; then
	[ "$(id -u)" -eq 0 ] || { echo "bench_storage: --emu needs root" >&2; exit 2; }
	trap '"$EMU" down >/dev/null 2>&1; rm -rf "$TMP"' EXIT
	"$EMU" up 2 --storage 1 >/dev/null || exit 1
	DIR=/run/ccdiag-emu/storage
	run() { "$EMU" exec node0 "$@"; }
	probe() { "$EMU" mpirun -np "$NP" --host "node0:$NP" "$@"; }
else
	DIR=${1:-/var/tmp/ccdiag-bench-storage}
	if [ ! -d "$DIR" ]; then mkdir -p "$DIR" && made=$DIR; fi
	trap 'rm -rf "$TMP"; [ -n "$made" ] && rm -rf "$made"' EXIT
	run() { "$@"; }
	probe() { mpirun --oversubscribe -np "$NP" "$@"; }
fi
trap 'exit 130' INT TERM

# one repetition of each at a time, interleaved, so both see the same machine
# (a shared disk's rate drifts); medians of REPS
probe_rep() { # the probe: write (fsync) and read (another rank's shard, O_DIRECT where allowed)
	probe build/ccprobe -q -o "$TMP/probe$1.jsonl" --storage-dir "$DIR" --storage-size "$SIZE" \
		--storage-block "$BLOCK" --storage-reps 1 --storage-files 0 --storage-reads 0 storage >/dev/null ||
		{ echo "bench_storage: the probe failed" >&2; exit 1; }
}
field() { jq -s --arg t "$2" --arg f "$3" '[.[] | select(.test == $t and .scope == "cluster")][0][$f]' "$TMP/probe$1.jsonl"; }
# fio: the same writers, bytes and transfer; the write ends with an fsync
# (end_fsync, in its time); the read with O_DIRECT when the probe had it
fio_bw() { # fio_bw RW EXTRA...: GB/s of the group
	local rw=$1; shift
	run fio --name=ccdiag-bench --directory="$DIR" --rw="$rw" --bs="$BLOCK" --size="$SIZE" \
		--numjobs="$NP" --group_reporting --output-format=json "$@" 2>/dev/null |
		jq --arg rw "$rw" '.jobs[0][$rw].bw_bytes / 1e9'
}
pws=() prs=() ws=() rs=()
for ((i = 0; i < REPS; i++)); do
	probe_rep "$i"
	pws+=("$(field "$i" write bw_GBps)")
	prs+=("$(field "$i" read bw_GBps)")
	direct=$(field "$i" read o_direct)
	dflag=1
	[ "$direct" = true ] || dflag=0
	ws+=("$(fio_bw write --end_fsync=1)")
	rs+=("$(fio_bw read --direct=$dflag)")
	run sh -c "rm -f '$DIR'/ccdiag-bench.*"
done
med() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
pw=$(med "${pws[@]}")
pr=$(med "${prs[@]}")
fw=$(med "${ws[@]}")
fr=$(med "${rs[@]}")

fs=$(jq -rs '[.[] | select(.test == "write" and .scope == "cluster")][0] | "\(.fs_type) \(.mount_source)"' "$TMP/probe0.jsonl")
printf 'storage on %s (%s): %s writer(s) x %s, %s transfers, median of %s; GB/s = 1e9 bytes/s\n' \
	"$DIR" "$fs" "$NP" "$SIZE" "$BLOCK" "$REPS"
printf '%-28s %10s %10s %8s\n' test probe fio ratio
awk -v pw="$pw" -v fw="$fw" -v pr="$pr" -v fr="$fr" -v d="$dflag" 'BEGIN {
	printf "%-28s %10.3f %10.3f %8.3f\n", "write (fsync at the end)", pw, fw, (fw > 0 ? pw / fw : 0)
	printf "%-28s %10.3f %10.3f %8.3f\n", d ? "read (O_DIRECT)" : "read (buffered)", pr, fr, (fr > 0 ? pr / fr : 0)
}'
