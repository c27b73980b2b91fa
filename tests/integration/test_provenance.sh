#!/bin/bash
# Provenance (docs/provenance.md): the MANIFEST ccdiag run writes (every phase file, log and
# summary.json with its SHA-256, as sha256sum -c reads it; tool versions, hosts, times, the
# customer's nonce, which also lands in every phase's header, not-run phases included, each
# with a run id of its own), ccdiag sign / verify over it with a throwaway OpenSSH key, and
# the commands a customer runs without ccdiag (ssh-keygen -Y verify, sha256sum -c). Runs on
# this host; the spot-check is in test_spotcheck_emu.sh.
source "$(dirname "$0")/../lib.sh"
D=$T_ROOT/build/ccdiag
P=$T_ROOT/build/ccprobe
R=$T_ROOT/build/ccreport
FX=$T_ROOT/tests/fixtures/ccdiag
cd "$T_TMP" || exit 1
for tool in ssh-keygen sha256sum jq; do
	command -v "$tool" >/dev/null || { t_fail "needs $tool"; t_done; exit; }
done

NONCE=c0ffee-4f2a.2026/12:04+x=
# ---- a run: MANIFEST and nonce
out=$T_TMP/run
"$D" run -q -p "$FX/local-data.ini" -o "$out" --nonce "$NONCE" >"$T_TMP/run.out" 2>"$T_TMP/run.err"
rc=$?
t_check "run with --nonce: exit 0 (was $rc), the MANIFEST said" \
	bash -c "[ $rc -eq 0 ] && [ -s '$out/MANIFEST' ] && grep -q '^ccdiag: manifest: $out/MANIFEST' '$T_TMP/run.out'"
t_check "MANIFEST: every phase file and log, and report/summary.json, with its SHA-256" \
	bash -c "cd '$out' && [ \$(grep -cE '^[0-9a-f]{64}  (phase-[12]-(pairs|collectives-mpi)\.(jsonl|log)|report/summary\.json)$' MANIFEST) -eq 5 ]"
t_check "MANIFEST: sha256sum -c reads it (its # lines are skipped) and every file is OK" \
	bash -c "cd '$out' && sha256sum --strict -c MANIFEST >'$T_TMP/sum.out' 2>&1 && [ \$(grep -c ': OK$' '$T_TMP/sum.out') -eq 5 ]"
t_check "MANIFEST: tool versions and commit, profile, run id, nonce, hosts planned and actual, start and end" \
	bash -c "cd '$out' && grep -qx '# tool: ccdiag [0-9.]*' MANIFEST && grep -qE '^# commit: ([0-9a-f]{12}(-dirty)?|unknown)$' MANIFEST &&
		grep -q '^# ccprobe: ccprobe ' MANIFEST && grep -q '^# ccreport: ccreport ' MANIFEST &&
		grep -qx '# profile: local-data' MANIFEST && grep -qE '^# profile_sha256: [0-9a-f]{64}$' MANIFEST &&
		grep -qE '^# run_id: [0-9a-f]{16}$' MANIFEST && grep -qxF '# nonce: $NONCE' MANIFEST &&
		grep -qx '# hosts_planned: $(hostname)' MANIFEST && grep -qx '# hosts_actual: $(hostname)' MANIFEST &&
		grep -qE '^# start: 20[0-9-]{8}T[0-9:]{8}Z$' MANIFEST && grep -qE '^# end: 20[0-9-]{8}T[0-9:]{8}Z$' MANIFEST"
t_check "every phase's header carries the nonce as given" \
	bash -c "[ \$(jq -r --arg n '$NONCE' 'select(.type == \"run\") | .nonce == \$n' '$out'/phase-*.jsonl | grep -c true) -eq 2 ]"

