#!/bin/bash
# ccreport's index.html in a real browser. Renders fixture summaries (the
# failing one and the hostile one, whose host names and messages carry
# <script>, quotes, pipes, new lines and "]]>") through a small driver
# against build/libccreport.a, and, when the engine and a hardware profile
# are there, a whole report from generated results through build/ccreport.
# Each page is opened in headless Chromium: no console message may come
# from the page (a script that ran, or a Content-Security-Policy violation,
# would log one), the screenshot must not be blank and must show the verdict
# banner's colour, and the parsed DOM must hold no <script> and every chart
# as an <svg>. Skips the browser part, with the reason, when Chromium is not
# installed (scripts/deps.sh installs it when the package is available).
source "$(dirname "$0")/../lib.sh"

FIX=$T_ROOT/tests/fixtures/report
BUILD=$T_ROOT/${B:-build}      # B=build-x: another build folder, as with make
LIB=$BUILD/libccreport.a
DRV=$T_TMP/render_summary

if [ ! -f "$LIB" ]; then
	t_skip "$LIB is not built (run make)"
	t_done
	exit
fi
if ! cc -std=gnu11 -Wall -Wextra -O1 -D_GNU_SOURCE -I"$T_ROOT/render" -o "$DRV" \
	"$T_ROOT/tests/integration/render_summary.c" "$LIB" -ljansson -linih -lm 2>"$T_TMP/cc.err"; then
	t_fail "cannot build the render driver: $(head -c 300 "$T_TMP/cc.err")"
	t_done
	exit
fi

pages=()
for f in fail hostile pass; do
	mkdir -p "$T_TMP/$f"
	if "$DRV" "$FIX/summary-$f.json" "$T_TMP/$f" 2>"$T_TMP/$f.err" &&
		[ -s "$T_TMP/$f/index.html" ] && [ -s "$T_TMP/$f/report.md" ] && [ -s "$T_TMP/$f/junit.xml" ]; then
		t_pass "rendered summary-$f.json: index.html $(stat -c %s "$T_TMP/$f/index.html") bytes, $(grep -c '^<svg' "$T_TMP/$f/index.html") charts"
	else
		t_fail "render summary-$f.json: $(head -c 300 "$T_TMP/$f.err")"
	fi
done
# the passing summary with a 100-host node-pair matrix: a heatmap drawn as one embedded PNG
python3 - "$FIX/summary-pass.json" "$T_TMP/summary-big.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
hosts = ['n%03d' % i for i in range(100)]
s['charts']['netpair'] = {'hosts': hosts, 'unit': 'Gb/s', 'matrix':
    [[None if i == j else (150.0 if 7 in (i, j) else 390.0) for j in range(100)] for i in range(100)]}
json.dump(s, open(sys.argv[2], 'w'))
EOF
mkdir -p "$T_TMP/big"
if "$DRV" "$T_TMP/summary-big.json" "$T_TMP/big" 2>"$T_TMP/big.err" && grep -q 'data:image/png;base64,' "$T_TMP/big/index.html"; then
	t_pass "rendered a summary with 100 hosts: index.html $(stat -c %s "$T_TMP/big/index.html") bytes, heatmap as an embedded PNG"
else
	t_fail "render a summary with 100 hosts: $(head -c 300 "$T_TMP/big.err")"
fi

# "NAME DIR BANNER_RGB DOM": DOM=1 also checks the page as Chromium parsed it
pages+=("fail $T_TMP/fail 176,58,46 0" "hostile $T_TMP/hostile 176,58,46 1" "big $T_TMP/big 30,132,73 1")

