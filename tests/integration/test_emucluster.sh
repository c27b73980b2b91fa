#!/bin/bash
# Integration test for scripts/emucluster (emulated multi-node cluster).
# Needs root (network namespaces); skips otherwise.  Takes ~10 s. Also `link`: a rate
# changed while up.
# shellcheck source=SCRIPTDIR/../lib.sh disable=SC1091
source "$(dirname "$0")/../lib.sh"

EMU=$T_ROOT/scripts/emucluster
NS_RE='^(node[0-9]+|ccdemu-sw)$'

t_emu_suite "emucluster needs root (network namespaces); run the suite as root"
if [ ! -x "$EMU" ]; then
	t_fail "emucluster: $EMU missing or not executable"
	t_done
	exit
fi

# interface names of the root network namespace, to prove nothing leaks into it
root_net() {
	ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print "link", $2 }' | sort
	ip -o addr show | awk '{ print "addr", $2, $4 }' | sort
	ip route show table all | sed 's/^/route /' | sort
}
our_netns() { ip netns list 2>/dev/null | awk '{ print $1 }' | grep -E "$NS_RE"; }

# err_case DESC EXPECTED_RC CMD...: CMD exits EXPECTED_RC and writes exactly
# one line on stderr and nothing on stdout
err_case() {
	local desc=$1 want=$2 rc; shift 2
	"$@" >"$T_TMP/out" 2>"$T_TMP/err"
	rc=$?
	if [ "$rc" -eq "$want" ] && [ "$(wc -l <"$T_TMP/err")" -eq 1 ] && [ ! -s "$T_TMP/out" ]; then
		t_pass "$desc"
	else
		t_fail "$desc (rc=$rc, stderr: $(head -c 300 "$T_TMP/err"), stdout: $(head -c 100 "$T_TMP/out"))"
	fi
}

"$EMU" down >/dev/null 2>&1
root_net >"$T_TMP/links.before"

# ---- bad arguments (validated before anything is touched)
err_case "no command -> exit 2" 2 "$EMU"
err_case "unknown command -> exit 2" 2 "$EMU" frobnicate
err_case "up without N -> exit 2" 2 "$EMU" up
err_case "up 1 (too few hosts) -> exit 2" 2 "$EMU" up 1
err_case "up 65 (too many hosts) -> exit 2" 2 "$EMU" up 65
err_case "up with non-numeric N -> exit 2" 2 "$EMU" up four
err_case "up --rate fast -> exit 2" 2 "$EMU" up 4 --rate fast
err_case "up --degrade of a host outside the cluster -> exit 2" 2 "$EMU" up 4 --degrade node9=100mbit
err_case "up --degrade without =RATE -> exit 2" 2 "$EMU" up 4 --degrade node1
err_case "up with unknown option -> exit 2" 2 "$EMU" up 4 --frob
err_case "up --degrade-link of a host outside the cluster -> exit 2" 2 "$EMU" up 4 --degrade-link node0-node9=100mbit
err_case "up --degrade-link of a host to itself -> exit 2" 2 "$EMU" up 4 --degrade-link node1-node1=100mbit
err_case "up --degrade-link with a bad rate -> exit 2" 2 "$EMU" up 4 --degrade-link node0-node1=slow
err_case "mpirun --ppn 0 -> exit 2" 2 "$EMU" mpirun --ppn 0 -np 2 hostname
err_case "exec without command -> exit 2" 2 "$EMU" exec node0
err_case "exec while nothing is up -> exit 2" 2 "$EMU" exec node0 true
err_case "link while nothing is up -> exit 2" 2 "$EMU" link node0-node1 100mbit
err_case "link without a rate -> exit 2" 2 "$EMU" link node0-node1
if "$EMU" --help 2>&1 | grep -q '^usage: emucluster up N'; then
	t_pass "--help prints usage"
else
	t_fail "--help prints usage"
fi

# ---- non-root refusal: as nobody, running the script where nobody can reach it (a
# checkout in root's 0700 home is not: then a copy of it in a folder nobody can enter)
EMU_NOBODY=$EMU
if ! t_as_nobody test -x "$EMU" 2>/dev/null; then
	if t_user_copy "$EMU"; then
		EMU_NOBODY=$T_PUB/emucluster
	else
		EMU_NOBODY=
	fi