# ---- phases not run: a run id of their own (never zeros, never shared) and the nonce
out2=$T_TMP/notrun
"$D" run -q -p "$FX/local-data.ini" -o "$out2" --nonce "$NONCE" -- --no-such-option >"$T_TMP/nr.out" 2>&1
rc=$?
ids=$(jq -r 'select(.type == "run") | .run_id' "$out2"/phase-*.jsonl | sort -u | tr "\n" " ")
t_check "phases not run: each a distinct 16-hex run id, not zeros ($(echo $ids))" \
	bash -c "[ \$(jq -s '[.[] | select(.type == \"end\" and .status == \"not_run\")] | length' '$out2'/phase-*.jsonl) -eq 2 ] &&
		[ \$(printf '%s\n' $ids | grep -cE '^[0-9a-f]{16}$') -eq 2 ] && ! printf '%s\n' $ids | grep -qx 0000000000000000"
t_check "phases not run: the nonce and ccdiag's run id in their headers, ccreport reads them (exit 4, was $rc)" \
	bash -c "[ $rc -eq 4 ] && [ \$(jq -r --arg n '$NONCE' 'select(.type == \"run\") | .nonce == \$n and (.ccdiag_run_id | test(\"^[0-9a-f]{16}$\"))' '$out2'/phase-*.jsonl | grep -c true) -eq 2 ] &&
		grep -qE '^# run_id: ' '$out2/MANIFEST'"

# the framework's phase (workloads/torch_step.py, not ccprobe) is given the nonce too
"$D" run -p emu-1g --emulated 3 --dry-run -o "$T_TMP/drynonce" --nonce "$NONCE" >"$T_TMP/dn.out" 2>&1
rc=$?
t_check "dry run of a profile with a [workload]: the train phase's torch_step.py gets --nonce (exit $rc)" \
	bash -c "[ $rc -eq 0 ] && grep -A1 '^  phase 5/5 train ' '$T_TMP/dn.out' | grep -q 'launch: .*torch_step.py .*--nonce $NONCE '"

# ---- bad nonces: one line, exit 2, nothing run
"$D" run -p "$FX/local-data.ini" -o "$T_TMP/bad" --nonce 'a b' >"$T_TMP/bn.out" 2>"$T_TMP/bn.err"
rc=$?
t_check "ccdiag --nonce with a space: exit 2, one line, nothing run" \
	bash -c "[ $rc -eq 2 ] && [ \$(wc -l <'$T_TMP/bn.err') -eq 1 ] && grep -q 'invalid value .* for --nonce' '$T_TMP/bn.err' && [ ! -e '$T_TMP/bad' ]"
"$P" --nonce "$(printf 'x%.0s' $(seq 1 129))" --list >/dev/null 2>"$T_TMP/pn.err"
rc=$?
t_check "ccprobe --nonce of 129 characters: exit 2 (was $rc), one line" \
	bash -c "[ $rc -eq 2 ] && grep -q 'invalid value .* for --nonce' '$T_TMP/pn.err'"

# ---- sign and verify with a throwaway key
ssh-keygen -q -t ed25519 -N '' -C provider@example -f "$T_TMP/key" </dev/null
printf 'provider@example namespaces="ccdiag" %s\n' "$(cut -d' ' -f1,2 "$T_TMP/key.pub")" >"$T_TMP/allowed"
ssh-keygen -q -t ed25519 -N '' -C other@example -f "$T_TMP/other" </dev/null
"$D" sign "$out" -f "$T_TMP/key" >"$T_TMP/sign.out" 2>&1
rc=$?
t_check "sign: exit 0 (was $rc), MANIFEST.sig written" bash -c "[ $rc -eq 0 ] && [ -s '$out/MANIFEST.sig' ]"
# verify DIR ARGS...: its output in $T_TMP/v.out, exit code in $rc
verify() { local d=$1; shift; "$D" verify "$d" "$@" >"$T_TMP/v.out" 2>&1; rc=$?; }
verify "$out" -f "$T_TMP/allowed" -I provider@example --nonce "$NONCE"
t_check "verify a good run: exit 0 (was $rc), the signature good, the nonce everywhere" \
	bash -c "[ $rc -eq 0 ] && grep -q 'Good \"ccdiag\" signature for provider@example' '$T_TMP/v.out' && grep -q 'verify: OK' '$T_TMP/v.out'"
