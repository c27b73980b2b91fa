#!/bin/bash
# The storage probe (docs/storage.md): bad directories refused with one line
# and nothing written, a healthy run on a local directory (every record, the
# data checked, nothing left), a corrupted block found, a rank killed
# mid-write leaving nothing of the run, the checkpoint estimate against a hand
# computation. The emulated cluster's GlusterFS volume: test_storage_emu.sh.
# lane: waiting (tests/run.sh: its time goes mostly to deadlines that run out, not to a CPU)
# shellcheck source=SCRIPTDIR/../lib.sh disable=SC1091
source "$(dirname "$0")/../lib.sh"

P=$T_ROOT/build/ccprobe
R=$T_ROOT/build/ccreport
MPI=(mpirun --oversubscribe)
# small and quick: 2 repetitions, few files and reads
SMALL=(--storage-size 8M --storage-block 1M --storage-reps 2 --storage-files 50 --storage-reads 50)

{ [ -x "$P" ] && [ -x "$R" ]; } || { t_fail "build/ccprobe or build/ccreport missing (make)"; t_done; exit; }

q() { jq -c "select($2)" "$1" 2>/dev/null; }
# nothing of a run left in DIR (only what the test put there)
left() { find "$1" -mindepth 1 -name 'ccdiag-storage-*' | head -3; }

# err_case DESC WANT_RC PATTERN ARGS...: one error line naming the problem, nothing written
err_case() {
	local desc=$1 want=$2 pat=$3 rc n; shift 3
	timeout 60 "${MPI[@]}" -np 2 "$P" -q -o "$T_TMP/err.jsonl" "$@" >"$T_TMP/out" 2>"$T_TMP/err"
	rc=$?
	n=$(grep -c "$pat" "$T_TMP/err")
	if [ "$rc" -eq "$want" ] && [ "$n" -eq 1 ]; then
		t_pass "$desc: exit $rc, one line"
	else
		t_fail "$desc: exit $rc (want $want), $n matching lines: $(head -c 400 "$T_TMP/err")"
	fi
}

# ---- bad directories
mkdir -p "$T_TMP/d" && touch "$T_TMP/file"
err_case "no --storage-dir" 2 'needs --storage-dir' storage
err_case "missing directory" 2 "storage directory '$T_TMP/nope': No such file or directory" \
	--storage-dir "$T_TMP/nope" storage
if [ ! -e "$T_TMP/nope" ]; then t_pass "missing directory: not created"; else t_fail "missing directory was created"; fi
err_case "not a directory" 2 "'$T_TMP/file' is not a directory" --storage-dir "$T_TMP/file" storage
err_case "block not a multiple of 4K" 2 'multiple of 4K' --storage-dir "$T_TMP/d" --storage-block 1000 storage
if t_is_root; then
	# not writable: a read-only bind mount (root passes every permission check)
	mkdir -p "$T_TMP/ro"
	if mount --bind "$T_TMP/ro" "$T_TMP/ro" && mount -o remount,bind,ro "$T_TMP/ro"; then
		err_case "read-only directory" 2 "'$T_TMP/ro' is not writable" --storage-dir "$T_TMP/ro" storage
		umount "$T_TMP/ro"
	else
		t_fail "cannot make a read-only bind mount"
	fi
	# no room: a 16 MiB tmpfs, 2 ranks x 8 MiB would leave under 5 % free
	mkdir -p "$T_TMP/small"
	if mount -t tmpfs -o size=16m ccdiag-test "$T_TMP/small"; then
		touch "$T_TMP/small/keep"
		err_case "no room" 3 "would leave under 5% free (it needs" --storage-dir "$T_TMP/small" "${SMALL[@]}" storage
		if [ "$(ls -A "$T_TMP/small")" = keep ] && q "$T_TMP/err.jsonl" '.type == "error"' | grep -q 'bytes free of'; then
			t_pass "no room: an error record, nothing written"
		else
			t_fail "no room: left $(find "$T_TMP/small" -mindepth 1 | tr '\n' ' ')"
		fi
		umount "$T_TMP/small"
	else
		t_fail "cannot mount a small tmpfs"
	fi
	# out of inodes mid-run (the room check is about bytes): ENOSPC at a create, an error
	# record per rank naming host, rank, file and errno text; what was made is removed.
	# Which create meets the ENOSPC depends on how the two ranks interleave: a file in a
	# rank's metadata directory, or the directory itself (seen under a CPU hog)
	mkdir -p "$T_TMP/inodes"
	if mount -t tmpfs -o size=64m,nr_inodes=40 ccdiag-test "$T_TMP/inodes"; then
		timeout 120 "${MPI[@]}" -np 2 "$P" -q -o "$T_TMP/enospc.jsonl" --storage-dir "$T_TMP/inodes" \
			"${SMALL[@]}" storage >"$T_TMP/enospc.log" 2>&1
		rc=$?
		if [ $rc -eq 1 ] && q "$T_TMP/enospc.jsonl" '.type == "error" and .test == "meta_create"' | jq -se 'length >= 1 and
			all(.errno == "No space left on device" and (.host | length > 0) and (.rank | type == "number") and
			(.file | test("/md\\.[01](/f\\.[0-9]+)?$")) and (.message | test("cannot create")))' >/dev/null &&
			[ -z "$(find "$T_TMP/inodes" -mindepth 1)" ]; then
			t_pass "out of inodes: ENOSPC error records name host, rank, file and errno; nothing left"
		else
			t_fail "out of inodes: exit $rc: $(q "$T_TMP/enospc.jsonl" '.type == "error"' | head -c 400) left: $(find "$T_TMP/inodes" -mindepth 1 | head -3)"
		fi
		umount "$T_TMP/inodes"
	else
		t_fail "cannot mount a tmpfs with few inodes"
	fi