# the whole chain when the engine can judge generated results against a hardware profile
prof=$(ls "$T_ROOT"/profiles/h100*.ini 2>/dev/null | head -1)
gen=$T_ROOT/tests/report/gen_results.c
if [ -x "$BUILD/ccreport" ] && [ -f "$gen" ] && [ -n "$prof" ] &&
	cc -O1 -o "$T_TMP/gen_results" "$gen" 2>/dev/null; then
	"$T_TMP/gen_results" -n 4 slow=node2/gpu2:h2d:0.5 >"$T_TMP/results.jsonl" 2>"$T_TMP/gen.err"
	"$BUILD/ccreport" -q -p "$prof" -o "$T_TMP/e2e" "$T_TMP/results.jsonl" >"$T_TMP/e2e.out" 2>&1
	rc=$?
	# the injected fault: node2/gpu2 at half its PCIe bandwidth fails the run, named on the page
	if [ "$rc" -eq 1 ] && [ -s "$T_TMP/e2e/index.html" ] && grep -q 'node2/gpu2' "$T_TMP/e2e/index.html"; then
		t_pass "ccreport -p $(basename "$prof") on generated results with a slow GPU: exit 1, index.html $(stat -c %s "$T_TMP/e2e/index.html") bytes names node2/gpu2"
		pages+=("e2e $T_TMP/e2e 176,58,46 1")
	else
		t_fail "ccreport -p $(basename "$prof") on generated results with a slow GPU: exit $rc (want 1): $(head -c 300 "$T_TMP/e2e.out")"
	fi
else
	t_skip "ccreport end to end: needs build/ccreport, tests/report/gen_results.c and profiles/h100*.ini"
fi

# the estimate beside measured steps (tests/report/cases/step-measured, figures by hand in
# test_report): its section opens with the model against each step, every input and its source
if [ -x "$BUILD/ccreport" ]; then
	(cd "$T_ROOT/tests/report/cases/step-measured" &&
		"$BUILD/ccreport" -q -p ./profile.ini -o "$T_TMP/steps" results.jsonl torch.jsonl) >/dev/null 2>&1
	t_check "measured steps: the estimate section opens with them (report.md): estimated, measured, signed error, spread, inputs measured or assumed" \
		bash -c "sed -n '/^## Estimate/,/^Outputs of the model/p' '$T_TMP/steps/report.md' >'$T_TMP/steps.sec' &&
			grep -q '^| step | estimated | measured | error | spread (cv) | inputs |' '$T_TMP/steps.sec' &&
			grep -qE '^\| trainstep \(proxy, mpi, 4 ranks.*\| 1.80 s \| 1.00 s \| \+80.00% \| 5.00% \| compute 0.6 s \(measured\); overlap 66.67% \(measured, share of compute\); sync 1.60 s \(measured: all\\\\_reduce mpi' '$T_TMP/steps.sec' &&
			grep -qE '^\| torch\\\\_step \(framework, gloo.*\| 0% \| 30.00% \|.*own buckets all-reduced alone.*too noisy to compare' '$T_TMP/steps.sec' &&
			grep -q '^- trainstep: the step waits for rank 2 on node2 (its links); goodput 42.9 %; stalls: step 3 took 4 s' '$T_TMP/steps.sec'"
	t_check "measured steps: index.html has the same table, before the model's outputs" \
		bash -c "grep -q '<th>spread (cv)</th>' '$T_TMP/steps/index.html' &&
			awk '/spread \\(cv\\)/ { t = NR } /Every input of the model/ { i = NR } END { exit !(t && i && t < i) }' '$T_TMP/steps/index.html'"
fi

CHROME=$(command -v chromium || command -v chromium-browser)
if [ -z "$CHROME" ]; then
	t_skip "chromium is not installed (optional in scripts/deps.sh): pages not opened in a browser"
	t_done
	exit
fi

# chrome RUN_NAME URL ARGS...: headless, own profile, console on stderr, time-limited
chrome() {
	local name=$1 url=$2
	shift 2
	timeout 120 "$CHROME" --headless --disable-gpu --no-sandbox --no-first-run \
		--user-data-dir="$T_TMP/chrome-$name" --enable-logging=stderr --v=0 "$@" "$url" \
		2>"$T_TMP/$name.log"
}

