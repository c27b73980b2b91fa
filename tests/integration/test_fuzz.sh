#!/bin/bash
# Runs every fuzz target built for make check (build/tests/fuzz_*) over its
# corpus (tests/fuzz/corpus/NAME) and 20000 seeded random inputs. A broken
# invariant aborts the target: that is a failure. make fuzz fuzzes longer.
source "$(dirname "$0")/../lib.sh"
found=0
for f in "$T_ROOT"/build/tests/fuzz_*; do
	[ -x "$f" ] || continue
	found=1
	n=$(basename "$f")
	if out=$("$f" -n 20000 -s 1 "$T_ROOT"/tests/fuzz/corpus/"${n#fuzz_}"/* 2>&1); then
		t_pass "$n: $out, no invariant broken"
	else
		t_fail "$n: $(printf '%s' "$out" | tail -3)"
	fi
done
[ "$found" -eq 1 ] || t_fail "no fuzz target built (make check builds build/tests/fuzz_*)"
t_done
