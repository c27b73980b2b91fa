#!/bin/bash
# tests/busy.sh: is this machine busy? Measured, never taken from CCDIAG_TEST_HOG (a CI
# machine is busy for reasons of its own): busy when the run queue (runnable tasks in
# /proc/loadavg, this probe's own left out) or the 1-minute load average reaches the CPUs,
# or when a busy loop of 0.3 s got less than 80 % of a CPU. Prints one line, e.g.
# "busy: loadavg 2.31, 3 runnable, 0.45 of a CPU on 2 CPUs"; exit 0 busy, 1 quiet.
# Used by tests/run.sh (a lane's priority) and tests/lib.sh (t_load).
ncpu=$(nproc)
hz=$(getconf CLK_TCK)
read -r la _ _ run _ </proc/loadavg
run=$((${run%%/*} - 1))
(while :; do :; done) &
pid=$!
sleep 0.3
ticks=$(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null)
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
share=$(awk -v t="${ticks:-0}" -v hz="$hz" 'BEGIN { printf "%.2f", t / hz / 0.3 }')
if [ "$run" -ge "$ncpu" ] || awk -v l="$la" -v n="$ncpu" -v s="$share" 'BEGIN { exit !(l >= n || s < 0.8) }'; then
	echo "busy: loadavg $la, $run runnable, $share of a CPU on $ncpu CPUs"
	exit 0
fi
echo "quiet: loadavg $la, $run runnable, $share of a CPU on $ncpu CPUs"
exit 1
