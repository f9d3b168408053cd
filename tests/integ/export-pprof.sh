#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip export --format=pprof, read back by go tool pprof and by
# tests/data/pprof.py (a decoder of its own that checks every id and index).
# 1. exportprog's ring file: the heap profile's alloc_space, alloc_objects and
#    inuse_space by stack equal rip export --format=folded's bytes, count and
#    leaked, line for line; go tool pprof -traces names exportprog's site_*
#    functions; the same under ASan.
# 2. The leak acceptance program (tests/integ/leaks_accept.cc) under rip run
#    --mem --fd --shm: go tool pprof -top and -traces on the profile (and on
#    --leaks) give every memory site of rip leaks --json with its exact bytes
#    and blocks, and the totals; the decoder finds the same stacks, function
#    by function and line by line, and the executable's mapping with the
#    build-id readelf reads; alloc_* equal folded's bytes and count.
# 3. A trace without memory events (pprofprog events): events counted by
#    stack and by type, exactly.
# 4. Where the threads of a dead process's ring file were: one sample per
#    thread, its stack rip ps --threads --json's path, newest first.
# 5. A profile of 1,000,000 samples (pprofprog heap 1000000): go tool pprof
#    reads it and its totals are exact.
# 6. Usage errors exit 2; a missing trace, a threads profile of a trace 1.
# Also: the export of a ring with a backtrace of garbage addresses under ASan.
# Timeout: 600
. tests/data/common.sh
need_bin "$RIP" "$RIP_ASAN" "$BUILD/tests/integ/exportprog" "$BUILD/tests/integ/pprofprog" \
	"$BUILD/tests/integ/postmortem_prog"
need_bin "$BUILD/librip-preload.so"
need_cmd python3
need_cmd go
CXX=${CXX:-c++}
command -v "$CXX" >/dev/null || die "no C++ compiler ($CXX): make check installs g++ (mk/deps.sh)"
# go tool pprof: no network, caches in the test's directory
export HOME="$TEST_TMP/home" GOCACHE="$TEST_TMP/gocache" GOPATH="$TEST_TMP/gopath" GOPROXY=off \
	GOFLAGS='' GOTOOLCHAIN=local PPROF_TMPDIR="$TEST_TMP/pprof"
mkdir -p "$HOME" "$PPROF_TMPDIR"
PP="python3 tests/data/pprof.py"
gopprof() {
	go tool pprof "$@" 2>"$TEST_TMP/gopprof.err" || {
		fail "go tool pprof $*: exit $?"
		head -n 5 "$TEST_TMP/gopprof.err" >&2
	}
}

