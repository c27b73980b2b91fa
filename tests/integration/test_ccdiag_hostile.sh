#!/bin/bash
# ccdiag against hostile or careless input (issue 29): host names from results and
# summaries that would widen or inject scontrol lines, ssh options in -H, a stale
# summary from a reused -o DIR, planted temporary files, profile values that would
# become options or globs, terminal control sequences in names, a results file too
# large to read at once; and paths and values with spaces, quotes, $, ; and globs
# that must reach the launcher as single arguments. Test doubles of srun, scontrol,
# ccprobe's ranks and ccreport (in $T_TMP) stand in where a cluster would be. ~15 s.
source "$(dirname "$0")/../lib.sh"
D=$T_ROOT/build/ccdiag
P=$T_ROOT/build/ccprobe
R=$T_ROOT/build/ccreport
FX=$T_ROOT/tests/fixtures/ccdiag
cd "$T_TMP" || exit 1
mkdir -p bin
ESC=$'\033' BEL=$'\a' CSI1=$'\xc2\x9b' RLO=$'\xe2\x80\xae'

# scontrol: ping answers; each update call is one line of <arg> in $T_TMP/scontrol.calls
cat >bin/scontrol <<EOF
#!/bin/bash
[ "\$1" = ping ] && exit 0
printf '<%s>' "\$@" >>'$T_TMP/scontrol.calls'
echo >>'$T_TMP/scontrol.calls'
EOF
# srun: its argument vector, NUL-separated, one file per call; then the command itself
cat >bin/srun <<EOF
#!/bin/bash
n=\$(ls '$T_TMP'/srun.argv.* 2>/dev/null | wc -l)
printf '%s\0' "\$@" >'$T_TMP'/srun.argv.\$n
while [ \$# -gt 0 ] && [[ \$1 == -* ]]; do case \$1 in -N) shift 2 ;; *) shift ;; esac; done
exec "\$@"
EOF
# ccprobe's ranks: FAKE_RANK=hostile writes a diagnosis of a host named with control
# sequences, FAKE_RANK=big FAKE_LINES measurements; --list and --plan are the real ccprobe's
cat >fakeprobe <<EOF
#!/bin/bash
case " \$* " in *" --list "* | *" --plan "*) exec '$P' "\$@" ;; esac
while [ \$# -gt 0 ]; do [ "\$1" = -o ] && out=\$2; shift; done
exec python3 - "\$out" <<'PY'
import json, os, sys
out = open(sys.argv[1], "w")
out.write(json.dumps({"type": "run", "schema": 1, "run_id": "1", "tool": "ccprobe", "world_size": 1,
                      "nodes": 1, "hosts": ["h"]}) + "\n")
if os.environ["FAKE_RANK"] == "hostile":
    bad = "node\x1b[2J\x07\u009b31m\u202eX"
    out.write(json.dumps({"type": "diagnosis", "subject": "node", "host": bad, "verdict": "bad"}) + "\n")
    out.write(json.dumps({"type": "measurement", "kind": "netpair", "name": bad}) + "\n")
else:
    line = json.dumps({"type": "measurement", "kind": "netpair", "name": "netpair", "test": "bw_uni",
                       "a": "node0", "b": "node1", "bw_Gbps": 1.0, "pad": "x" * 120}) + "\n"
    for _ in range(int(os.environ["FAKE_LINES"])):
        out.write(line)
out.write(json.dumps({"type": "end", "status": "complete"}) + "\n")
PY
EOF
# ccreport: --needs is the real one's (the bash ccdiag asked it); otherwise
# FAKE_REPORT=fail writes $FAKE_SUMMARY as this run's summary (exit 1), =refuse writes
# nothing and exits 2, as ccreport does on input it cannot read
cat >fakereport <<EOF
#!/bin/bash
[ "\$1" = --needs ] && exec '$R' "\$@"
while [ \$# -gt 0 ]; do [ "\$1" = -o ] && out=\$2; shift; done
[ "\$FAKE_REPORT" = refuse ] && { echo "ccreport: bad input" >&2; exit 2; }
mkdir -p "\$out" && cp "\$FAKE_SUMMARY" "\$out/summary.json" && exit 1
EOF
chmod +x bin/scontrol bin/srun fakeprobe fakereport

# a summary blaming a node range, names with a quote and a newline, and one real node
# whose evidence and profile name carry quotes, $, backquotes and control characters
python3 - <<'PY'
import json
d = lambda el, ev="x": {"probe": "netpair", "subject": "node", "element": el, "verdict": "bad", "evidence": ev}
s = {"schema": 1, "tool": "ccreport", "verdict": "fail", "profile": {"name": 'p"q`$(id)'},
     "criteria": [], "diagnoses": [d("node[0-1023]"), d("node5'"), d("node6\nNodeName=node7"),
                                   d("-oops"), d("good1", 'ev"il $(x) `y` \\z \x1b[2J\nNodeName=all')]}
json.dump(s, open("hostile.json", "w"))
PY

# ---- 1. the drain list: one Slurm node per line, refused names said, the reason clean
"$D" drain-list hostile.json >drain.out 2>drain.err
rc=$?
t_check "drain-list of hostile names: exit 0, one line, good1's" \
	bash -c "[ $rc -eq 0 ] && [ \$(wc -l <drain.out) -eq 1 ] && grep -q '^NodeName=good1 State=DRAIN Reason=\"ccdiag ' drain.out"
t_check "drain-list: the node range, the quote, the newline and the option are refused, each said on stderr" \
	bash -c "! grep -qE 'node\[|node5|node6|node7|oops' drain.out && [ \$(grep -c 'is not one Slurm node name' drain.err) -eq 4 ]"
t_check "drain-list: the reason holds no quote, \$, backquote, backslash or control character; the profile's name cleaned" \
	bash -c "[ \$(tr -cd '\"' <drain.out | wc -c) -eq 2 ] && ! grep -q '[\$\`\\\\]' drain.out && ! grep -qP '[\x00-\x1f\x7f]' <(tr -d '\n' <drain.out) &&
		grep -q 'Reason=\"ccdiag p.q.' drain.out"
xargs -L1 printf '<%s>\n' <drain.out >drain.args 2>&1
t_check "drain-list: the line splits into scontrol's three arguments" \
	bash -c "[ \$(wc -l <drain.args) -eq 3 ] && head -1 drain.args | grep -qx '<NodeName=good1>'"

# --drain: scontrol by argument vector, one node per call, only the valid one
out=$T_TMP/run1
PATH=$T_TMP/bin:$PATH CCREPORT=$T_TMP/fakereport FAKE_REPORT=fail FAKE_SUMMARY=$T_TMP/hostile.json \
	"$D" run -p "$FX/netpair-only.ini" -o "$out" --drain >run1.out 2>run1.err
t_check "--drain: one scontrol update, NodeName=good1 State=DRAIN and the reason, each one argument" \
	bash -c "[ \$(wc -l <scontrol.calls) -eq 1 ] && grep -q '^<update><NodeName=good1><State=DRAIN><Reason=ccdiag netpair-only: netpair diagnosis: node bad: ev.il' scontrol.calls &&
		grep -q '^ccdiag: drained: good1 ' run1.out"

# ---- 3. a stale summary: this run's ccreport refuses its input; the last run's verdict is not used
rm -f scontrol.calls
PATH=$T_TMP/bin:$PATH CCREPORT=$T_TMP/fakereport FAKE_REPORT=refuse \
	"$D" run -p "$FX/netpair-only.ini" -o "$out" --drain >run2.out 2>run2.err
rc=$?
t_check "reused -o DIR, ccreport exit 2: nothing drained, the old summary gone, exit 2" \
	bash -c "[ $rc -eq 2 ] && [ ! -e scontrol.calls ] && [ ! -e '$out/report/summary.json' ] && ! grep -q 'to drain' run2.out"

# ---- 2. ssh options in host names; a ',' or ':' inside one
"$D" run -p "$FX/netpair-only.ini" -o "$T_TMP/ssh" -H "-oProxyCommand=touch $T_TMP/pwned" >ssh.out 2>ssh.err
rc=$?
t_check "-H '-oProxyCommand=...': refused before ssh runs (exit 2, one line), nothing executed" \
	bash -c "[ $rc -eq 2 ] && [ ! -e pwned ] && [ \$(wc -l <ssh.err) -eq 1 ] && grep -q 'invalid host name' ssh.err && [ ! -e ssh ]"
printf 'node1\nnode2:4\n' >hosts.txt
"$D" run -p "$FX/netpair-only.ini" --dry-run --hosts hosts.txt >ssh.out 2>ssh.err
t_check "--hosts with 'node2:4': refused (it would change mpirun's slots), exit 2" \
	bash -c "[ $? -eq 2 ] && grep -q \"invalid host name 'node2:4' in \" ssh.err"

# ---- 4. planted temporary files: no predictable name is opened
mkdir tmpd && echo precious >victim
python3 -c "
import os
base = os.getpid()
for p in range(base, base + 4000):
    for n in ('ccdiag-needs.%d' % p, 'ccdiag-quick.%d.ini' % p):
        os.symlink('$T_TMP/victim', 'tmpd/' + n)"
TMPDIR=$T_TMP/tmpd "$D" run -p "$FX/nosuchprobe.ini" --dry-run >/dev/null 2>&1
TMPDIR=$T_TMP/tmpd "$D" run -p emu-1g --dry-run >/dev/null 2>&1
TMPDIR=$T_TMP/tmpd "$D" quick -p "$FX/pcie-only.ini" -o "$T_TMP/q" >/dev/null 2>&1
t_check "planted symlinks in TMPDIR (4000 pids): the target is untouched" grep -qx precious victim
t_check "quick's temporary profile is gone afterwards" \
	bash -c "[ \$(find tmpd -type f | wc -l) -eq 0 ]"

# ---- 5. profile values that would be options or globs: refused where the profile is read
{ printf '[hardware]\ngpus_per_node = 0\n[criterion c]\n'; printf 'collective = all_reduce -n 100000 -r 100000 *\n'
	printf 'backend = mpi\nmetric = wrong\nsize = any\nbound = <= 0\n'; } >inject.ini
"$D" run -p inject.ini --dry-run >inj.out 2>inj.err
rc=$?
t_check "collective = 'all_reduce -n 100000 -r 100000 *': ccdiag refuses it, exit 2, naming file and line" \
	bash -c "[ $rc -eq 2 ] && [ \$(wc -l <inj.err) -eq 1 ] && grep -q \"inject.ini:4: collective 'all_reduce -n 100000 -r 100000 \*'\" inj.err && ! grep -q -- '-n 100000' inj.out"
"$R" -p inject.ini "$FX/../report/summary-pass.json" >/dev/null 2>inj.err
t_check "... and so does ccreport (exit 2, the same line)" \
	bash -c "[ $? -eq 2 ] && grep -q 'inject.ini:4: collective' inj.err"

# ---- 6. terminal control sequences from a results file: replaced on the terminal
out=$T_TMP/tty
PATH=$T_TMP/bin:$PATH SLURM_JOB_ID=1 SLURM_JOB_NUM_NODES=1 CCPROBE=$T_TMP/fakeprobe FAKE_RANK=hostile \
	"$D" run -p "$FX/netpair-only.ini" -o "$out" >tty.out 2>tty.err
t_check "a host named with ESC, BEL, C1 CSI and U+202E: the phase line names it without them" \
	bash -c "grep -q '^ccdiag: phase 1/1 pairs: netpair: .*node node?\[2J??31m?X bad' tty.out &&
		! grep -h '^ccdiag' tty.out tty.err | grep -qF -e '$ESC' -e '$BEL' -e '$CSI1' -e '$RLO'"

# ---- 7. a results file read record by record: 64 MB under a 300 MB address space
out=$T_TMP/big
(ulimit -v 300000; PATH=$T_TMP/bin:$PATH SLURM_JOB_ID=1 SLURM_JOB_NUM_NODES=1 CCPROBE=$T_TMP/fakeprobe \
	FAKE_RANK=big FAKE_LINES=300000 CCREPORT=$T_TMP/fakereport FAKE_REPORT=refuse \
	"$D" run -p "$FX/netpair-only.ini" -o "$out" >big.out 2>big.err)
t_check "a 64 MB pairs phase in 300 MB of address space: its line counts its 300000 measurements" \
	grep -q '^ccdiag: phase 1/1 pairs: netpair: .*: 300000 measurement(s)' big.out
rm -rf "$out"

# ---- quoting: paths with spaces, quotes, $, ; and globs reach the launcher as one argument each
W="$T_TMP/we ird'\"\$x;*?[a]"
mkdir -p "$W/store" && cp "$FX/netpair-only.ini" "$W/p f.ini"
printf '[criterion st]\nprobe = storage\ntest = write\nmetric = bw_GBps\nscope = cluster\nbound = >= 0.000001 GB/s\n' >>"$W/p f.ini"
rm -f srun.argv.*
PATH=$T_TMP/bin:$PATH SLURM_JOB_ID=1 SLURM_JOB_NUM_NODES=1 "$D" run -p "$W/p f.ini" -o "$W/out dir" \
	--storage-dir "$W/store" -- --timeout '60' --storage-size 1M >q.out 2>q.err
rc=$?
t_check "quoting: srun got the storage phase's --storage-dir and -o as one argument each" \
	python3 -c "
import sys
a = open('srun.argv.1', 'rb').read().split(b'\0')[:-1]
w = sys.argv[1].encode()
i = a.index(b'--storage-dir'); o = a.index(b'-o')
sys.exit(not (a[i + 1] == w + b'/store' and a[o + 1] == w + b'/out dir/phase-2-storage.jsonl'))" "$W"
# (exit 4: netpair_bw is required and one host has no pair)
t_check "quoting: the phases ran in that folder, ccreport read the profile of that path and judged (exit $rc)" \
	bash -c "[ -s \"\$1/out dir/phase-1-pairs.jsonl\" ] && [ -s \"\$1/out dir/phase-2-storage.jsonl\" ] &&
		jq -e '.profile.name == \"p f\"' \"\$1/out dir/report/summary.json\" >/dev/null && [ $rc -eq 4 ]" _ "$W"

t_done
