#!/bin/bash
# ccreport's golden cases (how to add one: tests/report/README.md). Each folder
# tests/report/cases/NAME holds the inputs, `args` (ccreport's arguments, run
# inside the folder), `exit` (the expected exit code) and one of:
#  - `projection.json`: what tests/report/projection.jq keeps of summary.json
#    (verdicts, per-criterion worst value and failing elements, problems,
#    diagnoses). Most cases: a new summary field leaves them alone.
#  - `expected.json`: the whole summary.json without the volatile fields
#    (generated_utc, profile.path, version, commit). Only the few contract cases that
#    pin the summary's shape for its readers (renderers, scripts).
#  - `stderr`: the one line an input error must give (exit 2).
# Profiles named in `args` are the test-owned copies in tests/report/profiles
# ($CCREPORT_PROFILES), so editing a shipped profile rewrites no golden; the
# cases with a `shipped` file (shipped-*) judge with profiles/ as shipped, so a
# change there that breaks a healthy first run fails here.
# Synthetic GPU clusters are not stored: `gen` (and `gen.baseline`) hold the
# arguments of tests/report/gen_results.c that writes results.jsonl
# (baseline.jsonl) into a copy of the folder. REGEN=1 rewrites each case's
# expected file from the current ccreport: review the diff before committing it.
# CCREPORT=path tests another build (make asan runs build-asan/ccreport).
source "$(dirname "$0")/../lib.sh"
CCREPORT=$(realpath "${CCREPORT:-$T_ROOT/build/ccreport}")
CASES=$T_ROOT/tests/report/cases
GEN=${GEN:-$T_ROOT/build/tests/gen_results}
STRIP='del(.generated_utc, .profile.path, .version, .commit)'
PROJECTION=$T_ROOT/tests/report/projection.jq
export CCREPORT_PROFILES=$T_ROOT/tests/report/profiles
export SOURCE_DATE_EPOCH=1796018400     # 2026-11-30T06:00:00Z: fixed generated_utc

[ -x "$CCREPORT" ] || { t_fail "no $CCREPORT (make)"; t_done; exit; }

golden() {  # golden CASE
	local dir=$CASES/$1 run=$CASES/$1 out=$T_TMP/$1 rc want args gen expect got what
	want=$(cat "$dir/exit")
	read -r -a args <"$dir/args"
	if [ -f "$dir/gen" ]; then
		run=$T_TMP/case-$1
		mkdir -p "$run"
		cp -r "$dir"/. "$run"/
		read -r -a gen <"$dir/gen"
		if ! [ -x "$GEN" ] || ! "$GEN" "${gen[@]}" >"$run/results.jsonl"; then
			t_fail "$1: cannot generate results with $GEN (make $GEN)"
			return
		fi
		if [ -f "$dir/gen.baseline" ]; then
			read -r -a gen <"$dir/gen.baseline"
			"$GEN" "${gen[@]}" >"$run/baseline.jsonl"
		fi
	fi
	# a case with a `shipped` file judges with profiles/ as shipped, not the test-owned copies
	local profiles=$CCREPORT_PROFILES
	[ -f "$dir/shipped" ] && profiles=$T_ROOT/profiles
	(cd "$run" && CCREPORT_PROFILES=$profiles "$CCREPORT" "${args[@]}" --no-render -q -o "$out") \
		>"$out.stdout" 2>"$out.stderr"
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		t_fail "$1: exit $rc, want $want: $(head -c 300 "$out.stderr")"
		return
	fi
	if [ "$want" -eq 2 ]; then
		[ -n "${REGEN:-}" ] && head -1 "$out.stderr" >"$dir/stderr"
		if [ "$(wc -l <"$out.stderr")" -ne 1 ] && [ "$1" != bad-usage ]; then
			t_fail "$1: $(wc -l <"$out.stderr") lines on stderr, want one"
		elif [ "$(head -1 "$out.stderr")" != "$(cat "$dir/stderr")" ]; then
			t_fail "$1: stderr '$(head -1 "$out.stderr")', want '$(cat "$dir/stderr")'"
		else
			t_pass "$1: exit 2, $(cat "$dir/stderr")"
		fi
		return
	fi
	jq -S "$STRIP" "$out/summary.json" >"$out.json" || { t_fail "$1: summary.json is not JSON"; return; }
	if [ -f "$dir/expected.json" ]; then
		expect=$dir/expected.json got=$out.json what="summary.json (contract snapshot)"
	else
		expect=$dir/projection.json got=$out.projection.json what="its projection"
		jq -S -f "$PROJECTION" "$out.json" >"$got" || { t_fail "$1: cannot project summary.json"; return; }
	fi
	[ -n "${REGEN:-}" ] && cp "$got" "$expect"
	if ! [ -f "$expect" ]; then
		t_fail "$1: no $(basename "$expect") (REGEN=1 writes it)"
	elif diff -u "$expect" "$got" >"$out.diff"; then
		t_pass "$1: exit $rc, verdict $(jq -r .verdict "$out.json"), $what as expected"
	else
		t_fail "$1: $what differs from $(basename "$expect"):"
		head -40 "$out.diff"
	fi
}

