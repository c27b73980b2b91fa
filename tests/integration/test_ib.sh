#!/bin/bash
# tests/integration/test_ib.sh: the ib probe where there is no RDMA hardware
# (this machine, CI): without devices every rank agrees on one skip record
# "skipped: no RDMA devices" after the per-host inventory, and the run ends
# complete with exit 0; a build without verbs (make USE_VERBS=no) says "not
# built"; bad --ib-* values are usage errors; a rank that hangs in the
# probe's discovery is named by the watchdog's timeout record. With the test
# transport (CCPROBE_IB_FAKE: devices from the fixture sysfs tree, WRITEs as
# copies through shared memory) the whole probe runs: inventory, rails, GID
# choice, records, counters, the data check, a down port, a failing side
# that stops its peer, and a hang inside a step. Measurements on real
# devices: tests/rdma/run.sh.
# lane: waiting (tests/run.sh: its time goes mostly to deadlines that run out, not to a CPU)
source "$(dirname "$0")/../lib.sh"
P=$T_ROOT/build/ccprobe
NV=$T_LEAN/ccprobe

if [ ! -x "$P" ] || ! command -v jq >/dev/null; then
	t_fail "needs build/ccprobe and jq"
	t_done
	exit
fi
has_devices() { [ -n "$(ls -A /sys/class/infiniband 2>/dev/null)" ]; }
verbs_built() { "$P" --list | grep -E '^  ib ' | grep -vq 'not built'; }

# --- no devices: a skip, the inventory, a normal end
if has_devices; then
	t_skip "no-device cases: this machine has RDMA devices (tests/rdma/run.sh measures them)"
elif ! verbs_built; then
	t_skip "no-device cases: build/ccprobe was built without verbs"
else
	out=$T_TMP/nodev.jsonl
	mpirun --oversubscribe -np 3 "$P" -q -o "$out" ib >/dev/null 2>"$T_TMP/err"
	rc=$?
	t_check "no devices: exit 6, nothing measured (rc $rc)" [ "$rc" -eq 6 ]
	t_check "no devices: the skip said on stderr with its reason, then '1 of 1 probes skipped'" \
		bash -c "grep -q \"warning: probe 'ib' skipped: no RDMA devices\" '$T_TMP/err' &&
			grep -q '^ccprobe: 1 of 1 probes skipped: nothing was measured' '$T_TMP/err'"
	t_check "no devices: one skip record 'skipped: no RDMA devices'" \
		jq -e -s '[.[] | select(.type == "skip")] | length == 1 and
			(.[0].name == "ib") and (.[0].reason | startswith("skipped: no RDMA devices"))' "$out"
	t_check "no devices: an rdma inventory per host with no devices and the reason" \
		jq -e -s '[.[] | select(.type == "inventory")] | length == 1 and .[0].kind == "rdma" and
			.[0].devices == [] and .[0].rails == [] and (.[0].host | length) > 0 and
			(.[0].reason | startswith("no RDMA devices")) and (.[0].versions | type) == "object"' "$out"
	t_check "no devices: nothing measured, no error, end complete" \
		jq -e -s '([.[] | select(.type == "measurement" or .type == "error")] | length) == 0 and
			.[-1].type == "end" and .[-1].status == "complete" and .[-1].exit_code == 6' "$out"
	t_check "no devices: the header says verbs were built in" \
		jq -e -s '.[0].type == "run" and .[0].features.verbs == true' "$out"
	# one rank, and the probe beside a collective: the run goes on after the skip
	out=$T_TMP/nodev1.jsonl
	mpirun --oversubscribe -np 1 "$P" -q -o "$out" -b 8 -e 64 -n 2 -r 2 ib all_reduce \
		>/dev/null 2>&1
	rc=$?
	t_check "no devices, one rank, then all_reduce: exit 0 and the collective measured" \
		jq -e -s --argjson rc "$rc" '$rc == 0 and
			([.[] | select(.type == "skip" and .name == "ib")] | length) == 1 and
			([.[] | select(.type == "measurement" and .name == "all_reduce")] | length) == 4' "$out"
fi

# --- a rank that hangs in discovery (a wedged driver) is named
if has_devices || ! verbs_built; then
	t_skip "hang in discovery: needs a verbs build on a machine without devices"
