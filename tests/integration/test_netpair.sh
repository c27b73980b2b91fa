#!/bin/bash
# tests/integration/test_netpair.sh: the netpair probe on an emulated cluster
# (scripts/emucluster): a healthy 1gbit cluster of 4 hosts blames nothing,
# and faults 500 times slower than a healthy link (2mbit) are named exactly: one slow
# link between two healthy nodes, two slow nodes at once (each named with its evidence,
# the healthy three cleared; one slow node alone is test_ccdiag_emu's, test_slurm's and
# test_uplink's, on 3 and 6 hosts).
# Several ranks per host change nothing; a hung rank is named by the watchdog.
# No speed is asserted (scripts/bench_netpair.sh prints the figures).
# CCDIAG_TEST_HOG=1 (tests/run.sh starts a busy loop per core beside the
# suites): 5 healthy runs each of 4 and 6 hosts instead of one of 4. What a case may
# say depends on the load measured around it (t_load), never on that variable: on a
# busy machine a slow healthy node or link may be named inconclusive beside the fault
# (docs/netpair.md, "Noise"); what is bad is the same either way.
# Needs root (network namespaces); 1-2 minutes, much more under the hog.
source "$(dirname "$0")/../lib.sh"

EMU=$T_ROOT/scripts/emucluster
PROBE=$T_ROOT/build/ccprobe

t_emu_suite "netpair on an emulated cluster (needs root for network namespaces)"
if [ ! -x "$PROBE" ] || [ ! -x "$EMU" ] || ! command -v jq >/dev/null; then
	t_fail "needs build/ccprobe, scripts/emucluster and jq"
	t_done
	exit
fi

# up N [--degrade HOST=RATE]: a fresh cluster at 1gbit
up() {
	"$EMU" up "$@" --rate 1gbit >"$T_TMP/up.log" 2>&1 || { cat "$T_TMP/up.log"; return 1; }
}

# probe FILE NP [mpirun/ccprobe args...]: runs netpair, leaves the exit code in $RC.
# A run that names a bad node exits 1, and mpirun then waits a second per daemon
# before it kills ranks that already left (odls_base_sigkill_timeout): 3-4 s a run
# here. No signal is sent to these runs, so that wait protects nothing.
# 200 latency ping-pongs a pair, not 1000: latency is not judged on a shared kernel,
# and a busy-polled ping-pong beside other work waits a time slice now and then
# (measured: a 4-host run 5.8 s alone, 9.8 s beside two niced busy loops, 6.6 s so).
probe() {
	local out=$1 np=$2
	shift 2
	t_load
	BUSY=$T_BUSY LOAD=$T_LOAD
	"$EMU" mpirun "$@" --mca odls_base_sigkill_timeout 0 -np "$np" "$PROBE" -q -o "$out" netpair \
		--pair-iters 200 $PROBE_ARGS \
		>"$out.log" 2>&1
	RC=$?
	t_load
	[ "$BUSY" = 1 ] || { BUSY=$T_BUSY; LOAD=$T_LOAD; }
}

# q FILE FILTER: jq over the records, compact output
q() { jq -c "$2" "$1"; }

# every FILE FILTER: FILTER is true for every record it selects (and one at least)
every() { jq -es "[.[] | $2] | length > 0 and all" "$1" >/dev/null; }

summary() { q "$1" 'select(.type == "diagnosis" and .subject == "summary")'; }

# flagged FILE: every node or link that is not ok, as "node:HOST:VERDICT" / "link:A-B:VERDICT".
# A transient link (slow in pass 1, fine on its retest) is reported but not flagged:
# the retest exists to clear exactly those on a busy machine.
flagged() {
	jq -r 'select(.type == "diagnosis" and .verdict != "ok" and .verdict != "transient") |
		if .subject == "node" then "node:\(.host):\(.verdict)"
		elif .subject == "link" then "link:\(.a)-\(.b):\(.verdict)"
		else empty end' "$1" | sort | tr '\n' ' ' | sed 's/ $//'
}

# as_judged FILE: flagged, less the inconclusive entries when the machine was busy around the
# run (BUSY, measured by probe): those are named, not blamed, and only noise makes them
as_judged() {
	if [ "${BUSY:-0}" = 1 ]; then
		flagged "$1" | tr ' ' '\n' | grep -v ':inconclusive$' | tr '\n' ' ' | sed 's/ $//'
	else
		flagged "$1"
	fi
}