# ---- 1. exportprog: the values are folded's ----
ring=$("$BUILD/tests/integ/exportprog" exit) || die "exportprog exit failed"
[ -s "$ring" ] || die "exportprog made no ring file ($ring)"
expect_status 0 "pprof of exportprog" "$RIP" export --format=pprof "$ring" -o "$TEST_TMP/x.pb.gz"
for v in bytes:alloc_space count:alloc_objects leaked:inuse_space; do
	"$RIP" export --format=folded --force --value=${v%%:*} "$ring" -o "$TEST_TMP/x.folded" 2>/dev/null ||
		fail "folded --value=${v%%:*}"
	$PP folded "$TEST_TMP/x.pb.gz" ${v##*:} >"$TEST_TMP/x.pprof" || fail "decoding x.pb.gz"
	cmp -s "$TEST_TMP/x.folded" "$TEST_TMP/x.pprof" || {
		fail "exportprog: ${v##*:} by stack differs from folded --value=${v%%:*}"
		diff "$TEST_TMP/x.folded" "$TEST_TMP/x.pprof" | head -n 10 >&2
	}
done
gopprof -sample_index=alloc_space -traces "$TEST_TMP/x.pb.gz" >"$TEST_TMP/x.traces"
for f in site_leaf_a site_leaf_b site_leaf_c site_thread_leaf site_mid site_root; do
	grep -q " $f\$" "$TEST_TMP/x.traces" || fail "go tool pprof -traces: no $f"
done
asan_run export --format=pprof "$ring" -o "$TEST_TMP/x-asan.pb.gz"
[ "$asan_rc" = 0 ] || fail "asan pprof: exit $asan_rc"
asan_run export --format=pprof --leaks "$ring" -o "$TEST_TMP/x-asan-leaks.pb.gz"
[ "$asan_rc" = 0 ] || fail "asan pprof --leaks: exit $asan_rc"
# a backtrace of garbage addresses: still a valid profile, no sanitizer report
bad=$("$BUILD/tests/integ/exportprog" corrupt) || die "exportprog corrupt failed"
asan_run export --format=pprof "$bad" -o "$TEST_TMP/bad.pb.gz"
[ "$asan_rc" = 0 ] || fail "asan pprof of exportprog corrupt: exit $asan_rc"
$PP summary "$TEST_TMP/bad.pb.gz" >/dev/null || fail "exportprog corrupt: not a valid profile"
rm -f "$bad"

# ---- 2. the leak acceptance program ----
src=$TEST_TMP/leaks_accept.cc
prog=$TEST_TMP/leaks_accept
shm=/rip-pprof-$$
trap 't_cleanup; rm -f "/dev/shm$shm"' EXIT
cp tests/integ/leaks_accept.cc "$src" || die "no tests/integ/leaks_accept.cc"
"$CXX" -O0 -g -fno-omit-frame-pointer -Wl,-z,now -Itests -o "$prog" "$src" || die "cannot build $src"
"$RIP" run --mem --fd --shm -q -o "$TEST_TMP/trace" -- "$prog" "$shm" >/dev/null \
	2>"$TEST_TMP/run.err" || fail "rip run leaks_accept: $(cat "$TEST_TMP/run.err")"
rm -f "/dev/shm$shm"
[ -f "$TEST_TMP/trace/.rip-index" ] || die "no trace written"
expect_status 0 "rip leaks --json" "$RIP" leaks --json "$TEST_TMP/trace"
cp "$TEST_TMP/out" "$TEST_TMP/leaks.json"
expect_status 0 "pprof" "$RIP" export --format=pprof "$TEST_TMP/trace" -o "$TEST_TMP/heap.pb.gz"
expect_status 0 "pprof --leaks" "$RIP" export --format=pprof --leaks "$TEST_TMP/trace" \
	-o "$TEST_TMP/leaks.pb.gz"
for p in heap leaks; do
	for i in inuse_space inuse_objects; do
		gopprof -sample_index=$i -unit=B -top -nodecount=1000 -nodefraction=0 -edgefraction=0 "$TEST_TMP/$p.pb.gz" \
			>"$TEST_TMP/$p.$i.top"
		gopprof -sample_index=$i -unit=B -traces "$TEST_TMP/$p.pb.gz" >"$TEST_TMP/$p.$i.traces"
	done
	$PP samples "$TEST_TMP/$p.pb.gz" >"$TEST_TMP/$p.samples" || fail "decoding $p.pb.gz"
done
$PP summary "$TEST_TMP/heap.pb.gz" >"$TEST_TMP/heap.summary" || fail "decoding heap.pb.gz"
bid=$(readelf -n "$prog" 2>/dev/null | sed -n 's/.*Build ID: *//p')
python3 - "$TEST_TMP" "$prog" "$bid" <<'EOF' || fail "the pprof profiles do not say what rip leaks --json says"
import json, re, sys
tmp, prog, bid = sys.argv[1], sys.argv[2], sys.argv[3]
r = json.load(open(tmp + "/leaks.json"))
bad = 0
def no(*msg):
    global bad
    bad += 1
    print("FAIL:", *msg, file=sys.stderr)

mem = [g for g in r["leaks"] if g["resource"] == "mem"]
if len(mem) < 6:
    no("rip leaks found", len(mem), "memory groups, the program leaks 6 sites")
# a frame with no function name is MODULE+0xOFFSET in the profile, as rip names it
def fname(f):
    if f["function"]:
        return f["function"]
    return "%s+0x%x" % (f["module"].rsplit("/", 1)[-1], f["offset"]) if f.get("module") else f["addr"]
simple = lambda f: re.sub(r"\(.*\)$", "", f or "")
def stk(g, full=False):
    return tuple((fname(f) if full else simple(fname(f))) for f in g["stack"] or [])
# as go tool pprof -traces prints a stack: an inlined frame's name ends in " (inline)"
def stk_traces(g):
    return tuple(simple(fname(f)) + (" (inline)" if f.get("inlined") else "")
                 for f in g["stack"] or [])

# go tool pprof -top: flat per leaf function and the total, bytes and blocks
def top(path):
    d, total = {}, None
    for line in open(path):
        m = re.match(r"Showing nodes accounting for (-?\d+)B?, ", line)
        if m:
            total = int(m.group(1))
        m = re.match(r"\s*(\d+)B?\s+[\d.]+%\s+[\d.]+%\s+\d+B?\s+[\d.]+%\s+(.*\S)\s*$", line)
        if m and int(m.group(1)):
            d[m.group(2)] = int(m.group(1))
    return d, total
# go tool pprof -traces: each sample's value and stack
def traces(path):
    out, cur = [], None
    for line in open(path):
        if line.startswith("-----------+"):
            cur = None
            continue
        m = re.match(r"\s+(\d+)B?\s+(\S.*)$", line)
        if m and cur is None:
            cur = [int(m.group(1)), [m.group(2).strip()]]
            out.append(cur)
        elif cur is not None and line.strip():
            cur[1].append(line.strip())
    return sorted((tuple(s), v) for v, s in out if v)

for p in ("heap", "leaks"):
    for idx, key in (("inuse_space", "bytes"), ("inuse_objects", "count")):
        want = {}
        for g in mem:
            leaf = stk(g)[0] if stk(g) else "[no backtrace]"
            want[leaf] = want.get(leaf, 0) + g[key]
        got, total = top("%s/%s.%s.top" % (tmp, p, idx))
        if got != want:
            no(p, idx, "-top flat by function", got, "rip leaks says", want)
        if total != r["totals"]["mem"][key]:
            no(p, idx, "-top total", total, "rip leaks says", r["totals"]["mem"][key])
        tr = traces("%s/%s.%s.traces" % (tmp, p, idx))
        want_tr = sorted((stk_traces(g), g[key]) for g in mem if g[key])
        if tr != want_tr:
            no(p, idx, "-traces", tr, "rip leaks says", want_tr)
    # the decoder: full names, and the (function, count, bytes) of every leaking stack
    smp = json.load(open("%s/%s.samples" % (tmp, p)))
    types = 4 if p == "heap" else 2
    got = sorted((tuple(s["stack"]), s["values"][-2], s["values"][-1]) for s in smp
                 if s["values"][-2])
    want = sorted((stk(g, True), g["count"], g["bytes"]) for g in mem)
    if got != want:
        no(p, "decoded samples", got, "rip leaks says", want)
    if any(len(s["values"]) != types for s in smp):
        no(p, "samples without", types, "values")
    if p == "leaks" and any(not s["values"][0] for s in smp):
        no("--leaks: a sample of a stack that leaked nothing")

s = json.load(open(tmp + "/heap.summary"))
if [t for t, _ in s["sample_types"]] != ["alloc_objects", "alloc_space", "inuse_objects",
                                          "inuse_space"]:
    no("sample types", s["sample_types"])
exe = [m for m in s["mappings"] if m["file"] == prog]
if len(exe) != 1 or not bid or exe[0]["build_id"] != bid or not exe[0]["has_functions"]:
    no("the executable's mapping", exe, "build-id", bid)
if not all(m["build_id"] for m in s["mappings"] if m["file"].startswith("/")):
    no("a mapping without its build-id", s["mappings"])
if not s["time_nanos"] or s["duration_nanos"] <= 0:
    no("time", s["time_nanos"], "duration", s["duration_nanos"])
sys.exit(1 if bad else 0)
EOF
# lines: the leaking functions at their lines, as rip leaks has them
python3 - "$TEST_TMP/leaks.json" "$TEST_TMP/leaks.pb.gz" <<'EOF' || fail "pprof lines differ from rip leaks'"
import json, sys
sys.path.insert(0, "tests/data")
import pprof
r = json.load(open(sys.argv[1]))
p = pprof.load(open(sys.argv[2], "rb").read())
got = sorted(tuple((ln["function"], ln["file"], ln["line"]) for i in s["locations"]
                   for ln in p["locations"][i]["lines"]) for s in p["samples"])
def fname(f):
    if f["function"]:
        return f["function"]
    return "%s+0x%x" % (f["module"].rsplit("/", 1)[-1], f["offset"]) if f.get("module") else f["addr"]
want = sorted(tuple((fname(f), f["file"] or "", f["line"] or 0) for f in g["stack"])
              for g in r["leaks"] if g["resource"] == "mem")
if got != want:
    print("FAIL: lines", got, "want", want, file=sys.stderr)
    sys.exit(1)
EOF
for v in bytes:alloc_space count:alloc_objects leaked:inuse_space; do
	"$RIP" export --format=folded --force --value=${v%%:*} "$TEST_TMP/trace" -o "$TEST_TMP/a.folded" \
		2>/dev/null || fail "folded --value=${v%%:*} of the trace"
	# folded cuts names at 255 bytes
	$PP folded "$TEST_TMP/heap.pb.gz" ${v##*:} 255 >"$TEST_TMP/a.pprof"
	cmp -s "$TEST_TMP/a.folded" "$TEST_TMP/a.pprof" || {
		fail "leaks_accept: ${v##*:} by stack differs from folded --value=${v%%:*}"
		diff "$TEST_TMP/a.folded" "$TEST_TMP/a.pprof" | head -n 6 >&2
	}
done

# ---- 3. events by stack and type ----
"$RIP" run -o "$TEST_TMP/ev" -- "$BUILD/tests/integ/pprofprog" events >/dev/null 2>&1 ||
	fail "rip run pprofprog events"
expect_status 0 "pprof of events" "$RIP" export --format=pprof "$TEST_TMP/ev" \
	-o "$TEST_TMP/ev.pb.gz"
$PP samples "$TEST_TMP/ev.pb.gz" >"$TEST_TMP/ev.samples" || fail "decoding ev.pb.gz"
python3 - "$TEST_TMP/ev.samples" <<'EOF' || fail "events profile"
import json, sys
got = sorted((s["labels"].get("event"), tuple(s["stack"]), s["values"])
             for s in json.load(open(sys.argv[1])))
want = sorted([("app:tick", ("app:tick",), [7]), ("fd:close", ("fd:close",), [5]),
               ("fd:open", ("pp_opener", "pp_root"), [3]),
               ("fd:open", ("pp_opener", "pp_mid", "pp_root"), [2])])
if got != want:
    print("FAIL: events", got, "want", want, file=sys.stderr)
    sys.exit(1)
EOF
gopprof -traces "$TEST_TMP/ev.pb.gz" >"$TEST_TMP/ev.traces"
grep -q "Type: events" "$TEST_TMP/ev.traces" || fail "go tool pprof: not an events profile"

# ---- 4. where the threads of a dead process were ----
t_bg "$BUILD/tests/integ/postmortem_prog" "$TEST_TMP/pm.ring" "$TEST_TMP/pm.addrs" \
	"$TEST_TMP/pm.ready" 8
wait_file "$TEST_TMP/pm.ready" 40 || die "postmortem_prog did not park its threads"
t_kill "$T_LAST"
expect_status 0 "pprof of a ring" "$RIP" export --format=pprof "$TEST_TMP/pm.ring" \
	-o "$TEST_TMP/pm.pb.gz"
expect_status 0 "ps --threads --json" "$RIP" ps --threads --json "$TEST_TMP/pm.ring"
cp "$TEST_TMP/out" "$TEST_TMP/pm.json"
$PP samples "$TEST_TMP/pm.pb.gz" >"$TEST_TMP/pm.samples" || fail "decoding pm.pb.gz"
python3 - "$TEST_TMP/pm.json" "$TEST_TMP/pm.samples" <<'EOF' || fail "threads profile"
import json, sys
ps = json.load(open(sys.argv[1]))
want = []
for s in ps["slots"]:
    path, last = [], None
    for f in reversed(s["path"]):
        if f["address"] != last:
            path.append(f["function"])
        last = f["address"]
    want.append((s["name"], s["tid"], s["kind"], s["state"], tuple(path), 1))
got = [(x["labels"]["thread"], x["labels"]["tid"], x["labels"]["kind"], x["labels"]["state"],
        tuple(x["stack"]), x["values"][0]) for x in json.load(open(sys.argv[2]))]
parks = [g for g in got if g[0].startswith("park-") and g[4][:1] == ("park_" + g[0][5:],)]
if sorted(got) != sorted(want) or len(parks) != 8:
    print("FAIL: threads", sorted(got), "want", sorted(want), file=sys.stderr)
    sys.exit(1)
EOF
gopprof -traces "$TEST_TMP/pm.pb.gz" >"$TEST_TMP/pm.traces"
[ "$(grep -c '^ *1   park_000[0-7]$' "$TEST_TMP/pm.traces")" = 8 ] ||
	fail "go tool pprof -traces: not the 8 parked threads"

# ---- 5. a million samples ----
"$RIP" run -o "$TEST_TMP/big" -- "$BUILD/tests/integ/pprofprog" heap 1000000 >/dev/null 2>&1 ||
	fail "rip run pprofprog heap 1000000"
expect_status 0 "pprof of 1M" "$RIP" export --format=pprof "$TEST_TMP/big" -o "$TEST_TMP/big.pb.gz"
n=$($PP count "$TEST_TMP/big.pb.gz") || fail "decoding big.pb.gz"
[ "$n" = 1000000 ] || fail "1M: $n samples"
# alloc_space: 10,000 x (1 + ... + 100); in use: the odd blocks, 10,000 x (2 + 4 + ... + 100)
gopprof -sample_index=alloc_objects -top -nodecount=1 "$TEST_TMP/big.pb.gz" >"$TEST_TMP/big.1"
grep -q "Total samples = 1000000 *\$" "$TEST_TMP/big.1" || fail "1M: alloc_objects: $(sed -n 6p "$TEST_TMP/big.1")"
gopprof -sample_index=inuse_space -unit=B -top -nodecount=1 "$TEST_TMP/big.pb.gz" >"$TEST_TMP/big.2"
grep -q "Total samples = 25500000B *\$" "$TEST_TMP/big.2" || fail "1M: inuse_space: $(sed -n 6p "$TEST_TMP/big.2")"

# ---- 6. usage ----
expect_status 2 "--leaks with folded" "$RIP" export --format=folded --leaks "$ring" -o -
expect_status 2 "--profile=bogus" "$RIP" export --format=pprof --profile=bogus "$ring" -o -
expect_status 2 "--leaks --profile=threads" "$RIP" export --format=pprof --leaks \
	--profile=threads "$ring" -o -
expect_status 1 "threads of a trace" "$RIP" export --format=pprof --profile=threads \
	"$TEST_TMP/ev" -o "$TEST_TMP/n.pb.gz"
grep -q "a threads profile is of a ring file or a pid" "$TEST_TMP/err" ||
	fail "threads of a trace: $(cat "$TEST_TMP/err")"
expect_status 1 "a missing trace" "$RIP" export --format=pprof "$TEST_TMP/nothing" -o "$TEST_TMP/n.pb.gz"
[ -e "$TEST_TMP/n.pb.gz" ] && fail "a failed export left its output"
rm -f "$ring"
t_done
