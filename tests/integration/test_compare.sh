#!/bin/bash
# ccreport compare (docs/compare.md). Three synthetic 2-node clusters judged
# with the test-owned profile tests/report/compare/profile.ini: A passes, B
# passes with 20 % less all_reduce busbw and a lower price, C fails hbm_copy
# (node1/gpu3 at a tenth). The golden tests/report/compare/projection.json is
# what projection.jq keeps of compare.json (ranking, exclusions, differences,
# normalised criteria, costs); the costs are also recomputed here by hand from
# the busbw in the results files. Then the node-count choice on the real
# --scale run of the scale-pass case (recomputed by hand, Hockney
# extrapolation included), missing prices, different profiles, bad inputs
# and hostile names. REGEN=1 rewrites the projection.
source "$(dirname "$0")/../lib.sh"
CCREPORT=$(realpath "${CCREPORT:-$T_ROOT/build/ccreport}")
GEN=${GEN:-$T_ROOT/build/tests/gen_results}
DIR=$T_ROOT/tests/report/compare
export CCREPORT_PROFILES=$T_ROOT/tests/report/profiles
export SOURCE_DATE_EPOCH=1796018400
[ -x "$CCREPORT" ] && [ -x "$GEN" ] || { t_fail "no $CCREPORT or $GEN (make)"; t_done; exit; }
cd "$T_TMP" || exit 1

"$GEN" -n 2 -s 11 >a.jsonl
"$GEN" -n 2 -s 12 slow=cluster:all_reduce:0.8 >b.jsonl
"$GEN" -n 2 -s 13 slow=node1/gpu3:copy:0.1 >c.jsonl
for x in a b c; do "$CCREPORT" -q --no-render -p "$DIR/profile.ini" -o "$x" "$x.jsonl"; done
"$CCREPORT" compare -q --price A=2 --price B=1.5 -o cmp A=a B=b/summary.json C=c >cmp.out 2>cmp.err
rc=$?
t_check "compare of three clusters: exit 0, compare.json, .md, .html and charts written (rc $rc)" \
	test "$rc" -eq 0 -a -s cmp/compare.json -a -s cmp/compare.md -a -s cmp/compare.html

# the golden projection: decisions and costs, not every value
jq -S -f "$DIR/projection.jq" cmp/compare.json >cmp.proj
if [ -n "${REGEN:-}" ]; then cp cmp.proj "$DIR/projection.json"; fi
if diff -u "$DIR/projection.json" cmp.proj >cmp.diff; then
	t_pass "golden: compare.json's projection matches tests/report/compare/projection.json"
else
	t_fail "golden: compare.json's projection differs: $(head -c 600 cmp.diff)"
fi

# results instead of summaries: judged in memory with -p, the same decisions
mkdir -p bdir && cp b.jsonl bdir/
"$CCREPORT" compare -q --no-charts -p "$DIR/profile.ini" --price A=2 --price B=1.5 -o cmp-r \
	A=a.jsonl B=bdir C=c/summary.json >/dev/null 2>cmp-r.err
rc=$?
jq -S -f "$DIR/projection.jq" cmp-r/compare.json >cmp-r.proj 2>/dev/null
t_check "results judged with -p (a file, a folder of them, a summary mixed): exit $rc, the golden projection" \
	cmp -s "$DIR/projection.json" cmp-r.proj

# by hand: S = 2 B x 7e9, 16 ranks, DDP: sync = 2 x 15/16 x S / busbw(1 GiB);
# compute = 6 x 7e9 x 65536 / (16 x 989e12 x 0.4); steps = 1e11 / 65536; overlap 0
hand() {  # hand RESULTS PRICE -> "busbw step days cost"
	jq -rs --argjson p "$2" '[.[] | select(.name == "all_reduce" and .bytes == 1073741824)][0].busbw_GBps as $bw |
		(2 * 15 / 16 * 14e9 / ($bw * 1e9)) as $sync | (6 * 7e9 * 65536 / (16 * 989e12 * 0.4)) as $c |
		(1e11 / 65536) as $steps | ($c + $sync) as $step |
		"\($bw) \($step) \($steps * $step / 86400) \(16 * $steps * $step / 3600 * $p)"' "$1"
}
read -r bwa stepa daysa costa <<<"$(hand a.jsonl 2)"
read -r bwb stepb daysb costb <<<"$(hand b.jsonl 1.5)"
t_check "costs by hand: A busbw $bwa GB/s, step $stepa s, $daysa days, \$$costa; B busbw $bwb GB/s, step $stepb s, $daysb days, \$$costb" \
	jq -e --argjson ca "$costa" --argjson cb "$costb" --argjson da "$daysa" --argjson db "$daysb" '
		def near(a; b): ((a - b) / b | fabs) < 1e-4;
		.workload.clusters as $w | near($w[0].outputs.cost; $ca) and near($w[1].outputs.cost; $cb) and
		near($w[0].outputs.days; $da) and near($w[1].outputs.days; $db)' cmp/compare.json