# named FILE: what the run named inconclusive, for a passing case's line (the load it saw)
named() {
	local n
	n=$(flagged "$1" | tr ' ' '\n' | grep ':inconclusive$' | tr '\n' ' ' | sed 's/ $//')
	[ -z "$n" ] || echo " (named inconclusive on a busy machine: $n; $LOAD)"
}

# blamed FILE: the nodes and links the summary names bad ("" when none)
blamed() {
	summary "$1" | jq -r '(.bad_nodes + (.bad_links | map(join("-")))) | join(" ")'
}

# evidence FILE: what a failed case judged by, for the log (ccprobe -q prints nothing)
evidence() {
	echo "  load around the run: $LOAD"
	tail -n 5 "$1.log" | sed 's/^/  /'
	summary "$1" | jq -c '{ref_bw_Gbps, tol, noise_floor, ref_of_rate, suspect_links_pass1, transient_links, rounds, elapsed_s}' | sed 's/^/  /'
	jq -c 'select(.type == "diagnosis" and .subject != "summary") |
		[.subject, .host // "\(.a)-\(.b)", .verdict, .ratio_bw // .ratio.bw // empty]' "$1" | tr '\n' ' ' | sed 's/^/  /'
	echo
}

# records FILE: pass-1 measurement records (4 per pair: latency, 2 x bw_uni, bw_bidir)
records() { q "$1" 'select(.type == "measurement" and .name == "netpair" and .pass == 1)' | wc -l; }

# ---------------------------------------------------------------- healthy
# Healthy clusters must blame nothing: no bad node, no bad link, exit 0. A link
# slowed by a busy machine may be suspect in pass 1 and transient on its retest;
# how fast the links ran is not asserted (scripts/bench_netpair.sh prints it).
# On a quiet machine one run of 4 hosts; the 6-host cluster's 15 pairs (~15 s) run under
# the CPU hog, where noise could blame a healthy link (the 5-host fault case below has
# an odd count's idle host in every round).
if [ "${CCDIAG_TEST_HOG:-0}" = 1 ]; then RUNS4=5 RUNS6=5; else RUNS4=1 RUNS6=0; fi

# healthy N RUNS: RUNS runs on the N-host cluster that is up, each blaming nothing
healthy() {
	local n=$1 runs=$2 i f bl
	for ((i = 1; i <= runs; i++)); do
		f=$T_TMP/healthy$n-$i.jsonl
		probe "$f" "$n"
		bl=$(blamed "$f")
		if [ "$RC" -eq 0 ] && [ -z "$bl" ] && [ "$(records "$f")" -eq $((2 * n * (n - 1))) ]; then
			t_pass "$n healthy hosts, run $i: nothing blamed (verdict $(summary "$f" | jq -r .verdict), $(summary "$f" | jq -r .transient_links) transient link(s))"
		else
			t_fail "$n healthy hosts, run $i: rc=$RC blamed='$bl' records=$(records "$f")"
			evidence "$f"
		fi
	done
}

if up 4; then
	healthy 4 "$RUNS4"
	t_check "records name the link (scope, element, host, peer); 1gbit links: rate_GBps 0.125" \
		every "$T_TMP/healthy4-1.jsonl" 'select(.type == "measurement" and .name == "netpair") |
			.scope == "link" and .element == "\(.host)-\(.peer)" and .host < .peer and
			([.src, .dst] | sort) == [.host, .peer] and
			if .test == "latency" then has("rate_GBps") | not
			elif .test == "bw_uni" then .rate_GBps == 0.125 and
				(.pct_of_rate - 100 * .bw_GBps / .rate_GBps | fabs) < 1e-6
			else .rate_GBps == 0.25 end'
	n=$(q "$T_TMP/healthy4-1.jsonl" 'select(.type == "diagnosis")' | wc -l)
	t_check "diagnosis records: 4 nodes + 6 links + summary ($n)" [ "$n" -eq 11 ]
	t_check "records carry host names, node indices and both units" \
		every "$T_TMP/healthy4-1.jsonl" 'select(.type == "measurement" and .test == "bw_uni") |
			(.src | test("^node[0-9]$")) and (.dst_node | type == "number") and
			(.bw_Gbps / .bw_GBps / 8 - 1 | fabs < 1e-6) and .bytes == 4194304'

	# several ranks per host: only the leaders measure, the rest follow. 3 of the 4 hosts
	# (mpirun fills node0's 2 slots, then node1's, node2's): 3 rounds, each with a host idle
	f=$T_TMP/ppn2.jsonl
	probe "$f" 6 --ppn 2
	bl=$(blamed "$f")
	if [ "$RC" -eq 0 ] && [ -z "$bl" ] && [ "$(records "$f")" -eq 12 ] &&
		[ "$(q "$f" 'select(.type == "run") | .nodes')" = 3 ]; then
		t_pass "3 hosts x 2 ranks: the leaders' 12 records, nothing blamed"
	else
		t_fail "3 hosts x 2 ranks: rc=$RC blamed='$bl' records=$(records "$f") nodes=$(q "$f" 'select(.type == "run") | .nodes')"
		evidence "$f"
	fi

	# a rank that hangs mid-round: the watchdog ends the run and names it. node3 hangs in
	# the first round (the tournament's round 0 pairs node0 with node3 first), so the
	# deadline can only run out in that round, whatever a loaded machine does to the rounds
	# before: with a later round (node2's), a first round slowed past the 10 s by a loaded
	# machine once ran out first and named node0 and node3 (1 of 4 runs under the CPU hog).
	# The deadline is armed per round only (not in MPI's start-up), so 5 s is enough
	f=$T_TMP/hang.jsonl
	CCPROBE_FAULT=hang:3 PROBE_ARGS="--timeout 5" probe "$f" 4 -x CCPROBE_FAULT
	# its partner waits for it in the pair, so both are "not done"; the record's pairs say
	# which pair of the round was running
	nd=$(q "$f" 'select(.type == "timeout") | [.not_done[].host] | sort' 2>/dev/null)
	pr=$(q "$f" 'select(.type == "timeout") | .pairs' 2>/dev/null)
	st=$(jq -r 'select(.type == "timeout") | "\(.stage) round \(.round)"' "$f" 2>/dev/null)
	if [ "$RC" -eq 4 ] && printf '%s' "$nd" | grep -q '"node3"' &&
		printf '%s' "$pr" | grep -q '"node3"' && [ "$st" = "all-pairs round 0" ]; then
		t_pass "hung rank: exit 4, timeout record names node3 in round 0 (not done $nd, pairs $pr)"
	else
		t_fail "hung rank: rc=$RC not_done=$nd pairs=$pr at $st"
		evidence "$f"
	fi
else
	t_fail "emucluster up 4"
fi
if [ "$RUNS6" -eq 0 ]; then
	:
elif up 6; then
	healthy 6 "$RUNS6"
else
	t_fail "emucluster up 6"
fi

# ---------------------------------------------------------------- degraded
# The faults are 500x: a node or link at 2mbit of 1gbit. With 10x (100mbit) the fault read
# 0.16-0.38 of the reference under a CPU hog (docs/netpair.md), and once, in make check
# under the hog with other suites beside it, 0.5 or more: the healthy links read so little
# that node2 was not named. 50x (20mbit) was named under the hog alone (0.065-0.095 of the
# reference), but with a busy loop per core beside other jobs (load 9-13 on 2 cores) a whole
# retest stage read healthy pairs at 0.015-0.028 Gb/s, as slow as the 20mbit links, and
# single healthy readings fell to 0.025 Gb/s: the diagnosis rightly called the fault
# inconclusive there, as it does not stand out (docs/netpair.md, "Noise"). 2mbit stays 6x
# below those readings. 64 KiB messages (0.26 s each at 2mbit) keep a step on such a link at
# a message and its warm-up; small messages load the CPU more, so healthy links read a
# little less (a 20mbit node read 0.083 of the reference with 128 KiB, 0.095 with 64 KiB).
FAULT=2mbit
PROBE_ARGS="--pair-bw-size 64K"
# one slow link between two healthy nodes: the link is named, neither node
if up 4 --degrade-link node0-node3=$FAULT; then
	f=$T_TMP/badlink4.jsonl
	probe "$f" 4
	fl=$(as_judged "$f")
	if [ "$RC" -eq 1 ] && [ "$fl" = "link:node0-node3:bad" ] &&
		[ "$(summary "$f" | jq -c .bad_nodes)" = "[]" ] &&
		[ "$(summary "$f" | jq -c .bad_links)" = '[["node0","node3"]]' ]; then
		t_pass "4 hosts, link node0-node3 at $FAULT: the link named, both nodes cleared$(named "$f")"
	else
		t_fail "4 hosts, link node0-node3 at $FAULT: rc=$RC flagged='$fl' want='link:node0-node3:bad'"
		evidence "$f"
	fi
	tol=$(summary "$f" | jq -r '.tol')
	t_check "the bad link's record carries its retest, out of tolerance (below $tol)" \
		every "$f" 'select(.type == "diagnosis" and .subject == "link" and .a == "node0" and .b == "node3") |
			.retest.out_of_tolerance == ["bw_uni"] and .retest.bw < '"${tol:-0}"
else
	t_fail "emucluster up 4 --degrade-link node0-node3=$FAULT"
fi

# two slow nodes at once (2 of 5): both named, every link they touch explained, the evidence
# in their records. (A case of one slow node of 4 took 30 s of the suite's 120 and asserted
# nothing this one does not.)
if up 5 --degrade node1=$FAULT --degrade node3=$FAULT; then
	f=$T_TMP/degraded5.jsonl
	probe "$f" 5
	fl=$(as_judged "$f")
	want="link:node0-node1:explained link:node0-node3:explained link:node1-node2:explained"
	want+=" link:node1-node3:explained link:node1-node4:explained link:node2-node3:explained"
	want+=" link:node3-node4:explained node:node1:bad node:node3:bad"
	if [ "$RC" -eq 1 ] && [ "$fl" = "$want" ] &&
		[ "$(summary "$f" | jq -c .bad_nodes)" = '["node1","node3"]' ] &&
		[ "$(summary "$f" | jq -c .bad_links)" = "[]" ]; then
		t_pass "5 hosts, node1 and node3 at $FAULT: both named, the healthy three cleared$(named "$f")"
	else
		t_fail "5 hosts, node1 and node3 at $FAULT: rc=$RC flagged='$fl' want='$want'"
		evidence "$f"
	fi
	t_check "the link between the two slow nodes is explained by both" \
		every "$f" 'select(.type == "diagnosis" and .subject == "link" and .a == "node1" and .b == "node3") |
			.by == ["node1", "node3"]'
	t_check "links touching node1 or node3 ($FAULT): rate_GBps 0.00025; the others 0.125" \
		every "$f" 'select(.type == "measurement" and .test == "bw_uni") |
			if (.host == "node1" or .peer == "node1" or .host == "node3" or .peer == "node3") then .rate_GBps == 0.00025
			else .rate_GBps == 0.125 end'
	# below the tolerance the probe judged by (summary.tol), not below a fixed figure: how
	# far below depends on how fast the healthy links ran on this machine at the time
	tol=$(summary "$f" | jq -r '.tol')
	t_check "node1's and node3's records carry the evidence (ratio below the tolerance $tol)" \
		every "$f" 'select(.type == "diagnosis" and .subject == "node" and (.host == "node1" or .host == "node3")) |
			.evidence.links_out_of_tolerance == 4 and (.evidence.retests | length) >= 1 and
			([.evidence.retests[].pass] | any | not) and .ratio_bw < '"${tol:-0}"
	# printed, not judged: how far the fault stayed below the reference (docs/netpair.md)
	printf 'FIGURE netpair 5 hosts node1, node3 at %s: %s\n' "$FAULT" "$(jq -r -s '(.[] | select(.type == "diagnosis" and .subject == "summary") |
		"reference \(.ref_bw_Gbps * 1000 | round / 1000) Gb/s, ") + ([.[] | select(.type == "diagnosis" and .subject == "node" and (.host == "node1" or .host == "node3")) |
		"\(.host) at \(.ratio_bw * 1000 | round / 1000) of it"] | join(", "))' "$f")"
else
	t_fail "emucluster up 5 --degrade node1=$FAULT --degrade node3=$FAULT"
fi

"$EMU" down >/dev/null 2>&1
t_done
