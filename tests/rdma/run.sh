#!/bin/bash
# tests/rdma/run.sh: runs the ib probe where there are RDMA devices, or
# Soft-RoCE where the kernel has it, and prints its figures. Not part of
# `make check` (CI has no RDMA); run it by hand on a node or a pair of nodes.
#
#   tests/rdma/run.sh                        # this host: 2 ranks, loopback pairs
#   HOSTS=nodeA,nodeB PPN=8 tests/rdma/run.sh   # two nodes, 8 ranks (rails) each
#   RXE_NETDEV=eth0 tests/rdma/run.sh        # no HCA: create Soft-RoCE on eth0 (root)
#   IB_ARGS="--ib-size 1M --ib-mem gpu" tests/rdma/run.sh
#   tests/rdma/run.sh --print FILE           # only print the tables of a results file
#
# Exit 0: measured (figures printed); 77: no RDMA here (no device, and no
# kernel support for Soft-RoCE); other: ccprobe's exit code or a setup error.
set -u
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-results/rdma/ib.jsonl}
HOSTS=${HOSTS:-}
PPN=${PPN:-2}
RXE=""

say() { printf 'rdma: %s\n' "$*"; }
command -v jq >/dev/null || { say "needs jq"; exit 2; }

# table: aligns tab-separated lines into columns (no dependency on column(1))
table() {
	awk -F'\t' '{ for (i = 1; i <= NF; i++) { c[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) }
		if (NF > n) n = NF }
		END { for (r = 1; r <= NR; r++) { line = ""
			for (i = 1; i <= n; i++) line = line sprintf("%-" w[i] "s", c[r, i]) (i < n ? "  " : "")
			sub(/ +$/, "", line); print line } }'
}

