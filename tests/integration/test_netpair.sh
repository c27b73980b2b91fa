#!/bin/bash
# tests/integration/test_netpair.sh: the netpair probe on an emulated cluster
# (scripts/emucluster): a healthy 1gbit cluster flags nothing, a degraded
# host is named as the bad node and only it, healthy links reach the shaped
# rate, several ranks per host change nothing, and a hung rank is named by
# the watchdog. Needs root (network namespaces); about a minute.
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

# probe FILE NP [mpirun/ccprobe args...]: runs netpair, leaves the exit code in $RC
probe() {
	local out=$1 np=$2
	shift 2
	"$EMU" mpirun "$@" -np "$np" "$PROBE" -q -o "$out" netpair $PROBE_ARGS \
		>"$out.log" 2>&1
	RC=$?
}

# q FILE FILTER: jq over the records, compact output
q() { jq -c "$2" "$1"; }

# every FILE FILTER: FILTER is true for every record it selects (and one at least)
every() { jq -es "[.[] | $2] | length > 0 and all" "$1" >/dev/null; }

summary() { q "$1" 'select(.type == "diagnosis" and .subject == "summary")'; }

# flagged FILE: every node or link that is not ok, as "node:HOST:VERDICT" / "link:A-B:VERDICT".
# A transient link (slow in pass 1, fine on its retest) is reported but not flagged:
# the retest exists to clear exactly those on a busy 2-core machine.
flagged() {
	jq -r 'select(.type == "diagnosis" and .verdict != "ok" and .verdict != "transient") |
		if .subject == "node" then "node:\(.host):\(.verdict)"
		elif .subject == "link" then "link:\(.a)-\(.b):\(.verdict)"
		else empty end' "$1" | sort | tr '\n' ' ' | sed 's/ $//'
}

# records FILE: pass-1 measurement records (4 per pair: latency, 2 x bw_uni, bw_bidir)
records() { q "$1" 'select(.type == "measurement" and .name == "netpair" and .pass == 1)' | wc -l; }

# slowest uni link of pass 1 in Gb/s
slowest() {
	jq -s '[.[] | select(.type == "measurement" and .test == "bw_uni" and .pass == 1) |
		.bw_Gbps] | min' "$1"
}