fi
if [ -n "$EMU_NOBODY" ] && t_as_nobody test -x "$EMU_NOBODY" 2>/dev/null; then
	err_case "non-root up refused with exit 2 (as nobody: $EMU_NOBODY)" 2 t_as_nobody "$EMU_NOBODY" up 2
	grep -q 'must run as root' "$T_TMP/err" || t_fail "non-root message names root: $(cat "$T_TMP/err")"
else
	t_skip "non-root refusal: nobody can run $EMU, nor a copy in /tmp (${EMU_NOBODY:-no copy made}; /tmp noexec?)"
fi

# ---- up 4 with one degraded host and one degraded link
if ! "$EMU" up 4 --degrade node3=100mbit --degrade-link node0-node2=50mbit >"$T_TMP/up.out" 2>&1; then
	t_fail "up 4 --degrade node3=100mbit --degrade-link node0-node2=50mbit: $(cat "$T_TMP/up.out")"
	t_done
	exit
fi
t_pass "up 4 --degrade node3=100mbit --degrade-link node0-node2=50mbit"

ok=1
for k in 0 1 2 3; do
	h=$("$EMU" exec "node$k" hostname 2>&1)
	[ "$h" = "node$k" ] || { ok=0; t_fail "node$k reports hostname '$h'"; }
done
[ $ok -eq 1 ] && t_pass "each host reports its own hostname"
if [ "$(hostname)" != node0 ]; then t_pass "machine hostname unchanged ($(hostname))"; else t_fail "machine hostname changed"; fi

ok=1
for k in 0 1 2 3; do
	a=$("$EMU" exec "node$k" ip -o -4 addr show dev eth0 2>&1 | awk '{ print $4 }')
	[ "$a" = "198.18.0.$((k + 1))/24" ] || { ok=0; t_fail "node$k has address '$a'"; }
done
[ $ok -eq 1 ] && t_pass "each host has its 198.18.0.x/24 address"

if "$EMU" status >"$T_TMP/status" 2>&1 && [ "$(grep -cE '^node[0-3] +198\.18\.0\.[1-4] .* up$' "$T_TMP/status")" -eq 4 ]; then
	t_pass "status lists 4 hosts up"
else
	t_fail "status lists 4 hosts up: $(cat "$T_TMP/status")"
fi

