#!/bin/bash
# The storage probe on the emulated cluster's GlusterFS volume (scripts/emucluster
# up N --storage S, docs/storage.md): healthy pass, a corrupted block, a client
# whose paths to the storage hosts are slow named as the slow node, a stalled
# brick ending in a timeout that names the ranks and hosts, and (on a cluster of
# its own) a storage host shaped low failing on write GB/s.
# Asserts behaviour, never speed: the faults are 10x or more. test_storage.sh
# has the local cases.
# shellcheck source=SCRIPTDIR/../lib.sh disable=SC1091
source "$(dirname "$0")/../lib.sh"

P=$T_ROOT/build/ccprobe
R=$T_ROOT/build/ccreport
EMU=$T_ROOT/scripts/emucluster
{ [ -x "$P" ] && [ -x "$R" ]; } || { t_fail "build/ccprobe or build/ccreport missing (make)"; t_done; exit; }

q() { jq -c "select($2)" "$1" 2>/dev/null; }

# ---- on the emulated cluster's GlusterFS volume
t_emu_suite "storage on the emulated GlusterFS volume (needs root for network namespaces)"
if ! command -v glusterd >/dev/null || ! command -v mount.glusterfs >/dev/null; then
	t_fail "GlusterFS not installed (glusterfs-server, glusterfs-client: scripts/deps.sh)"
	t_done
	exit
fi
SDIR=/run/ccdiag-emu/storage
EMUSMALL=(--storage-size 4M --storage-block 1M --storage-reps 2 --storage-files 20 --storage-reads 20)

# emu_run NAME NP [env VAR=VAL] ARGS...: the probe over the hosts; results in $T_TMP/NAME.jsonl.
# (odls_base_sigkill_timeout 0: after a rank's non-zero exit, the corrupted block's exit 1,
# mpirun otherwise waits ~4 s before it kills ranks that already left; no signal is sent here)
emu_run() {
	local name=$1 np=$2; shift 2
	timeout 300 "$EMU" mpirun --mca odls_base_sigkill_timeout 0 -np "$np" "$@" "$P" -q -o "$T_TMP/$name.jsonl" --storage-dir "$SDIR" \
		"${EMUSMALL[@]}" storage >"$T_TMP/$name.log" 2>&1
}
verdict() { # verdict NAME CRITERION: the report's verdict of one criterion (emu-1g)
	"$R" -p "$T_ROOT/profiles/emu-1g.ini" --no-render -q -o "$T_TMP/rep-$1" "$T_TMP/$1.jsonl" >/dev/null 2>&1
	jq -r --arg c "$2" '.criteria[] | select(.id == $c) | .verdict' "$T_TMP/rep-$1/summary.json"
}