t_check "ranking: B cheaper (lower price outweighs its slower network), A faster; C excluded naming hbm_copy and node1/gpu3" \
	jq -e '.ranking | [.by_cost[].name] == ["B", "A"] and [.by_time[].name] == ["A", "B"] and
		.excluded[0].name == "C" and (.excluded[0].reason | test("^hbm_copy FAIL: node1/gpu3"))' cmp/compare.json
t_check "differences in words: B's busbw and its +25% sync time, the price; C's exclusion only in the ranking" \
	jq -e '.differences | any(test("^B: all_reduce busbw [0-9.]+ vs [0-9.]+ GB/s \\(A\\).*\\+25% sync time")) and
		any(test("^B: \\$1.5 vs \\$2 per GPU-hour")) and (any(test("excluded")) | not)' cmp/compare.json
t_check "criteria normalised to the bound: C's hbm_copy near 0.15 of it, A's above 1; the <= 0 counter has none" \
	jq -e '.criteria[] | select(.id == "hbm_copy") | .clusters[2].normalized < 0.2 and .clusters[0].normalized > 1 and
		.clusters[2].element == "node1/gpu3"' cmp/compare.json
t_check "compare.md opens with the decision, above the ranking and the criteria" \
	awk '/^## Decision/{d=NR} /^B costs least/{w=NR} /Ranking/{r=r?r:NR} /riteria/{c=NR} END{exit !(d && w > d && r > w && c > r)}' cmp/compare.md
t_check "the terminal says the decision in words" grep -q '^ccreport compare: B costs least .*A finishes first' <("$CCREPORT" compare --no-charts -o cmp-d --price A=2 --price B=1.5 A=a B=b C=c)
t_check "the terminal lists the ranking and the exclusion" grep -q '^  excluded C: hbm_copy FAIL' <("$CCREPORT" compare --no-charts -o cmp-t --price A=2 --price B=1.5 A=a B=b C=c)

# three offers judged in one step with the shipped h100 profile as shipped (no gpuhealth, no gemm
# in the results: those criteria are optional): the two healthy ones are ranked, the slow GPU excluded
W=(-w params=7e9 -w bytes_per_grad=2 -w tokens_per_step=65536 -w total_tokens=1e11 -w peak_tflops=989 -w mfu=0.4)
CCREPORT_PROFILES=$T_ROOT/profiles "$CCREPORT" compare -q --no-charts -p h100-sxm-8x-ndr400 "${W[@]}" \
	--price A=2 --price B=1.5 --price C=1 -o shipped A=a.jsonl B=b.jsonl C=c.jsonl >/dev/null 2>shipped.err
t_check "shipped h100 profile: A and B ranked by cost and time, C excluded once for hbm_copy on node1/gpu3 (exit $?)" \
	jq -e '.ranking | [.by_cost[].name] == ["B", "A"] and ([.by_time[].name] | sort) == ["A", "B"] and
		(.excluded | length == 1) and .excluded[0].name == "C" and
		(.excluded[0].reason | test("^hbm_copy FAIL: node1/gpu3"))' shipped/compare.json

t_check "compare.md: the exposed communication share in % of the step, as compare.json's fraction x 100" \
	bash -c "grep -q '| exposed comm (% of the step) |' shipped/compare.md &&
		grep -q \"^| B | .* | \$(jq -r '.workload.clusters[] | select(.name == \"B\") | .outputs.comm_fraction * 1000 | round / 10' shipped/compare.json) | \" shipped/compare.md"

# sizes in binary units where they are powers of two: a 25 MiB bucket is "25 MiB", not "26.21 MB"
CCREPORT_PROFILES=$T_ROOT/profiles "$CCREPORT" compare -q --no-charts -p h100-sxm-8x-ndr400 "${W[@]}" \
	-w bucket_bytes=26214400 --price A=2 --price B=1.5 -o mib A=a.jsonl B=b.jsonl >/dev/null 2>&1
