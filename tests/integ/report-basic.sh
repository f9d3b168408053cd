#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip report on the events reportprog emits itself (rip/resource.h,
# stacks made of its own functions): --json gives exactly the known totals, the
# peak (1400000 bytes in 5 blocks, reached at the 4th rs_temp allocation, 30 ms
# in, before the 20 ms sleep), the three top lists in order with the sites
# named (a libc frame first is skipped), per-thread totals, the size histogram,
# the lifetimes, descriptors and shared memory; the same from a trace
# directory; the text report; --top; usage errors and --help.  What the
# clock decides (when the peak came, how long each block lived: a loaded
# machine may stretch any of it) is checked against the times rip dump
# gives the same events, and against the sleeps' lower bounds.
. tests/data/common.sh
prog=$BUILD/tests/integ/reportprog
need_bin "$prog" "$RIP" "$RIP_ASAN"
need_cmd python3

ring=$("$prog" known) || die "reportprog known failed"
[ -s "$ring" ] || die "reportprog made no ring file ($ring)"

"$RIP" dump "$ring" >"$TEST_TMP/dump.txt" 2>"$TEST_TMP/dump.err" ||
	die "rip dump failed: $(cat "$TEST_TMP/dump.err")"

# check_json WHAT FILE [TOP]
check_json() {
	python3 - "$2" "${3:-10}" "$TEST_TMP/dump.txt" <<'EOF' || fail "$1: JSON report differs"
import json, sys
from decimal import Decimal
r = json.load(open(sys.argv[1]))
top = int(sys.argv[2])
assert r["version"] == 1 and r["complete"] is True, r
m = r["memory"]
want = dict(allocations=22, bytes=1408260, reallocs=1, frees=18, freed_bytes=403260,
            failed=1, frees_unseen=1, allocated_again=0, live_blocks=4,
            live_bytes=1005000, sites=5)
for k, v in want.items():
    assert m[k] == v, (k, m[k], v)
p = m["peak"]
assert (p["bytes"], p["blocks"]) == (1400000, 5), p
# 7 backtraces, 10 allocations, 10 frees, rs_big, then the 4th rs_temp
assert p["event"] == 32, p
assert 0.029 <= p["time"] <= r["duration"] - 0.019, (p, r["duration"])

def names(lst):
    return [(s["site"]["function"], s["bytes"], s["allocations"]) for s in lst]
def check(lst, want):
    want = want[:top]
    got = names(lst)
    assert got == want, (got, want)
check(r["top_bytes"], [("rs_big", 1000000, 1), ("rs_temp", 400000, 4),
                       ("rs_worker", 5000, 5), ("rs_grow", 3100, 2), ("rs_small", 160, 10)])
check(r["top_count"], [("rs_small", 160, 10), ("rs_worker", 5000, 5), ("rs_temp", 400000, 4),
                       ("rs_grow", 3100, 2), ("rs_big", 1000000, 1)])
pk = [(s["site"]["function"], s["peak_bytes"], s["peak_blocks"]) for s in r["top_peak"]]
assert pk == [("rs_big", 1000000, 1), ("rs_temp", 400000, 4)][:top], pk
for s in r["top_bytes"] + r["top_count"] + r["top_peak"]:
    assert s["site"]["file"].endswith("reportprog.c") and s["site"]["line"] > 0, s
    assert s["stack"][0] == s["site"], s
    assert s["stack"][1]["function"] == "rs_main", s
small = [s for s in r["top_count"] if s["site"]["function"] == "rs_small"]
if small:
    assert len(small[0]["stack"]) == 2, small   # the libc frame is not the site's
big = [s for s in r["top_bytes"] if s["bt"] == 12][0]
assert (big["live_blocks"], big["live_bytes"]) == (1, 1000000), big

th = [(t["name"], t["allocations"], t["bytes"], t["frees"], t["freed_bytes"])
      for t in r["threads"]]
assert th == [("main", 17, 1403260, 15, 400260), ("worker", 5, 5000, 3, 3000)], th

h = [(b["min"], b["max"], b["count"], b["bytes"]) for b in r["sizes"]]
assert h == [(16, 31, 10, 160), (64, 127, 1, 100), (512, 1023, 5, 5000),
             (2048, 4095, 1, 3000), (65536, 131071, 4, 400000),
             (524288, 1048575, 1, 1000000)], h

lt = r["lifetimes"]
assert [b["below_ns"] for b in lt] == [10**k for k in range(3, 11)] + [None], lt
# how long each freed block lived by rip dump's times of the same events
# (ns): 10 rs_small, the realloc'd 100, 3 of the worker, 4 rs_temp across
# the 20 ms sleep
born, life = {}, []
for line in open(sys.argv[3]):
    f = line.split()
    if len(f) < 4 or not f[2].startswith("mem:"):
        continue
    t = int(Decimal(f[0]) * 10**9)
    kv = dict(x.split("=", 1) for x in f[3:] if "=" in x)
    gone = kv.get("old") if f[2] == "mem:realloc" else kv["addr"] if f[2] == "mem:free" else None
    if gone in born:
        t0, size = born.pop(gone)
        life.append((t - t0, size))
    if f[2] in ("mem:alloc", "mem:realloc") and int(kv["addr"], 16):
        born[kv["addr"]] = (t, int(kv["size"]))
assert sorted(s for _, s in life) == [16] * 10 + [100] + [1000] * 3 + [100000] * 4, life
assert all(ns >= 19 * 10**6 for ns, s in life if s == 100000), life
# each bucket holds exactly those blocks (one within 2 ns of an edge may be
# on either side: rip dump rounds each time to the ns)
edges = [b["below_ns"] for b in lt[:-1]]
where = lambda ns: sum(ns >= e for e in edges)
for i, b in enumerate(lt):
    sure = [s for ns, s in life if where(ns - 2) == where(ns + 2) == i]
    maybe = [s for ns, s in life if where(ns - 2) <= i <= where(ns + 2)]
    assert len(sure) <= b["count"] <= len(maybe) and sum(sure) <= b["bytes"] <= sum(maybe), \
        (i, b, sorted(life))
assert sum(b["count"] for b in lt) == m["frees"] == len(life), lt
assert sum(b["bytes"] for b in lt) == 403260, lt
assert r["never_freed"] == {"count": 4, "bytes": 1005000}, r["never_freed"]

f = r["fd"]
assert (f["opened"], f["closed"], f["open_at_end"], f["peak_open"], f["closed_unseen"]) == \
    (4, 2, 2, 3, 1), f
k = [(x["kind"], x["opened"], x["closed"], x["open_at_end"]) for x in f["kinds"]]
assert k == [("open", 1, 1, 0), ("openat", 1, 0, 1), ("pipe", 2, 1, 1)], k

s = r["shm"]["segments"]
assert (s["created"], s["created_bytes"], s["removed"], s["live"], s["live_bytes"]) == \
    (2, 69632, 1, 1, 4096), s
mp = r["shm"]["mappings"]
assert (mp["attached"], mp["detached"], mp["live"], mp["live_bytes"], mp["peak_bytes"]) == \
    (2, 1, 1, 4096, 65536), mp   # detached before the second
assert r["backtraces"] == {"defined": 7, "bad": 0}, r["backtraces"]
EOF
}

