#!/bin/bash
# ccdiag against a real Slurm (Debian slurm-wlm and munge) on the emulated
# cluster (scripts/emucluster, scripts/emuslurm: slurmctld on node0, one slurmd
# per host in its namespaces): inside salloc, ccdiag launches with srun
# --mpi=pmix and CPU binding (--cpus-per-task, --cpu-bind=cores), names the
# degraded node, and --drain leaves it drained with the reason; a task that dies
# before the run begins ends the step and the phase is launched once more; --drain is
# refused where no controller answers.
source "$(dirname "$0")/../lib.sh"
D=$T_ROOT/build/ccdiag
EMU=$T_ROOT/scripts/emucluster
ES=$T_ROOT/scripts/emuslurm
FX=$T_ROOT/tests/fixtures/ccdiag
t_emu_suite "Slurm on the emulated cluster needs root (network namespaces)"
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
	t_skip "no slurmctld or munged (scripts/deps.sh installs slurmctld, slurmd, slurm-client, munge)"
	t_done
	exit
fi
trap '"$ES" down >/dev/null 2>&1; "$EMU" down >/dev/null 2>&1; rm -rf "$T_TMP"' EXIT
# the ranks' TCP stays on the emulated links (emucluster mpirun sets the same for mpirun)
export OMPI_MCA_btl_tcp_if_include=eth0 OMPI_MCA_oob_tcp_if_include=eth0

# node2 at 2mbit, 500 times below the rate: a fault that stands out against a busy machine's
# noise (test_ccdiag_emu.sh, docs/netpair.md "Noise")
"$EMU" up 3 --degrade node2=2mbit >"$T_TMP/emu.log" 2>&1
t_check "emulated cluster of 3 hosts, node2 at 2mbit" [ $? -eq 0 ]
"$ES" up >"$T_TMP/slurm.log" 2>&1
t_check "slurmctld and 3 slurmd up, every node idle" grep -q 'every node idle' "$T_TMP/slurm.log"

# results outside /tmp: every emulated host has a private /tmp
out=/run/ccdiag-slurm/run
# 64 KiB netpair messages (on node2's 2mbit link one takes 0.26 s) and
# 200 latency ping-pongs a pair (not judged on a shared kernel) keep the run short
"$ES" salloc -N3 "$D" run -p "$FX/netpair-only.ini" -o "$out" --drain -- --pair-bw-size 64K --pair-iters 200 \
	>"$T_TMP/run.out" 2>"$T_TMP/run.err"
rc=$?
t_check "ccdiag in salloc: exit 1 (node2 fails), as ccreport's (was $rc)" [ "$rc" -eq 1 ]
if [ "$rc" -ne 1 ]; then  # what ccdiag and the launcher said, for the log (the folder goes with Slurm)
	tail -n 15 "$T_TMP/run.out" "$T_TMP/run.err" "$out"/phase-*.log 2>&1 | sed 's/^/  /'
fi
t_check "ccdiag in salloc: planned for the 3 nodes of the allocation, launched with srun --mpi=pmix" \
	bash -c "grep -q 'on 3 nodes of Slurm job [0-9]* through srun' '$T_TMP/run.out' &&
		grep -q '^srun -N 3 --ntasks-per-node=1 .*--mpi=pmix ' '$out/phase-1-pairs.log'"
# one task per node on nodes of $(nproc) CPUs (slurm.conf): all of them, bound to cores
# (task/none here ignores the binding; srun must still take the flags)
t_check "ccdiag in salloc: each task gets the node's $(nproc) CPUs, --cpu-bind=cores" \
	grep -q "^srun -N 3 --ntasks-per-node=1 --cpus-per-task=$(nproc) --cpu-bind=cores --mpi=pmix " "$out/phase-1-pairs.log"
t_check "ccdiag in salloc: netpair ran on the three Slurm nodes and named node2" \
	jq -e -s '.[0].nodes == 3 and ([.[0].hosts[].name] | sort) == ["node0", "node1", "node2"] and
		any(.[]; .type == "diagnosis" and .subject == "node" and .host == "node2" and .verdict == "bad")' \
	"$out/phase-1-pairs.jsonl"
