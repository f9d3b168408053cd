#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the mappings rip leaks reports live at the end of a real
# program agree with the program's /proc/PID/maps at its end.  python3's
# mmap module maps private anonymous memory (one mapping kept, one with a
# hole punched by munmap, one trimmed at both ends as V8 does) and shared
# anonymous memory (one kept, one with a hole, one unmapped), then waits, and the test
# copies /proc/PID/maps; then python3 leaves with os._exit (no cleanup).
# Under rip run --mem --fd --shm: the bytes rip leaks reports still mapped
# by the mmap module's calls (its frames are found by address in the maps
# copy) equal the bytes the maps copy shows mapped in those spans, for heap
# mappings (mem) and shared ones (shm-map); 0 lost, the trace complete.
# Timeout: 90
. tests/data/real.sh
real_need python3
py=$(real_python) || die "python3 does not run"
cat >"$W/maps.py" <<'PY'
import ctypes, mmap, os, sys, time
P = mmap.PAGESIZE
libc = ctypes.CDLL(None, use_errno=True)
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
libc.munmap.restype = ctypes.c_int
PRIV = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
SHARED = mmap.MAP_SHARED | mmap.MAP_ANONYMOUS
keep = []

def span(kind, m, pages):
    keep.append(m)
    a = ctypes.addressof(ctypes.c_char.from_buffer(m))
    out.write("%s %d %d\n" % (kind, a, pages * P))
    return a

def unmap(a, n):
    if libc.munmap(a, n) != 0:
        sys.exit("munmap: errno %d" % ctypes.get_errno())

out = open(sys.argv[1] + ".tmp", "w")
span("mem", mmap.mmap(-1, 61 * P, flags=PRIV), 61)
a = span("mem", mmap.mmap(-1, 37 * P, flags=PRIV), 37)
unmap(a + 8 * P, 8 * P)                 # a hole
a = span("mem", mmap.mmap(-1, 29 * P, flags=PRIV), 29)
unmap(a, 3 * P)                         # the head
unmap(a + 24 * P, 5 * P)                # the tail
span("shm", mmap.mmap(-1, 13 * P, flags=SHARED), 13)
a = span("shm", mmap.mmap(-1, 19 * P, flags=SHARED), 19)
unmap(a + 5 * P, 4 * P)                 # a hole in a shared mapping
mmap.mmap(-1, 17 * P, flags=SHARED).close()
out.write("pid %d\n" % os.getpid())
out.close()
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while not os.path.exists(sys.argv[2]):  # the test copies /proc/PID/maps meanwhile
    time.sleep(0.01)
sys.stdout.flush()
os._exit(0)
PY
rm -f "$W/spans" "$W/go"
t_bg timeout -k 5 60 "$RIP" run --mem --fd --shm -o "$TEST_TMP/t" -- "$py" "$W/maps.py" "$W/spans" "$W/go" \
	>"$TEST_TMP/run.out" 2>"$TEST_TMP/run.err"
run=$T_LAST
wait_file "$W/spans" 40 || die "python3 did not get to its mappings: $(tail -n 3 "$TEST_TMP/run.err")"
pid=$(sed -n 's/^pid //p' "$W/spans")
cp "/proc/$pid/maps" "$W/maps" || die "cannot read /proc/$pid/maps"
: >"$W/go"
wait "$run"
rc=$?
T_PIDS=""
[ "$rc" = 0 ] || fail "rip run exited $rc: $(tail -n 3 "$TEST_TMP/run.err")"
grep -q "recorded in $TEST_TMP/t/, 0 lost$" "$TEST_TMP/run.err" || fail "rip run: $(grep '^rip run' "$TEST_TMP/run.err")"
real_check_traces "python3 mmap" "$TEST_TMP/t" "--mem"
"$RIP" leaks --json "$TEST_TMP/t" >"$TEST_TMP/leaks.json" || die "rip leaks --json failed"
python3 - "$W/spans" "$W/maps" "$TEST_TMP/leaks.json" <<'PY' || fail "rip leaks and /proc/PID/maps disagree"
import json, sys
spans = [l.split() for l in open(sys.argv[1]) if not l.startswith("pid")]
# a span's freed pages may hold a later mapping of the other kind: count
# private mappings in private spans, shared ones in shared spans
maps, mod = {"p": [], "s": []}, []
for l in open(sys.argv[2]):
    f = l.split()
    lo, hi = (int(x, 16) for x in f[0].split("-"))
    maps[f[1][3]].append((lo, hi))
    if len(f) > 5 and "/mmap." in f[5]:
        mod.append((lo, hi))
if not mod:
    sys.exit("python3's mmap module is not a library of its own in the maps: cannot find its calls")

def mapped(lo, hi, share):
    return sum(max(0, min(hi, b) - max(lo, a)) for a, b in maps[share])

want = {"mem": 0, "shm-map": 0}
for kind, a, n in spans:
    a, n = int(a), int(n)
    m = mapped(a, a + n, "p" if kind == "mem" else "s")
    want["mem" if kind == "mem" else "shm-map"] += m
    print("%s mapping at %#x, %d bytes: %d mapped at the end" % (kind, a, n, m))

def from_mmap_module(g):
    return any(lo <= int(fr["addr"], 16) < hi for fr in g.get("stack") or [] for lo, hi in mod)

d = json.load(open(sys.argv[3]))
got = {"mem": 0, "shm-map": 0}
for g in d["leaks"]:
    if g["resource"] in got and "mmap" in g["kinds"] and from_mmap_module(g):
        got[g["resource"]] += g["bytes"]
        print("rip leaks: %s %d bytes in %d, kinds %s" % (g["resource"], g["bytes"], g["count"], g["kinds"]))
bad = 0
for r in want:
    print("%s: /proc/PID/maps %d bytes, rip leaks %d" % (r, want[r], got[r]))
    bad += want[r] != got[r]
sys.exit(bad)
PY
t_done