if command -v ping >/dev/null 2>&1; then
	ok=1
	for pair in 0:1 1:2 2:3 3:0 0:3; do
		s=${pair%:*} d=${pair#*:}
		"$EMU" exec "node$s" ping -c 1 -W 2 -q "198.18.0.$((d + 1))" >/dev/null 2>&1 ||
			{ ok=0; t_fail "ping node$s -> node$d"; }
	done
	"$EMU" exec node0 ping -c 1 -W 2 -q node2 >/dev/null 2>&1 ||
		{ ok=0; t_fail "ping node0 -> node2 by name"; }
	[ $ok -eq 1 ] && t_pass "hosts ping each other (by address and by name)"
else
	t_skip "ping not installed (iputils-ping)"
fi

# ---- shaping: degraded host gets the lower rate in both directions
up3=$("$EMU" exec node3 tc qdisc show dev eth0 2>&1)
dn3=$(tc -n ccdemu-sw qdisc show dev p3 2>&1)
up0=$("$EMU" exec node0 tc qdisc show dev eth0 2>&1)
dn0=$(tc -n ccdemu-sw qdisc show dev p0 2>&1)
if [[ $up3 == *"tbf"*"rate 100Mbit"* && $dn3 == *"tbf"*"rate 100Mbit"* ]]; then
	t_pass "degraded node3 shaped at 100Mbit both ways"
else
	t_fail "degraded node3 shaping: up='$up3' down='$dn3'"
fi
if [[ $up0 == *"tbf"*"rate 1Gbit"* && $dn0 == *"tbf"*"rate 1Gbit"* ]]; then
	t_pass "healthy node0 shaped at 1Gbit both ways"
else
	t_fail "healthy node0 shaping: up='$up0' down='$dn0'"
fi
# the degraded link: a 50Mbit class on each end's upload, picked by the other end's address
ok=1
for e in 0:198.18.0.3 2:198.18.0.1; do
	h=node${e%%:*} peer=${e#*:}
	cls=$("$EMU" exec "$h" tc class show dev eth0 2>&1)
	flt=$("$EMU" exec "$h" tc filter show dev eth0 parent 2: 2>&1)
	hex=$(printf '%02x' ${peer//./ })
	[[ $cls == *"rate 50Mbit"* && $flt == *"flowid 2:20"* && $flt == *"match $hex/ffffffff at 16"* ]] ||
		{ ok=0; t_fail "link node0-node2 shaping at $h: classes '$cls' filters '$flt'"; }
done
up1=$("$EMU" exec node1 tc qdisc show dev eth0 2>&1)
[[ $up1 == "qdisc tbf "*"rate 1Gbit"* && $up1 != *htb* ]] || { ok=0; t_fail "node1 (no degraded link) shaping: '$up1'"; }
grep -q '^link node0-node2 *50mbit' "$T_TMP/status" || { ok=0; t_fail "status does not list the degraded link: $(cat "$T_TMP/status")"; }
[ $ok -eq 1 ] && t_pass "degraded link node0-node2: 50Mbit both ways on its two ends only, listed by status"
# emucluster link: a link's rate changed while up (a flap), the same class on both ends;
# a link not shaped yet gets its class as --degrade-link would
ok=1
"$EMU" link node0-node2 200mbit >/dev/null && "$EMU" link node1-node3 20mbit >/dev/null || ok=0
for h in node0 node2; do
	[[ $("$EMU" exec "$h" tc class show dev eth0 2>&1) == *"2:20 "*"rate 200Mbit"* ]] || ok=0
done
[[ $("$EMU" exec node1 tc class show dev eth0 2>&1) == *"rate 20Mbit"* ]] || ok=0
"$EMU" status >"$T_TMP/status2" 2>&1
grep -q '^link node0-node2 *200mbit' "$T_TMP/status2" && grep -q '^link node1-node3 *20mbit' "$T_TMP/status2" || ok=0
"$EMU" link node0-node2 50mbit >/dev/null && "$EMU" link node1-node3 1gbit >/dev/null || ok=0
[ $ok -eq 1 ] && t_pass "link node0-node2 200mbit (then back), node1-node3 20mbit: both ends reshaped, listed by status" ||
	t_fail "emucluster link: $(cat "$T_TMP/status2")"
# every htb class has tbf_params' burst (at least 16 KiB), never tc's default of about one
# packet, which held a host's other links to 0.65 of their rate once one link was shaped;
# a class changed by `link` gets the queue of its new rate (node1-node3 at 1gbit: 625000 B)
ok=1
for h in node0 node1 node2 node3; do
	cls=$("$EMU" exec "$h" tc class show dev eth0 2>&1)
	[[ $h == node3 || $cls == *"htb 2:10 "* ]] || ok=0
	while read -r b; do
		awk -v b="$b" 'BEGIN { n = b + 0; if (b ~ /Kb$/) n *= 1024; if (b ~ /Mb$/) n *= 1048576; exit !(n >= 16000) }' || ok=0
	done < <(awk '/^class htb/ { for (i = 1; i < NF; i++) if ($i == "burst" || $i == "cburst") print $(i + 1) }' <<<"$cls")
done
[[ $("$EMU" exec node1 tc -d qdisc show dev eth0 2>&1) =~ bfifo\ [0-9a-f]+:\ parent\ 2:20\ limit\ (625000b|610Kb) ]] || ok=0
[ $ok -eq 1 ] && t_pass "every htb class shaped with a burst of at least 16 KiB; a changed link's queue sized for its new rate" ||
	t_fail "htb bursts or queue: $(for h in node0 node1; do "$EMU" exec "$h" tc class show dev eth0; "$EMU" exec "$h" tc qdisc show dev eth0; done 2>&1 | tr '\n' ' ')"
err_case "link with a bad rate -> exit 2" 2 "$EMU" link node0-node1 slow
err_case "link of a host outside the cluster -> exit 2" 2 "$EMU" link node0-node9 1gbit

# ---- mpirun across the hosts
if ! command -v mpirun >/dev/null 2>&1; then
	t_skip "mpirun not installed (openmpi-bin)"
else
	(cd "$T_TMP" && timeout 60 "$EMU" mpirun -np 4 hostname) >"$T_TMP/mpi.out" 2>"$T_TMP/mpi.err"
	rc=$?
	if [ $rc -eq 0 ] && [ "$(sort "$T_TMP/mpi.out" | tr '\n' ' ')" = "node0 node1 node2 node3 " ]; then
		t_pass "mpirun -np 4 hostname prints node0..node3 once each"
	else
		t_fail "mpirun -np 4 hostname (rc=$rc): $(tr '\n' ' ' <"$T_TMP/mpi.out") $(head -c 600 "$T_TMP/mpi.err")"
	fi
	# placement is read from stdout alone: a warning mpirun prints on stderr is not a rank
	out=$(timeout 60 "$EMU" mpirun --ppn 2 -np 8 hostname 2>"$T_TMP/ppn.err" | sort | uniq -c | awk '{ printf "%s:%s ", $2, $1 }')
	if [ "$out" = "node0:2 node1:2 node2:2 node3:2 " ]; then t_pass "mpirun --ppn 2 -np 8 places 2 ranks per host"; else t_fail "mpirun --ppn 2 -np 8: $out $(head -c 300 "$T_TMP/ppn.err")"; fi
	# (odls_base_sigkill_timeout 0: after a rank's non-zero exit mpirun otherwise waits ~4 s
	# before it kills ranks that already left; nothing here needs that grace)
	timeout 60 "$EMU" mpirun --mca odls_base_sigkill_timeout 0 -np 2 sh -c 'exit 3' >/dev/null 2>&1
	rc=$?
	if [ $rc -eq 3 ]; then t_pass "mpirun exit code passes through"; else t_fail "mpirun exit code: want 3, got $rc"; fi
fi
"$EMU" exec node1 sh -c 'exit 7'
rc=$?
if [ $rc -eq 7 ]; then t_pass "exec exit code passes through"; else t_fail "exec exit code: want 7, got $rc"; fi
err_case "exec on an unknown host -> exit 2" 2 "$EMU" exec node4 true

# ---- a mount namespace per host, kept while the cluster is up
"$EMU" exec node0 sh -c 'echo node0 >/tmp/emu-private' 2>"$T_TMP/err"
if [ "$("$EMU" exec node0 cat /tmp/emu-private 2>&1)" = node0 ] &&
	! "$EMU" exec node1 test -e /tmp/emu-private && [ ! -e /tmp/emu-private ]; then
	t_pass "each host has its own /tmp (a file in node0's is not on node1 nor the machine)"
else
	t_fail "private /tmp: $(cat "$T_TMP/err")"
fi
mkdir -p "$T_TMP/mnt1"
if "$EMU" exec node1 mount -t tmpfs emu-test "$T_TMP/mnt1" 2>"$T_TMP/err" &&
	"$EMU" exec node1 sh -c "echo here >'$T_TMP/mnt1/f'"; then
	if [ "$("$EMU" exec node1 cat "$T_TMP/mnt1/f" 2>&1)" = here ] && [ ! -e "$T_TMP/mnt1/f" ] &&
		! "$EMU" exec node2 test -e "$T_TMP/mnt1/f"; then
		t_pass "a mount made on node1 stays on node1 (seen by a later exec there, not by node2 or the machine)"
	else
		t_fail "mount on node1 not kept or leaked"
	fi
	if command -v mpirun >/dev/null 2>&1; then
		# the ranks' stdout alone: mpirun may warn on stderr on a loaded machine
		# ("plm:rsh: Warning: setpgid(...) failed in parent", a launch race of its own)
		out=$(cd "$T_TMP" && timeout 60 "$EMU" mpirun -np 4 sh -c \
			"printf '%s:%s\n' \$(hostname) \$(cat '$T_TMP/mnt1/f' 2>/dev/null || echo none)" 2>"$T_TMP/mpirun.err" |
			sort | tr '\n' ' ')
		if [ "$out" = "node0:none node1:here node2:none node3:none " ]; then
			t_pass "ranks see the mounts of the host they run on (mpirun)"
		else
			t_fail "ranks and host mounts: $out (stderr: $(head -c 300 "$T_TMP/mpirun.err"))"
		fi
	fi
else
	t_fail "mount in node1's namespace: $(cat "$T_TMP/err")"
fi

# ---- a bounded TCP stream between two healthy hosts (node0 -> node1) carries data
# server counts bytes after a 0.3 s warm-up; client sends for 2 s; both sides
# have hard timeouts. How fast it ran is printed, not judged (a loaded machine
# slows it; scripts/bench_netpair.sh measures it as a fraction of the rate).
PY=$(command -v python3)
if [ -z "$PY" ]; then
	t_skip "throughput: python3 not installed"
else
	best=0
	for try in 1 2 3; do # retries: a loaded machine can starve a 2 s sample
		timeout 10 "$EMU" exec node1 "$PY" "$T_ROOT/scripts/tput.py" server 198.18.0.2 $((5300 + try)) 6 >"$T_TMP/tput" 2>"$T_TMP/tput.err" &
		spid=$!
		for _ in $(seq 30); do # wait (bounded) for the listener; the client retries 5 s too
			"$EMU" exec node1 ss -Hltn "sport = :$((5300 + try))" 2>/dev/null | grep -q . && break
			sleep 0.1
		done
		timeout 8 "$EMU" exec node0 "$PY" "$T_ROOT/scripts/tput.py" client 198.18.0.2 $((5300 + try)) 2 2>>"$T_TMP/tput.err"
		wait "$spid"
		bps=$(head -n 1 "$T_TMP/tput")
		[[ $bps =~ ^[0-9]+$ ]] || bps=0
		[ "$bps" -gt "$best" ] && best=$bps
		[ "$best" -gt 0 ] && break
	done
	if [ "$best" -gt 0 ]; then
		t_pass "node0->node1 TCP stream carried data ($((best / 1000000)) Mbit/s on 1gbit; not judged)"
	else
		t_fail "node0->node1 TCP stream carried nothing in 3 tries: $(head -c 300 "$T_TMP/tput.err")"
	fi
fi

# ---- down, up again, down twice: nothing left behind
"$EMU" down && "$EMU" up 2 >/dev/null && "$EMU" down && "$EMU" down
rc=$?
if [ $rc -eq 0 ]; then t_pass "down / up 2 / down / down all succeed"; else t_fail "down/up/down/down rc=$rc"; fi
left=$(our_netns)
if [ -z "$left" ]; then t_pass "no emulated namespace left"; else t_fail "namespaces left: $left"; fi
root_net >"$T_TMP/links.after"
if cmp -s "$T_TMP/links.before" "$T_TMP/links.after"; then
	t_pass "root network namespace links, addresses, routes unchanged"
else
	t_fail "root network namespace changed: $(diff "$T_TMP/links.before" "$T_TMP/links.after" | tr '\n' ' ')"
fi
if [ ! -e /run/ccdiag-emu ]; then t_pass "state dir removed"; else t_fail "/run/ccdiag-emu still exists"; fi
if grep -qE " /run/ccdiag-emu[/ ]| $T_TMP/mnt1 " /proc/self/mountinfo; then
	t_fail "mounts left: $(grep -E " /run/ccdiag-emu[/ ]| $T_TMP/mnt1 " /proc/self/mountinfo | head -3)"
else
	t_pass "no namespace bind mount, state mount or host mount left"
fi
if pgrep -f '^ccdemu-anchor infinity$' >/dev/null; then
	t_fail "anchor process left: $(pgrep -af '^ccdemu-anchor')"
else
	t_pass "no emucluster process left"
fi
"$EMU" status >/dev/null 2>&1
rc=$?
if [ $rc -eq 1 ]; then t_pass "status after down reports nothing up (exit 1)"; else t_fail "status after down: rc=$rc"; fi

t_done