t_check "compare.md: the bucket of 26214400 B is said '25 MiB'" \
	grep -q '^- B: all\\_reduce busbw .* at the 25 MiB bucket: ' mib/compare.md

# prices missing: "no price", still ranked by time
"$CCREPORT" compare -q --no-charts --price A=2 -o np A=a B=b >/dev/null 2>&1
t_check "no price for B: its cost is null and 'no price' in compare.md; ranking by time still has both" \
	jq -e '.ranking | [.by_cost[].name] == ["A"] and [.no_price[].name] == ["B"] and
		([.by_time[].name] | sort) == ["A", "B"]' np/compare.json
t_check "compare.md says 'no price'" grep -q 'no price' np/compare.md

# every criterion passed, but the run did not finish: excluded with its problem line
"$GEN" -n 2 -s 5 noend >ne.jsonl
"$CCREPORT" -q --no-render -p "$DIR/profile.ini" -o ne ne.jsonl
"$CCREPORT" compare -q --no-charts -o cmp-ne A=a N=ne >/dev/null 2>&1
t_check "a run cut short (no end record) is excluded, saying so, though its criteria passed" \
	jq -e '.ranking | [.by_time[].name] == ["A"] and .excluded[0].name == "N" and
		(.excluded[0].reason | test("^verdict INCOMPLETE: .*did not finish"))' cmp-ne/compare.json

# judged with a different profile: the criteria it lacks cannot be compared, and say why
"$CCREPORT" -q --no-render -p test-h100 -o c-h100 c.jsonl
"$CCREPORT" compare -q --no-charts -o dp A=a H=c-h100 >/dev/null 2>&1
t_check "different profiles: pcie_h2d not in A's profile, allreduce_cluster (both) compared" \
	jq -e '[.criteria[] | select(.id == "pcie_h2d")][0] | .comparable == false and
		(.why | test("^not in the profile of A \\(compare-test\\)")) and .clusters[0].verdict == "missing"' dp/compare.json

t_check "different profiles, in the differences: 'A judged by profile compare-test: 14 criteria of H's not judged', and H's profile named" \
	jq -e '(.differences | any(test("^A judged by profile compare-test: 14 criteria of H.s not judged \\(pcie_h2d, pcie_d2h, pcie_link and 11 more\\)$"))) and
		(.differences | any(test("^H judged by profile test-h100, A by compare-test"))) and
		(.clusters[0].not_judged | length == 14 and index("netpair_bw") != null) and .clusters[1].not_judged == []' dp/compare.json
t_check "different profiles, on the terminal: the criteria not judged" \
	grep -q "^  - A judged by profile compare-test: 14 criteria of H's not judged" \
	<("$CCREPORT" compare --no-charts -o dp-t A=a H=c-h100)
# a profile without a criterion the other judged: the cluster is not ranked on the same checks
jq '.criteria |= map(select(.id != "hbm_copy")) | .profile.name = "lenient"' a/summary.json >lenient.json
"$CCREPORT" compare -q --no-charts -o len A=a L=lenient.json >/dev/null 2>&1
t_check "a summary judged without hbm_copy: 'L judged by profile lenient: 1 criterion of A's not judged (hbm_copy)'" \
	jq -e '.differences | any(. == "L judged by profile lenient: 1 criterion of A'"'"'s not judged (hbm_copy)")' len/compare.json