print_tables() {  # print_tables FILE: the figures of a results file
	local OUT=$1
	echo
	jq -r 'select(.type == "inventory" and .kind == "rdma") | .host as $h | .devices[] | .name as $d |
		.ports[] | [$h, "\($d):\(.port)", .state, .link_layer, (.width // "-"), (.speed // "-"),
		(.rate_Gbps // "-"), (.active_mtu // "-"), (.gid.index // "-"), (.gid.type // "-"),
		(if .rail == null then "-" else .rail end)] | @tsv' "$OUT" |
		(echo -e "host\tport\tstate\tlink\twidth\tspeed\tGb/s\tmtu\tgid\tgid_type\trail"; cat) |
		table
	echo
	jq -r 'select(.type == "measurement" and .name == "ib" and (.test | startswith("write_bw"))) |
		[.test, .element, .bytes, (.bw_Gbps * 100 | round / 100), (.bw_GBps * 1000 | round / 1000),
		 (.bw_stats_GBps.min * 1000 | round / 1000), ((.pct_of_rate // null) | if . then (. * 10 | round / 10) else "-" end),
		 .memory] | @tsv' "$OUT" |
		(echo -e "test\telement\tbytes\tGb/s\tGB/s\tmin_GB/s\t%rate\tmemory"; cat) | table
	echo
	jq -r 'select(.type == "measurement" and .name == "ib" and .test == "write_lat") |
		[.element, .bytes, (.lat_us.min * 100 | round / 100), (.lat_us.median * 100 | round / 100),
		 (.lat_us.p99 * 100 | round / 100), (.lat_us.p999 * 100 | round / 100), .lat_us.n] | @tsv' "$OUT" |
		(echo -e "write_lat\tbytes\tmin_us\tmedian_us\tp99_us\tp99.9_us\tn"; cat) | table
	echo
	jq -r 'select(.type == "measurement" and .name == "ib" and .test == "gdr") |
		"gdr \(.element): \(.gdr_path // ("none: " + .reason)); GPU \(.gpu) \(.gpu_bdf) NUMA \(.gpu_numa_node), NIC NUMA \(.nic_numa_node), \(.pci_relation // "relation unknown") (\(.nic_choice // "-"))"' "$OUT"
	jq -r 'select(.type == "measurement" and .name == "ib" and .test == "setup") |
		"setup \(.element): host regions on NUMA \(.host_numa_node // "unbound") (NIC \(.nic_numa_node // "?")), relaxed ordering \(if .relaxed_ordering == null then "n/a" else .relaxed_ordering end)"' "$OUT"
	jq -r 'select(.type == "inventory" and .kind == "rdma") | .host as $h | .devices[] |
		select(.pci_path != null) |
		"pci path \($h)/\(.name): ACS redirect \(if .pci_path.acs_redirect == null then "unknown" else .pci_path.acs_redirect end), IOMMU \(.pci_path.iommu_group_type // "none")"' "$OUT"
	jq -r 'select(.type == "measurement" and .test == "counters") | .element as $e |
		(.counter_delta | to_entries[] | select((.value // 0) > 0 and (.key | test("data|packets") | not)) |
		"counter \($e) \(.key) +\(.value)")' "$OUT"
	jq -r 'select(.type == "skip" or .type == "error" or .type == "timeout") |
		"\(.type): \(.reason // .message // .name)"' "$OUT"
}

if [ "${1:-}" = --print ] && [ -n "${2:-}" ]; then
	print_tables "$2"
	exit
fi

cleanup() { [ -n "$RXE" ] && rdma link delete "$RXE" 2>/dev/null; }
trap cleanup EXIT

if [ -z "$HOSTS" ] && [ -z "$(ls -A /sys/class/infiniband 2>/dev/null)" ]; then
	# no device: Soft-RoCE needs the kernel's RDMA core, rdma_rxe and root
	if ! rdma link show >/dev/null 2>&1; then
		say "no RDMA device, and this kernel has no RDMA support ('rdma link' cannot"
		say "open its netlink socket): nothing to measure here. Run on a node with an"
		say "HCA, or where Soft-RoCE (rdma_rxe) is available."
		exit 77
	fi
	dev=${RXE_NETDEV:-$(ip -o route get 198.18.0.1 2>/dev/null | sed -n 's/.* dev \([^ ]*\).*/\1/p')}
	if [ -z "$dev" ] || [ "$(id -u)" -ne 0 ]; then
		say "no RDMA device; Soft-RoCE needs root and a network device (RXE_NETDEV=IF)"
		exit 77
	fi
	modprobe rdma_rxe 2>/dev/null
	if ! rdma link add ccdiag_rxe0 type rxe netdev "$dev"; then
		say "cannot create Soft-RoCE on '$dev' (rdma_rxe missing from this kernel?)"
		exit 77
	fi
	RXE=ccdiag_rxe0
	say "created Soft-RoCE device $RXE on $dev: figures measure the CPU, not a NIC"
fi

[ -x build/ccprobe ] || make -j2 >/dev/null || { say "build failed"; exit 2; }
build/ccprobe --list | grep -E '^  ib ' | grep -q 'not built' && {
	say "build/ccprobe was built without verbs (apt-get install libibverbs-dev librdmacm-dev)"
	exit 2
}
mkdir -p "$(dirname "$OUT")"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [ -n "$HOSTS" ]; then
	n=$(( $(tr ',' '\n' <<<"$HOSTS" | grep -c .) * PPN ))
	set -- mpirun -np "$n" -H "$(sed "s/\([^,]*\)/\1:$PPN/g" <<<"$HOSTS")" --map-by "ppr:$PPN:node"
else
	set -- mpirun --oversubscribe -np "$PPN"
fi
say "$* build/ccprobe -q -o $OUT ${IB_ARGS:-} ib"
# shellcheck disable=SC2086
"$@" build/ccprobe -q -o "$OUT" ${IB_ARGS:-} ib
rc=$?

print_tables "$OUT"
say "results in $OUT; ccprobe exit $rc"
exit "$rc"
