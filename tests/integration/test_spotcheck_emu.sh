#!/bin/bash
# ccdiag spot-check on the emulated cluster (docs/provenance.md, "Spot-check"): a received
# run of 3 healthy hosts is measured again on a random sample (2 links of 3 hosts: every
# host) and reproduced; the same run with one node's netpair bandwidth raised 10x is not
# reproduced, and the report names that node, not the others. On a busy machine (measured
# around the case, t_load) the untouched run may read "could not reproduce: the cluster is
# slower now" (exit 4), never "not reproduced"; the edited one is not reproduced either way.
# (10x, not 3x: at load 11 the same link read from 0.6 to 1.6 of its received figure, so a 3x
# edit could sit inside the 50 % tolerance.)
# Needs root (network namespaces); about a minute and a half.
source "$(dirname "$0")/../lib.sh"
D=$T_ROOT/build/ccdiag
FX=$T_ROOT/tests/fixtures/ccdiag
cd "$T_TMP" || exit 1

t_emu_suite "spot-check on the emulated cluster (needs root for network namespaces)"
command -v jq >/dev/null || { t_fail "needs jq"; t_done; exit; }
# 256 KiB messages and 200 latency ping-pongs keep each launch short (test_ccdiag_emu.sh)
ARGS=(-- --pair-bw-size 256K --pair-iters 200)
export OMPI_MCA_odls_base_sigkill_timeout=0

# the received run: netpair on 3 healthy hosts, as a provider would hand it over
recv=$T_TMP/received
"$D" run -q -p "$FX/netpair-only.ini" --emulated 3 -o "$recv" "${ARGS[@]}" >"$T_TMP/recv.out" 2>&1
rc=$?
n=$(jq -s '[.[] | select(.type == "measurement" and .test == "bw_uni")] | length' "$recv/phase-1-pairs.jsonl" 2>/dev/null)
if ! [ "${n:-0}" -ge 6 ]; then
	t_fail "the received run: no netpair records (exit $rc): $(tail -n 3 "$T_TMP/recv.out")"
	t_done
	exit
fi
t_pass "the received run: ccdiag run on 3 emulated hosts, $n one-way records (exit $rc)"

# spot DIR OUT ARGS...: the spot-check of DIR into OUT, exit code in $rc, load around it in $busy
spot() {
	local dir=$1 out=$2
	shift 2
	t_load
	busy=$T_BUSY load=$T_LOAD
	"$D" spot-check -p "$FX/netpair-only.ini" --against "$dir" --emulated 3 -k 2 --tol 50% -o "$out" "$@" \
		"${ARGS[@]}" >"$out.out" 2>&1
	rc=$?
	t_load
	[ "$busy" = 1 ] || { busy=$T_BUSY; load=$T_LOAD; }
}
# verdicts OUT: "element:verdict ..." of the figures compared, for the log
verdicts() { jq -r '[.figures[] | "\(.element):\(.verdict):\(.received * 1000 | round / 1000)->\(.now * 1000 | round / 1000)"] | join(" ")' "$1/spotcheck.json" 2>/dev/null; }

spot "$recv" "$T_TMP/sc-same"
ok=$(jq -e '.verdict == "reproduced" and (.figures | length >= 3) and .not_reproduced_hosts == []' \
	"$T_TMP/sc-same/spotcheck.json" >/dev/null 2>&1 && echo 1)
slower=$(jq -e '.verdict == "slower_now" and .not_reproduced_hosts == [] and
	all(.figures[]; .verdict != "not_reproduced")' "$T_TMP/sc-same/spotcheck.json" >/dev/null 2>&1 && echo 1)
if [ "$rc" -eq 0 ] && [ "$ok" = 1 ] && grep -q '^ccdiag: spot-check: REPRODUCED: all' "$T_TMP/sc-same.out"; then
	t_pass "the run as received: reproduced, every link of the sample compared ($(verdicts "$T_TMP/sc-same"))"
elif [ "$rc" -eq 4 ] && [ "$slower" = 1 ] && [ "$busy" = 1 ]; then
	t_pass "the run as received, on a busy machine: could not reproduce, the cluster slower now, nothing named ($load; $(verdicts "$T_TMP/sc-same"))"
else
	t_fail "the run as received: exit $rc ($load): $(verdicts "$T_TMP/sc-same"); $(grep 'spot-check: [A-Z]' "$T_TMP/sc-same.out" | tail -2)"
	tail -n 12 "$T_TMP/sc-same.out" | sed 's/^/  /'
fi
t_check "the sample is printed with its seed, and spotcheck.json holds it" \
	bash -c "grep -qE '^ccdiag: spot-check: .*sample \(seed [0-9]+, --seed repeats it\): .*link\(s\) node[0-2]-node[0-2] node[0-2]-node[0-2]$' '$T_TMP/sc-same.out' &&
		jq -e '(.sample.links | length) == 2 and (.seed > 0) and .tolerance == 0.5' '$T_TMP/sc-same/spotcheck.json' >/dev/null"

# the same run with node1's one-way bandwidth raised 10x in every record (both directions of
# its links; a provider who rewrites the files writes a new MANIFEST too, so none is kept)
edit=$T_TMP/edited
mkdir -p "$edit"
jq -c 'if .type == "measurement" and .test == "bw_uni" and (.host == "node1" or .peer == "node1")
	then .bw_GBps *= 10 | .bw_Gbps *= 10 | (if .pct_of_rate then .pct_of_rate *= 10 else . end) else . end' \
	"$recv/phase-1-pairs.jsonl" >"$edit/phase-1-pairs.jsonl"
spot "$edit" "$T_TMP/sc-edit"
t_check "node1's bandwidth raised 10x: not reproduced, exit 1 (was $rc; $load)" \
	bash -c "[ $rc -eq 1 ] && jq -e '.verdict == \"not_reproduced\"' '$T_TMP/sc-edit/spotcheck.json' >/dev/null"
t_check "node1's bandwidth raised 10x: the report names node1 alone, its two links not reproduced, node0-node2 not blamed ($(verdicts "$T_TMP/sc-edit"))" \
	jq -e '.not_reproduced_hosts == ["node1"] and
		([.figures[] | select(.verdict == "not_reproduced") | .element] | sort) == ["node0-node1", "node1-node2"] and
		all(.figures[]; .element != "node0-node2" or .verdict != "not_reproduced")' "$T_TMP/sc-edit/spotcheck.json"
t_check "the terminal says which received figures the cluster could not reproduce, naming node1" \
	bash -c "grep -qE '^ccdiag: spot-check: netpair_bw node0-node1: received [0-9.]+ Gb/s, now [0-9.]+ Gb/s .*NOT REPRODUCED$' '$T_TMP/sc-edit.out' &&
		grep -q '^ccdiag: spot-check: NOT REPRODUCED: 2 of 3 received figure(s) are beyond what the cluster does now (on node1)' '$T_TMP/sc-edit.out'"
[ "$rc" -eq 1 ] || tail -n 15 "$T_TMP/sc-edit.out" | sed 's/^/  /'
t_check "the emulated cluster is gone afterwards" bash -c "! '$T_ROOT/scripts/emucluster' status >/dev/null 2>&1"

t_done