verify "$out"
t_check "verify without the allowed signers: the files match, the signature not checked: exit 4 (was $rc)" \
	bash -c "[ $rc -eq 4 ] && grep -q 'signature was not checked' '$T_TMP/v.out'"
verify "$out" -f "$T_TMP/allowed" -I provider@example --nonce other-nonce
t_check "verify with another nonce: exit 1 (was $rc), each file named" \
	bash -c "[ $rc -eq 1 ] && grep -q 'FAIL nonce: the MANIFEST' '$T_TMP/v.out' && [ \$(grep -c 'FAIL phase-.*nonce' '$T_TMP/v.out') -eq 2 ]"
# the commands a customer runs without ccdiag (docs/provenance.md)
t_check "without ccdiag: ssh-keygen -Y verify and sha256sum -c pass on the good run" \
	bash -c "cd '$out' && ssh-keygen -Y verify -f '$T_TMP/allowed' -I provider@example -n ccdiag -s MANIFEST.sig <MANIFEST >/dev/null 2>&1 &&
		sha256sum -c MANIFEST >/dev/null"

# an edited phase file: the signature still holds (the MANIFEST is unchanged), the file does not
cp -a "$out" "$T_TMP/edit1"
sed -i 's/"type":"run",/"type":"run","edited":1,/' "$T_TMP/edit1/phase-2-collectives-mpi.jsonl"
verify "$T_TMP/edit1" -f "$T_TMP/allowed" -I provider@example
t_check "an edited phase file: exit 1 (was $rc), one clear line naming it" \
	bash -c "[ $rc -eq 1 ] && grep -q '^ccdiag: verify: FAIL phase-2-collectives-mpi.jsonl: SHA-256 .* differs from the manifest' '$T_TMP/v.out' &&
		[ \$(grep -c 'FAIL ' '$T_TMP/v.out') -eq 1 ]"
t_check "an edited phase file: sha256sum -c says FAILED too" \
	bash -c "cd '$T_TMP/edit1' && ! sha256sum -c MANIFEST >'$T_TMP/s.out' 2>&1 && grep -q 'phase-2-collectives-mpi.jsonl: FAILED' '$T_TMP/s.out'"
"$D" sign "$T_TMP/edit1" -f "$T_TMP/key" >"$T_TMP/sign2.out" 2>&1
rc=$?
t_check "sign refuses a folder whose files no longer match: exit 1 (was $rc)" \
	bash -c "[ $rc -eq 1 ] && grep -q 'not signed' '$T_TMP/sign2.out'"

# an edited MANIFEST (its digest made to match the edited file): the signature fails
cp -a "$T_TMP/edit1" "$T_TMP/edit2"
h=$(sha256sum "$T_TMP/edit2/phase-2-collectives-mpi.jsonl" | cut -c1-64)
sed -i "s/^[0-9a-f]\{64\}  phase-2-collectives-mpi.jsonl$/$h  phase-2-collectives-mpi.jsonl/" "$T_TMP/edit2/MANIFEST"
verify "$T_TMP/edit2" -f "$T_TMP/allowed" -I provider@example
t_check "an edited MANIFEST: exit 1 (was $rc), the signature fails, said in one line" \
	bash -c "[ $rc -eq 1 ] && grep -q '^ccdiag: verify: FAIL signature: ssh-keygen -Y verify: .*incorrect signature' '$T_TMP/v.out'"
t_check "an edited MANIFEST: ssh-keygen -Y verify alone fails too" \
	bash -c "cd '$T_TMP/edit2' && ! ssh-keygen -Y verify -f '$T_TMP/allowed' -I provider@example -n ccdiag -s MANIFEST.sig <MANIFEST >/dev/null 2>&1"