for d in "$CASES"/*/; do
	golden "$(basename "$d")"
done

# what the golden files must say, spelled out (a regenerated file cannot hide these)
s=$T_TMP
t_check "fail names the GPU, its value, the bound and the shortfall" \
	jq -e '.criteria[] | select(.id == "pcie_h2d") | .verdict == "fail" and
		(.failures | length == 1) and .failures[0].element == "node1/gpu3" and
		.failures[0].bound == 48 and .failures[0].shortfall_pct > 45' "$s/fail-gpu.json"
t_check "every incomplete criterion's reason ends with its fix (the command that measures it)" \
	jq -e '[.criteria[] | select(.verdict == "incomplete") | .reason] | length > 10 and
		all(test("; fix: .*(`ccprobe [^`]+`|CCDIAG_LINK_RATE_MBIT|`ccreport import )") or test("--workload checkpoint_every")) and
		(map(select(test("gpuhealth") and (test("dcgm_diag") | not))) | all(endswith("fix: run `ccprobe gpuhealth`"))) and
		(map(select(test("dcgm_diag"))) | length > 0 and
		 all(test("fix: run `ccprobe dcgm --dcgm-level 3` .* or import the output of `dcgmi diag -r 3 -j`"))) and
		(map(select(test("^no measurement of storage"))) | all(test("--storage 1` on the emulated cluster")))' \
	"$s/shipped-h100-pass.json"
t_check "a skipped probe makes its required criteria incomplete, never pass" \
	jq -e '[.criteria[] | select(.probe == "pcie" and .required)] | all(.verdict == "incomplete")' \
	"$s/incomplete-skip.json"
t_check "a run without its end record is incomplete" \
	jq -e '.verdict == "incomplete" and .inputs[0].end == "missing"' "$s/incomplete-noend.json"
# a netpair diagnosis naming every node bad (ccprobe before 2026-12-04, on a busy machine) is a
# measurement that failed: its nodes are inconclusive and none is drained; an inconclusive node
# or link (a slow one within the run's noise) is named with its figures and reason, never drained
t_check "every node diagnosed bad: all four inconclusive, said so, the drain list empty, each node to check" \
	jq -e '([.diagnoses[] | select(.subject == "node") | .verdict] == ["inconclusive","inconclusive","inconclusive","inconclusive"]) and
		all(.diagnoses[]; .evidence | test("measurement that failed")) and (.decision.drain == []) and
		([.decision.check[] | select(.what == "node") | .element] | length == 4)' "$s/netpair-all-bad.json"
t_check "an inconclusive node and link: named with figures and reason, only the bad node drained" \
	jq -e '(.decision.drain | map(.node)) == ["node2"] and
		(.decision.check | map(.what + " " + .element)) == ["node node1", "link node0-node1"] and
		all(.decision.check[]; .reason | test("inconclusive: .*; not drained: .*ccprobe netpair")) and
		any(.diagnoses[]; .element == "node1" and .verdict == "inconclusive" and (.evidence | test("best at 0.240 .*own noise"))) and
		any(.diagnoses[]; .element == "node0-node1" and .verdict == "inconclusive" and
			(.evidence | test("^one-way bandwidth 0.[0-9]+ of the reference, best retest 0.24: within the run.s own noise$")))' \
	"$s/netpair-inconclusive.json"
t_check "a run that timed out is incomplete and names the rank that never started" \
	jq -e '.verdict == "incomplete" and .inputs[0].end == "timeout" and
		any(.problems[]; test("never started: rank 2 on vm"))' "$s/incomplete-timeout.json"
t_check "an outlier within the bound is named" \
	jq -e '.outliers | length == 1 and .[0].element == "node0/gpu5" and .[0].criterion == "hbm_copy"' \
	"$s/outlier.json"
t_check "a driver mismatch is listed by host" \
	jq -e '.consistency[0].key == "driver" and (.consistency[0].values | map(.hosts[]) | sort == ["node0", "node1"])' \
	"$s/version-mismatch.json"
t_check "a regression beyond 5 % and the spread is named; improvements listed too" \
	jq -e '(.baseline.regressions | length == 16 and all(.criterion == "pcie_d2h")) and
		(.baseline.improvements | length > 0 and all(.criterion == "pcie_h2d"))' "$s/regression.json"
t_check "degraded emulated run against a healthy one: node2's links and the all_reduce curve regress" \
	jq -e '(.baseline.regressions | map(select(.criterion == "netpair_bw") | .element) | all(test("node2"))) and
		(.baseline.regressions | map(select(.criterion == "busbw curve")) | length > 3)' "$s/emu-regression.json"
t_check "the same run against a baseline of itself regresses nothing" \
	jq -e '.baseline.compared > 100 and (.baseline.regressions | length == 0)' "$s/no-regression.json"
t_check "a grouped netpair run (docs/netpair.md): the links across groups sampled by design, said in the pass" \
	jq -e '.criteria[] | select(.id == "netpair_bw") | .verdict == "pass" and
		(.reason | test("links across groups sampled by design: 2 of 4 measured, every pair of groups and every host covered"))' \
	"$s/netpair-grouped.json"
t_check "a grouped run missing a link inside a group and a host's link across: incomplete, each named" \
	jq -e '.criteria[] | select(.id == "netpair_bw") | .verdict == "incomplete" and
		(.reason | test("1 of 2 links inside groups not measured: node0-node1")) and
		(.reason | test("misses 0 of 1 group pairs and 2 host\\(s\\): no link measured from node1 to another group"))' \
	"$s/netpair-grouped-missing.json"
t_check "a slow leaf uplink (emulated, leaf0 at 20mbit): named at its granularity with the figures across and inside, no node" \
	jq -e '(.diagnoses | length == 1 and .[0].granularity == "leaf uplink" and
			.[0].element == "switch uplink leaf0 (nodes node0\u2013node1)") and
		any(.problems[]; test("^netpair diagnosis: switch uplink leaf0 \\(nodes node0\u2013node1\\) bad: [0-9.]+ Gb/s across, [0-9.]+ inside$"))' \
	"$s/netpair-uplink.json"
t_check "a slow node under a healthy leaf (emulated, grouped schedule): the node alone" \
	jq -e '.diagnoses | length == 1 and .[0].granularity == "node" and .[0].element == "node4"' \
	"$s/netpair-grouped-node.json"
t_check "an isolate run (emulated, node4 at 2mbit; docs/isolation.md): node4 named at node granularity and drained, every test a round row, incomplete as nothing else was measured" \
	jq -e '.verdict == "incomplete" and (.diagnoses | length == 1 and .[0].probe == "isolate" and
			.[0].granularity == "node" and .[0].element == "node4" and .[0].verdict == "bad") and
		(.isolate_rounds | length == 7 and .[0].round == 1 and .[0].role == "group" and
			([.[] | select(.role == "confirm")] | length == 2 and all(.nodes == "node4" and .result == "fail"))) and
		any(.decision.drain[]; .node == "node4")' \
	"$s/isolate-node.json"
# imported fio, IOR and nvbandwidth outputs (docs/import.md): named elements, units converted
t_check "fio: the slow node's write and read fail by name; the inputs say fio" \
	jq -e '([.criteria[] | select(.id == "storage_write_node" or .id == "storage_read_node") |
		.verdict == "fail" and ([.failures[].element] == ["node02"])] | length == 2 and all) and
		(.inputs | map(.imported.tool) | unique == ["fio"])' "$s/import-fio-slow-node.json"
t_check "fio: a failed verify (EILSEQ) fails the data check, never a pass" \
	jq -e '.criteria[] | select(.id == "storage_data") | .verdict == "fail" and (.reason | test("EILSEQ"))' \
	"$s/import-fio-verify-fail.json"
t_check "IOR: the aggregate write is the median repetition, MiB/s converted to GB/s (1980 x 2^20 / 1e9)" \
	jq -e '.criteria[] | select(.id == "storage_write") | .verdict == "fail" and
		.worst.element == "cluster" and ((.worst.value - 1980 * 1048576 / 1e9) | fabs < 1e-4)' \
	"$s/import-ior-text-slow.json"
t_check "IOR: per-node criteria are not judged from an aggregate (another scope), never passed" \
	jq -e '[.criteria[] | select(.id == "storage_write_node" or .id == "storage_read_node") | .verdict] ==
		["incomplete", "incomplete"]' "$s/import-ior-json.json"
t_check "nvbandwidth: the slow GPU fails PCIe and every NVLink pair it is in, by name" \
	jq -e '(.criteria[] | select(.id == "pcie_h2d") | [.failures[].element] == ["node01/gpu3"]) and
		(.criteria[] | select(.id == "nvlink_p2p_uni") | (.failures | length == 14) and
		all(.failures[].element; test("gpu3")))' "$s/import-nvb-slow-gpu.json"
t_check "nvbandwidth: no link rate in its output, so the link-rate criteria are incomplete and say why" \
	jq -e '.verdict == "incomplete" and (.criteria[] | select(.id == "pcie_link") | .verdict == "incomplete" and
		(.reason | test("nvbandwidth prints no PCIe link rate")))' "$s/import-nvb-healthy.json"
t_check "nvbandwidth JSON: a pair printed N/A (no peer access) is named incomplete, never passed" \
	jq -e '.criteria[] | select(.id == "nvlink_p2p_uni") | .verdict == "incomplete" and
		(.reason | test("node02/gpu1-gpu2, node02/gpu2-gpu1"))' "$s/import-nvb-json-nop2p.json"
t_check "the degraded emulated node is named in every failing link" \
	jq -e '[.criteria[] | select(.id == "netpair_bw") | .failures[].element] | length == 3 and
		all(test("node2"))' "$s/emu-degraded.json"
t_check "hyphenated host names (gpu-node-2): the bad node's failed links stay in its drain reason, none left to check" \
	jq -e '.decision.drain | length == 1 and .[0].node == "gpu-node-2" and (.[0].why | length == 4) and
		([.[0].why[1:][] | test("^netpair_bw gpu-node-[0-3]-gpu-node-[0-3] ")] | all)' "$s/hyphen-hosts.json"
t_check "hyphenated host names: no link of the drained node is listed to check" \
	jq -e '.decision.check == []' "$s/hyphen-hosts.json"
t_check "repeat = best: a retest that dipped once (node1->node3 0.16 Gb/s, then 0.88) blames no healthy link" \
	jq -e '[.criteria[] | select(.id == "netpair_bw") | .failures[].element] | sort == ["node0-node2", "node1-node2", "node2-node3"]' \
	"$s/emu-retest.json"
t_check "with rate_GBps in the netpair records the relative bound is judged" \
	jq -e '.criteria[] | select(.id == "netpair_bw_rate") | .verdict == "warn" and (.failures | length == 3)' \
	"$s/emu-rate.json"
t_check "without rate_GBps the relative bound says so" \
	jq -e '.criteria[] | select(.id == "netpair_bw_rate") | .verdict == "incomplete" and
		(.reason | test("no rate reported"))' "$s/emu-degraded.json"
t_check "a host short of a GPU is incomplete, by name" \
	jq -e '.criteria[] | select(.id == "pcie_h2d") | .reason | test("node1: 7 of 8 GPUs")' "$s/gpu-missing.json"
t_check "a counter that moved fails, naming the NIC" \
	jq -e '.criteria[] | select(.id == "ib_symbol_errors") | .failures[0].element == "node0/mlx5_2:1" and
		.failures[0].value == 17' "$s/counters.json"
t_check "soak: the flapping link is named (6 intervals below a quarter of its median), the stable ones pass" \
	jq -e '(.criteria[] | select(.id == "soak_link_drops") | .verdict == "fail" and
			([.failures[].element] == ["node1-node2"]) and .failures[0].value == 6 and
			([.values[] | select(.element != "node1-node2") | .value] == [0, 0])) and
		(.criteria[] | select(.id == "soak_allreduce_cv") | .verdict == "pass")' "$s/soak-flap.json"
t_check "soak: one slow moment (node0->node2 at 0.44 of its median) is no drop below 0.25, only a lower worst" \
	jq -e '.criteria[] | select(.id == "soak_link_worst") | [.values[] | select(.element == "node0-node2") | .value] |
		length == 1 and .[0] > 40 and .[0] < 50' "$s/soak-flap.json"
t_check "hostile host names survive as data" \
	jq -e '.cluster.hosts | index("no\"de2<script>alert(1)</script>\nx") != null' "$s/hostile-names.json"

# the checkpoint estimate by hand (checkpoint-stall: a real GlusterFS storage run): 1e8 params x 16 B
# at the aggregate write rate of its record, every 60 s of training
cbw=$(jq -s '[.[] | select(.name == "storage" and .test == "write" and .scope == "cluster")][0].bw_GBps' \
	"$CASES/checkpoint-stall/results.jsonl")
t_check "checkpoint: write = 1.6e9 B / ($cbw GB/s), stall = write / (60 s + write), judged in % against <= 5 %" \
	jq -e --argjson bw "$cbw" '(1.6e9 / ($bw * 1e9)) as $w | .checkpoint | .made and .inputs.checkpoint_bytes == 1.6e9 and
		((.outputs.write_s - $w) | fabs) < 1e-4 and ((.outputs.stall_fraction - $w / (60 + $w)) | fabs) < 1e-6 and
		.outputs.interval_s == 60' "$s/checkpoint-stall.json"
t_check "checkpoint: the criterion holds the same fraction in %" \
	jq -e '(.checkpoint.outputs.stall_fraction * 100) as $p | .criteria[] | select(.id == "checkpoint_stall") |
		.verdict == "fail" and ((.worst.value - $p) | fabs) < 1e-3' "$s/checkpoint-stall.json"

# scaling and the estimate (scale-pass: a real --scale run of the emulated cluster, nodes 1, 2, 4)
t_check "scaling: one series, points at 2 and 4 nodes (1 rank on 1 node has busbw 0: left out), ideal at 2 nodes" \
	jq -e '.charts.scaling | length == 1 and (.[0].points | map(.[0])) == [2, 4] and .[0].base_nodes == 2 and
		.[0].ideal_GBps == .[0].points[0][1] and (.[0].efficiency | map(.nodes)) == [1, 2, 4] and
		.[0].efficiency[0].eff_base == null and .[0].efficiency[1].eff_base == 1' "$s/scale-pass.json"
# the plateau busbw of each node count from the records themselves: median of the 3 largest sizes
plateau() {
	jq -s --argjson n "$2" '[.[] | select(.kind == "collective" and .nodes == $n)] | sort_by(.bytes) |
		.[-3:] | map(.busbw_GBps) | sort | .[1]' "$CASES/scale-pass/results.jsonl"
}
p2=$(plateau x 2); p4=$(plateau x 4)
t_check "scaling: efficiency at 4 nodes = plateau(4) / plateau(2) = $p4 / $p2, within the bound >= 50 %" \
	jq -e --argjson a "$p2" --argjson b "$p4" '(.charts.scaling[0].efficiency[2].eff_base - $b / $a | fabs) < 1e-5 and
		(.criteria[] | select(.id == "allreduce_scaling") | .verdict == "pass" and
		(.values[0].value - 100 * $b / $a | fabs) < 1e-3)' "$s/scale-pass.json"
t_check "scaling fail: names the node count and its efficiency against the base" \
	jq -e '.criteria[0] | .verdict == "fail" and .failures[0].element == "4 nodes vs 2 (mpi float sum)" and
		.failures[0].value < 95 and .failures[0].bound == 95' "$s/scale-fail.json"
# the estimate by hand: the 384 KiB bucket between the swept 256 and 512 KiB (log-log), 4 ranks, DDP;
# S = 4e6 B is 10 buckets of 393216 B and a last one of 67840 B, priced at its own size (64 and 128 KiB)
loglog() {  # loglog A B BYTES: busbw of the 4-node series at BYTES, log-log between sizes A and B
	jq -s --argjson a "$1" --argjson b "$2" --argjson x "$3" '[.[] | select(.kind == "collective" and
		.nodes == 4 and (.bytes == $a or .bytes == $b))] | sort_by(.bytes) | map(.busbw_GBps) |
		.[0] * pow(.[1] / .[0]; (($x | log) - ($a | log)) / (($b | log) - ($a | log)))' \
		"$CASES/scale-pass/results.jsonl"
}
bw=$(loglog 262144 524288 393216); bwt=$(loglog 65536 131072 67840)
t_check "estimate: busbw at the bucket interpolated log-log ($bw GB/s), at the last bucket ($bwt GB/s), sync = 2 x 3/4 x (10 x 393216 B / busbw + 67840 B / busbw_tail), compute = 6 x 1e6 x 4096 / (4 x 0.05e12 x 0.5)" \
	jq -e --argjson bw "$bw" --argjson bwt "$bwt" '.estimate | .label == "model, not a measurement" and .made and
		(.inputs.busbw_GBps - $bw | fabs) < 1e-6 and .measured.from_bytes == 262144 and .measured.to_bytes == 524288 and
		(.outputs.sync_s - 1.5 * (3932160 / ($bw * 1e9) + 67840 / ($bwt * 1e9)) | fabs) < 1e-4 and
		(.outputs.compute_s - 0.24576 | fabs) < 1e-6 and
		(.outputs.exposed_s - (.outputs.sync_s - 0.1 * 0.24576) | fabs) < 1e-5 and .outputs.buckets == 11 and
		(.outputs.comm_fraction - .outputs.exposed_s / .outputs.step_s | fabs) < 1e-5 and
		(.outputs.cost - 2 * 4 * 1e8 / 4096 * .outputs.step_s / 3600 | fabs) < 1e-2' "$s/scale-pass.json"
t_check "estimate: every input has its source (profile line, default, the measured record, the fit)" \
	jq -e '.estimate | (.inputs | keys) - (.sources | keys) == [] and .sources.params == "profile line 20" and
		.sources.stage == "default" and (.sources.busbw_GBps | test("^measured: all_reduce mpi float sum on 4 node")) and
		(.sources.alpha_us | test("^fit record"))' "$s/scale-pass.json"
t_check "estimate from flags, ZeRO-3 (k = 3), the 25 MiB default bucket beyond the sweep: from the fit, and said so" \
	jq -e '.estimate | .outputs.k == 3 and .sources.stage == "--workload" and .inputs.bucket_bytes == 26214400 and
		(.measured.method | test("Hockney fit")) and any(.notes[]; test("outside the sweep"))' "$s/estimate-comm-fail.json"
t_check "comm_fraction above its bound fails, in %" \
	jq -e '.criteria[0] | .verdict == "fail" and .unit == "%" and .failures[0].element == "estimate" and
		.failures[0].value > 20' "$s/estimate-comm-fail.json"
t_check "a workload without the measurement it needs: the estimate says why, its criterion is incomplete" \
	jq -e '.estimate.made == false and (.estimate.reason | test("backend nccl")) and .estimate.outputs == null and
		.criteria[0].verdict == "incomplete" and (.criteria[0].reason | test("^no estimate: "))' "$s/estimate-not-made.json"
t_check "no workload: the estimate is null" jq -e '.estimate == null' "$s/scale-fail.json"
# issue 34: the estimate beside measured steps whose figures are round. 262144 fp32 parameters (1 MiB,
# 4 buckets of 256 KiB) on 4 ranks; each step 1.0 s, compute alone 0.6 s, comm alone 0.8 s, exposed 0.4 s.
# The model's overlap is the share of compute the sync hid under: (0.8 - 0.4) / 0.6. trainstep (mpi): the
# sweep's busbw at 256 KiB (0.00098304 GB/s) gives sync 2 x 3/4 x 1 MiB / busbw = 1.6 s, so the step is
# 0.6 + (1.6 - 0.4) = 1.8 s: +80 %; with the workload's overlap (0) 0.6 + 1.6: +120 %. torch_step (gloo, no
# gloo sweep): its own comm alone, 0.8 s: 0.6 + (0.8 - 0.4) = 1.0 s, 0 %; the mpi sweep's beside it +80 %
t_check "measured steps: overlap as a share of compute, the sync from the step's own backend's sweep (trainstep +80 %) or its comm alone (torch_step 0 %), the assumed overlap beside (+120 %, +40 %)" \
	jq -e '[.estimate.measured_steps[] | {(.source): .}] | add | (.trainstep | .made and
		(.error_pct - 80 | fabs) < 1e-6 and (.error_pct_overlap_assumed - 120 | fabs) < 1e-6 and
		(.measured.overlap_of_compute - 0.4 / 0.6 | fabs) < 1e-6 and (.sync_ratio - 2 | fabs) < 1e-6 and
		.steady and (.sources.sync | test("all_reduce mpi float on 4 node"))) and (.torch_step | .made and
		(.error_pct | fabs) < 1e-6 and (.error_pct_overlap_assumed - 40 | fabs) < 1e-6 and
		(.error_pct_other_sweep - 80 | fabs) < 1e-6 and (.steady | not) and (.note | test("too noisy to compare: the measured steps spread by cv 30[.]0 %")) and
		(.sources.sync | test("own buckets all-reduced alone")))' "$s/step-measured.json"
t_check "measured steps: a stall above 3x the median named with its rank, goodput 3/7, the rank the step waits for, estimate_error warns on +80 %, the framework ready" \
	jq -e '(.estimate.measured_steps[0] | .source == "trainstep" and .stalls[0].step == 3 and .stalls[0].host == "node2" and
		(.goodput - 3 / 7 | fabs) < 1e-5 and .waits_for.host == "node2" and .waits_for.cause == "network") and
		(.criteria[] | select(.id == "est-error") | .verdict == "warn" and .failures[0].element == "trainstep") and
		(.criteria[] | select(.id == "framework") | .verdict == "pass")' "$s/step-measured.json"
# issue 15, 8 and 11: scale-pass's 4-rank fit at dp 512. Per pass and bucket half an all_reduce's alpha,
# scaled to 512 ranks (x 511/3); the bandwidth term in the busbw form: 511/512 x S / beta_busbw
fit4=$(jq -c 'select(.kind == "fit" and .nodes == 4)' "$CASES/scale-pass/results.jsonl")
t_check "estimate at dp 512 from a 4-rank fit: sync_fit = 2 x (11 x alpha x 511/3 / 2 + 511/512 x 4e6 / beta_busbw), latency_s = 11 x alpha x (511/3 - 1)" \
	jq -e --argjson f "$fit4" 'def near($a; $b): ($a - $b | fabs) < 1e-5 * $b;
		.estimate.outputs as $o | ($f.alpha_us * 1e-6) as $a |
		near($o.sync_fit_s; 2 * (11 * $a * 511 / 3 / 2 + 511 / 512 * 4e6 / ($f.beta_busbw_GBps * 1e9))) and
		near($o.latency_s; 11 * $a * (511 / 3 - 1)) and .estimate.inputs.fit_ranks == 4' "$s/estimate-dp512.json"
t_check "a ring over 128x the nodes measured: the comm criterion is a warn, not a pass or fail, and says why" \
	jq -e '.criteria[0].verdict == "warn" and (.criteria[0].reason | test("a warn, not a pass or fail: far from")) and
		(.estimate.extrapolated | test("4x the nodes"))' "$s/estimate-dp512.json"
t_check "issue 15, 7: the 4-node series measured 0: no estimate, no fall back to the 2-node series" \
	jq -e '.estimate.made == false and (.estimate.reason | test("on 4 node\\(s\\), 4 rank\\(s\\) measured busbw 0")) and
		.criteria[0].verdict == "incomplete" and .exit_code == 4' "$s/estimate-zeroed.json"
# issue 15, 10: docs/estimate.md Case D, by hand: S = 2 x 70e9 / 32 = 4.375e9 B per GPU, 8 rings per node
t_check "70B, 64 nodes x 8, tp 8, pp 4: dp sync = 2 x 15/16 x 8 x 4.375e9 / 360e9, tp = 64 x 20 x 4 x 2 x 7/8 x 64 MiB / 300e9, pp = 2 x 66 x 64 MiB / (8 x 49e9)" \
	jq -e 'def near($a; $b): ($a - $b | fabs) < 1e-5 * $b;
		.estimate.outputs as $o | near($o.sync_s; 2 * 15 / 16 * 8 * 4.375e9 / 360e9) and
		near($o.tp_s; 64 * 20 * 4 * 2 * 7 / 8 * 67108864 / 300e9) and
		near($o.pp_s; 2 * 66 * 67108864 / 392e9) and $o.groups_per_node == 8 and $o.dp_nodes == 16 and
		near($o.compute_s; 6 * 70e9 * 4194304 / (512 * 989e12 * 0.4)) and
		near($o.comm_fraction; ($o.sync_s + $o.tp_s + $o.pp_s) / $o.step_s) and
		(.estimate.terms.tp.source | test("^measured: all_reduce nccl bfloat16 on 1 node, 8 ranks")) and
		(.estimate.terms.pp.source | test("^measured: ib write_bw, the worst of 8 pair")) and
		.estimate.inputs.gpus == 512' "$s/estimate-layout.json"

# the shipped profiles as a new user meets them (cases shipped-*: profiles/*.ini, not the test copies)
for c in shipped-h100-pass shipped-h200-pass shipped-a100-pass; do
	t_check "$c: a healthy generated 2-node run passes the shipped profile (exit 0), every required criterion judged" \
		jq -e '.verdict == "pass" and .exit_code == 0 and
			([.criteria[] | select(.required)] | length >= 10 and all(.verdict == "pass"))' "$s/$c.json"
done
# (the a100 profile judges no HBM copy: its slow GPU is a slow PCIe host-to-device copy)
for c in shipped-h100-slow-gpu:hbm_copy shipped-h200-slow-gpu:hbm_copy shipped-a100-slow-gpu:pcie_h2d; do
	t_check "${c%:*}: one GPU at half its rate fails ${c#*:}, naming node1/gpu3 and only it, and drains node1" \
		jq -e --arg id "${c#*:}" '.verdict == "fail" and (.criteria[] | select(.id == $id) | .verdict == "fail" and
			[.failures[].element] == ["node1/gpu3"]) and [.decision.drain[].node] == ["node1"]' "$s/${c%:*}.json"
done

t_check "every incomplete criterion of every golden case says its fix" \
	bash -c "! jq -c '.criteria[]? | select(.verdict == \"incomplete\") | .reason' '$CASES'/*/projection.json | grep -v 'fix: '"