# bad input: one line naming the run, exit 2
bad() {  # bad DESC PATTERN ARGS...
	local desc=$1 pat=$2 rc
	shift 2
	"$CCREPORT" compare -q --no-charts -o bad "$@" >bad.out 2>bad.err
	rc=$?
	if [ "$rc" -eq 2 ] && [ "$(wc -l <bad.err)" -eq 1 ] && grep -q -- "$pat" bad.err; then
		t_pass "bad input, $desc: exit 2, '$(cat bad.err)'"
	else
		t_fail "bad input, $desc: exit $rc, stderr '$(head -c 300 bad.err)'"
	fi
}
printf '{"schema": 1, "tool": "ccreport",\n  "criteria": [\n' >broken.json
jq '.schema = 2' a/summary.json >v2.json
mkdir -p empty
bad "missing" "^ccreport compare: X: cannot read 'nope'" A=a X=nope
bad "malformed" "^ccreport compare: X: broken.json:3: malformed summary" A=a X=broken.json
bad "another schema" "X: 'v2.json': summary schema 2 (ccreport reads schema 1)" A=a X=v2.json
bad "results, not a summary" "X: 'a.jsonl' is a results file" A=a X=a.jsonl
bad "a folder without summary.json, no -p" "X: 'empty' holds no summary.json: give -p PROFILE" A=a X=empty
bad "-p and a folder without results" "^ccreport compare: X: .*empty" -p "$DIR/profile.ini" A=a X=empty
{ head -1 a.jsonl; echo "not json"; } >badres.jsonl
bad "-p and a malformed results file" "^ccreport compare: X: badres.jsonl:2: " -p "$DIR/profile.ini" A=a X=badres.jsonl
bad "not NAME=RUN" "expected NAME=RUN" A=a a
bad "a name twice" "A: the name is given twice" A=a A=b
bad "--price of no cluster" "no cluster of that name" --price Z=3 A=a
bad "-w backend" "backend and dtype select the measurement" -w backend=mpi A=a
# a summary is re-judged from its own values and bounds: one edited to pass is refused, never ranked
jq '.verdict = "pass" | .exit_code = 0 | .criteria |= map(.verdict = "pass")' c/summary.json >edited.json
bad "an edited summary: every verdict pass, hbm_copy's value still below its bound" \
	"^ccreport compare: C: 'edited.json': criterion hbm_copy says pass, but node1/gpu3's 292.3 GB/s is outside its bound >= 1900: an edited or damaged summary" \
	A=a C=edited.json
jq '.verdict = "pass" | .exit_code = 0' c/summary.json >edited2.json
bad "an edited summary: the run's verdict pass, hbm_copy still fail" \
	"^ccreport compare: C: 'edited2.json': its verdict is pass, but one of its criteria's is fail" A=a C=edited2.json
jq '(.criteria[] | select(.id == "hbm_copy")) |= (.verdict = "incomplete" | .required = false) | .verdict = "pass"' \
	c/summary.json >edited3.json
bad "an edited summary: a failing criterion called incomplete (and optional)" \
	"C: 'edited3.json': criterion hbm_copy says incomplete, but node1/gpu3's" A=a C=edited3.json
jq 'del(.version)' a/summary.json >nov.json
bad "no version" "X: 'nov.json': no ccreport version in the summary" A=a X=nov.json
jq '.version = "0.10.0"' a/summary.json >newer.json
bad "a newer ccreport's summary" "X: 'newer.json': written by ccreport 0.10.0, newer than this one" A=a X=newer.json
jq '.version = "0.0.9"' a/summary.json >older.json
"$CCREPORT" compare -q --no-charts -o older A=a X=older.json >/dev/null 2>older.err
t_check "an older ccreport's summary of the same schema is compared (exit $?)" test $? -eq 0 -a ! -s older.err
jq '(.criteria[] | select(.id == "hbm_copy")) |= (.verdict = "warn" | .severity = "warn") | .verdict = "warn"' \
	c/summary.json >warned.json
"$CCREPORT" compare -q --no-charts -o warned A=a W=warned.json >/dev/null 2>warned.err
t_check "a failing value at severity warn, verdict warn: consistent, compared (exit $?)" test $? -eq 0 -a ! -s warned.err

# how many nodes: the scale-pass case's real --scale run (1, 2, 4 nodes, 1 rank each)
SP=$T_ROOT/tests/report/cases/scale-pass
"$CCREPORT" -q --no-render -p "$SP/profile.ini" -o sp "$SP/results.jsonl"
for d in 0.2 0.14; do
	"$CCREPORT" compare -q --no-charts -w deadline_days=$d -o "nodes-$d" S=sp >/dev/null 2>&1
done
"$CCREPORT" compare -q -w budget_usd=15 -o nodes-b S=sp >/dev/null 2>&1
# by hand at 2 nodes: busbw = the estimate's (4 nodes, 384 KiB bucket) x plateau(2) / plateau(4);
# sync = 2 x 1/2 x 4e6 / busbw; compute = 6e6 x 4096 / (2 x 0.05e12 x 0.5); exposed = sync - 0.1 compute
read -r d2 c2 <<<"$(jq -r '.estimate.inputs.busbw_GBps as $b | .charts.scaling[0].efficiency as $e |
	($b * $e[1].busbw_GBps / $e[2].busbw_GBps) as $bw | (4e6 / ($bw * 1e9)) as $sync |
	(6e6 * 4096 / (2 * 0.05e12 * 0.5)) as $c | ($c + ([$sync - 0.1 * $c, 0] | max)) as $step |
	(1e8 / 4096) as $n | "\($n * $step / 86400) \(2 * $n * $step / 3600 * 2)"' sp/summary.json)"
