#!/bin/bash
# ccreport --history DB, ccreport history DB and --prom FILE (docs/history.md).
# Ten synthetic runs of one cluster, one a day, node1/gpu3's HBM drifting down
# from the seventh (x0.85, 0.7, 0.55, 0.4): drift is flagged from that run on,
# naming node1/gpu3 and nothing else, against a rolling median recomputed here
# by hand. Concurrent appends, a locked database (exit 3) and a corrupt one
# (exit 2) with the report still written. The Prometheus exposition passes
# promtool check metrics, the hostile-names case's too.
source "$(dirname "$0")/../lib.sh"
CCREPORT=$(realpath "${CCREPORT:-$T_ROOT/build/ccreport}")
GEN=${GEN:-$T_ROOT/build/tests/gen_results}
PROFILE=$T_ROOT/tests/report/compare/profile.ini
export CCREPORT_PROFILES=$T_ROOT/tests/report/profiles
export SOURCE_DATE_EPOCH=1796018400
[ -x "$CCREPORT" ] && [ -x "$GEN" ] || { t_fail "no $CCREPORT or $GEN (make)"; t_done; exit; }
cd "$T_TMP" || exit 1

factor() { case $1 in 7) echo 0.85 ;; 8) echo 0.7 ;; 9) echo 0.55 ;; 10) echo 0.4 ;; *) echo 1 ;; esac; }
rcs=""
for i in 1 2 3 4 5 6 7 8 9 10; do
	"$GEN" -n 2 -s "$i" "slow=node1/gpu3:copy:$(factor "$i")" |
		sed "1s/2026-11-30T06:00:00Z/2026-11-$((10 + i))T06:00:00Z/" >"r$i.jsonl"
	"$CCREPORT" -q --no-render -p "$PROFILE" -o "o$i" --history h.db --cluster lab "r$i.jsonl" 2>>append.err
	rcs="$rcs$? "
done
t_check "ten appends: the report's own exit codes (the last two fail hbm_copy's bound): $rcs" \
	test "$rcs" = "0 0 0 0 0 0 0 0 1 1 " -a ! -s append.err
t_check "the database holds 10 runs, 40 criteria rows and 16 GPUs x 10 runs of hbm_copy" \
	test "$(sqlite3 h.db 'select count(*) from runs; select count(*) from criteria;
		select count(*) from element_values where criterion = "hbm_copy"' | tr '\n' ' ')" = "10 40 160 "

"$CCREPORT" history h.db --cluster lab -o hist >hist.out 2>hist.err
rc=$?
t_check "history: exit 1 (drift flagged), history.json, .md, .html written" \
	test "$rc" -eq 1 -a -s hist/history.json -a -s hist/history.md -a -s hist/history.html
t_check "history.md and the terminal give the tolerance in the unit -t takes (5 %, not 0.05)" \
	bash -c "grep -q 'by more than the tolerance (5 %)' hist/history.md && ! grep -q 'tolerance (0.05)' hist/history.md hist/history.html"
t_check "drift: runs 7 to 10 of hbm_copy, every one naming node1/gpu3 on node1, nothing else flagged" \
	jq -e '.clusters[0].drift | length == 4 and all(.criterion == "hbm_copy" and .element == "node1/gpu3" and
		.host == "node1") and .[0].time_utc == "2026-11-17T06:00:00Z"' hist/history.json
# by hand: node1/gpu3's plateau value is the median of its (up to) three largest sizes; the
# rolling median of runs 2..6 (the last k = 5 before run 7)
vals=()
for i in 2 3 4 5 6 7; do
	vals+=("$(jq -s '[.[] | select(.name == "hbm" and .element == "node1/gpu3")] | sort_by(.bytes) | .[-3:] |
		map(.bw_GBps) | sort | .[(length - 1) / 2 | floor]' "r$i.jsonl")")
done
med=$(printf '%s\n' "${vals[@]:0:5}" | sort -g | sed -n 3p)
v7=${vals[5]}
t_check "drift by hand: run 7 $v7 GB/s against the rolling median $med GB/s of runs 2..6" \
	jq -e --argjson m "$med" --argjson v "$v7" '.clusters[0].drift[0] |
		((.rolling_median - $m) | fabs) < 0.05 and ((.value - $v) | fabs) < 0.05 and
		((.worse_pct - 100 * ($m - $v) / $m) | fabs) < 0.01' hist/history.json
t_check "the terminal names the drifting GPU" grep -q '^  DRIFT hbm_copy node1/gpu3 (host node1) at 2026-11-17' hist.out
if command -v gnuplot >/dev/null; then
	t_check "history: one chart per criterion over time" test -s hist/chart-history-1.svg -a -s hist/chart-history-4.svg
fi
# the first six runs only: nothing drifts
for i in 1 2 3 4 5 6; do "$CCREPORT" -q --no-render -p "$PROFILE" -o "s$i" --history steady.db "r$i.jsonl"; done
"$CCREPORT" history -q steady.db >/dev/null 2>&1
rc=$?
t_check "six steady runs (noise 1 %, tolerance 5 %): no drift, exit 0" test $rc -eq 0

# concurrent writers: eight reports at once append eight runs, the database intact
pids=()
for i in 1 2 3 4 5 6 7 8; do
	"$CCREPORT" -q --no-render -p "$PROFILE" -o "c$i" --history c.db --cluster "c$i" "r$i.jsonl" 2>"c$i.err" &
	pids+=($!)
done
crc=0
for p in "${pids[@]}"; do wait "$p"; r=$?; [ "$r" -le 1 ] || crc=$r; done
t_check "eight concurrent appends: none failed ($crc), 8 runs with 4 criteria each, integrity_check ok" \
	test "$crc" -eq 0 -a "$(sqlite3 c.db 'select count(*) from runs; select count(*) from criteria; pragma integrity_check' |
		tr '\n' ' ')" = "8 32 ok "