# the decision (summary.json's "decision", what every renderer opens with)
t_check "decision: emu-degraded drains node2 with the diagnosis and its three links, in the report's digits" \
	jq -e '.decision | .verdict == "fail" and (.words | startswith("FAIL: do not accept")) and
		[.drain[].node] == ["node2"] and (.drain[0].reason | startswith("netpair diagnosis: node bad") and
		test("netpair_bw node2-node3 \\(host node2\\): 0.0942 Gb/s, bound 0.25 Gb/s, shortfall 62.32%")) and
		.check == [] and .judged.phases == 1 and .judged.ranks_per_phase == [4] and .judged.nodes == 4 and
		.optional_not_measured == 2' "$s/emu-degraded.json"
t_check "decision: one slow GPU drains its node naming the criterion and the GPU" \
	jq -e '.decision | [.drain[].node] == ["node1"] and (.drain[0].reason | startswith("hbm_copy node1/gpu3 (host node1): ")) and
		.required_not_measured == [] and .optional_not_measured > 10' "$s/shipped-h100-slow-gpu.json"
t_check "decision: a wrong GPU model is said in words and listed, though no criterion failed" \
	jq -e '.decision | .failed == [] and (.words | test("the hardware is not what the profile expects")) and
		.hardware[0].key == "gpu_model" and .drain == []' "$s/wrong-model.json"