else
	out=$T_TMP/hang.jsonl
	timeout 60 mpirun --oversubscribe -np 3 -x CCPROBE_FAULT=hang:1 "$P" --timeout 2 -q \
		-o "$out" ib >/dev/null 2>"$T_TMP/err"
	rc=$?
	t_check "hang in discovery: exit 4 (rc $rc)" [ "$rc" -eq 4 ]
	t_check "hang in discovery: timeout record names the step and rank 1 as never started" \
		jq -e -s '[.[] | select(.type == "timeout")][0] | .name == "ib discovery" and
			.deadline_s == 2 and (.not_started | map(.rank)) == [1] and
			(.not_started[0].host | length) > 0' "$out"
	t_check "hang in discovery: end record says timeout" \
		jq -e -s '.[-1].type == "end" and .[-1].status == "timeout"' "$out"
fi

# --- the test transport: the probe end to end without hardware
FIX=$T_ROOT/tests/fixtures/sysfs
FAKE=(-x CCPROBE_IB_FAKE="$FIX")
SMALL=(--ib-size 64K --ib-lat-iters 1000 --ib-lat-warmup 10 --ib-iters 20 --ib-warmup 2)
# segments of ranks killed by a timeout stay behind: remove those of dead processes
clean_shm() {
	local f pid
	for f in /dev/shm/ccdiag-ibfake-*; do
		[ -e "$f" ] || continue
		pid=${f#/dev/shm/ccdiag-ibfake-}
		pid=${pid%%-*}
		kill -0 "$pid" 2>/dev/null || rm -f "$f"
	done
}
if ! verbs_built; then
	t_skip "test transport: build/ccprobe was built without verbs"
else
	out=$T_TMP/fake.jsonl
	# --ib-devices: the fixture's InfiniBand and RoCE ports together (without it an
	# InfiniBand host's rails are its InfiniBand ports: see the HGX cases below)
	mpirun --oversubscribe -np 2 "${FAKE[@]}" "$P" -q -o "$out" "${SMALL[@]}" \
		--ib-devices mlx5_0,mlx5_1,mlx5_3,rxe0 --ib-lat-sizes 2,4096 ib >/dev/null 2>"$T_TMP/err"
	rc=$?
	t_check "fake: exit 0 (rc $rc)" [ "$rc" -eq 0 ]
	t_check "fake: inventory of the fixture: 5 devices, the ports named as rails, the others not" \
		jq -e -s '[.[] | select(.type == "inventory")] | length == 1 and .[0].transport == "fake" and
			(.[0].devices | map(.name)) == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "rxe0"] and
			.[0].rails == ["mlx5_0:1", "mlx5_1:1", "mlx5_3:1", "rxe0:1"] and
			.[0].versions["fw:mlx5_0"] == "28.39.1002" and
			(.[0].devices[2].ports | map(.rail)) == [null, null] and
			(.[0].devices[2].ports[0].state == "DOWN")' "$out"
	t_check "fake: port rates, PCIe link and the GID chosen per port" \
		jq -e -s '[.[] | select(.type == "inventory")][0].devices as $d |
			$d[0].ports[0].rate_Gbps == 400 and $d[0].ports[0].rate_GBps == 50 and
			$d[0].ports[0].width == "4X" and $d[0].ports[0].speed == "NDR" and
			$d[0].pci.current.gen == 5 and $d[0].pci.numa_node == 0 and
			$d[1].pci.downtrained == true and $d[0].ports[0].gid.type == "IB" and
			$d[1].ports[0].gid.index == 3 and $d[1].ports[0].gid.type == "RoCE v2" and
			$d[4].ports[0].gid.index == 2 and $d[4].pci == null and
			$d[2].ports[0].data_rate_Gbps == 8 and $d[0].ports[0].rate_source == "verbs" and
			$d[3].ports[0].rate_Gbps == 800 and $d[3].ports[0].speed == "XDR" and
			$d[3].ports[0].rate_source == "sysfs" and $d[3].pci.numa_node == 3' "$out"
	# elements read HOST#RANK/PORT-HOST#RANK/PORT; compared without the host name
	t_check "fake: per rail: latency at both sizes, both directions and both ways, named by rail pair" \
		jq -e -s 'def el: .element | sub("^[^#]*#"; "") | sub("-[^#/]*#"; "-");
			[.[] | select(.type == "measurement" and .scope == "rail_pair")] as $m |
			($m | length) == 20 and all($m[]; .transport == "fake" and .loopback == true) and
			([$m[] | select(.test == "write_lat") | el] | unique) ==
				["0/mlx5_0:1-1/mlx5_0:1", "0/mlx5_1:1-1/mlx5_1:1", "0/mlx5_3:1-1/mlx5_3:1",
				 "0/rxe0:1-1/rxe0:1"] and
			([$m[] | select(.test == "write_lat")] | map(.bytes) | sort) ==
				[2, 2, 2, 2, 4096, 4096, 4096, 4096] and
			([$m[] | select(.test == "write_bw_uni") | el] | sort) ==
				["0/mlx5_0:1-1/mlx5_0:1", "0/mlx5_1:1-1/mlx5_1:1", "0/mlx5_3:1-1/mlx5_3:1",
				 "0/rxe0:1-1/rxe0:1", "1/mlx5_0:1-0/mlx5_0:1", "1/mlx5_1:1-0/mlx5_1:1",
				 "1/mlx5_3:1-0/mlx5_3:1", "1/rxe0:1-0/rxe0:1"] and
			([$m[] | select(.test == "write_bw_bidir_loopback") | el] | sort) ==
				["0/mlx5_0:1-1/mlx5_0:1", "0/mlx5_1:1-1/mlx5_1:1", "0/mlx5_3:1-1/mlx5_3:1",
				 "0/rxe0:1-1/rxe0:1"]' "$out"
	t_check "fake: latency stats in us with p99.9; bandwidth in GB/s and Gb/s against the port rate" \
		jq -e -s '[.[] | select(.type == "measurement")] as $m |
			all($m[] | select(.test == "write_lat"); .lat_us.n == 1000 and .lat_us.min > 0 and
				.lat_us.min <= .lat_us.median and .lat_us.median <= .lat_us.p99 and
				.lat_us.p99 <= .lat_us.p999 and .lat_us.p999 <= .lat_us.max) and
			all($m[] | select(.test == "write_bw_uni"); .bw_GBps > 0 and
				(.bw_Gbps - 8 * .bw_GBps | fabs) < 1e-6 and .bytes == 65536 and
				.bw_stats_GBps.n == 5 and .bw_GBps == .bw_stats_GBps.median and
				(.pct_of_rate - 100 * .bw_GBps / .rate_GBps | fabs) < 1e-6) and
			([$m[] | select(.test == "write_bw_uni" and .nic == "mlx5_0:1")][0].rate_GBps == 50) and
			([$m[] | select(.test == "write_bw_uni" and .nic == "mlx5_1:1")][0].rate_GBps == 25) and
			([$m[] | select(.test == "write_bw_uni" and .nic == "mlx5_3:1")][0].rate_GBps == 100) and
			([$m[] | select(.test == "write_bw_bidir_loopback" and .nic == "mlx5_0:1")][0] |
				.rate_basis == "pcie" and .port_rate_GBps == 50 and
				(.rate_GBps * 1e4 | round) == 630154) and
			([$m[] | select(.test == "write_bw_bidir_loopback" and .nic == "rxe0:1")][0] |
				has("rate_GBps") | not)' "$out"
	# loopback against the HCA's PCIe ceiling (the fixture's Gen5 x16, 63.0 GB/s a
	# direction, 1000 times slower): both QPs share one link, so both directions
	# together never carry more than one direction of it (twice the port on main)
	out=$T_TMP/fake-pcie.jsonl
	mpirun --oversubscribe -np 2 "${FAKE[@]}" -x CCPROBE_IB_FAKE_PCIE=1000 "$P" -q -o "$out" \
		"${SMALL[@]}" --ib-lat-iters 100 --ib-devices mlx5_0 ib >/dev/null 2>&1
	rc=$?
	t_check "fake PCIe ceiling: loopback bidir is judged on the PCIe rate and stays within it (rc $rc)" \
		jq -e -s --argjson rc $rc '[.[] | select(.type == "measurement" and .test == "write_bw_bidir_loopback")] |
			$rc == 0 and length == 1 and .[0].bw_GBps > 0 and
			.[0].bw_GBps <= 1.1 * .[0].rate_GBps / 1000' "$out"
	t_check "D11 fake: port_xmit_data/port_rcv_data deltas in bytes (4-octet words x 4), unit named" \
		jq -e -s '[.[] | select(.test == "counters")] as $c |
			any($c[]; .counter_delta.port_xmit_data != null) and
			all($c[]; .counter_units.port_xmit_data == "4-octet words" and
				(.counter_delta.port_xmit_data == null or
				 .data_bytes_delta.port_xmit_data == 4 * .counter_delta.port_xmit_data))' "$out"
	t_check "fake: counters of every port, before, after and deltas" \
		jq -e -s '[.[] | select(.test == "counters")] as $c | ($c | length) == 6 and
			all($c[]; .scope == "nic") and
			($c[0].element | endswith("/mlx5_0:1")) and $c[0].counter_before.link_downed == 1 and
			$c[0].counter_delta.symbol_error == 0 and ($c[0].counter_delta | length) == 17 and
			$c[0].hw_counter_delta.rnr_nak_retry_err == 0' "$out"
	t_check "fake: GPUDirect without a GPU is one skip, no error, end complete" \
		jq -e -s '([.[] | select(.type == "skip" and .test == "gdr")] | length) == 1 and
			([.[] | select(.type == "error")] | length) == 0 and .[-1].status == "complete"' "$out"

	# an HGX node (tests/fixtures/sysfs-hgx, tests/fixtures/mkhgx.sh): IB mlx5_0,3,4,5,6,9,10,11,
	# Ethernet mlx5_1,7 up, mlx5_5 down (issue 11, D2)
	out=$T_TMP/hgx.jsonl
	mpirun --oversubscribe -np 2 -x CCPROBE_IB_FAKE="$T_ROOT/tests/fixtures/sysfs-hgx" "$P" -q \
		-o "$out" "${SMALL[@]}" --ib-lat-iters 100 ib >/dev/null 2>&1
	rc=$?
	t_check "D2 HGX rails: the 8 InfiniBand ports in PCI order (mlx5_3 before mlx5_10), no Ethernet port" \
		jq -e -s '[.[] | select(.type == "inventory")][0] |
			.rails == ["mlx5_0:1", "mlx5_3:1", "mlx5_4:1", "mlx5_5:1", "mlx5_6:1", "mlx5_9:1",
				   "mlx5_10:1", "mlx5_11:1"] and
			([.devices[] | select(.name == "mlx5_1" or .name == "mlx5_7") | .ports[0].rail] ==
				[null, null])' "$out"
	t_check "D2 HGX rails: the NDR200 storage ports run as InfiniBand are left out and listed why; 8 rails for 8 GPUs" \
		jq -e -s '[.[] | select(.type == "inventory")][0] |
			(.rails_left_out | map(.nic)) == ["mlx5_2:1", "mlx5_8:1"] and
			all(.rails_left_out[]; .data_rate_Gbps == 200 and (.reason | test("not the 400 Gb/s"))) and
			([.devices[] | select(.name == "mlx5_2" or .name == "mlx5_8") | .ports[0].rail] ==
				[null, null]) and .gpus == 8 and (has("rails_warning") | not)' "$out"
	t_check "D2 HGX rails: the down mlx5_5 stays rail 3 and fails (exit 1, rc $rc); mlx5_6 is still rail 4" \
		jq -e -s --argjson rc $rc '$rc == 1 and
			([.[] | select(.type == "error")] | length == 1 and .[0].test == "connect" and
				(.[0].message | test("port 1 of .mlx5_5. is not active"))) and
			([.[] | select(.test == "write_bw_uni") | "\(.nic) \(.rail)"] | unique) ==
				["mlx5_0:1 0", "mlx5_10:1 6", "mlx5_11:1 7", "mlx5_3:1 1", "mlx5_4:1 2",
				 "mlx5_6:1 4", "mlx5_9:1 5"]' "$out"

	t_check "D10 HGX rails: each rail's host regions bound to its NIC's NUMA node where this machine has it" \
		jq -e -s '[.[] | select(.test == "setup")] as $s | ($s | length) == 14 and
			all($s[]; .nic_numa_node != null and
				(.host_numa_node == .nic_numa_node or .host_numa_node == null) and
				.numa_local == (.host_numa_node == .nic_numa_node) and .transport == "fake") and
			([$s[] | select(.nic == "mlx5_0:1")] | all(.host_numa_node == 0))' "$out"
	# issue 31, D10: asking is not having; the NIC's Device Control bit (fixture config space) decides
	t_check "D10 HGX relaxed ordering: requested on every rail; in effect where the NIC's PCIe Device Control enables it, not on mlx5_9" \
		jq -e -s '[.[] | select(.test == "setup")] as $s | ($s | length) == 14 and
			all($s[]; .relaxed_ordering_requested == true) and
			all($s[] | select(.nic != "mlx5_9:1"); .relaxed_ordering_pcie == true and .relaxed_ordering == true) and
			([$s[] | select(.nic == "mlx5_9:1")] | length == 2 and
				all(.[]; .relaxed_ordering_pcie == false and .relaxed_ordering == false))' "$out"

	t_check "D10 relaxed ordering where the NIC's config space cannot be read: in effect unknown (null), said why" \
		jq -e -s '[.[] | select(.test == "setup")] as $s | ($s | length) > 0 and
			all($s[]; .relaxed_ordering_requested == true and .relaxed_ordering_pcie == null and
				.relaxed_ordering == null and (.relaxed_ordering_note | test("unreadable")))' "$T_TMP/fake.jsonl"

	# a down port asked for by name fails its pairs; the other rail of 3 ranks (byes) goes on
	out=$T_TMP/down.jsonl
	mpirun --oversubscribe -np 3 "${FAKE[@]}" "$P" -q -o "$out" "${SMALL[@]}" \
		--ib-devices mlx5_2:1,mlx5_0 ib >/dev/null 2>&1
	rc=$?
	t_check "fake, down port: exit 1 (rc $rc)" [ "$rc" -eq 1 ]
	t_check "fake, down port: an error per pair at connect naming the port; rail 1 measured for all 3 pairs" \
		jq -e -s '([.[] | select(.type == "error")] | length == 3 and
				all(.[]; .test == "connect" and (.message | test("port 1 of .mlx5_2. is not active")))) and
			([.[] | select(.test == "write_bw_uni")] | length == 6 and all(.[]; .rail == 1)) and
			([.[] | select(.type == "inventory")][0].rails == ["mlx5_2:1", "mlx5_0:1"]) and
			.[-1].failures == 3 and .[-1].exit_code == 1' "$out"

	# 4 ranks on one host: every pair of ranks once per rail, 3 rounds of 2 pairs taking turns
	out=$T_TMP/four.jsonl
	mpirun --oversubscribe -np 4 "${FAKE[@]}" "$P" -q -o "$out" "${SMALL[@]}" --ib-devices mlx5_0 \
		ib >/dev/null 2>&1
	rc=$?
	t_check "fake, 4 ranks: exit 0 and all 6 pairs measured once, in rounds 0-2" \
		jq -e -s --argjson rc "$rc" '$rc == 0 and
			[.[] | select(.test == "write_lat")] as $l | ($l | length) == 6 and
			($l | map(.element | sub("^[^#]*#"; "") | sub("-[^#/]*#"; "-") | .[0:1] + .[11:12]) |
				sort) == ["01", "02", "03", "12", "13", "23"] and
			($l | map(.round) | unique) == [0, 1, 2] and
			([.[] | select(.test == "write_bw_uni")] | length) == 12' "$out"

	# one side fails its ping-pong: the other stops at once, not at the watchdog's
	# deadline (600 s): waiting for it would run into the outer 120 s (exit 124)
	# and end in a timeout record (exit 4), never exit 1 with the error below
	out=$T_TMP/fail.jsonl
	timeout 120 mpirun --oversubscribe -np 2 "${FAKE[@]}" -x CCPROBE_IB_FAKE_FAIL=1:lat "$P" -q \
		-o "$out" --timeout 600 "${SMALL[@]}" --ib-devices mlx5_0 ib >/dev/null 2>&1
	rc=$?
	t_check "fake, failing side: exit 1 (rc $rc) long before the 600 s deadline, no timeout record" \
		jq -e -s --argjson rc "$rc" '$rc == 1 and ([.[] | select(.type == "timeout")] | length == 0)' "$out"
	t_check "fake, failing side: one error at write_lat with both sides' reasons, nothing measured after" \
		jq -e -s '([.[] | select(.type == "error")] | length == 1 and
				(.[0].message | test("failed at write_lat 2 B") and test("the peer gave up") and
					test("injected failure"))) and
			([.[] | select(.type == "measurement" and .scope == "rail_pair")] | length) == 0' "$out"

	# wrong data is caught by the receiver's check
	out=$T_TMP/data.jsonl
	mpirun --oversubscribe -np 2 "${FAKE[@]}" -x CCPROBE_IB_FAKE_FAIL=1:data "$P" -q -o "$out" \
		"${SMALL[@]}" --ib-devices mlx5_0 ib >/dev/null 2>&1
	rc=$?
	t_check "fake, wrong data: exit 1 and an error record naming the rail pair" \
		jq -e -s --argjson rc "$rc" '$rc == 1 and ([.[] | select(.type == "error")] | length == 1 and
			.[0].test == "data" and (.[0].message | test("bytes differ")) and
			(.[0].element | test("/mlx5_0:1-.*/mlx5_0:1$")))' "$out"

	# a rank that hangs before a bandwidth step (idle in that slot): the timeout names it
	out=$T_TMP/hang2.jsonl
	timeout 60 mpirun --oversubscribe -np 4 "${FAKE[@]}" -x CCPROBE_FAULT=hang:2:65536 "$P" -q \
		-o "$out" --timeout 3 "${SMALL[@]}" --ib-devices mlx5_0 ib >/dev/null 2>&1
	rc=$?
	clean_shm
	t_check "fake, hang in a step: exit 4 (rc $rc)" [ "$rc" -eq 4 ]
	# 4 ranks on one host: the two pairs of a round take turns (slots) on the port
	t_check "fake, hang in a step: timeout record names the step, its one pair and the hung rank" \
		jq -e -s '[.[] | select(.type == "timeout")][0] as $t |
			($t.name | test("^ib round 0 turn 0 slot [01] write_bw_uni")) and
			($t.not_started | map(.rank)) == [2] and ($t.not_done | length) == 4 and
			($t.pairs | length) == 1 and
			([.[] | select(.type == "measurement" and .scope == "rail_pair")] | length) == 0' "$out"

	# the records against the shipped GPU profiles: every ib criterion must find its
	# records (test, scope, element, metric, size, rate) and, as they come from the test
	# transport, leave them unjudged; a renamed field shows as another reason here. One
	# host is a loopback run: its bidirectional records are write_bw_bidir_loopback, so the
	# fabric's ib_write_bw_bidir has none (and a one-node run is never judged against it)
	out=$T_TMP/shapes.jsonl
	mpirun --oversubscribe -np 2 "${FAKE[@]}" "$P" -q -o "$out" --ib-iters 5 --ib-warmup 2 \
		--ib-lat-iters 1000 --ib-lat-warmup 10 ib >/dev/null 2>&1
	for prof in h100-sxm-8x-ndr400 h200-sxm-8x-ndr400 a100-sxm-8x-hdr200; do
		"$T_ROOT/build/ccreport" -p "$T_ROOT/profiles/$prof.ini" -q --no-render \
			-o "$T_TMP/rep-$prof" "$out" >/dev/null 2>&1
		rc=$?
		t_check "fake records, ccreport $prof: exit 4, every ib criterion reached and not judged" \
			jq -e --argjson rc "$rc" '$rc == 4 and
				[.criteria[] | select(.probe == "ib")] as $c | ($c | length) == 7 and
				($c | all(.verdict == "incomplete")) and
				($c | map(select(.id != "ib_write_bw_bidir")) | all(.reason |
					test("^not judged: [0-9]+ record\\(s\\) from the test transport"))) and
				($c[] | select(.id == "ib_write_bw_bidir") | .reason |
					test("^no measurement of ib write_bw_bidir"))' \
			"$T_TMP/rep-$prof/summary.json"
	done

	# a healthy rail of a one-node run as hardware shows it (440 Gb/s both ways on Gen5 x16):
	# within its PCIe bound, where against the fabric's 720 Gb/s it failed
	jq -c 'select(.type == "run" or .type == "end" or (.type == "measurement" and
		.test == "write_bw_bidir_loopback" and .nic == "mlx5_0:1")) | del(.transport) |
		if .type == "measurement" then .bw_Gbps = 440 | .bw_GBps = 55 |
			.bw_stats_GBps.median = 55 | .pct_of_rate = 100 * 55 / .rate_GBps else . end' \
		"$out" >"$T_TMP/loop.jsonl"
	"$T_ROOT/build/ccreport" -p "$T_ROOT/profiles/h100-sxm-8x-ndr400.ini" -q --no-render \
		-o "$T_TMP/rep-loop" "$T_TMP/loop.jsonl" >/dev/null 2>&1
	t_check "loopback 440 Gb/s on Gen5 x16: ib_write_bw_bidir_loopback passes, ib_write_bw_bidir has no record" \
		jq -e '[.criteria[] | select(.id | startswith("ib_write_bw_bidir"))] |
			map({(.id): .verdict}) | add == {"ib_write_bw_bidir": "incomplete",
				"ib_write_bw_bidir_loopback": "pass"}' "$T_TMP/rep-loop/summary.json"

	# an empty tree: the same skip as a machine without devices
	out=$T_TMP/empty.jsonl
	mpirun --oversubscribe -np 2 -x CCPROBE_IB_FAKE="$T_TMP" "$P" -q -o "$out" ib >/dev/null 2>&1
	t_check "fake, no devices: skip 'skipped: no RDMA devices', exit 6 (nothing measured)" \
		jq -e -s --argjson rc "$?" '$rc == 6 and
			([.[] | select(.type == "skip")][0].reason | startswith("skipped: no RDMA devices"))' "$out"