t_check "--drain: scontrol drained node2 alone" \
	bash -c "grep -q '^ccdiag: drained: node2 ' '$T_TMP/run.out' &&
		\"$ES\" sinfo -h -N -o '%N %T' | sort | tr '\n' ' ' | grep -qE '^node0 idle node1 idle node2 drained '"
"$ES" scontrol show node node2 >"$T_TMP/node2"
t_check "--drain: node2's reason names the failed check and its value" \
	grep -qE 'Reason=ccdiag netpair-only: netpair diagnosis: node bad: .*netpair_bw (node2-node[0-9]|node[0-9]-node2) \(host node[0-9]\): 0\.[0-9]+ Gb/s' "$T_TMP/node2"

# a task that dies of a signal before the run begins (Open MPI 4.1.4 can segfault inside
# MPI_Init here under load): srun keeps the step (--kill-on-bad-exit=0) and the other tasks
# wait in MPI_Init for it, so ccdiag stops the step at srun's "task N: <signal>" line and
# launches the phase once more. The wrapper crashes task 1 of the first launch (node2 is
# drained now: the two idle nodes).
cw=/run/ccdiag-slurm/crash1.sh
cat >"$cw" <<EOF
#!/bin/bash
if [ "\${SLURM_PROCID:-}" = 1 ] && mkdir /run/ccdiag-slurm/crashed 2>/dev/null; then kill -SEGV \$\$; fi
exec '$T_ROOT/build/ccprobe' "\$@"
EOF
chmod +x "$cw"
out=/run/ccdiag-slurm/crash
CCPROBE=$cw "$ES" salloc -N2 "$D" run -p "$FX/netpair-only.ini" -o "$out" -- --pair-bw-size 1M \
	>"$T_TMP/crash.out" 2>"$T_TMP/crash.err"
rc=$?
t_check "a task crashed before the run: srun's line stops the step, the phase is launched once more" \
	grep -qE '^ccdiag: phase 1/1 pairs: the launch failed \(stopped: node1: task 1: Segmentation fault.*; see phase-1-pairs.log\); launching it once more' \
	"$T_TMP/crash.out"
t_check "a task crashed before the run: the second launch ran netpair to its end on the 2 nodes (exit $rc)" \
	bash -c "{ [ $rc -eq 0 ] || [ $rc -eq 1 ]; } && jq -e -s '.[0].nodes == 2 and .[-1].type == \"end\" and .[-1].status == \"complete\"' '$out/phase-1-pairs.jsonl' >/dev/null &&
		[ \$(grep -c '^ccdiag: the launch failed' '$out/phase-1-pairs.log') -eq 1 ]"
if ! grep -q 'once more' "$T_TMP/crash.out" || { [ $rc -ne 0 ] && [ $rc -ne 1 ]; }; then
	# what ccdiag, srun and the report said, for the log (exit 4 once in 10 runs)
	echo "  ccdiag exit $rc; verdicts: $(jq -c '[.verdict, [.criteria[] | [.id, .verdict, .reason // empty]]]' "$out/report/summary.json" 2>&1)"
	jq -c 'select(.type == "end" or .type == "skip" or .type == "error" or .type == "timeout")' "$out"/phase-*.jsonl 2>&1 | head -c 1500 | sed 's/^/  /'
	tail -n 25 "$T_TMP/crash.out" "$T_TMP/crash.err" "$out"/phase-*.log 2>&1 | sed 's/^/  /'
fi

# the configuration stays (a copy: down removes the state folder), the controller is gone
cp /run/ccdiag-slurm/slurm.conf "$T_TMP/slurm.conf"
"$ES" down >/dev/null 2>&1
"$EMU" exec node0 env SLURM_CONF="$T_TMP/slurm.conf" SLURM_JOB_ID= "$D" run -p "$FX/netpair-only.ini" --drain \
	-o /run/ccdiag-nodrain >"$T_TMP/nd.out" 2>"$T_TMP/nd.err"
rc=$?
t_check "--drain with no controller answering: refused, one line, exit 2, nothing run" \
	bash -c "[ $rc -eq 2 ] && [ \$(wc -l <'$T_TMP/nd.err') -eq 1 ] && grep -q -- '--drain needs Slurm' '$T_TMP/nd.err' &&
		[ ! -e /run/ccdiag-nodrain ]"
t_done
