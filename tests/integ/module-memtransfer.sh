#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the memtransfer tracing module on glibc's memcpy, wmemcpy,
# strcpy and memset.  A program (tests/data/module-memtransfer.c) copies
# known sizes from four functions; rip run --module=memtransfer, then rip
# report --json lists the counter kind memtransfer with each copy site's
# transfers and bytes, biggest first (1,000,000 bytes in 10 memcpy from
# copy_big, 16,000 in 4 wmemcpy from copy_wide, 4,096 in 1 memset from
# fill, 18 in 3 strcpy from copy_small), and the text report names the top
# copy site; rip export --format=folded --kind=memtransfer gives the bytes
# per stack.  rip leaks counts the transfers and reports nothing live.  The
# module preloaded alone (no librip-preload.so) forwards every call, and an
# image rip run does not follow (env execs sh) drops the module from
# LD_PRELOAD with librip's own.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so" "$BUILD/modules/memtransfer.so"
need_cmd python3 cc
need_libunwind

prog=$TEST_TMP/mt
cc -O0 -g -fno-builtin -o "$prog" tests/data/module-memtransfer.c ||
	die "cannot build the copying program"

"$RIP" run -q --module=memtransfer -o "$TEST_TMP/t" -- "$prog" ||
	die "rip run --module=memtransfer failed"
"$RIP" report --json "$TEST_TMP/t" >"$TEST_TMP/report.json" || die "rip report failed"
python3 - "$TEST_TMP/report.json" <<'PY' || fail "rip report does not give the copy sites"
import json, sys
r = json.load(open(sys.argv[1]))
k = [m for m in r["modules"] if m["kind"] == "memtransfer"]
assert len(k) == 1 and k[0]["counter"] and not k[0]["refcounted"], r["modules"]
k = k[0]
got = [(s["site"]["function"], s["allocations"], s["bytes"]) for s in k["sites"]
       if s["site"] and s["site"]["function"] in ("copy_big", "copy_wide", "copy_small", "fill")]
want = [("copy_big", 10, 1000000), ("copy_wide", 4, 16000), ("fill", 1, 4096),
        ("copy_small", 3, 18)]
if got != want:
    print("got: ", got, file=sys.stderr)
    print("want:", want, file=sys.stderr)
    sys.exit(1)
assert k["count"] >= 18 and k["bytes"] >= 1020114, k
assert k["live_count"] == 0, k
PY
"$RIP" report "$TEST_TMP/t" >"$TEST_TMP/report.txt" || fail "rip report (text) failed"
grep -A4 '^MODULE KIND memtransfer' "$TEST_TMP/report.txt" | grep -q '1000000 *10  copy_big' ||
	fail "the text report does not show copy_big as the top copy site"
"$RIP" leaks --json "$TEST_TMP/t" >"$TEST_TMP/leaks.json" || fail "rip leaks failed"
python3 - "$TEST_TMP/leaks.json" <<'PY' || fail "rip leaks reports transfers as live"
import json, sys
r = json.load(open(sys.argv[1]))
assert not [x for x in r["leaks"] if x.get("module")], r["leaks"]
assert r["totals"]["memtransfer"]["transfers"] >= 18, r["totals"]
PY
"$RIP" export --format=folded --kind=memtransfer -o "$TEST_TMP/copies.folded" "$TEST_TMP/t" ||
	fail "rip export --format=folded --kind=memtransfer failed"
grep -q ';main;copy_big 1000000$' "$TEST_TMP/copies.folded" &&
	grep -q ';main;copy_wide 16000$' "$TEST_TMP/copies.folded" ||
	fail "the folded stacks of memtransfer do not give copy_big's and copy_wide's bytes"
# a module without librip-preload.so still forwards every call (the program checks its copies)
LD_PRELOAD=$BUILD/modules/memtransfer.so "$prog" ||
	fail "memtransfer.so preloaded alone breaks the copies"
# an image rip run does not follow drops the modules from LD_PRELOAD with librip-preload.so
out=$("$RIP" run -q --module=memtransfer -o "$TEST_TMP/t2" -- env sh -c 'echo "[$LD_PRELOAD]"') ||
	fail "an image exec'd under --module=memtransfer failed"
[ "$out" = "[]" ] || fail "an image not followed keeps LD_PRELOAD=$out"
t_done
