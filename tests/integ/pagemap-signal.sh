#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: pagemap snapshots on request and their absence.  rip run
# --pagemap-signal=USR2: a snapshot in the signal handler (exact page counts
# before K2 more pages are written) and one at exit (after), selected with
# --snapshot; a signal to a thread that has no event ring yet is deferred
# to the next traced call (in main); 200 signals while a thread mallocs
# and frees: no crash, every snapshot complete; a program that calls _exit,
# a trace without --mem and --no-pagemap: exit 1 with a message that says
# how to get one.
. tests/data/common.sh
prog=$BUILD/tests/integ/pagemapprog
need_bin "$prog" "$RIP"
[ -e "$BUILD/librip-preload.so" ] || die "no $BUILD/librip-preload.so: run make"
command -v python3 >/dev/null || die "python3 is needed to read the JSON"

# block row of snapshot N: present zero live_bytes unused
block_row() {
	python3 - "$1" "$TEST_TMP/prog.out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
a = int(open(sys.argv[2]).read().split()[1], 16)
b = [m for m in r["mappings"] if int(m["start"], 16) <= a < int(m["end"], 16)][0]
print(r["snapshot"]["seq"], r["snapshot"]["reason"], b["present"], b["zero"], b["live_bytes"],
      b["unused"])
PY
}

K=64 M=32 K2=100
"$RIP" run -q --mem --pagemap-signal=USR2 -o "$TEST_TMP/s" -- "$prog" signal $K $M $K2 \
	>"$TEST_TMP/prog.out" || die "rip run pagemapprog signal failed"
expect_status 0 "--snapshot=1" "$RIP" pagemap --json --snapshot=1 "$TEST_TMP/s"
got=$(block_row "$TEST_TMP/out")
[ "$got" = "1 signal $((K + M)) $M 67108864 0" ] || fail "snapshot 1: '$got'"
expect_status 0 "last snapshot" "$RIP" pagemap --json "$TEST_TMP/s"
got=$(block_row "$TEST_TMP/out")
[ "$got" = "2 exit $((K + M + K2)) $M 67108864 0" ] || fail "snapshot 2: '$got'"
expect_status 1 "--snapshot=3" "$RIP" pagemap --snapshot=3 "$TEST_TMP/s"
grep -q 'no complete snapshot 3' "$TEST_TMP/err" || fail "--snapshot=3: message"

# the same by number, and a bad name refused by rip run
"$RIP" run -q --mem --pagemap-signal=12 -o "$TEST_TMP/s12" -- "$prog" signal 1 1 1 \
	>/dev/null || fail "--pagemap-signal=12"
expect_status 0 "signal 12" "$RIP" pagemap --snapshot=1 "$TEST_TMP/s12"
grep -q 'at signal' "$TEST_TMP/out" || fail "signal 12: no snapshot at signal"
expect_status 2 "--pagemap-signal=BOGUS" "$RIP" run --mem --pagemap-signal=BOGUS -- true
expect_status 2 "--pagemap-signal without --mem" "$RIP" run --pagemap-signal=USR2 -- true

# deferred: the handler runs on a thread with no event ring; main's next malloc takes it
"$RIP" run -q --mem --pagemap-signal=USR2 -o "$TEST_TMP/d" -- "$prog" defer ||
	die "rip run pagemapprog defer failed"
"$RIP" dump "$TEST_TMP/d" >"$TEST_TMP/d.txt" || die "rip dump (defer) failed"
pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' \
	"$("$RIP" pagemap --json "$TEST_TMP/d" >"$TEST_TMP/d.json" && echo "$TEST_TMP/d.json")")
grep -q "/$pid mem:pagemap_end seq=1 mappings=[1-9][0-9]* reason=2 error=0" "$TEST_TMP/d.txt" ||
	fail "defer: snapshot 1 not taken by the main thread ($pid)"
grep -q "mem:pagemap_end seq=2 .* reason=1 error=0" "$TEST_TMP/d.txt" || fail "defer: no exit snapshot"

# a storm of signals while a thread allocates
"$RIP" run -q --mem --pagemap-signal=USR2 -o "$TEST_TMP/st" -- "$prog" storm 200 ||
	fail "storm: the program failed (exit $?)"
expect_status 0 "storm" "$RIP" pagemap --json "$TEST_TMP/st"
python3 - "$TEST_TMP/out" <<'PY' || fail "storm: JSON"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["complete"] and r["incomplete_snapshots"] == 0 and r["failed_snapshots"] == 0, r
assert r["snapshots"] >= 20 and r["snapshot"]["reason"] == "exit", r["snapshots"]
PY

# no snapshot: _exit, no --mem, --no-pagemap
"$RIP" run -q --mem -o "$TEST_TMP/q" -- "$prog" quit || fail "quit: rip run failed"
expect_status 1 "_exit" "$RIP" pagemap "$TEST_TMP/q"
grep -q 'did not exit normally' "$TEST_TMP/err" || fail "_exit: message"
grep -q -- '--pagemap-signal' "$TEST_TMP/err" || fail "_exit: no hint"
"$RIP" run -q -o "$TEST_TMP/nomem" -- "$prog" block 1 1 >/dev/null || fail "no --mem: rip run"
expect_status 1 "no --mem" "$RIP" pagemap "$TEST_TMP/nomem"
grep -q 'rip run --mem' "$TEST_TMP/err" || fail "no --mem: message"
"$RIP" run -q --mem --no-pagemap -o "$TEST_TMP/nopm" -- "$prog" block 1 1 >/dev/null ||
	fail "--no-pagemap: rip run"
expect_status 1 "--no-pagemap" "$RIP" pagemap "$TEST_TMP/nopm"
"$RIP" dump "$TEST_TMP/nopm" | grep -q 'mem:mapping' && fail "--no-pagemap: a snapshot anyway"

t_done