t_check "decision: required checks not measured come with the command that measures them, grouped by that command" \
	jq -e '.decision | (.words | startswith("INCOMPLETE: no decision yet")) and (.required_not_measured | length > 0 and
		all(.fix | test("^run `ccprobe pcie`"))) and
		.to_measure == [{"fix": .required_not_measured[0].fix, "criteria": ["pcie_h2d", "pcie_d2h", "pcie_link", "pcie_bidir"]}]' \
	"$s/incomplete-skip.json"
t_check "decision: the estimate's headline with its extrapolation" \
	jq -e '.decision.estimate | .made and .days > 0 and .gpu_hours > 0 and .comm_pct > 90 and
		(.extrapolated | test("4x the nodes"))' "$s/estimate-dp512.json"
t_check "decision: a warning names the criterion to look at and its worst element" \
	jq -e '.decision | (.words | startswith("WARN: ")) and .look_at[0].criterion == "nvlink_p2p_bidir" and
		(.look_at[0].reason | test("; worst node[01]/gpu[0-7]-gpu[0-7] \\(host node[01]\\): [0-9.]+ GB/s, bound 670"))' "$s/warn.json"
t_check "counts say what they count: two results files of 4 ranks are 2 phases of 4 ranks each, cluster.ranks 4 (not 8)" \
	jq -e '.cluster.ranks == 4 and .decision.judged.phases == 2 and .decision.judged.ranks_per_phase == [4, 4]' "$s/folder.json"