# pixels SHOT.png RGB: "DISTINCT_COLOURS HAS_RGB" over the top 400 rows (the
# banner and the criteria table), PNG decoded with zlib only: pure Python is
# slow, and the rows below add nothing to "not blank, banner drawn"
pixels() {
	python3 - "$1" "$2" <<'EOF'
import struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
want = tuple(int(x) for x in sys.argv[2].split(','))
assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
pos, idat = 8, b''
while pos < len(data):
    n, kind = struct.unpack('>I4s', data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b'IHDR':
        w, h, depth, ctype = struct.unpack('>IIBB', body[:10])
    elif kind == b'IDAT':
        idat += body
    pos += 12 + n
assert depth == 8 and ctype in (2, 6), 'unexpected PNG format %d/%d' % (depth, ctype)
bpp = 4 if ctype == 6 else 3
raw, stride = zlib.decompress(idat), w * bpp
prev, colours, y, i = bytearray(stride), set(), 0, 0
while y < min(h, 400):
    f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
    i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b, c = prev[x], prev[x - bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp * 3):
        colours.add(bytes(line[x:x + 3]))
    prev, y = line, y + 1
print(len(colours), int(bytes(want) in colours))
EOF
}

# the console capture works: a page that logs an error is caught
printf '<!DOCTYPE html><p>x</p><script>console.error("canary-error")</script>\n' >"$T_TMP/canary.html"
chrome canary "file://$T_TMP/canary.html" --screenshot="$T_TMP/canary.png" --window-size=400,300 >/dev/null
if grep -q 'CONSOLE.*canary-error' "$T_TMP/canary.log"; then
	t_pass "chromium's console capture catches a page's console.error"
else
	t_fail "chromium's console capture caught nothing from the canary page: $(tail -c 300 "$T_TMP/canary.log")"
fi

for p in "${pages[@]}"; do
	read -r name dir rgb dom <<<"$p"
	page=$dir/index.html
	# a page from clean results holds no URI at all (the hostile one quotes some, escaped)
	if [ "$name" != hostile ]; then
		if grep -qE 'https?://' "$page"; then
			t_fail "$name: index.html holds a URI: $(grep -oE '.{30}https?://.{30}' "$page" | head -2)"
		else
			t_pass "$name: index.html holds no http:// or https:// URI"
		fi
	fi
	# one launch takes the screenshot and, where asked, dumps the parsed DOM on stdout
	dump=()
	[ "$dom" -eq 1 ] && dump=(--dump-dom)
	chrome "$name" "file://$page" --screenshot="$T_TMP/$name.png" --window-size=1280,2000 "${dump[@]}" \
		>"$T_TMP/$name.dom"
	rc=$?
	if [ "$rc" -ne 0 ] || [ ! -s "$T_TMP/$name.png" ]; then
		t_fail "$name: chromium exited $rc without a screenshot: $(tail -c 300 "$T_TMP/$name.log")"
		continue
	fi
	# console messages name their source; any from the page is a script, an error or a CSP block
	if grep 'CONSOLE' "$T_TMP/$name.log" | grep -qF "$page"; then
		t_fail "$name: console messages from the page: $(grep 'CONSOLE' "$T_TMP/$name.log" | head -3)"
	else
		t_pass "$name: no console message from index.html"
	fi
	read -r ncol has <<<"$(pixels "$T_TMP/$name.png" "$rgb" 2>"$T_TMP/$name.py")"
	if [ "${ncol:-0}" -gt 1 ] && [ "${has:-0}" -eq 1 ]; then
		t_pass "$name: screenshot 1280x2000: $ncol colours in the top 400 rows, the banner's rgb($rgb) among them"
	else
		t_fail "$name: screenshot blank or without the banner: ${ncol:-?} colours, banner ${has:-?} $(head -c 200 "$T_TMP/$name.py")"
	fi
	[ "$dom" -eq 1 ] || continue
	want=$(grep -c '^<svg' "$page")
	got=$(grep -o '<svg' "$T_TMP/$name.dom" | wc -l)
	if [ -s "$T_TMP/$name.dom" ] && ! grep -qi '<script' "$T_TMP/$name.dom" && [ "$got" -eq "$want" ]; then
		t_pass "$name: parsed page has no <script> and all $want charts as <svg>"
	else
		t_fail "$name: parsed page: $(grep -ci '<script' "$T_TMP/$name.dom") <script>, $got of $want <svg>"
	fi
done

t_done