# a locked database: another writer holds it past the busy timeout -> exit 3, the report written
sqlite3 l.db 'create table t(x)'
# the holder reads its commands from a FIFO held open here: it keeps the lock until
# the FIFO closes, then sees end of input and exits (no sleep to wait out). It waits
# out the probe below's brief lock (.timeout) instead of losing its BEGIN to it,
# which left the database unlocked and the case passing ccreport through.
mkfifo hold.fifo
sqlite3 l.db <hold.fifo &
holder=$!
exec 9>hold.fifo
printf '.timeout 20000\nBEGIN EXCLUSIVE;\ninsert into t values(1);\n' >&9
for _ in $(seq 300); do
	sqlite3 l.db 'BEGIN IMMEDIATE; ROLLBACK;' 2>/dev/null || break
	sleep 0.1
done
CCREPORT_BUSY_TIMEOUT_MS=200 "$CCREPORT" -q -p "$PROFILE" -o locked --history l.db r1.jsonl 2>locked.err
rc=$?
exec 9>&-
wait "$holder" 2>/dev/null
t_check "locked: exit 3, one line '$(cat locked.err)', summary.json and index.html still written" \
	test "$rc" -eq 3 -a "$(wc -l <locked.err)" -eq 1 -a -s locked/summary.json -a -s locked/index.html
grep -q 'l.db: cannot append to the history: the database is locked' locked.err ||
	t_fail "locked: the message does not name the database and the lock: $(cat locked.err)"

# a corrupt database: exit 2, the report written
head -c 8192 /dev/urandom >bad.db
"$CCREPORT" -q --no-render -p "$PROFILE" -o corrupt --history bad.db r1.jsonl 2>corrupt.err
rc=$?
t_check "corrupt: exit 2, one line '$(cat corrupt.err)', summary.json still written" \
	test "$rc" -eq 2 -a "$(wc -l <corrupt.err)" -eq 1 -a -s corrupt/summary.json
"$CCREPORT" history bad.db >/dev/null 2>corrupt2.err
rc=$?
t_check "history of a corrupt database: exit 2, one line" test $rc -eq 2 -a "$(wc -l <corrupt2.err)" -eq 1
"$CCREPORT" history nope.db >/dev/null 2>missing.err
rc=$?
t_check "history of a missing database: exit 2, '$(cat missing.err)'" test $rc -eq 2 -a "$(wc -l <missing.err)" -eq 1
sqlite3 v9.db 'pragma user_version = 9; create table runs(x)'
"$CCREPORT" history v9.db >/dev/null 2>v9.err
t_check "another schema: exit 2, '$(cat v9.err)'" grep -q 'history schema 9 (ccreport reads schema 1)' v9.err

# hostile schemas: SQLite runs what the database's schema says, so none of it may differ from ours
hostile() {  # hostile DESC PATTERN SQL: a schema-1 database built by SQL, read and appended to
	local desc=$1 pat=$2 rc1 rc2
	rm -f hv.db
	sqlite3 hv.db "$3" || { t_fail "hostile schema, $desc: sqlite3 could not build it"; return; }
	timeout 30 "$CCREPORT" history -q -o hvo hv.db >/dev/null 2>hv.err
	rc1=$?
	timeout 30 "$CCREPORT" -q --no-render -p "$PROFILE" -o hva --history hv.db r1.jsonl 2>hva.err
	rc2=$?
	if [ "$rc1" -eq 2 ] && [ "$rc2" -eq 2 ] && [ "$(wc -l <hv.err)" -eq 1 ] && grep -q -- "$pat" hv.err &&
		grep -q -- "$pat" hva.err && [ -s hva/summary.json ]; then
		t_pass "hostile schema, $desc: read and append exit 2 at once, '$(cat hv.err)'"
	else
		t_fail "hostile schema, $desc: exit $rc1 (read), $rc2 (append; 124: hung), '$(head -c 300 hv.err)'"
	fi
}
hostile "runs a recursive view (never returns)" "its schema is not ccreport's ('runs' is a view" \
	"$(sqlite3 h.db .schema | sed -E 's/CREATE TABLE runs\(.*/CREATE VIEW runs AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT x AS id, '"'"'lab'"'"' AS cluster, '"'"''"'"' AS time_utc, NULL AS generated_utc, NULL AS profile, NULL AS verdict, NULL AS exit_code, NULL AS nodes, NULL AS run_ids FROM r;/; /sqlite_sequence|runs_by_cluster/d'); PRAGMA user_version = 1;"