# a profile stating GPUs and NICs, results without their inventories: not checked, never "as expected"
(cd "$CASES/emu-degraded" && "$CCREPORT" -p "$T_ROOT/profiles/h100-sxm-8x-ndr400.ini" --no-charts \
	-o "$T_TMP/nohw" results.jsonl) >"$T_TMP/nohw.out" 2>&1
t_check "decision: hardware the profile states and no inventory showed is 'not checked', with the probe that shows it" \
	bash -c "grep -q '^  hardware not checked: no gpu inventory from 4 of 4 host(s): .*; fix: run \`ccprobe gpuhealth\`' '$T_TMP/nohw.out' &&
		grep -q '^  hardware not checked: no rdma inventory .*; fix: run \`ccprobe ib\`' '$T_TMP/nohw.out' &&
		grep -q '^- not checked: no gpu inventory from 4 of 4 host' '$T_TMP/nohw/report.md' &&
		! grep -q 'Every host has the hardware the profile expects' '$T_TMP/nohw/report.md'"
(cd "$CASES/emu-degraded" && "$CCREPORT" -p test-emu-1g --no-render -o "$T_TMP/term-emu" results.jsonl) >"$T_TMP/term-emu.out" 2>&1
t_check "terminal: the estimate's headline says it is not extrapolated; the incomplete count says how many are optional" \
	bash -c "grep -q '^  estimate (a model, not a measurement): 0.355 days, 34.11 GPU-hours, no price .*; exposed communication 80.46% of a 1.26 s step; not extrapolated' '$T_TMP/term-emu.out' &&
		grep -q '^ccreport: criteria: 2 pass, 0 warn, 2 fail, 2 incomplete (2 of them optional)$' '$T_TMP/term-emu.out'"
(cd "$T_TMP/case-shipped-h100-slow-gpu" && CCREPORT_PROFILES=$T_ROOT/profiles "$CCREPORT" -p h100-sxm-8x-ndr400 \
	--no-render -o "$T_TMP/term" results.jsonl) >"$T_TMP/term.out" 2>&1
t_check "terminal summary: the verdict, then the decision in words, the node to drain, the optional count, what was judged" \
	bash -c "sed -n 2p '$T_TMP/term.out' | grep -q '^ccreport: FAIL: do not accept the cluster as it is: 1 criterion failed; drain 1 node(s)' &&
		sed -n 3p '$T_TMP/term.out' | grep -q '^  drain node1: hbm_copy node1/gpu3 (host node1): ' &&
		grep -q '^  [0-9]* optional check(s) not measured' '$T_TMP/term.out' &&
		grep -q '^  judged: 2 nodes (node0, node1), 1 phase (results file) of 16 ranks$' '$T_TMP/term.out' &&
		grep -q '^  estimate (a model, not a measurement): no workload given (profile \[workload\] or -w KEY=VALUE' '$T_TMP/term.out'"

# the shipped profiles and docs cite their sources inside the project (docs/sources.md), never a
# file outside the repository; every source the profiles name in a comment is a row of docs/sources.md
out=$(grep -rln '\.\./shared/\|REFERENCE\.md' "$T_ROOT/docs" "$T_ROOT/profiles" "$T_ROOT/tests/report/profiles" "$T_ROOT/README.md")
t_check "docs/ and profiles/ cite docs/sources.md, no file outside the repository (${out:-none})" test -z "$out"
for src in azurehpc-health-checks AI-benchmarking-guide DCGM imbue-ai/cluster-health SuperBench gpu-fryer \
	'Megatron-LM' 'NVIDIA/nccl #1264' 'nccl-tests #290' 'nccl-tests #309' mamf-finder 'stas00 ml-engineering'; do
	if grep -q "$src" "$T_ROOT"/profiles/{h100,h200,a100}*.ini && ! grep -qi "${src%% *}" "$T_ROOT/docs/sources.md"; then
		t_fail "a shipped profile cites '$src', which docs/sources.md does not list"
	fi
done
t_check "every GPU profile points to docs/sources.md" \
	bash -c "grep -L 'docs/sources.md' '$T_ROOT'/profiles/{h100,h200,a100}*.ini | grep -q . && exit 1 || exit 0"

# the terminal summary: verdict first, nothing from the results can break a line
out=$(cd "$CASES/hostile-names" && "$CCREPORT" -p test-emu-1g --no-render -o "$T_TMP/h2" results.jsonl)
if [ "$(printf '%s\n' "$out" | head -1 | cut -d' ' -f1-3)" = "ccreport: verdict fail" ] &&
   ! printf '%s\n' "$out" | grep -q '^x-node'; then
	t_pass "terminal summary: verdict first, a newline in a host name stays inside its line"
else
	t_fail "terminal summary: $out"
fi

# a summary.json serves as a baseline as well as the results it came from
(cd "$T_TMP/case-regression" && "$CCREPORT" -p test-h100 --no-render -q -o "$T_TMP/base" baseline.jsonl &&
	"$CCREPORT" -p test-h100 --no-render -q -o "$T_TMP/vs" --baseline "$T_TMP/base/summary.json" results.jsonl)
rc=$?
if [ "$rc" -eq 1 ] && [ "$(jq -c .baseline.regressions "$T_TMP/vs/summary.json")" = \
	"$(jq -c .baseline.regressions "$T_TMP/regression/summary.json")" ]; then
	t_pass "--baseline summary.json finds the same regressions as the baseline's results"
else
	t_fail "--baseline summary.json: exit $rc, regressions differ"
fi

# --tolerance raises the bar: 10 % lets the 8 % drop through
(cd "$T_TMP/case-regression" && "$CCREPORT" -p test-h100 --no-render -q -o "$T_TMP/tol" -t 10 \
	--baseline baseline.jsonl results.jsonl)
t_check "--tolerance 10: an 8 % drop is no regression" test $? -eq 0

# the whole report: summary.json, report.md, index.html, junit.xml
(cd "$CASES/emu-degraded" && "$CCREPORT" -p test-emu-1g -q -o "$T_TMP/full" results.jsonl)
rc=$?
if [ "$rc" -eq 1 ] && [ -s "$T_TMP/full/summary.json" ] && [ -s "$T_TMP/full/report.md" ] &&
   [ -s "$T_TMP/full/index.html" ] && [ -s "$T_TMP/full/junit.xml" ]; then
	t_pass "full report: exit 1, summary.json, report.md, index.html, junit.xml written"
else
	t_fail "full report: exit $rc; $(ls "$T_TMP/full" 2>&1 | tr '\n' ' ')"
fi
t_check "junit.xml: an incomplete criterion says 'incomplete:' once (netpair_bw_rate has no rate)" \
	bash -c "grep -q 'message=\"incomplete: no rate reported' '$T_TMP/full/junit.xml' &&
		! grep -q 'incomplete: incomplete' '$T_TMP/full/junit.xml'"
(cd "$CASES/hostile-names" && "$CCREPORT" -p test-emu-1g -q -o "$T_TMP/hfull" results.jsonl)
# (Markdown escapes '<' with a backslash; HTML and XML with entities)
if ! grep -q '<script>alert' "$T_TMP/hfull/index.html" "$T_TMP/hfull/junit.xml" 2>/dev/null &&
   ! grep -qE '(^|[^\\])<script>alert' "$T_TMP/hfull/report.md" && [ -s "$T_TMP/hfull/index.html" ]; then
	t_pass "hostile host names stay inert in index.html, junit.xml and report.md"
else
	t_fail "a raw <script> from a host name reached a rendered file"
fi

# the ib probe's test transport (memory copies) is never evidence: matched, never judged
t_check "ib-fake: every ib criterion found its records and left them unjudged, none passes" \
	jq -e '[.criteria[] | select(.probe == "ib")] | length == 6 and
		all(.verdict == "incomplete" and (.reason | test("^not judged: [0-9]+ record\\(s\\) from the test transport")))' \
	"$s/ib-fake.json"

# the probes' own records (synthetic values, see the cases' README) against the h100 profile
t_check "probe-shapes-gpu: every GPU criterion judges the probes' records (no 'no such metric')" \
	jq -e '[.criteria[] | select(.probe == "pcie" or .probe == "nvlink" or .probe == "hbm" or
		.id == "allreduce_node" or .id == "allreduce_data")] | length == 10 and
		all(.verdict != "incomplete")' "$s/probe-shapes-gpu.json"
