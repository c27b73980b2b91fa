#!/bin/bash
# scripts/bench_ccdiag.sh: figures of ccdiag's plan model (docs/ccdiag.md), printed,
# never judged: the default h100 plan's estimate per phase at 2, 16, 128 and 1024
# nodes; at 256, 1,024 and 4,096 nodes the grouped pair schedule against the tournament
# (--pair-schedule all-pairs); and, as root, the emulated cluster's estimate against the measured wall
# time (4 hosts, node2 at 100mbit, profile emu-1g; holds the emulated cluster's lock).
set -u
cd "$(dirname "$0")/.."
D=build/ccdiag
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "h100-sxm-8x-ndr400, default plan (estimates of healthy hardware; the table of docs/ccdiag.md):"
scripts/docs-examples --print plan-h100 | sed 's/^/  /'
# 1,000 nodes: netpair and ib pair inside groups of ceil(sqrt(N)) (the grouped schedule, auto
# above 128 nodes) against the tournament of every pair (--pair-schedule all-pairs)
echo "h100-sxm-8x-ndr400 at scale: grouped pair schedule (default above 128 nodes) vs the all-pairs tournament"
for n in 256 1024 4096; do
	seq -f 'n%g' 1 "$n" >"$tmp/hosts"
	for sched in grouped all-pairs; do
		extra=()
		[ "$sched" = all-pairs ] && extra=(-- --pair-schedule all-pairs)
		"$D" run -p h100-sxm-8x-ndr400 --hosts "$tmp/hosts" --dry-run "${extra[@]}" |
			awk -v n="$n" -v s="$sched" '/^  phase/ && !/not run/ { match($0, /~ *[0-9hms]+/); e = substr($0, RSTART + 1, RLENGTH - 1)
					gsub(/ /, "", e); p = p " " $3 " " e }
				/^ccdiag: pairs \(/ { sub(/^ccdiag: /, ""); r = $0 }
				/estimated total/ { match($0, /~[0-9hms]+/); t = substr($0, RSTART + 1, RLENGTH - 1) }
				END { printf "  %5d nodes, %-9s:%s; total %s\n", n, s, p, t; if (s == "grouped") printf "               (%s)\n", r }'
	done
done
if [ "$(id -u)" -eq 0 ]; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	echo "emu-1g on 4 emulated hosts, node2 at 100mbit: estimate vs measured"
	t0=$(date +%s.%N)
	flock -w 1800 /run/lock/ccdiag-emucluster.lock \
		"$D" run -q -p emu-1g --emulated 4 --degrade node2=100mbit -o "$tmp/emu" >"$tmp/emu.out" 2>&1
	t1=$(date +%s.%N)
	grep -E '^ccdiag: phase .*\(est\.|^ccdiag: total' "$tmp/emu.out" | sed 's/^/  /'
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "  wall time with the cluster built and removed: %.0f s\n", b - a }'
fi