hostile "a trigger on criteria" "its schema is not ccreport's (it holds a trigger ('t')" \
	"$(sqlite3 h.db .schema | grep -v sqlite_sequence); CREATE TRIGGER t AFTER INSERT ON criteria BEGIN DELETE FROM runs; END; PRAGMA user_version = 1;"
hostile "runs without its index" "its schema is not ccreport's ('runs_by_cluster' is missing)" \
	"$(sqlite3 h.db .schema | grep -v -e sqlite_sequence -e runs_by_cluster); PRAGMA user_version = 1;"
t_check "a history read stops at its deadline (\$CCREPORT_HISTORY_DEADLINE_S): exit 2, one line" \
	bash -c 'CCREPORT_HISTORY_DEADLINE_S=0.000001 "$0" history -q -o hdl h.db 2>hdl.err; [ $? -eq 2 ] &&
		[ "$(wc -l <hdl.err)" -eq 1 ] && grep -q "ran past the deadline" hdl.err' "$CCREPORT"
"$CCREPORT" history -q -o hok h.db >/dev/null 2>hok.err
t_check "the history of ccreport's own schema still reads (exit $?: drift)" test $? -le 1 -a ! -s hok.err

# Prometheus: textfile-collector exposition, atomic, valid for promtool
"$CCREPORT" -q --no-render -p "$PROFILE" -o p10 --prom run.prom r10.jsonl
t_check "--prom: the failing run's verdict gauge (3 = fail) and node1/gpu3 as hbm_copy's worst element" \
	bash -c 'grep -q "^ccdiag_verdict{profile=\"compare-test\",verdict=\"fail\"} 3$" run.prom &&
		grep -q "^ccdiag_criterion_worst{criterion=\"hbm_copy\",element=\"node1/gpu3\",host=\"node1\",unit=\"GB/s\"} " run.prom'
t_check "--prom: no temporary file left beside it" test "$(ls run.prom* | wc -l)" -eq 1
HN=$T_ROOT/tests/report/cases/hostile-names
(cd "$HN" && "$CCREPORT" -q --no-render -p test-emu-1g -o "$T_TMP/hn" --prom "$T_TMP/hostile.prom" results.jsonl)
t_check "--prom of the hostile-names case: every line a comment or one sample (no name broke a line)" \
	bash -c '! grep -vE "^(# (HELP|TYPE) ccdiag_[a-z_]+ .*|ccdiag_[a-z_]+\{.*\} [-0-9.e+]+)$" hostile.prom'
if command -v promtool >/dev/null; then
	t_check "promtool check metrics accepts the run's exposition" bash -c 'promtool check metrics <run.prom'
	t_check "promtool check metrics accepts the hostile-names exposition" bash -c 'promtool check metrics <hostile.prom'
else
	t_skip "promtool (Debian's prometheus) is not installed: exposition not validated"
fi
# a symlink planted where the temporary file goes (NAME.tmp-PID; exec keeps the PID) is not followed
echo precious >victim
bash -c 'ln -s victim planted.prom.tmp-$$ && exec "$0" -q --no-render -p "$1" -o p12 --prom planted.prom "$2"' \
	"$CCREPORT" "$PROFILE" r10.jsonl 2>planted.err
rc=$?
t_check "--prom beside a planted symlink: exit $rc (the run fails), the symlink's target untouched, the exposition written" \
	bash -c '[ $0 -eq 1 ] && [ "$(cat victim)" = precious ] && grep -q "^ccdiag_verdict{" planted.prom &&
		[ ! -L planted.prom ]' "$rc"
"$CCREPORT" -q --no-render -p "$PROFILE" -o p11 --prom /nonexistent/dir/x.prom r1.jsonl 2>prom.err
rc=$?
t_check "--prom into a folder that does not exist: exit 3, one line, summary.json written" \
	test $rc -eq 3 -a "$(wc -l <prom.err)" -eq 1 -a -s p11/summary.json

# hostile names in the history: the cluster name stays text
"$CCREPORT" -q --no-render -p "$PROFILE" -o hx --history hx.db --cluster '<script>x</script>|*a*' r1.jsonl
"$CCREPORT" history -q -o hxo hx.db
t_check "hostile cluster name: escaped in history.html and history.md" \
	bash -c '! grep -qi "<script" hxo/history.html && grep -q "&lt;script&gt;x" hxo/history.html &&
		grep -qF "\|\*a\*" hxo/history.md'
t_chrome_check history hist/history.html
t_done