# ---------------------------------------------------------------- healthy
if up 4; then
	for i in 1 2 3; do
		f=$T_TMP/healthy$i.jsonl
		probe "$f" 4
		fl=$(flagged "$f")
		if [ "$RC" -eq 0 ] && [ -z "$fl" ] && [ "$(records "$f")" -eq 24 ] &&
			[ "$(summary "$f" | jq -r .verdict)" = pass ]; then
			t_pass "4 healthy hosts, run $i: nothing flagged ($(slowest "$f") Gb/s slowest link)"
		else
			t_fail "4 healthy hosts, run $i: rc=$RC flagged='$fl' records=$(records "$f")"
			tail -5 "$f.log"
		fi
	done
	# a shaped 1gbit link carries ~94% of 1e9 bits/s of payload (TCP/IP headers); each
	# link direction is judged on its median over the three runs, since one sample on
	# a busy 2-core machine can dip (the probe's retest exists for that)
	min=$(jq -s '[.[] | select(.type == "measurement" and .test == "bw_uni" and .pass == 1)]
		| group_by("\(.src)>\(.dst)") | map(map(.bw_Gbps) | sort | .[length / 2 | floor]) | min' \
		"$T_TMP"/healthy[123].jsonl)
	t_check "every healthy link direction >= 85% of the shaped 1 Gb/s (slowest median $min Gb/s)" \
		jq -en "$min >= 0.85"
	t_check "records name the link (scope, element, host, peer); 1gbit links: rate_GBps 0.125" \
		every "$T_TMP/healthy1.jsonl" 'select(.type == "measurement" and .name == "netpair") |
			.scope == "link" and .element == "\(.host)-\(.peer)" and .host < .peer and
			([.src, .dst] | sort) == [.host, .peer] and
			if .test == "latency" then has("rate_GBps") | not
			elif .test == "bw_uni" then .rate_GBps == 0.125 and
				(.pct_of_rate - 100 * .bw_GBps / .rate_GBps | fabs) < 1e-6
			else .rate_GBps == 0.25 end'
	n=$(q "$T_TMP/healthy1.jsonl" 'select(.type == "diagnosis")' | wc -l)
	t_check "diagnosis records: 4 nodes + 6 links + summary ($n)" [ "$n" -eq 11 ]
	t_check "records carry host names, node indices and both units" \
		every "$T_TMP/healthy1.jsonl" 'select(.type == "measurement" and .test == "bw_uni") |
			(.src | test("^node[0-9]$")) and (.dst_node | type == "number") and
			(.bw_Gbps / .bw_GBps / 8 - 1 | fabs < 1e-6) and .bytes == 4194304'

	# several ranks per host: only the leaders measure, the rest follow
	f=$T_TMP/ppn2.jsonl
	probe "$f" 8 --ppn 2
	fl=$(flagged "$f")
	if [ "$RC" -eq 0 ] && [ -z "$fl" ] && [ "$(records "$f")" -eq 24 ]; then
		t_pass "4 hosts x 2 ranks: same 24 records, nothing flagged"
	else
		t_fail "4 hosts x 2 ranks: rc=$RC flagged='$fl' records=$(records "$f")"
		tail -5 "$f.log"
	fi

	# a rank that hangs mid-round: the watchdog ends the run and names it
	f=$T_TMP/hang.jsonl
	CCPROBE_FAULT=hang:2 PROBE_ARGS="--timeout 3" probe "$f" 4 -x CCPROBE_FAULT
	# every leader waits for it at the round's barrier, so all are "not done";
	# the record's pairs say which pair of the round was running
	nd=$(q "$f" 'select(.type == "timeout") | [.not_done[].host] | sort' 2>/dev/null)
	pr=$(q "$f" 'select(.type == "timeout") | .pairs' 2>/dev/null)
	if [ "$RC" -eq 4 ] && printf '%s' "$nd" | grep -q '"node2"' &&
		printf '%s' "$pr" | grep -q '"node2"'; then
		t_pass "hung rank: exit 4, timeout record names node2 (not done $nd, pairs $pr)"
	else
		t_fail "hung rank: rc=$RC not_done=$nd pairs=$pr"
		tail -5 "$f.log"
	fi
else
	t_fail "emucluster up 4"
fi

# ---------------------------------------------------------------- degraded
# check_bad FILE HOST N: HOST and only it is a bad node; its links are explained by it
check_bad() {
	local f=$1 host=$2 n=$3 want fl
	want=$(for ((k = 0; k < n; k++)); do
		[ "node$k" = "$host" ] && continue
		a=node$k b=$host
		[[ $k -gt ${host#node} ]] && { a=$host; b=node$k; }
		printf 'link:%s-%s:explained\n' "$a" "$b"
	done
	echo "node:$host:bad")
	want=$(printf '%s\n' "$want" | sort | tr '\n' ' ' | sed 's/ $//')
	fl=$(flagged "$f")
	if [ "$RC" -eq 1 ] && [ "$fl" = "$want" ] &&
		[ "$(summary "$f" | jq -c .bad_nodes)" = "[\"$host\"]" ] &&
		[ "$(summary "$f" | jq -c .bad_links)" = "[]" ]; then
		t_pass "$n hosts, $host at 100mbit: $host named, its partners cleared"
	else
		t_fail "$n hosts, $host at 100mbit: rc=$RC flagged='$fl' want='$want'"
		tail -5 "$f.log"
	fi
}

if up 4 --degrade node2=100mbit; then
	f=$T_TMP/degraded4.jsonl
	probe "$f" 4
	check_bad "$f" node2 4
	t_check "links touching node2 (100mbit): rate_GBps 0.0125; the others 0.125" \
		every "$f" 'select(.type == "measurement" and .test == "bw_uni") |
			if .host == "node2" or .peer == "node2" then .rate_GBps == 0.0125
			else .rate_GBps == 0.125 end'
	t_check "node2's record carries the evidence" \
		every "$f" 'select(.type == "diagnosis" and .subject == "node" and .host == "node2") |
			.evidence.links_out_of_tolerance == 3 and (.evidence.retests | length) >= 1 and
			([.evidence.retests[].pass] | any | not) and .ratio_bw < 0.2'
else
	t_fail "emucluster up 4 --degrade node2=100mbit"
fi

if up 5 --degrade node1=100mbit; then
	f=$T_TMP/degraded5.jsonl
	probe "$f" 5
	check_bad "$f" node1 5
else
	t_fail "emucluster up 5 --degrade node1=100mbit"
fi

"$EMU" down >/dev/null 2>&1
t_done