# signed by another key; re-signed by the provider, verify passes again
cp -a "$out" "$T_TMP/other-key"
"$D" sign "$T_TMP/other-key" -f "$T_TMP/other" >/dev/null 2>&1
verify "$T_TMP/other-key" -f "$T_TMP/allowed" -I provider@example
t_check "signed by a key not in allowed_signers: exit 1 (was $rc)" bash -c "[ $rc -eq 1 ] && grep -q 'FAIL signature' '$T_TMP/v.out'"
# a results file added after the MANIFEST: ccreport DIR/phase-*.jsonl would read it
cp -a "$out" "$T_TMP/added"
cp "$out/phase-1-pairs.jsonl" "$T_TMP/added/phase-3-extra.jsonl"
verify "$T_TMP/added" -f "$T_TMP/allowed" -I provider@example
t_check "a phase file not in the MANIFEST: exit 1 (was $rc), named" \
	bash -c "[ $rc -eq 1 ] && grep -q 'FAIL phase-3-extra.jsonl: not in the MANIFEST' '$T_TMP/v.out'"
# a listed file removed; a malformed line; a FIFO in place of the MANIFEST
cp -a "$out" "$T_TMP/gone"
rm "$T_TMP/gone/report/summary.json"
verify "$T_TMP/gone"
t_check "a listed file missing: exit 1 (was $rc), named" bash -c "[ $rc -eq 1 ] && grep -q 'FAIL report/summary.json: missing' '$T_TMP/v.out'"
cp -a "$out" "$T_TMP/bad"
echo '0123  ../../etc/passwd' >>"$T_TMP/bad/MANIFEST"
verify "$T_TMP/bad"
t_check "a malformed MANIFEST line: exit 2 (was $rc), file and line named" \
	bash -c "[ $rc -eq 2 ] && [ \$(wc -l <'$T_TMP/v.out') -eq 1 ] && grep -qE 'MANIFEST:[0-9]+: not a .SHA256  NAME. line' '$T_TMP/v.out'"
sed -i '$d' "$T_TMP/bad/MANIFEST"
printf '%064d  ../outside\n' 0 >>"$T_TMP/bad/MANIFEST"
verify "$T_TMP/bad"
t_check "a MANIFEST naming a file outside the folder: exit 2 (was $rc)" \
	bash -c "[ $rc -eq 2 ] && grep -q 'is not one a manifest may hold' '$T_TMP/v.out'"
mkdir -p "$T_TMP/fifo" && mkfifo "$T_TMP/fifo/MANIFEST"
timeout 20 "$D" verify "$T_TMP/fifo" >"$T_TMP/v.out" 2>&1
rc=$?
t_check "a FIFO for a MANIFEST: refused at once, exit 2 (was $rc)" \
	bash -c "[ $rc -eq 2 ] && grep -q 'not a regular file' '$T_TMP/v.out'"
verify "$T_TMP/nosuch"
t_check "verify of a folder that does not exist: exit 2 (was $rc)" bash -c "[ $rc -eq 2 ]"

# ---- spot-check's bad input (its runs are in test_spotcheck_emu.sh): one line, exit 2, nothing run
sc() { "$D" spot-check -p "$FX/netpair-only.ini" "$@" >"$T_TMP/sc.out" 2>&1; rc=$?; }
sc -H a,b
t_check "spot-check without --against: exit 2 (was $rc), one line" \
	bash -c "[ $rc -eq 2 ] && [ \$(wc -l <'$T_TMP/sc.out') -eq 1 ] && grep -q 'needs --against DIR' '$T_TMP/sc.out'"
sc --against "$T_TMP/nosuch" -H a,b
t_check "spot-check of a folder that does not exist: exit 2 (was $rc)" \
	bash -c "[ $rc -eq 2 ] && grep -q 'is not a folder' '$T_TMP/sc.out'"
sc --against "$out"
t_check "spot-check without the received run's hosts (this host alone): exit 2 (was $rc)" \
	bash -c "[ $rc -eq 2 ] && grep -q 'runs on the received run.s hosts' '$T_TMP/sc.out'"
sc --against "$out" -H a,b --tol 0%
t_check "spot-check --tol 0%: exit 2 (was $rc)" bash -c "[ $rc -eq 2 ] && grep -q 'invalid tolerance' '$T_TMP/sc.out'"
sc --against "$out" -H a,b --nonce x
t_check "spot-check takes no --nonce: exit 2 (was $rc)" bash -c "[ $rc -eq 2 ]"

t_done