t_check "probe-shapes-gpu: the slow GPU, the downtrained link and the slow pairs are named" \
	jq -e '[.criteria[] | {key: .id, value: [.failures[].element]}] | from_entries |
		.pcie_h2d == ["vm/gpu5"] and .pcie_d2h == ["vm/gpu5"] and .hbm_copy == ["vm/gpu5"] and
		.pcie_link == ["vm/gpu3"] and (.nvlink_p2p_uni | length == 14 and all(test("gpu5"))) and
		(.nvlink_p2p_bidir | length == 7 and all(test("^vm/gpu[0-7]-gpu[0-7]$") and test("gpu5")))' \
	"$s/probe-shapes-gpu.json"
t_check "probe-shapes-ib: every ib bandwidth, rate and latency criterion judges the probe's records" \
	jq -e '[.criteria[] | select(.probe == "ib" and .test != "counters")] | length == 4 and
		all(.verdict == "fail" or .verdict == "pass")' "$s/probe-shapes-ib.json"
t_check "probe-shapes-ib: ports below 400 Gb/s named by rail pair; 2 rails at the rate on vm" \
	jq -e '(.criteria[] | select(.id == "ib_port_rate") | [.failures[].element] |
		length == 24 and all(test("^vm#[0-3]/(mlx5_1|rxe0):1-vm#[0-3]/(mlx5_1|rxe0):1$"))) and
		.hardware == [{"key": "nics_at_rate", "expected": "8", "found": "2", "hosts": ["vm"]}]' \
	"$s/probe-shapes-ib.json"

# a real run on a machine without GPU driver and RDMA: skips, never passes, never fails
t_check "skip-real: every required criterion incomplete with the probe's own skip text" \
	jq -e '.verdict == "incomplete" and .hardware == [] and ([.criteria[] | select(.required)] |
		length == 13 and all(.verdict == "incomplete" and (.reason | startswith("skipped: ")) and
			(.reason | test("CUDA driver version is insufficient|no RDMA devices"))))' "$s/skip-real.json"

# PCIe links sysfs did not know (a VM): no rate_GBps, which the link criterion says
jq -c 'if .test == "h2d" then del(.rate_GBps, .pct_of_rate) else . end' \
	"$CASES/probe-shapes-gpu/pcie-hbm.jsonl" >"$T_TMP/norate.jsonl"
"$CCREPORT" -p test-h100 -q --no-render -o "$T_TMP/norate" "$T_TMP/norate.jsonl" >/dev/null 2>&1
t_check "records without rate_GBps: pcie_link says no rate was reported, not 'no such metric'" \
	jq -e '.criteria[] | select(.id == "pcie_link") | .verdict == "incomplete" and
		(.reason | test("no rate reported \\(the probe did not know the link'"'"'s rate\\); fix: run `ccprobe pcie` on the host itself"))' \
	"$T_TMP/norate/summary.json"

# two collectives-only runs (no inventory) whose rank 0 loaded different NCCLs: the
# headers' versions are compared (a real run's records, the header's versions set by jq)
R=$CASES/mpi-one-host/results.jsonl
jq -c 'if .type == "run" then .versions = {"cuda_runtime": "13.0", "nccl": "2.27.3"} else . end' \
	"$R" >"$T_TMP/hv1.jsonl"
jq -c 'if .type == "run" then .hosts[0].name = "vm2" | .run_id = "0123456789abcdef" |
	.versions = {"cuda_runtime": "13.0", "nccl": "2.26.2"} else . end' "$R" >"$T_TMP/hv2.jsonl"
"$CCREPORT" -p test-emu-1g -q --no-render -o "$T_TMP/hv" "$T_TMP/hv1.jsonl" "$T_TMP/hv2.jsonl" >/dev/null 2>&1
t_check "header versions: NCCL 2.27.3 on vm and 2.26.2 on vm2 differ, exit 1" \
	jq -e --argjson rc "$?" '$rc == 1 and .consistency == [{"key": "nccl", "values":
		[{"value": "2.27.3", "hosts": ["vm"]}, {"value": "2.26.2", "hosts": ["vm2"]}]}]' "$T_TMP/hv/summary.json"

t_check "a node's netpair records deleted: the link criteria are incomplete and name the 3 missing links" \
	jq -e '[.criteria[] | select(.id == "netpair_bw" or .id == "netpair_latency") | .verdict == "incomplete" and
		(.reason | contains("3 of 6 links not measured: node0-node3, node1-node3, node2-node3"))] == [true, true]' \
	"$T_TMP/missing-links.json"
t_check "wrong elements no criterion judges and the end record's failure count make a warn, listed" \
	jq -e '.verdict == "warn" and .unjudged.count == 2 and
		(.unjudged.listed[0] | contains("alltoall mpi at 1 MiB: 12 wrong")) and
		(.unjudged.listed[1] | contains("counted 1 failure(s)"))' "$T_TMP/unjudged-failures.json"
t_check "a profile that judged nothing gives no pass" \
	jq -e '.verdict == "incomplete" and any(.problems[]; startswith("INCOMPLETE nothing judged"))' \
	"$T_TMP/nothing-judged.json"

t_check "'NVIDIA H100 PCIe' is no H100 SXM: the model is matched exactly, not as a substring" \
	jq -e '.verdict == "fail" and .hardware[0].key == "gpu_model" and .hardware[0].found == "NVIDIA H100 PCIe"' \
	"$T_TMP/hw-pcie.json"
t_check "a profile stating GPUs and NICs, results without inventory: hardware incomplete, hosts named" \
	jq -e '.verdict == "incomplete" and (.hardware_missing | length) == 2 and
		(.hardware_missing[0] | startswith("no gpu inventory from 1 of 1 host(s): vm"))' "$T_TMP/ib-fake.json"
t_check "a bound that can never fail (>= 0 GB/s) is a warning, named with its line" \
	jq -e '.verdict == "warn" and any(.problems[]; . == "WARN profile ./profile.ini:9: criterion allreduce_busbw: bound '"'"'>= 0 GB/s'"'"' can never fail")' \
	"$T_TMP/profile-never-fails.json"
t_check "1000 Gb/s on a profile's 1 Gb/s NICs is implausible, named" \
	jq -e '.verdict == "warn" and ([.criteria[] | select(.id == "netpair_bw") | .implausible[].element] == ["node1-node2"])' \
	"$T_TMP/implausible-rate.json"

# inputs that are not files of records: refused with one line naming them, exit 2, never read forever
mkfifo "$T_TMP/fifo.jsonl"
timeout 10 "$CCREPORT" -p test-emu-1g -q --no-render -o "$T_TMP/fifo" "$T_TMP/fifo.jsonl" 2>"$T_TMP/fifo.err"
t_check "a FIFO is not a results file: exit 2, named" \
	bash -c "[ $? -eq 2 ] && grep -q 'fifo.jsonl: not a regular file' '$T_TMP/fifo.err'"
timeout 10 "$CCREPORT" -p test-emu-1g -q --no-render -o "$T_TMP/zero" /dev/zero 2>"$T_TMP/zero.err"
t_check "/dev/zero is not a results file: exit 2" \
	bash -c "[ $? -eq 2 ] && grep -q '^/dev/zero: not a regular file' '$T_TMP/zero.err'"
{ head -1 "$CASES/emu-healthy/results.jsonl"; printf '{"type":"note","x":"'; head -c $((17 << 20)) /dev/zero | tr '\0' a
  printf '"}\n'; } >"$T_TMP/long.jsonl"
"$CCREPORT" -p test-emu-1g -q --no-render -o "$T_TMP/long" "$T_TMP/long.jsonl" 2>"$T_TMP/long.err"
t_check "a line longer than 16 MiB is an input error naming the line" \
	bash -c "[ $? -eq 2 ] && grep -q 'long.jsonl:2: line longer than 16 MiB' '$T_TMP/long.err'"
rm -f "$T_TMP/long.jsonl"
# a small file whose header names 17,000 hosts (4 MB, a netpair record per host): its 144
# million due links are counted, not tabled, and no matrix of 17,000^2 is made (it took
# 4 GiB and 200 s): judged within 1 GiB of address space, the missing links named
awk 'BEGIN {
	n = 17000
	printf "{\"type\":\"run\",\"schema\":1,\"run_id\":\"0ddba11000000017\",\"start_utc\":\"2026-11-30T07:22:26Z\",\"tool\":\"ccprobe\",\"version\":\"0.1.0\",\"world_size\":%d,\"nodes\":%d,\"hosts\":[", n, n
	for (i = 0; i < n; i++)
		printf "%s{\"name\":\"h%05d\",\"ranks\":[%d]}", i ? "," : "", i, i
	print "]}"
	for (i = 0; i < n; i++)
		printf "{\"type\":\"measurement\",\"kind\":\"probe\",\"name\":\"netpair\",\"test\":\"bw_uni\",\"pass\":1,\"src\":\"h%05d\",\"dst\":\"h%05d\",\"bytes\":4194304,\"bw_GBps\":0.1,\"bw_Gbps\":0.8,\"elapsed_s\":%.3f}\n", i, (i + 1) % n, 1 + i / 1000
	print "{\"type\":\"end\",\"status\":\"complete\",\"elapsed_s\":100,\"failures\":0,\"exit_code\":0}"
}' >"$T_TMP/many-hosts.jsonl"
# (ASan's shadow memory needs terabytes of address space: under make asan, no limit)
vlimit=$((1 << 20))
ldd "$CCREPORT" 2>/dev/null | grep -q libasan && vlimit=unlimited
(ulimit -v "$vlimit"; timeout 600 "$CCREPORT" -p test-emu-1g -q --no-render -o "$T_TMP/many-hosts" \
	"$T_TMP/many-hosts.jsonl" >/dev/null 2>"$T_TMP/many-hosts.err")