fi

# --- bad parameters are usage errors, before MPI starts
usage() {
	local desc=$1 pat=$2 rc
	shift 2
	"$P" "$@" ib >"$T_TMP/out" 2>"$T_TMP/err"
	rc=$?
	if [ "$rc" -eq 2 ] && grep -q -- "$pat" "$T_TMP/err" &&
		[ "$(grep -c '^ccprobe: error: ' "$T_TMP/err")" -eq 1 ]; then
		t_pass "usage: $desc"
	else
		t_fail "usage: $desc: exit $rc, $(head -c 200 "$T_TMP/err")"
	fi
}
usage "--ib-mem must be host or gpu" "--ib-mem takes host or gpu" --ib-mem disk
usage "--ib-lat-sizes 0" "--ib-lat-sizes takes" --ib-lat-sizes 0
usage "--ib-lat-sizes junk" "--ib-lat-sizes takes" --ib-lat-sizes 2,x
usage "--ib-gid-index 300" "--ib-gid-index takes auto or 0 to 255" --ib-gid-index 300
usage "--ib-size 0" "--ib-size must be" --ib-size 0
usage "--ib-depth 0" "--ib-depth must be" --ib-depth 0
usage "--ib-retry 8" "--ib-retry" --ib-retry 8
usage "--ib-devices mlx5_0:x" "--ib-devices takes DEV or DEV:PORT" --ib-devices mlx5_0:x
usage "--ib-devices :1" "--ib-devices takes DEV or DEV:PORT" --ib-devices mlx5_0,:1
"$P" --help | grep -q -- '--ib-lat-sizes' && t_pass "--help lists the --ib-* options" ||
	t_fail "--help lacks --ib-lat-sizes"