else
	t_skip "read-only, full and inode-less directories (need root for the mounts)"
fi

# ---- a healthy run on a local directory
touch "$T_TMP/d/keep"
out=$T_TMP/local.jsonl
timeout 120 "${MPI[@]}" -np 2 "$P" -q -o "$out" --storage-dir "$T_TMP/d" "${SMALL[@]}" storage >"$T_TMP/local.log" 2>&1
rc=$?
tests=$(q "$out" '.type == "measurement" and .name == "storage" and .scope == "cluster"' | jq -r .test | sort | tr '\n' ' ')
if [ $rc -eq 0 ] && [ "$tests" = "meta_create meta_remove meta_stat rand_read read write " ]; then
	t_pass "local directory: exit 0, write, read, metadata and random-read records"
else
	t_fail "local directory: exit $rc, tests '$tests': $(tail -3 "$T_TMP/local.log")"
fi
if q "$out" '.test == "read" and .scope == "cluster"' | jq -e '.wrong == 0 and .bw_GBps > 0 and
	.bw_stats_GBps.n == 2 and .shared == true and (.fs_type | length > 0) and (.reorder | test("same node"))' >/dev/null &&
	q "$out" '.test == "rand_read"' | jq -e '.wrong == 0 and .lat_us.n == 100 and .lat_us.min <= .lat_us.median and
	.lat_us.median <= .lat_us.p99 and .iops > 0 and .bytes == 65536' >/dev/null; then
	t_pass "local directory: data checked (wrong 0), spread over 2 reps, latency min <= median <= p99"
else
	t_fail "local directory: read/rand_read records: $(q "$out" '.test == "read" or .test == "rand_read"' | head -c 600)"
fi
if q "$out" '.type == "inventory" and .kind == "storage"' | jq -e '.free_before_bytes > 0 and .free_after_bytes > 0 and
	.total_bytes > 0 and (.mount_point | length > 0) and (.mount_source | length > 0)' >/dev/null; then
	t_pass "local directory: filesystem type, mount source, free space before and after recorded"
else
	t_fail "local directory: inventory: $(q "$out" '.type == "inventory"')"
fi
if [ -z "$(left "$T_TMP/d")" ] && [ -e "$T_TMP/d/keep" ]; then
	t_pass "local directory: nothing of the run left, other files untouched"
else
	t_fail "local directory: left: $(left "$T_TMP/d") $(ls -A "$T_TMP/d")"
fi

# ---- the checkpoint estimate of that run against a hand computation (emu-1g: 1e6 params, every 2 min;
# summary.json keeps 6 significant digits)
"$R" -p "$T_ROOT/profiles/emu-1g.ini" --no-render -q -o "$T_TMP/rep" "$out" >/dev/null 2>&1
bw=$(q "$out" '.test == "write" and .scope == "cluster"' | jq .bw_GBps)
if jq -e --argjson bw "$bw" '.checkpoint | .made and .label == "model, not a measurement" and
	.inputs.checkpoint_bytes == 16e6 and
	((.outputs.write_s - 16e6 / ($bw * 1e9)) | fabs) < 1e-4 * .outputs.write_s and .outputs.interval_s == 120 and
	((.outputs.stall_fraction - (16e6 / ($bw * 1e9)) / (120 + 16e6 / ($bw * 1e9))) | fabs) < 1e-4 * .outputs.stall_fraction and
	(.sources.write_GBps | test("measured: storage write"))' "$T_TMP/rep/summary.json" >/dev/null &&
	jq -e '.criteria[] | select(.id == "checkpoint_stall") | .values[0].value > 0' "$T_TMP/rep/summary.json" >/dev/null; then
	t_pass "checkpoint estimate: write_s = 16 B x 1e6 / ($bw GB/s), stall = write / (120 s + write), judged"