if "$EMU" up 3 --storage 2 >"$T_TMP/up.log" 2>&1; then
	emu_run healthy 3
	rc=$?
	if [ $rc -eq 0 ] && q "$T_TMP/healthy.jsonl" '.test == "read" and .scope == "cluster"' |
		jq -e '.fs_type == "fuse.glusterfs" and .mount_source == "stor0:/ccdiag" and .shared == true and
		.wrong == 0 and (.reorder | test("another node"))' >/dev/null &&
		[ "$(verdict healthy storage_write):$(verdict healthy storage_read):$(verdict healthy storage_data)" = pass:pass:pass ]; then
		t_pass "GlusterFS, healthy: shared, another node's shard read and checked, write/read/data pass"
	else
		t_fail "GlusterFS healthy: exit $rc: $(tail -3 "$T_TMP/healthy.log") $(q "$T_TMP/healthy.jsonl" '.test == "read"' | head -c 300)"
		# the records that say why, for the log (it failed once on a quiet machine: rank 1, exit 1)
		q "$T_TMP/healthy.jsonl" '.type == "error" or .type == "timeout" or .type == "end"' | head -c 2000 | sed 's/^/  /'
	fi
	if [ -z "$("$EMU" exec node1 find "$SDIR" -mindepth 1 -maxdepth 1 2>&1)" ]; then
		t_pass "GlusterFS: nothing of the runs left on the volume"
	else
		t_fail "GlusterFS: left: $("$EMU" exec node1 ls -A "$SDIR" 2>&1 | head -3)"
	fi
	emu_run corrupt 3 -x CCPROBE_FAULT=storage-corrupt:2
	rc=$?
	if [ $rc -eq 1 ] && q "$T_TMP/corrupt.jsonl" '.test == "read" and .scope == "cluster"' | jq -e '.wrong >= 1' >/dev/null &&
		grep -q 'written by rank 2 on node2' "$T_TMP/corrupt.log" && [ "$(verdict corrupt storage_data)" = fail ]; then
		t_pass "GlusterFS: a corrupted block is found by the reader on another node, named, storage_data fails"
	else
		t_fail "GlusterFS corrupted block: exit $rc: $(grep -i 'match' "$T_TMP/corrupt.log" | head -2)"
	fi
	# one client's paths to both storage hosts at 5mbit (emucluster link; 1.25 MB/s in all, as
	# one 10mbit path): named as the slow node (two repetitions: the healthy nodes' rates must
	# stay clear of the outlier rule). Before the stalled server below, on the same volume.
	EMUSMALL=(--storage-size 1M --storage-block 1M --storage-reps 2 --storage-files 20 --storage-reads 10)
	if "$EMU" link node2-stor0 5mbit >/dev/null && "$EMU" link node2-stor1 5mbit >/dev/null; then
		emu_run slownode 3
		rc=$?
		verdict slownode storage_write_node >/dev/null
		# node2 is named below the bound (an element below it is a failure, not also an outlier)
		if [ $rc -eq 0 ] && jq -e '(.criteria[] | select(.id == "storage_write_node") | [.failures[].element] == ["node2"]) and
			all(.outliers[] | select(.criterion == "storage_write_node"); .element == "node2")' \
			"$T_TMP/rep-slownode/summary.json" >/dev/null; then
			t_pass "client node2 at 5mbit to both storage hosts: named, the only node below the bound (no other node an outlier)"
		else
			t_fail "degraded client: exit $rc: $(jq -c '[.criteria[] | select(.id == "storage_write_node")], .outliers' "$T_TMP/rep-slownode/summary.json" | head -c 600)"
		fi
	else
		t_fail "emucluster link node2-stor0/stor1 5mbit"
	fi
	"$EMU" link node2-stor0 1gbit >/dev/null && "$EMU" link node2-stor1 1gbit >/dev/null ||
		t_fail "emucluster link node2-stor0/stor1 back to 1gbit"
	# a stalled server: once the ranks are writing, every brick process is stopped; the run
	# must end in a timeout record naming the ranks and hosts stuck in the write
	timeout 150 "$EMU" mpirun -np 3 "$P" -q --timeout 8 -o "$T_TMP/hung.jsonl" --storage-dir "$SDIR" \
		--storage-size 1G --storage-reps 1 --storage-files 0 --storage-reads 0 storage >"$T_TMP/hung.log" 2>&1 &
	hpid=$!
	for _ in $(seq 1 200); do # bounded: until a shard is on a brick
		find /var/tmp/ccdiag-emu-bricks -name 'shard.*' -size +1M 2>/dev/null | grep -q . && break
		sleep 0.1
	done
	bricks=$(for s in stor0 stor1; do ip netns pids "$s" | while read -r p; do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = glusterfsd ] && echo "$p"; done; done | tr '\n' ' ')
	# shellcheck disable=SC2086
	[ -n "$bricks" ] && kill -STOP $bricks
	# the record is written while the server is still stalled; then let it go, so
	# that the ranks blocked in the filesystem can die
	for _ in $(seq 1 600); do
		grep -q '"type":"timeout"' "$T_TMP/hung.jsonl" 2>/dev/null && break
		sleep 0.1
	done
	# shellcheck disable=SC2086
	[ -n "$bricks" ] && kill -CONT $bricks
	wait "$hpid"
	rc=$?
	if [ -n "$bricks" ] && [ $rc -eq 4 ] && q "$T_TMP/hung.jsonl" '.type == "timeout"' | jq -e '(.name | test("write")) and
		.dir != null and (.not_done | length >= 1) and all(.not_done[]; .host | test("^node[0-2]$"))' >/dev/null; then
		t_pass "GlusterFS bricks stopped mid-write: timeout record naming the phase, directory, ranks and hosts stuck, exit 4"
	else
		t_fail "GlusterFS stalled: bricks '$bricks', exit $rc: $(q "$T_TMP/hung.jsonl" '.type == "timeout"') $(tail -3 "$T_TMP/hung.log")"
	fi
else
	t_fail "emucluster up 3 --storage 2: $(tail -5 "$T_TMP/up.log")"
fi

# the slow cases move 1 MiB shards over 10mbit (1.25 MB/s): keep them short. A storage
# host at 10mbit is judged on the aggregate write alone, which cannot pass on less data:
# one repetition and few files there
EMUSMALL=(--storage-size 1M --storage-block 1M --storage-reps 1 --storage-files 5 --storage-reads 5)
# a storage host's link shaped to 10mbit (100x below 1gbit): fails on write GB/s
if "$EMU" up 3 --storage 1:10mbit >"$T_TMP/up.log" 2>&1; then
	emu_run slowstor 3
	rc=$?
	if [ $rc -eq 0 ] && [ "$(verdict slowstor storage_write)" = fail ]; then
		t_pass "storage host at 10mbit: storage_write fails ($(jq -r '.criteria[] | select(.id == "storage_write") | .worst.value' "$T_TMP/rep-slowstor/summary.json") GB/s)"
	else
		t_fail "storage host at 10mbit: exit $rc, storage_write $(verdict slowstor storage_write)"
	fi
else
	t_fail "emucluster up 3 --storage 1:10mbit: $(tail -5 "$T_TMP/up.log")"
fi

"$EMU" down >/dev/null 2>&1
# (exited daemons may wait a moment as zombies for init to reap them: not counted)
if [ ! -e /var/tmp/ccdiag-emu-bricks ] &&
	! ps -eo stat=,comm= | awk '$1 !~ /^Z/ && ($2 == "glusterd" || $2 == "glusterfsd" || $2 == "glusterfs")' | grep -q .; then
	t_pass "down: no brick, no gluster process left"
else
	t_fail "down left gluster behind: $(pgrep -a gluster | head -3)"
fi

t_done