# --- built without verbs (build-lean: no cuBLASLt either): the probe exists and says why
if ! t_make_lean; then
	t_fail "make USE_VERBS=no USE_CUBLASLT=no failed or warned: $(grep -m3 -E 'warning|error' "$T_TMP/make.log" || tail -c 400 "$T_TMP/make.log")"
else
	t_pass "make USE_VERBS=no USE_CUBLASLT=no builds without warnings"
	"$NV" --list | grep -E '^  ib ' | grep -q 'not built: built without libibverbs' &&
		t_pass "no verbs: --list says ib is not built" || t_fail "no verbs: --list: $("$NV" --list | grep ib)"
	out=$T_TMP/noverbs.jsonl
	mpirun --oversubscribe -np 2 "$NV" -q -o "$out" ib >/dev/null 2>&1
	rc=$?
	t_check "no verbs: exit 6, nothing measured (rc $rc)" [ "$rc" -eq 6 ]
	t_check "no verbs: one skip record 'not built: ...', nothing else from ib, end complete" \
		jq -e -s '([.[] | select(.name == "ib" or .kind == "rdma")] | length) == 1 and
			([.[] | select(.type == "skip")][0].reason | startswith("not built: ")) and
			.[0].features.verbs == false and .[-1].status == "complete"' "$out"
fi

t_done