rc=$?
t_check "a header of 17,000 hosts, 17,000 netpair records: judged within 1 GiB, incomplete (exit 4, was $rc), 144474500 of 144491500 links not measured" \
	jq -e --argjson rc "$rc" '$rc == 4 and ([.criteria[] | select(.id == "netpair_bw") | .verdict, (.reason | test("^144474500 of 144491500 links not measured: h00000-h00002, "))] == ["incomplete", true])' \
	"$T_TMP/many-hosts/summary.json"
# the same beside a grouped run (netpair-grouped): those links are counted by name over
# groups, and the all-pairs input's 144 million pairs once took a table each, many GiB (and
# out of memory read as "every link measured"): above 8,192 hosts, not counted and said so
(ulimit -v "$vlimit"; timeout 600 "$CCREPORT" -p test-emu-1g -q --no-render -o "$T_TMP/many-grouped" \
	"$T_TMP/many-hosts.jsonl" "$CASES/netpair-grouped/results.jsonl" >/dev/null 2>"$T_TMP/many-grouped.err")
rc=$?
t_check "17,000 hosts beside a grouped run: judged within 1 GiB, netpair_bw incomplete (exit 4, was $rc): the links not counted above 8,192 hosts" \
	jq -e --argjson rc "$rc" '$rc == 4 and ([.criteria[] | select(.id == "netpair_bw") | .verdict, (.reason | test("the links of netpair inputs with a grouped run, 17004 hosts in all, not counted \\(at most 8192 hosts\\)"))] == ["incomplete", true])' \
	"$T_TMP/many-grouped/summary.json"
rm -f "$T_TMP/many-hosts.jsonl"
# an all-pairs run missing 3 links beside a grouped run of the same 4 hosts (its run id
# changed): the links are counted once over both, the grouped run's measured links cover two
sed 's/"run_id":"37860e7f55c948c4"/"run_id":"37860e7f55c948c5"/' "$CASES/netpair-grouped/results.jsonl" >"$T_TMP/grouped2.jsonl"
"$CCREPORT" -p test-emu-1g -q --no-render -o "$T_TMP/mixed" "$CASES/missing-links/results.jsonl" "$T_TMP/grouped2.jsonl" >/dev/null 2>&1
t_check "an all-pairs run beside a grouped run: the links counted once over both, the one measured by neither named" \
	jq -e '.criteria[] | select(.id == "netpair_bw") | .verdict == "incomplete" and
		(.reason | startswith("1 of 6 links (inside groups, or of an all-pairs run) not measured: node0-node3;"))' \
	"$T_TMP/mixed/summary.json"
# the ib probe measures every rail of every pair of its hosts (docs/rdma.md): 3 hosts, 8 rails,
# node1-node2's rail 5 deleted leaves ib_write_bw incomplete, named (a pass on main)
awk 'BEGIN {
	print "{\"type\":\"run\",\"schema\":1,\"run_id\":\"0ddba11000000018\",\"start_utc\":\"2026-11-30T07:22:26Z\",\"tool\":\"ccprobe\",\"version\":\"0.1.0\",\"world_size\":3,\"nodes\":3,\"hosts\":[{\"name\":\"node0\",\"ranks\":[0]},{\"name\":\"node1\",\"ranks\":[1]},{\"name\":\"node2\",\"ranks\":[2]}]}"
	t = 1
	for (a = 0; a < 3; a++)
		for (b = a + 1; b < 3; b++)
			for (r = 0; r < 8; r++)
				if (!(a == 1 && b == 2 && r == 5))
					printf "{\"type\":\"measurement\",\"kind\":\"probe\",\"name\":\"ib\",\"test\":\"write_bw_uni\",\"scope\":\"rail_pair\",\"element\":\"node%d/mlx5_%d:1-node%d/mlx5_%d:1\",\"host\":\"node%d\",\"peer\":\"node%d\",\"nic\":\"mlx5_%d:1\",\"peer_nic\":\"mlx5_%d:1\",\"rail\":%d,\"round\":0,\"transport\":\"verbs\",\"bytes\":8388608,\"bw_GBps\":49,\"bw_Gbps\":392,\"rate_GBps\":50,\"elapsed_s\":%.2f}\n", a, r, b, r, a, b, r, r, r, t += 0.01
	print "{\"type\":\"end\",\"status\":\"complete\",\"elapsed_s\":10,\"failures\":0,\"exit_code\":0}"
}' >"$T_TMP/rail-missing.jsonl"
"$CCREPORT" -p test-h100 -q --no-render -o "$T_TMP/rail-missing" "$T_TMP/rail-missing.jsonl" 2>/dev/null
t_check "3 hosts x 8 rails, node1-node2 rail 5 deleted: ib_write_bw incomplete, '1 of 24 rail pairs not measured: node1-node2 rail 5'" \
	jq -e '[.criteria[] | select(.id == "ib_write_bw") | .verdict, (.reason | startswith("1 of 24 rail pairs not measured: node1-node2 rail 5"))] ==
		["incomplete", true]' "$T_TMP/rail-missing/summary.json"
# bw_uni measures each link both ways and netpair_bw judges the slower: the records of one
# way deleted leave that link incomplete, named with the way missing (a pass on main)
grep -v '"test":"bw_uni".*"src":"node3","dst":"node0"' "$CASES/emu-healthy/results.jsonl" >"$T_TMP/one-way.jsonl"
"$CCREPORT" -p test-emu-1g -q --no-render -o "$T_TMP/one-way" "$T_TMP/one-way.jsonl" 2>/dev/null
rc=$?
t_check "node3 to node0's bw_uni records deleted: netpair_bw incomplete, 'node0-node3 (node3 to node0 not measured)', exit 4 (was $rc)" \
	jq -e --argjson rc "$rc" '$rc == 4 and ([.criteria[] | select(.id == "netpair_bw") | .verdict,
		(.reason | startswith("1 of 6 links measured one way only: node0-node3 (node3 to node0 not measured)"))] ==
		["incomplete", true])' "$T_TMP/one-way/summary.json"
t_check "summary.json records each input's SHA-256" \
	jq -e --arg h "$(sha256sum <"$CASES/emu-healthy/results.jsonl" | cut -d' ' -f1)" \
	'.inputs[0].sha256 == $h' "$T_TMP/emu-healthy.json"

# ---- identity (docs/provenance.md): devices of one host, one host set and time window
t_check "a node's records relabelled as another's: node3's GPU UUIDs are node1's, an input error naming both lines" \
	grep -q '^results.jsonl:8: GPU UUID GPU-5eed0001-.* of node3/gpu0 (host node3) is also node1/gpu0.s (host node1, results.jsonl:4)' \
	"$CASES/bad-relabel/stderr"
"$GEN" -n 4 relabel=node3:node1 | jq -c 'del(.gpus[]?.uuid)' >"$T_TMP/guid.jsonl"
"$CCREPORT" -p test-h100 -q --no-render -o "$T_TMP/guid" "$T_TMP/guid.jsonl" 2>"$T_TMP/guid.err"
t_check "NIC GUIDs too: node3's mlx5_0 is node1's (exit $?)" \
	grep -q 'guid.jsonl:9: NIC GUID b8ce:f603:0001:0001 of node3/mlx5_0 (host node3) is also node1/mlx5_0.s' "$T_TMP/guid.err"
"$GEN" -n 4 relabel=node3:node1 | jq -c 'if .type == "inventory" and .host == "node3" then .transport = "fake" else . end' \
	>"$T_TMP/fakeinv.jsonl"