t_check "nodes by hand: 2 nodes $d2 days, \$$c2; within 0.2 days the cheapest is 2 nodes (4 are faster, dearer)" \
	jq -e --argjson d "$d2" --argjson c "$c2" '.nodes[0] | .choice.nodes == 2 and .choice.extrapolated == false and
		(.points[] | select(.nodes == 2) | ((.days - $d) / $d | fabs) < 1e-4 and ((.cost - $c) / $c | fabs) < 1e-4)' \
	nodes-0.2/compare.json
# by hand at 8 nodes, the Hockney ring extrapolation: t(R) = a (R-1)/3 + (S/b) ((R-1)/R) / (3/4) at the
# bucket S = 393216 B, busbw(R) = S 2(R-1)/R / t, scaled from the 4-node busbw
read -r d8 <<<"$(jq -r '.estimate.inputs as $i | ($i.alpha_us * 1e-6) as $a | ($i.beta_GBps * 1e9) as $b | 393216 as $s |
	def t(r): $a * (r - 1) / 3 + ($s / $b) * ((r - 1) / r) / 0.75; def bw(r): $s * 2 * (r - 1) / r / t(r);
	($i.busbw_GBps * bw(8) / bw(4)) as $bw8 | (2 * 7 / 8 * 4e6 / ($bw8 * 1e9)) as $sync |
	(6e6 * 4096 / (8 * 0.05e12 * 0.5)) as $c | ($c + ([$sync - 0.1 * $c, 0] | max)) as $step |
	(1e8 / 4096 * $step / 86400)' sp/summary.json)"
t_check "nodes by hand: 8 nodes (extrapolated, labelled) $d8 days; within 0.14 days (4 nodes take 0.143) the choice is 8" \
	jq -e --argjson d "$d8" '.nodes[0] | .choice.nodes == 8 and .choice.extrapolated and
		(.points[] | select(.nodes == 8) | .extrapolated and ((.days - $d) / $d | fabs) < 1e-4)' nodes-0.14/compare.json
t_check "nodes: within a budget of \$15 the fastest is 1 node (2 nodes cost \$16.2)" \
	jq -e '.nodes[0].choice | .nodes == 1 and (.why | test("fewest days within the budget"))' nodes-b/compare.json
if command -v gnuplot >/dev/null; then
	t_check "nodes: a chart of days and cost against node count, and the scaling overlay" \
		test -s nodes-b/chart-nodes-1.svg -a -s nodes-b/chart-compare-scaling.svg
	t_check "compare charts: bars against the bound and the busbw overlay" \
		test -s cmp/chart-compare-criteria.svg -a -s cmp/chart-compare-busbw.svg
else
	t_skip "gnuplot not installed: charts not checked"
fi

# hostile names: a cluster name and the hostile-names case's hosts stay text
HN=$T_ROOT/tests/report/cases/hostile-names
(cd "$HN" && "$CCREPORT" -q --no-render -p test-emu-1g -o "$T_TMP/hn" results.jsonl)
name='<script>alert(1)</script>|**x**'   # NAME ends at the first '='
"$CCREPORT" compare -q -o hostile "$name=hn" A=a >/dev/null 2>&1
t_check "hostile: no markup from a name or host in compare.html" \
	bash -c '! grep -qi "<script" hostile/compare.html && grep -q "&lt;script&gt;alert(1)" hostile/compare.html &&
		! grep -q "<b>x</b>" hostile/compare.html'
t_check "hostile: the name's pipe and emphasis escaped in compare.md" grep -qF '\|\*\*x\*\*' hostile/compare.md

out=$("$CCREPORT" compare --no-charts -o t-nl "$(printf 'X\nY: injected')=a")
t_check "hostile: a new line in a name stays inside its terminal line" bash -c "! grep -q '^Y: injected' <<<'$out'"
t_chrome_check compare hostile/compare.html
t_chrome_check compare-nodes nodes-b/compare.html
t_done