else
	t_fail "checkpoint estimate: $(jq -c '.checkpoint' "$T_TMP/rep/summary.json" | head -c 600)"
fi
"$R" -p "$T_ROOT/profiles/emu-1g.ini" -w checkpoint_every=10 --no-render -q -o "$T_TMP/rep2" "$out" >/dev/null 2>&1
if jq -e '.checkpoint.made == false and (.checkpoint.reason | test("step time"))' "$T_TMP/rep2/summary.json" >/dev/null; then
	t_pass "checkpoint estimate in steps without a step time: not made, says why"
else
	t_fail "checkpoint in steps: $(jq -c .checkpoint "$T_TMP/rep2/summary.json")"
fi

# ---- a corrupted block (rank 1 overwrites 8 bytes of its shard after the write)
out=$T_TMP/corrupt.jsonl
CCPROBE_FAULT=storage-corrupt:1 timeout 120 "${MPI[@]}" -np 2 -x CCPROBE_FAULT "$P" -q -o "$out" \
	--storage-dir "$T_TMP/d" "${SMALL[@]}" storage >"$T_TMP/corrupt.log" 2>&1
rc=$?
if [ $rc -eq 1 ] && q "$out" '.test == "read" and .scope == "cluster"' | jq -e '.wrong == 1' >/dev/null &&
	grep -q "do not match what was written; first at offset 4194304" "$T_TMP/corrupt.log" &&
	"$R" -p "$T_ROOT/profiles/emu-1g.ini" --no-render -q -o "$T_TMP/rep3" "$out" >/dev/null 2>&1;
	jq -e '.criteria[] | select(.id == "storage_data") | .verdict == "fail"' "$T_TMP/rep3/summary.json" >/dev/null; then
	t_pass "corrupted block: wrong = 1, offset named, exit 1, storage_data fails"
else
	t_fail "corrupted block: exit $rc: $(grep -i 'match\|error' "$T_TMP/corrupt.log" | head -3)"
fi
if [ -z "$(left "$T_TMP/d")" ]; then t_pass "corrupted run: nothing left"; else t_fail "corrupted run left $(left "$T_TMP/d")"; fi

# ---- a rank killed mid-write: the others remove every file of the run
out=$T_TMP/kill.jsonl
timeout 120 "${MPI[@]}" -np 2 "$P" -q -o "$out" --storage-dir "$T_TMP/d" --storage-size 2G --storage-reps 1 \
	--storage-files 0 --storage-reads 0 storage >"$T_TMP/kill.log" 2>&1 &
mpid=$!
victim=
for _ in $(seq 1 100); do # wait (bounded) for rank 1's shard to grow
	f=$(find "$T_TMP/d" -name shard.1 -size +1M 2>/dev/null | head -1)
	if [ -n "$f" ]; then
		victim=$(pgrep -f "storage-dir $T_TMP/d --storage-size 2G" | while read -r p; do
			[ "$(tr '\0\n' '  ' <"/proc/$p/environ" 2>/dev/null | grep -o 'OMPI_COMM_WORLD_RANK=[0-9]*')" = OMPI_COMM_WORLD_RANK=1 ] && echo "$p"
		done | head -1)
		break
	fi
	sleep 0.1
done
if [ -n "$victim" ]; then
	kill -KILL "$victim"
	wait "$mpid"
	rc=$?
	if [ $rc -ne 0 ] && [ -z "$(left "$T_TMP/d")" ] && [ -e "$T_TMP/d/keep" ]; then
		t_pass "rank 1 killed mid-write: job ended (exit $rc), nothing of the run left, other files kept"
	else
		t_fail "rank killed mid-write: exit $rc, left: $(find "$T_TMP/d" -mindepth 1 | head -5 | tr '\n' ' ')"
	fi
else
	kill "$mpid" 2>/dev/null
	wait "$mpid"
	t_fail "rank killed mid-write: rank 1 never started writing: $(tail -3 "$T_TMP/kill.log")"
fi
rm -rf "${T_TMP:?}/d"/ccdiag-storage-*

t_done
