#!/bin/bash
# ccdiag run on the emulated cluster (scripts/emucluster): a degraded host named
# (exit code ccreport's, the drain list, no launcher banner), a hung phase ending
# in its timeout with the next phase run, and Ctrl-C recording the later phases
# as not run with the report still written. test_ccdiag.sh has the rest.
source "$(dirname "$0")/../lib.sh"
D=$T_ROOT/build/ccdiag
EMU=$T_ROOT/scripts/emucluster
FX=$T_ROOT/tests/fixtures/ccdiag
cd "$T_TMP" || exit 1

# ---- the emulated cluster
t_emu_suite "emulated cluster runs need root (network namespaces)"
out=$T_TMP/emu
# 64 KiB netpair messages (on node2's 2mbit link one takes 0.26 s) and a quarter of a second
# per collective size up to 64 KiB (ccdiag's --time-per-size and --max-size: a phase's own
# options come after those given after --) keep the run short, as do 200 latency ping-pongs a pair (not judged on a shared
# kernel; test_netpair.sh says why); what is judged stays the same.
# 3 hosts: node2's two links slow, node0-node1 healthy. node2 at 2mbit, 500 times below the
# rate: netpair blames only what stands out against the run's own noise (docs/netpair.md),
# and beside busy loops and other jobs (load 10-14 on 2 cores) the healthy pair read
# 0.044 Gb/s in a retest, below a 100mbit link's 0.095, and a healthy reading fell to 0.034
# of the reference: node2 at 100mbit was rightly inconclusive there, at 2mbit it was named.
# OMPI_MCA_odls_base_sigkill_timeout=0: after the pairs phase's exit 1, mpirun otherwise
# waits ~4 s before it kills ranks that already left (no signal is sent to this run)
# The train phases' workload a fiftieth of emu-1g's (2e4 parameters: 80 KB of gradients) in
# 64 KiB buckets, and the collectives up to that bucket (the largest size the estimate
# names): at 2mbit emu-1g's 4 MB took ~20 s an all_reduce, three a step (the step, compute
# alone, comm alone), past the phase's deadline, and 1e5 parameters in 256 KiB buckets
# still took 48 s of the suite's 111 (trainstep's link check sends a bucket, up to 1 MiB,
# over every link three times); the profile is otherwise emu-1g's, its name too. (A rank
# ready a millisecond after the others beside node2's slow links is no longer what the step
# waits for: probes/trainstep.c.) The framework's phase is left out here (CCDIAG_PYTHON
# names no interpreter: "not run: the framework is not present"): it took 53 s at 2mbit,
# and the PyTorch step on a degraded cluster is test_trainstep_emu's.
sed -e 's/^params = 1e6 .*/params = 2e4/' -e 's/^bucket_bytes = 256K .*/bucket_bytes = 64K/' \
	"$T_ROOT/profiles/emu-1g.ini" >"$T_TMP/emu-1g.ini"
grep -q '^params = 2e4$' "$T_TMP/emu-1g.ini" && grep -q '^bucket_bytes = 64K$' "$T_TMP/emu-1g.ini" ||
	t_fail "profiles/emu-1g.ini: its params or bucket_bytes line changed; the test's workload is emu-1g's"
CCDIAG_PYTHON=/nonexistent/python3 OMPI_MCA_odls_base_sigkill_timeout=0 "$D" run -p "$T_TMP/emu-1g.ini" --emulated 3 --degrade node2=2mbit -o "$out" --drain-list "$T_TMP/drain" \
	--time-per-size 0.25 --max-size 64K -- --pair-bw-size 64K --pair-iters 200 >"$T_TMP/emu.out" 2>"$T_TMP/emu.err"
rc=$?
t_check "degraded host: exit 1, as ccreport's" [ "$rc" -eq 1 ]
t_check "degraded host: the report fails netpair_bw on node2's links and the diagnosis names node2" \
	jq -e '.verdict == "fail" and ([.criteria[] | select(.id == "netpair_bw") | .verdict] == ["fail"]) and
		any(.diagnoses[]; .element == "node2" and .verdict == "bad")' "$out/report/summary.json"
t_check "degraded host: the pairs phase line says what it found" \
	grep -q '^ccdiag: phase 1/5 pairs: netpair: .*node node2 bad' "$T_TMP/emu.out"
# issue 34: the train phases on the degraded cluster: the proxy's step, beside the estimate,
# says which rank it waits for: node2's (its links); the framework's step ran or says why not
t_check "degraded host: the train-proxy phase ran trainstep; the report says the step waits for node2" \
	bash -c "grep -q '^ccdiag: phase 4/5 train-proxy: trainstep: ' '$T_TMP/emu.out' &&
		jq -e '.estimate.measured_steps[] | select(.source == \"trainstep\") | .waits_for.host == \"node2\"' '$out/report/summary.json' >/dev/null &&
		grep -q 'the step waits for rank 2 on node2' '$out/report/report.md'"
t_check "degraded host: without the framework (CCDIAG_PYTHON names none) the train phase is recorded not run, with the reason" \
	bash -c "grep -qE '^ccdiag: phase 5/5 train: not run: the framework is not present' '$T_TMP/emu.out'"