"$CCREPORT" -p test-h100 -q --no-render -o "$T_TMP/fakeinv" "$T_TMP/fakeinv.jsonl" 2>"$T_TMP/fakeinv.err"
t_check "a test double's devices (transport fake) are no host's: not compared (exit $?)" test ! -s "$T_TMP/fakeinv.err"
t_check "inputs of two host sets are named, a warn" \
	jq -e '.verdict == "warn" and (.inputs_disagree | length == 1) and
		(.inputs_disagree[0] | test("^other.jsonl runs on 4 host.s. that ../emu-healthy/results.jsonl does not \\(other0"))' \
	"$T_TMP/mixed-hosts.json"
t_check "inputs three days apart are named, a warn" \
	jq -e '.verdict == "warn" and .inputs_disagree == ["later.jsonl (from 2026-12-03T07:22:26Z) starts 72.0 h after ../emu-healthy/results.jsonl ended: the inputs are not of one time window"]' \
	"$T_TMP/mixed-times.json"
# two inputs on the same hosts at once (the last record before the end at 300 s: 5 minutes of overlap)
mkdir -p "$T_TMP/over"
last=$(($(wc -l <"$CASES/emu-healthy/results.jsonl") - 1))
sed "${last}s/\"elapsed_s\":[0-9.]*/\"elapsed_s\":300/" "$CASES/emu-healthy/results.jsonl" >"$T_TMP/over/a.jsonl"
sed '1s/"run_id":"37860e7f55c948c4"/"run_id":"0ddba11000000003"/' "$T_TMP/over/a.jsonl" >"$T_TMP/over/b.jsonl"
"$CCREPORT" -p test-emu-1g -q --no-render -o "$T_TMP/over/out" "$T_TMP/over/a.jsonl" "$T_TMP/over/b.jsonl" 2>"$T_TMP/over.err"
t_check "two inputs on the same hosts at the same time are named (exit $?)" \
	jq -e '.inputs_disagree | length == 1 and (.[0] | test("a.jsonl and .*b.jsonl ran on the same hosts at the same time \\(300 s of overlap\\)"))' \
	"$T_TMP/over/out/summary.json"

# ---- a MANIFEST beside the inputs (ccdiag run writes it, docs/provenance.md)
mdir=$T_TMP/mf
manifest() {  # manifest DIR NONCE FILE...: a MANIFEST as ccdiag writes it
	local d=$1 nonce=$2
	shift 2
	{ echo "# ccdiag-manifest: 1"; echo "# run_id: 0123456789abcdef"; [ -z "$nonce" ] || echo "# nonce: $nonce"
	  echo "# hosts_actual: node0 node1 node2 node3"; (cd "$d" && sha256sum "$@"); } >"$d/MANIFEST"
}
mrun() {  # mrun NAME INPUTS...: ccreport on them, exit in $rc, stderr in $mdir/NAME.err
	local name=$1
	shift
	"$CCREPORT" -p test-emu-1g -q --no-render -o "$mdir/out-$name" "$@" 2>"$mdir/$name.err"
	rc=$?
}
mkdir -p "$mdir"
cp "$CASES/emu-healthy/results.jsonl" "$mdir/phase-1.jsonl"
sed '1s/"run_id":"37860e7f55c948c4"/"run_id":"0ddba11000000004"/' "$CASES/emu-healthy/results.jsonl" >"$mdir/phase-2.jsonl"
manifest "$mdir" "" phase-1.jsonl phase-2.jsonl
t_check "the MANIFEST is one sha256sum -c reads" bash -c "cd '$mdir' && sha256sum -c --strict --quiet MANIFEST"
mrun ok "$mdir"
t_check "a MANIFEST beside the inputs: every input checked, said in summary.json (exit $rc)" \
	jq -e --arg p "$mdir/MANIFEST" '.manifest.checked == 2 and .manifest.manifests[0].path == $p and
		.manifest.manifests[0].listed == 2 and .manifest.manifests[0].run_id == "0123456789abcdef"' \
	"$mdir/out-ok/summary.json"
t_check "the terminal says what the MANIFEST checked" \
	grep -q "^ccreport: manifest: checked 2 of 2 file(s) listed in $mdir/MANIFEST\$" \
	<("$CCREPORT" -p test-emu-1g --no-render -o "$mdir/out-t" "$mdir")
cp "$mdir/phase-1.jsonl" "$mdir/keep"
sed -i '2s/"elapsed_s":/"edited":1,"elapsed_s":/' "$mdir/phase-1.jsonl"
mrun edited "$mdir"
t_check "an input changed after the run: exit 2, its digest against the MANIFEST's line" \
	bash -c "[ $rc -eq 2 ] && [ \$(wc -l <'$mdir/edited.err') -eq 1 ] &&
		grep -q '^$mdir/phase-1.jsonl: SHA-256 [0-9a-f]\\{16\\}\\.\\.\\. is not $mdir/MANIFEST.s [0-9a-f]\\{16\\}\\.\\.\\. (line 4): the file changed after the run' '$mdir/edited.err'"
mv "$mdir/keep" "$mdir/phase-1.jsonl"
sed '1s/"run_id":"37860e7f55c948c4"/"run_id":"0ddba11000000005"/' "$mdir/phase-1.jsonl" >"$mdir/phase-3.jsonl"
mrun added "$mdir"
t_check "a results file added after the run: exit 2, not listed" \
	bash -c "[ $rc -eq 2 ] && grep -q '^$mdir/phase-3.jsonl: not listed in $mdir/MANIFEST (a results file added after the run?)' '$mdir/added.err'"
rm "$mdir/phase-3.jsonl" "$mdir/phase-2.jsonl"
mrun deleted "$mdir"
t_check "a results file deleted after the run: exit 2, the MANIFEST's line named" \
	bash -c "[ $rc -eq 2 ] && grep -q '^$mdir/MANIFEST lists phase-2.jsonl (line 5), which is missing' '$mdir/deleted.err'"
mrun subset "$mdir/phase-1.jsonl"
t_check "one input given alone: a listed results file gone beside it is still caught" \
	bash -c "[ $rc -eq 2 ] && grep -q 'phase-2.jsonl (line 5), which is missing' '$mdir/subset.err'"
manifest "$mdir" "c0ffee" phase-1.jsonl
mrun nonce "$mdir"
t_check "the MANIFEST's nonce is not in the run header: exit 2" \
	bash -c "[ $rc -eq 2 ] && grep -q \"phase-1.jsonl: the run header's nonce (none) is not $mdir/MANIFEST's 'c0ffee'\" '$mdir/nonce.err'"
sed -i '1s/"run_id"/"nonce":"c0ffee","run_id"/' "$mdir/phase-1.jsonl"
manifest "$mdir" "c0ffee" phase-1.jsonl
mrun nonce-ok "$mdir"
t_check "the same nonce in the header and the MANIFEST: checked (exit $rc)" \
	jq -e '.manifest.checked == 1 and .manifest.manifests[0].nonce == "c0ffee"' "$mdir/out-nonce-ok/summary.json"
printf '# ccdiag-manifest: 1\nnot a digest line\n' >"$mdir/MANIFEST"
mrun malformed "$mdir"
t_check "a malformed MANIFEST: exit 2, its line named" \
	bash -c "[ $rc -eq 2 ] && grep -q '^$mdir/MANIFEST:2: not a .SHA256  NAME. line' '$mdir/malformed.err'"
rm "$mdir/MANIFEST"
mrun none "$mdir"
t_check "no MANIFEST beside the inputs: summary.json's manifest is null (exit $rc)" \
	jq -e '.manifest == null' "$mdir/out-none/summary.json"
# an imported log: the digest of the file given, as sha256sum says it
imp=$CASES/import-nccl-pass
mkdir -p "$T_TMP/mfi" && cp "$imp/all_reduce_perf.log" "$T_TMP/mfi/" && (cd "$T_TMP/mfi" && sha256sum all_reduce_perf.log >MANIFEST)
"$CCREPORT" -p test-h100-collectives -q --no-render -o "$T_TMP/mfi/out" "$T_TMP/mfi/all_reduce_perf.log" 2>"$T_TMP/mfi.err"
t_check "an imported log is checked by the file's own digest (inputs[].sha256 = sha256sum's)" \
	jq -e --arg h "$(sha256sum <"$imp/all_reduce_perf.log" | cut -d' ' -f1)" \
	'.inputs[0].sha256 == $h and .manifest.checked == 1' "$T_TMP/mfi/out/summary.json"

# usage
t_check "--help documents the exit codes" bash -c "'$CCREPORT' --help | grep -q '4  incomplete'"
"$CCREPORT" >/dev/null 2>&1
t_check "no arguments: exit 2" test $? -eq 2
"$CCREPORT" -p no-such-profile "$CASES/emu-healthy/results.jsonl" >/dev/null 2>&1
t_check "unknown profile name: exit 2" test $? -eq 2
t_done
