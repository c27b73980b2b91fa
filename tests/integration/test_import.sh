#!/bin/bash
# ccreport import beyond the golden cases (docs/import.md): real fio runs on this
# machine imported and judged (the units converted as fio states them, a real
# failed verify, fio's json,normal output), every importer refusing another
# tool's output with one line, and an imported provider run (nccl-tests,
# perftest and nvbandwidth logs) compared with a ccprobe run of the same
# cluster (generated: tests/report/gen_results.c) and kept beside it in the
# history. No figure is asserted beyond the conversion of the tools' own.
source "$(dirname "$0")/../lib.sh"
CCREPORT=$(realpath "${CCREPORT:-$T_ROOT/build/ccreport}")
GEN=${GEN:-$T_ROOT/build/tests/gen_results}
FIX=$T_ROOT/tests/fixtures/import
PROFILE=$T_ROOT/tests/report/compare/profile.ini
export SOURCE_DATE_EPOCH=1796018400
[ -x "$CCREPORT" ] && [ -x "$GEN" ] || { t_fail "no $CCREPORT or $GEN (make; make test-bins)"; t_done; exit; }
cd "$T_TMP" || exit 1

# one refusal: exit 2 and exactly one line on stderr, naming the file
refused() {  # refused PATTERN CMD...
	local pat=$1 rc
	shift
	"$@" >out.txt 2>err.txt
	rc=$?
	[ "$rc" -eq 2 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -qE "$pat" err.txt
}

# ---- fio, for real (Debian's fio, scripts/deps.sh) ----
if command -v fio >/dev/null; then
	mkdir -p fiodir
	fio --name=ckpt --directory="$T_TMP/fiodir" --rw=write --bs=1M --size=8M --numjobs=2 --end_fsync=1 \
		--output-format=json --output=node07.json >/dev/null 2>fio.err
	"$CCREPORT" import node07.json -o fio.jsonl >/dev/null 2>imp.err
	rc=$?
	t_check "real fio JSON (fio $(fio --version)): imported, exit $rc $(head -c 200 imp.err)" test "$rc" -eq 0
	t_check "fio: per node and cluster write records, the host named after the file" \
		jq -se '[.[] | select(.type == "measurement")] | length == 2 and all(.name == "storage" and .test == "write") and
			(map(.scope) | sort == ["cluster", "node"]) and (.[] | select(.scope == "node") | .host == "node07") and
			(.[0].ranks == 2 and .[0].bytes == 1048576)' fio.jsonl
	# bw_bytes (B/s) of each job, summed over the group's slowest runtime, GB/s = 1e9 B/s
	want=$(jq '[.jobs[].write] | (map(.io_bytes) | add) / ((map(.runtime) | max) / 1000) / 1e9' node07.json)
	t_check "fio: the node's write is its jobs' bytes over the slowest job's time, in GB/s ($want)" \
		jq -se --argjson w "$want" '.[] | select(.scope? == "node") | ((.bw_GBps - $w) / $w | fabs) < 1e-9 and
			(.job_bw_GBps | length == 2)' fio.jsonl
	kib=$(jq '.jobs[0].write.bw' node07.json)
	t_check "fio: a job's bw field is KiB/s (bw x 1024 = bw_bytes, to the KiB)" \
		jq -e --argjson k "$kib" '.jobs[0].write | (.bw_bytes - $k * 1024) | (. >= 0 and . < 1024)' node07.json

	# a real failed verify: reading back with verify= a file written without it (fio: EILSEQ)
	fio --name=ckpt --directory="$T_TMP/fiodir" --rw=read --bs=1M --size=8M --verify=crc32c --do_verify=1 \
		--output-format=json --output=node08.json >/dev/null 2>&1
	"$CCREPORT" -q --no-render -p "$T_ROOT/tests/report/cases/import-fio-pass/profile.ini" -o vrep \
		node08.json >/dev/null 2>&1
	rc=$?
	t_check "fio: a real failed verify (error $(jq '.jobs[0].error' node08.json)) fails the data check (exit $rc)" \
		jq -e '.criteria[] | select(.id == "storage_data") | .verdict == "fail" and (.reason | test("fio job"))' \
		vrep/summary.json

	# json,normal: fio's text before and after the JSON
	fio --name=ckpt --directory="$T_TMP/fiodir" --rw=read --bs=1M --size=8M --output-format=json,normal \
		>node09.log 2>&1
	t_check "fio: --output-format=json,normal (text around the JSON) imports" \
		"$CCREPORT" import node09.log -o n9.jsonl
	fio --name=ckpt --directory="$T_TMP/fiodir" --rw=read --bs=1M --size=8M --output-format=json \
		--output=twice.json >/dev/null 2>&1
	cat twice.json twice.json >twice2.json
	t_check "fio: two runs in one file refused, one line with file:line" \
		refused '^twice2\.json:[0-9]+: a second JSON document starts here' "$CCREPORT" import twice2.json -o x.jsonl
	rm -rf fiodir
else
	t_skip "fio is not installed (scripts/deps.sh installs it): the real fio runs"
fi

# ---- each importer refuses another tool's output, in one line ----
"$FIX"/mkfio.sh -j 1 -r write >fio.json
"$FIX"/mkior.sh -f text >ior.txt
"$FIX"/mknvb.sh -g 2 >nvb.txt
"$FIX"/mkdcgm.sh -g 2 >dcgm.json
"$FIX"/mkperftest.sh bw 390 --gbits >perf.txt
"$FIX"/mknccl.sh -n 1 -g 2 >nccl.log
t_check "--from fio on nvbandwidth's text: exit 2, 'not fio output ... nvbandwidth's'" \
	refused "^nvb\.txt:1: not fio output \(--from fio\): it looks like nvbandwidth's$" \
	"$CCREPORT" import --from fio nvb.txt -o x.jsonl
t_check "--from ior on fio's JSON: exit 2, one line" \
	refused "^fio\.json:1: not ior output \(--from ior\): it looks like fio's$" \
	"$CCREPORT" import --from ior fio.json -o x.jsonl
t_check "--from nvbandwidth on IOR's text: exit 2, one line" \
	refused "^ior\.txt:1: not nvbandwidth output \(--from nvbandwidth\): it looks like ior's$" \
	"$CCREPORT" import --from nvbandwidth ior.txt -o x.jsonl
t_check "--from fio on dcgmi's JSON: exit 2, one line" \
	refused "^dcgm\.json:1: not fio output" "$CCREPORT" import --from fio dcgm.json -o x.jsonl
printf 'just some notes\n' >notes.txt
t_check "a file no importer knows, given to ccreport: exit 2, the importers listed" \
	refused "^notes\.txt:1: not a ccprobe results file, nor .*fio, ior, nccl-tests, nvbandwidth" \
	"$CCREPORT" -q --no-render -p "$PROFILE" -o nrep notes.txt
# a GB/s figure nvbandwidth prints is the record's, unchanged
"$CCREPORT" import nvb.txt -o nvb.jsonl >/dev/null
t_check "nvbandwidth: the printed 55.00 GB/s of GPU 0's host-to-device copy is the record's bw_GBps" \
	jq -se '.[] | select(.test? == "h2d" and .gpu == 0) | .bw_GBps == 55 and .scope == "gpu" and .name == "pcie"' \
	nvb.jsonl

# ---- an imported provider run against a ccprobe run of the same cluster ----
mkdir -p prov
"$GEN" -n 2 -s 31 >ours.jsonl
"$FIX"/mknccl.sh -n 2 >prov/all_reduce_perf.log
"$FIX"/mkperftest.sh bw 392 --gbits >prov/ib_write_bw.txt
"$FIX"/mknvb.sh -H gpu-node01 >prov/gpu-node01.nvb.txt
"$FIX"/mknvb.sh -H gpu-node02 -e 54 >prov/gpu-node02.nvb.txt
"$CCREPORT" import prov/* -o imported >/dev/null 2>imp.err
t_check "ccreport import of the provider's four logs into a folder: $(ls imported 2>/dev/null | tr '\n' ' ')" \
	test "$(ls imported/*.jsonl 2>/dev/null | wc -l)" -eq 4
"$CCREPORT" compare -q --no-charts -p "$PROFILE" -o cmp PROVIDER=imported OURS=ours.jsonl >cmp.out 2>cmp.err
rc=$?
t_check "compare: the imported provider run beside the ccprobe run, exit $rc $(head -c 200 cmp.err)" \
	test "$rc" -eq 0 -a -s cmp/compare.json
t_check "compare: all_reduce and RDMA judged on both clusters, side by side" \
	jq -e '(.clusters | map(.name) == ["PROVIDER", "OURS"]) and
		all(.criteria[] | select(.id != "hbm_copy"); .comparable and
			all(.clusters[]; .verdict == "pass" and (.value | type) == "number"))' cmp/compare.json
# nvbandwidth copies with the copy engines only: the profiles judge hbm's copy kernel
t_check "compare: what the provider's logs cannot show (hbm's copy kernel) is incomplete, and excludes it" \
	jq -e '(.criteria[] | select(.id == "hbm_copy") | .clusters[0].verdict == "incomplete" and
		.clusters[1].verdict == "pass") and (.ranking.excluded | map(.name) == ["PROVIDER"]) and
		(.ranking.excluded[0].reason | test("hbm_copy INCOMPLETE"))' cmp/compare.json
t_check "compare: each cluster's own all_reduce set side by side in the differences" \
	jq -e 'any(.differences[]; test("PROVIDER: all_reduce busbw .* GB/s \\(OURS\\)"))' cmp/compare.json
# the provider's raw logs straight into the history, then the ccprobe run
"$CCREPORT" -q --no-render -p "$PROFILE" --history h.db --cluster lease -o r1 prov/* >/dev/null 2>&1
rc1=$?
"$CCREPORT" -q --no-render -p "$PROFILE" --history h.db --cluster lease -o r2 ours.jsonl >/dev/null 2>&1
rc2=$?
t_check "history: the imported run (incomplete: exit $rc1) and the ccprobe run (exit $rc2) appended" \
	test "$rc1" -eq 4 -a "$rc2" -eq 0 -a "$(sqlite3 h.db "select count(*) from runs where cluster = 'lease'")" -eq 2
t_check "the imported run's summary says which tools and versions its evidence came from" \
	jq -e '[.inputs[].imported | select(.) | .tool] | sort == ["nccl-tests", "nvbandwidth", "nvbandwidth", "perftest"]' \
	r1/summary.json
"$CCREPORT" history h.db --cluster lease -q -o hist >/dev/null 2>&1
rc=$?
t_check "ccreport history shows both runs of the lease (exit $rc)" \
	jq -e '.clusters | length == 1 and .[0].name == "lease" and (.[0].runs | length == 2)' hist/history.json

t_done