expect_status 0 "rip report --json RING" "$RIP" report --json "$ring"
check_json "ring file" "$TEST_TMP/out"
cp "$TEST_TMP/out" "$TEST_TMP/report.json"
[ -s "$TEST_TMP/err" ] &&
	fail "stderr not empty when it is no terminal: $(head -c 200 "$TEST_TMP/err")"

expect_status 0 "rip report --json --top=2" "$RIP" report --json --top=2 "$ring"
check_json "--top=2" "$TEST_TMP/out" 2

asan_run report --json "$ring"
[ "$asan_rc" = 0 ] || fail "asan report: exit $asan_rc"
check_json "asan" "$TEST_TMP/asan.out"

# the same from a trace directory
expect_status 0 "rip snapshot" "$RIP" snapshot -o "$TEST_TMP/trace" "$ring"
expect_status 0 "rip report --json TRACE" "$RIP" report --json "$TEST_TMP/trace"
check_json "trace directory" "$TEST_TMP/out"

# text
expect_status 0 "rip report RING" "$RIP" report "$ring"
o=$TEST_TMP/out
# the peak's time and the lifetime rows: those of the JSON report
python3 - "$o" "$TEST_TMP/report.json" <<'EOF' || fail "text: peak line or lifetimes"
import json, re, sys
text, r = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
m = re.search(r"^  peak: 1400.0 kB \(1400000 bytes\) in 5 blocks at (\d+\.\d{6}) s \(event 32\)$",
              text, re.M)
assert m and abs(float(m.group(1)) - r["memory"]["peak"]["time"]) <= 5.1e-7, m and m.group(0)
rows = re.findall(r"^  ([<>]=? \d+ [um]?s) +(\d+) +(\d+)$", text, re.M)
want = ["< 1 us", "< 10 us", "< 100 us", "< 1 ms", "< 10 ms", "< 100 ms", "< 1 s", "< 10 s",
        ">= 10 s"]
got = [(n, int(c), int(b)) for n, c, b in rows]
assert got == [(n, b["count"], b["bytes"]) for n, b in zip(want, r["lifetimes"])], got
EOF
grep -q '^  allocations: 22 (1408.3 kB (1408260 bytes)), 1 of them reallocs$' "$o" ||
	fail "text: allocations line"
grep -A2 '^TOP SITES BY BYTES ALLOCATED' "$o" |
	grep -q '^ *1000000 *1  rs_big (.*reportprog.c:[0-9]*)$' ||
	fail "text: top site by bytes"
grep -A2 '^TOP SITES BY NUMBER OF ALLOCATIONS' "$o" |
	grep -q '^ *160 *10  rs_small (.*reportprog.c:[0-9]*)$' ||
	fail "text: top site by count"
grep -q '^ *from rs_main (.*reportprog.c:[0-9]*)$' "$o" || fail "text: caller line"
grep -q '^ *[0-9]* worker  *5  *5000  *3  *3000$' "$o" || fail "text: worker thread"
grep -q '^  65536..131071  *4  *400000$' "$o" || fail "text: histogram"
grep -q '^  never freed  *4  *1005000$' "$o" || fail "text: never freed"
grep -q '^  opened: 4, closed: 2, open at the end: 2, most open at once: 3$' "$o" ||
	fail "text: fds"
grep -q '^  pipe  *2  *1  *1$' "$o" || fail "text: fd kinds"
grep -q '^  segments: 2 created .*, 1 removed, 1 left (4096 bytes)' "$o" || fail "text: shm"
grep -q WARNING "$o" && fail "text: a lossless trace called lossy"

# usage
expect_status 2 "no target" "$RIP" report
expect_status 2 "two targets" "$RIP" report "$ring" "$ring"
expect_status 2 "bad --top" "$RIP" report --top=0 "$ring"
expect_status 2 "bad --top" "$RIP" report --top=many "$ring"
expect_status 2 "unknown option" "$RIP" report --frobnicate "$ring"
expect_status 0 "--help" "$RIP" report --help
grep -q -- '--debug-dir' "$TEST_TMP/out" || fail "--help does not list --debug-dir"
expect_status 0 "rip help report" "$RIP" help report
expect_status 1 "no such trace" "$RIP" report "$TEST_TMP/nothing-here"

t_done
