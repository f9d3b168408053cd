#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a pagemap snapshot reads /proc/self/maps and pagemap without
# a descriptor in the program's table.  trust_pagemapfd raises the snapshot
# signal 100 times in its main thread while a second thread opens
# /dev/null and checks that it gets the lowest free number every time:
# under rip run --mem --pagemap-signal=USR2 (the watcher reads the files
# in its own table) every open must, and every snapshot is complete.  Then
# the exit snapshot, taken while that thread still opens (the preload
# library alone, without rip run's rule cache, which writes a file at
# exit): no wrong number, and the snapshot is there.  The exit part runs
# three times; a snapshot's files in the program's table showed in about
# half of the runs of it, under load, and in every run of the signal part.
. tests/data/common.sh
prog=$BUILD/tests/integ/trust_pagemapfd
need_bin "$prog" "$RIP"
[ -e "$BUILD/librip-preload.so" ] || die "no $BUILD/librip-preload.so: run make"
command -v python3 >/dev/null || die "python3 is needed to read the JSON"

"$prog" signal 100 >"$TEST_TMP/plain.out" 2>&1 ||
	die "trust_pagemapfd fails untraced: $(cat "$TEST_TMP/plain.out")"

"$RIP" run --mem --pagemap-signal=USR2 -o "$TEST_TMP/t" -- "$prog" signal 100 \
	>"$TEST_TMP/run.out" 2>"$TEST_TMP/run.err"
rc=$?
grep -q '^signals 100' "$TEST_TMP/run.out" || die "no result: $(cat "$TEST_TMP/run.err")"
[ "$rc" = 0 ] || fail "a descriptor of ours took the program's number: $(cat "$TEST_TMP/run.out")"
expect_status 0 "rip pagemap" "$RIP" pagemap --json "$TEST_TMP/t"
python3 - "$TEST_TMP/out" <<'PY' || fail "signal: the snapshots: $(cat "$TEST_TMP/out")"
import json, sys
r = json.load(open(sys.argv[1]))
# one per signal (each is taken before raise returns) and one at exit
assert r["complete"] and r["snapshots"] == 101, r["snapshots"]
assert r["incomplete_snapshots"] == 0 and r["failed_snapshots"] == 0, r
PY

for i in 1 2 3; do
	rm -rf "$TEST_TMP/x"
	mkdir "$TEST_TMP/x" || die "mkdir"
	LD_PRELOAD=$PWD/$BUILD/librip-preload.so RIP_RING=$TEST_TMP/x/ RIP_DISABLE=2,3,7 \
		"$prog" exit >"$TEST_TMP/exit.out" 2>&1 || die "exit: $(cat "$TEST_TMP/exit.out")"
	grep -q '^exiting' "$TEST_TMP/exit.out" || die "exit: no result: $(cat "$TEST_TMP/exit.out")"
	grep -q '^wrong' "$TEST_TMP/exit.out" &&
		fail "exit run $i: a descriptor of ours took the program's number: $(cat "$TEST_TMP/exit.out")"
	expect_status 0 "exit run $i: rip pagemap" "$RIP" pagemap --json "$TEST_TMP"/x/rip-*.ring
	python3 - "$TEST_TMP/out" <<'PY' || fail "exit run $i: the snapshot: $(cat "$TEST_TMP/out")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["complete"] and r["snapshot"]["reason"] == "exit" and r["failed_snapshots"] == 0, r
assert len(r["mappings"]) >= 2000, len(r["mappings"])
PY
done
t_done
