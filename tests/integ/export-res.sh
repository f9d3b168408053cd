#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip export --format=chrome of resource events (exportprog's
# known sequence): the JSON parses; mem and fd events are instants with
# their fields, the kind's name and, on a free, the size it released;
# per-process counter tracks ("ph":"C") of heap in use and open
# descriptors end at the known values (3057 bytes, 1 descriptor), in time
# order with everything else, also when --counter-interval thins them out;
# corrupt input exits 1 under ASan without a report.
. tests/data/common.sh
prog=$BUILD/tests/integ/exportprog
need_bin "$prog" "$RIP" "$RIP_ASAN"
need_cmd python3

ring=$("$prog" exit) || die "exportprog exit failed"
[ -s "$ring" ] || die "exportprog made no ring file ($ring)"

# check FILE WHAT MAXSAMPLES
check() {
	python3 - "$1" "$3" <<'PY' || fail "$2: chrome JSON is wrong"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
pid = [e["pid"] for e in ev if e["name"] == "process_name"][0]
inst = [e for e in ev if e["ph"] == "i"]
allocs = [e for e in inst if e["name"] == "mem:alloc" and e["args"]["addr"] != "0x0"]
assert len(allocs) == 9, len(allocs)
kinds = sorted({e["args"]["kind_name"] for e in allocs})
assert kinds == ["calloc", "malloc", "new"], kinds
c = [e for e in allocs if e["args"]["kind_name"] == "calloc"][0]
assert c["args"]["size"] == 4096 and c["args"]["addr"] == "0x4000", c
frees = [e for e in inst if e["name"] == "mem:free"]
assert [e["args"].get("freed") for e in frees] == [100, 4096, None, None], frees
re = [e for e in inst if e["name"] == "mem:realloc"][0]
assert re["args"]["kind_name"] == "realloc" and re["args"]["freed"] == 1000, re
op = [e for e in inst if e["name"] == "fd:open"]
assert [(e["args"]["fd"], e["args"]["path"], e["args"]["kind_name"]) for e in op] == \
    [(5, "/etc/export-a", "openat"), (6, "/etc/export-b", "openat")], op
cl = [e for e in inst if e["name"] == "fd:close"]
assert [e["args"]["kind_name"] for e in cl] == ["close", "close"], cl
mem = [e for e in ev if e["ph"] == "C" and e["name"] == "heap in use"]
fds = [e for e in ev if e["ph"] == "C" and e["name"] == "open descriptors"]
assert mem and fds
assert all(e["pid"] == pid for e in mem + fds)
assert mem[-1]["args"]["bytes"] == 3057, mem[-1]
assert fds[-1]["args"]["fds"] == 1, fds[-1]
assert max(e["args"]["bytes"] for e in mem) <= 6346
ts = [e["ts"] for e in ev if "ts" in e]
assert ts == sorted(ts)
maxn = int(sys.argv[2])
assert len(mem) <= maxn and len(fds) <= maxn, (len(mem), len(fds))
if maxn > 100:
    # every change: the exact sequence of values
    assert [e["args"]["bytes"] for e in mem] == \
        [100, 200, 300, 200, 250, 1250, 2250, 6346, 2250, 2260, 2280, 3057], mem
    assert [e["args"]["fds"] for e in fds] == [1, 2, 1], fds
PY
}

expect_status 0 "chrome" "$RIP" export --format=chrome "$ring" -o "$TEST_TMP/c.json"
check "$TEST_TMP/c.json" "every change" 1000
asan_run export --format=chrome --counter-interval=10000000 -o - "$ring"
[ "$asan_rc" = 0 ] || fail "asan chrome: exit $asan_rc"
cp "$TEST_TMP/asan.out" "$TEST_TMP/s.json"
# one sample at the first change, then (10 s later at the earliest) the last value
check "$TEST_TMP/s.json" "--counter-interval" 2

expect_status 0 "rip snapshot" "$RIP" snapshot -o "$TEST_TMP/trace" "$ring"
expect_status 0 "chrome (trace)" "$RIP" export --format=chrome "$TEST_TMP/trace" \
	-o "$TEST_TMP/t.json"
check "$TEST_TMP/t.json" "trace directory" 1000

expect_status 2 "bad interval" "$RIP" export --format=chrome --counter-interval=soon "$ring" -o -

# corrupt input: exit 1, no sanitizer report, no OUT left
asan_run export --format=chrome -o "$TEST_TMP/never" /dev/null
[ "$asan_rc" = 1 ] || fail "chrome /dev/null: exit $asan_rc, want 1"
[ -e "$TEST_TMP/never" ] && fail "failed export left OUT behind"
cring=$("$prog" corrupt) || die "exportprog corrupt failed"
expect_status 0 "rip snapshot (corrupt)" "$RIP" snapshot -o "$TEST_TMP/ctrace" "$cring"
python3 - "$TEST_TMP/ctrace/stream_0" <<'PY' || die "cannot damage the trace"
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
i = b.find(bytes([0x52]) * 24)
assert i > 4
b[i - 4:i] = (0x7fffffff).to_bytes(4, "little")
open(p, "wb").write(b)
PY
asan_run export --format=chrome -o "$TEST_TMP/c2.json" "$TEST_TMP/ctrace"
[ "$asan_rc" = 1 ] || fail "damaged trace: exit $asan_rc, want 1"
[ -e "$TEST_TMP/c2.json" ] && fail "damaged trace: OUT left behind"

t_done