t_check "degraded host: no launcher banner on the terminal, it is in the phase's log" \
	bash -c "! grep -q 'Primary job' '$T_TMP/emu.out' '$T_TMP/emu.err' && grep -q 'Primary job' '$out/phase-1-pairs.log'"
t_check "degraded host: the drain list holds node2 alone, with the failed check and its value" \
	bash -c "[ \$(wc -l <'$T_TMP/drain') -eq 1 ] &&
		grep -qE '^NodeName=node2 State=DRAIN Reason=\"ccdiag emu-1g: netpair diagnosis: node bad: .*netpair_bw (node2-node[0-9]|node[0-9]-node2) \(host node[0-9]\): 0\.[0-9]+ Gb/s, bound 0.25 Gb/s' '$T_TMP/drain' &&
		grep -q '^ccdiag: 1 node(s) to drain: node2 ' '$T_TMP/emu.out'"
grep -q '^NodeName=node2 ' "$T_TMP/drain" 2>/dev/null && [ "$(wc -l <"$T_TMP/drain")" -eq 1 ] ||
	printf 'the drain list was:\n%s\n' "$(cat "$T_TMP/drain" 2>&1)"
t_check "degraded host: the emulated cluster is gone afterwards" bash -c "! '$EMU' status >/dev/null 2>&1"
# the figure for the note: estimated vs measured (printed, not judged)
printf 'FIGURE ccdiag emu-1g 3 hosts node2=2mbit: %s\n' "$(grep '^ccdiag: total' "$T_TMP/emu.out")"

# a phase that hangs ends in its timeout record; the next phase runs
out=$T_TMP/hang
# (10 s: beyond any healthy step of 2 hosts, even on a loaded machine. The deadline also
# bounds the collectives phase: with 5 s, beside two busy test workers, that phase once
# did not end complete; all_reduce up to 1 MiB, as only its data is judged). The profile
# bounds no collective's speed: under a CPU hog emu-1g's all_reduce busbw failed (exit 1),
# and the exit code asserted here is the hung phase's, incomplete.
# (odls_base_sigkill_timeout 0: the timeout record is written before the exit 4)
CCPROBE_FAULT=hang:1:4194304 OMPI_MCA_odls_base_sigkill_timeout=0 "$D" run -p "$FX/pairs-data.ini" --emulated 2 -o "$out" --time-per-size 0.25 \
	--max-size 1M -- --timeout 10 \
	>"$T_TMP/hang.out" 2>"$T_TMP/hang.err"
rc=$?
t_check "hung pairs phase: its timeout record names the measurement" \
	jq -e -s '[.[] | select(.type == "timeout")] | length == 1 and (.[0].name | test("netpair"))' "$out/phase-1-pairs.jsonl"
t_check "hung pairs phase: the collectives phase ran to its end" \
	jq -e -s '.[-1].status == "complete" and ([.[] | select(.type == "measurement")] | length > 0)' \
	"$out/phase-2-collectives-mpi.jsonl"
t_check "hung pairs phase: exit 4 (incomplete; was $rc), netpair_bw incomplete, all_reduce's data passed" \
	bash -c "[ $rc -eq 4 ] && jq -e '[.criteria[] | {(.id): .verdict}] | add == {\"netpair_bw\": \"incomplete\", \"allreduce_data\": \"pass\"}' '$out/report/summary.json' >/dev/null"
[ "$rc" -eq 4 ] || jq -c '[.criteria[] | {id, verdict, worst: .worst.value}]' "$out/report/summary.json" 2>&1 | sed 's/^/  /'

# Ctrl-C during the first phase: its interrupted record, the next recorded not run, the report.
# A background job ignores SIGINT unless told otherwise (a terminal's Ctrl-C reaches a
# foreground one): env --default-signal gives it the terminal's disposition.
out=$T_TMP/int
env --default-signal=INT setsid "$D" run -p emu-1g --emulated 2 -o "$out" -- --pair-time 3 \
	>"$T_TMP/int.out" 2>"$T_TMP/int.err" &
pid=$!
for _ in $(seq 1 240); do
	[ -s "$out/phase-1-pairs.jsonl" ] && break
	sleep 0.5
done
sleep 3  # inside netpair's first pair: 4 steps of 3 s
kill -INT "$pid"
wait "$pid"
rc=$?
t_check "Ctrl-C: the running phase ends with its interrupted record" \
	jq -e -s '.[-1].type == "end" and .[-1].status == "interrupted"' "$out/phase-1-pairs.jsonl"
jq -e -s '.[-1].type == "end"' "$out/phase-1-pairs.jsonl" >/dev/null 2>&1 ||
	{ tail -c 400 "$out/phase-1-pairs.jsonl"; tail -n 8 "$out/phase-1-pairs.log"; } 2>&1 | sed 's/^/  /'
t_check "Ctrl-C: the later phase is recorded as not run" \
	jq -e -s '.[-1].status == "not_run" and (.[-1].reason | test("interrupted"))' "$out/phase-2-collectives-mpi.jsonl"
t_check "Ctrl-C: the report is written, incomplete (exit 4)" \
	bash -c "[ $rc -eq 4 ] && jq -e '.verdict == \"incomplete\"' '$out/report/summary.json' >/dev/null"
t_check "Ctrl-C: the emulated cluster is gone afterwards" bash -c "! '$EMU' status >/dev/null 2>&1"

t_done
