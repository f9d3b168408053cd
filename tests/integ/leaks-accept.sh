#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the acceptance test of rip leaks.  The C++ program
# tests/integ/leaks_accept.cc, built here with -O0 -g, leaks known sites with
# exact sizes: malloc (5 x 48), calloc, a realloc chain (the block takes the
# last realloc's line), realloc(NULL), new and new[] of a trivial type, an
# open descriptor, one end of a pipe, and a POSIX shm segment with its
# mapping; it also frees, deletes and closes as much again.  Under
# rip run --mem --fd --shm, `rip leaks --json` must report exactly those
# groups: resource, count, bytes, kinds, sample, and the stack's frames in
# the program being the leaking function at its tagged line, then main at
# the tagged call; no group in the functions that leak nothing; groups with
# no frame in the program (libstdc++ or libc start-up) are allowed, but only
# for memory.  The totals add up, the trace is complete.  The text report
# says the same as the JSON, group by group and frame by frame, with the
# same total line.  valgrind --leak-check=full on the same program: the same
# definitely-lost bytes and blocks, in total and per site (function, line).
# The program wipes stale copies of its pointers before it returns
# (tests/vgscrub.h), so valgrind's verdict is the same on every run.
. tests/data/common.sh
need_bin "$RIP" "$RIP_ASAN" "$BUILD/librip-preload.so"
need_cmd python3 valgrind
CXX=${CXX:-c++}
command -v "$CXX" >/dev/null || die "no C++ compiler ($CXX): make check installs g++ (mk/deps.sh)"

src=$TEST_TMP/leaks_accept.cc
prog=$TEST_TMP/leaks_accept
shm=/rip-accept-$$
trap 't_cleanup; rm -f "/dev/shm$shm" "/dev/shm$shm-vg"' EXIT
cp tests/integ/leaks_accept.cc "$src" || die "no tests/integ/leaks_accept.cc"
"$CXX" -O0 -g -fno-omit-frame-pointer -Wl,-z,now -Itests -o "$prog" "$src" || die "cannot build $src"

"$RIP" run --mem --fd --shm -q -o "$TEST_TMP/trace" -- "$prog" "$shm" >"$TEST_TMP/prog.out" \
	2>"$TEST_TMP/run.err"
rc=$?
[ "$rc" = 0 ] || { fail "rip run: exit $rc"; cat "$TEST_TMP/run.err" >&2; }
grep -q '^leaky done$' "$TEST_TMP/prog.out" || fail "the program did not run to its end"
[ -e "/dev/shm$shm" ] || fail "the program made no shm segment $shm"
rm -f "/dev/shm$shm"
[ -f "$TEST_TMP/trace/.rip-index" ] || die "no trace written"

# ---- rip leaks --json: exactly the known sites ----
expect_status 0 "rip leaks --json" "$RIP" leaks --json "$TEST_TMP/trace"
cp "$TEST_TMP/out" "$TEST_TMP/leaks.json"
grep -q "leaks_accept" "$TEST_TMP/err" && fail "rip leaks: a symbol problem with the program itself: $(cat "$TEST_TMP/err")"
python3 - "$TEST_TMP/leaks.json" "$src" "$shm" "$TEST_TMP/ours.json" <<'EOF' ||
import json, re, sys
r = json.load(open(sys.argv[1]))
src, shm, ours_out = sys.argv[2], sys.argv[3], sys.argv[4]
lines = {}
for n, l in enumerate(open(src), 1):
    for tag in re.findall(r"/\* ((?:SITE|CALL):[a-z0-9-]+) \*/", l):
        assert tag not in lines, ("tag twice", tag)
        lines[tag] = n
base = src.rsplit("/", 1)[1]
LS = "acc::leak_shm(char const*)"
# resource, site tag, call tag, function, count, bytes, kinds, sample
want = [
    ("mem", "malloc", "malloc", "acc::leak_malloc()", 5, 240, ["malloc"], None),
    ("mem", "calloc", "calloc", "acc::leak_calloc()", 1, 1000, ["calloc"], None),
    ("mem", "chain-realloc3", "chain-realloc3", "acc::leak_realloc_chain()", 1, 1024,
     ["realloc"], None),
    ("mem", "realloc-null", "realloc-null", "acc::leak_realloc_null()", 1, 200, ["realloc"], None),
    ("mem", "new", "new", "acc::leak_new()", 1, 40, ["new"], None),
    ("mem", "new-array", "new-array", "acc::leak_new_array()", 1, 280, ["new[]"], None),
    ("fd", "open", "open", "acc::leak_open()", 1, 0, ["open"], "/dev/null"),
    ("fd", "pipe", "pipe", "acc::leak_pipe_end()", 1, 0, ["pipe"], None),
    # the object's size is the one its ftruncate gave it (shm:resize)
    ("shm", "shm-open", "shm", LS, 1, 8192, ["shm_open"], shm),
    ("shm-map", "shm-map", "shm", LS, 1, 8192, ["mmap"], None),
]
quiet = {"acc::realloc_freed()", "acc::new_deleted()", "acc::open_closed()", "acc::noise()"}
bad = 0
def no(*msg):
    global bad
    bad += 1
    print("FAIL:", *msg, file=sys.stderr)

def ours(f):
    return f["file"] is not None and f["file"].rsplit("/", 1)[-1] == base

got, foreign = {}, []
for g in r["leaks"]:
    st = g["stack"] or []
    fr = [(f["function"], f["line"]) for f in st if ours(f)]
    for f in st:
        if f["function"] in quiet:
            no("a group in a function that leaks nothing:", g)
    if not fr:
        foreign.append(g)
        continue
    if not ours(st[0]):
        no("the innermost frame is not in the program:", st[0], g)
    key = (g["resource"], fr[0])
    if key in got:
        no("two groups for", key)
    got[key] = (g, fr)
# for valgrind: what rip reports for the program's memory sites, by function:line
mem = {"%s:%d" % fr[0]: [g["count"], g["bytes"]] for (res, _), (g, fr) in got.items()
       if res == "mem"}

for res, site, call, fn, count, nbytes, kinds, sample in want:
    key = (res, (fn, lines["SITE:" + site]))
    if key not in got:
        no("missing:", res, fn, "%s:%d" % (base, lines["SITE:" + site]), "(%s)" % site)
        continue
    g, fr = got.pop(key)
    exp = [(fn, lines["SITE:" + site]), ("main", lines["CALL:" + call])]
    if fr != exp:
        no(site, ": frames in the program", fr, "want", exp)
    have = (g["count"], g["bytes"], g["kinds"], g["sample"])
    if have != (count, nbytes, kinds, sample):
        no(site, ": count, bytes, kinds, sample", have, "want", (count, nbytes, kinds, sample))
    if not (0 <= g["first"] <= g["last"] <= r["duration"]):
        no(site, ": times", g["first"], g["last"], r["duration"])
    for f in g["stack"]:
        if ours(f) and f["module"] != r["exe"]:
            no(site, ": frame module", f["module"], "want", r["exe"])
for key, (g, fr) in got.items():
    no("a group nobody leaked:", key, "count", g["count"], "bytes", g["bytes"])

# Groups with no frame in the program: start-up allocations of libstdc++ or
# libc are allowed (they depend on the versions), descriptors and shm not.
for g in foreign:
    mods = {f["module"] for f in g["stack"] or []}
    print("note: a group outside the program:", g["resource"], g["count"], g["bytes"], g["kinds"],
          [f["function"] for f in (g["stack"] or [])][:4], file=sys.stderr)
    if g["resource"] != "mem" or r["exe"] in mods:
        no("a group with no frame in the program's source:", g)

t = r["totals"]
for res in ("mem", "fd", "shm", "shm-map"):
    gs = [g for g in r["leaks"] if g["resource"] == res]
    s = (sum(g["count"] for g in gs), sum(g["bytes"] for g in gs), len(gs))
    if (t[res]["count"], t[res]["bytes"], t[res]["sites"]) != s:
        no("totals of", res, t[res], "groups say", s)
    if t[res]["made_again"]:
        no("made again:", res, t[res])
    if res != "mem" and t[res]["released_unseen"]:
        no("released, never seen made:", res, t[res])
if not (r["complete"] and r["discarded"] == 0 and r["lost_packets"] == 0):
    no("the trace is not complete:", r["complete"], r["discarded"], r["lost_packets"])
if r["backtraces"]["bad"] or r["backtraces"]["undefined"] or r["failed_allocs"]:
    no("backtraces", r["backtraces"], "failed allocs", r["failed_allocs"])
if r["comm"] != "leaks_accept" or r["exe"] != src[:-3]:
    no("comm, exe:", r["comm"], r["exe"])
if r["resource_events"] < 100:
    no("only", r["resource_events"], "resource events")

json.dump(mem, open(ours_out, "w"))
sys.exit(1 if bad else 0)
EOF
	fail "rip leaks --json: not exactly the program's leaks"

# ---- the text report says what the JSON says ----
expect_status 0 "rip leaks" "$RIP" leaks "$TEST_TMP/trace"
cp "$TEST_TMP/out" "$TEST_TMP/leaks.txt"
python3 - "$TEST_TMP/leaks.json" "$TEST_TMP/leaks.txt" <<'EOF' || fail "rip leaks: text and JSON differ"
import json, re, sys
r = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read().split("\n")
base = lambda p: p.rsplit("/", 1)[-1]
NOUN = {"mem": ("block", " never freed"), "shm": ("shared memory segment", " never removed"),
        "shm-map": ("shared memory mapping", " never detached")}

def nbytes(n):  # the exact count, as "N bytes" or "X kB (N bytes)"
    return r"(?:%d bytes|\S+ \S+ \(%d bytes\))" % (n, n)

def frame(f):
    pre = "(inlined) " if f["inlined"] else ""
    if f["function"] and f["file"]:
        return pre + "%s (%s:%d)" % (f["function"], f["file"], f["line"])
    if f["function"]:
        return pre + "%s+0x%x (%s)" % (f["function"], f["offset"], base(f["module"]))
    if f["module"]:
        return pre + "%s+0x%x" % (base(f["module"]), f["offset"])
    return None

bad = 0
head = text[0]
want = "%s: pid %d (%s), %d events over %.3f s, %d of them resource events" % (
    r["source"], r["pid"], r["comm"], r["events"], r["duration"], r["resource_events"])
if head != want:
    print("first line:", repr(head), "want", repr(want), file=sys.stderr)
    bad += 1
i = 1
for g in r["leaks"]:
    assert text[i] == "", ("no blank line before a group", i, text[i])
    h = text[i + 1]
    i += 2
    what = ", ".join(g["kinds"])
    if g["sample"] is not None:
        what += ": " + g["sample"] + (", ..." if g["count"] > 1 else "")
    if g["resource"] == "fd":
        pat = r"%d file descriptors? left open" % g["count"]
    else:
        noun, verb = NOUN[g["resource"]]
        pat = r"%s in %d %ss?%s" % (nbytes(g["bytes"]), g["count"], noun, verb)
    pat += re.escape(" (%s), made at " % what) + r"(\d+\.\d+)(?:\.\.(\d+\.\d+))? s"
    m = re.fullmatch(pat, h)
    if not m:
        print("group header:", repr(h), "does not match", g, file=sys.stderr)
        bad += 1
    else:
        first = float(m.group(1))
        last = float(m.group(2)) if m.group(2) else first
        if abs(first - g["first"]) > 2e-6 or abs(last - g["last"]) > 2e-6:
            print("times:", h, g["first"], g["last"], file=sys.stderr)
            bad += 1
    for f in g["stack"] or []:
        want = frame(f)
        if want is None:
            i += 1
            continue
        if text[i] != "      " + want:
            print("frame:", repr(text[i]), "want", repr(want), file=sys.stderr)
            bad += 1
        i += 1
if text[i:i + 1] != [""] or not text[i + 1].startswith("total: "):
    print("after the groups:", text[i:i + 2], "want the total line", file=sys.stderr)
    bad += 1
t = r["totals"]
tot = [l for l in text if l.startswith("total: ")]
m = re.fullmatch(r"total: %s in %d blocks? never freed \(%d sites\), %d file descriptors? left "
                 r"open, %d shared memory segments? never removed \(%s\), %d shared memory "
                 r"mappings? never detached" % (nbytes(t["mem"]["bytes"]), t["mem"]["count"],
                 t["mem"]["sites"], t["fd"]["count"], t["shm"]["count"], nbytes(t["shm"]["bytes"]),
                 t["shm-map"]["count"]), tot[0] if tot else "")
if len(tot) != 1 or not m:
    print("total line:", tot, t, file=sys.stderr)
    bad += 1
sys.exit(1 if bad else 0)
EOF

# the ASan build says the same, without a sanitizer report
asan_run leaks --json "$TEST_TMP/trace"
[ "$asan_rc" = 0 ] || fail "asan rip leaks: exit $asan_rc"
cmp -s "$TEST_TMP/asan.out" "$TEST_TMP/leaks.json" || fail "asan rip leaks --json differs"

# ---- valgrind: the same definitely-lost bytes, in total and per site ----
valgrind --leak-check=full --num-callers=8 "$prog" "$shm-vg" >/dev/null 2>"$TEST_TMP/vg.err" ||
	fail "the program under valgrind failed"
rm -f "/dev/shm$shm-vg"
python3 - "$TEST_TMP/vg.err" "$TEST_TMP/ours.json" "$(basename "$src")" <<'EOF' ||
import json, re, sys
vg = open(sys.argv[1]).read().split("\n")
ours = json.load(open(sys.argv[2]))
base = sys.argv[3]
num = lambda s: int(s.replace(",", ""))
sites, total = {}, None
for i, l in enumerate(vg):
    m = re.search(r"== ([\d,]+) (?:\(([\d,]+) direct, ([\d,]+) indirect\) )?bytes in ([\d,]+) "
                  r"blocks are definitely lost", l)
    if m:
        direct = num(m.group(2) or m.group(1))
        site = None
        for fl in vg[i + 1:]:
            f = re.search(r"(?:at|by) 0x[0-9A-F]+: (.*) \((?:.*/)?%s:(\d+)\)$" % re.escape(base), fl)
            if f:
                site = "%s:%s" % (f.group(1), f.group(2))
                break
            if not re.search(r"(?:at|by) 0x", fl):
                break
        assert site, ("a definitely-lost record outside the program", l)
        assert site not in sites, ("two records for", site)
        sites[site] = [num(m.group(4)), direct]
    m = re.search(r"definitely lost: ([\d,]+) bytes in ([\d,]+) blocks", l)
    if m:
        total = [num(m.group(2)), num(m.group(1))]
assert total, "valgrind printed no definitely-lost summary"
want = [sum(v[0] for v in ours.values()), sum(v[1] for v in ours.values())]
ok = total == want and sites == ours
print("valgrind definitely lost:", total, "rip leaks:", want, file=sys.stderr)
if not ok:
    print("valgrind:", sorted(sites.items()), "\nrip:     ", sorted(ours.items()), file=sys.stderr)
    # where the missing blocks went (reachable, possibly lost): what to look at
    for l in vg:
        if re.search(r"(definitely|indirectly|possibly) lost:|still reachable:", l):
            print(l, file=sys.stderr)
sys.exit(0 if ok else 1)
EOF
	fail "valgrind and rip leaks disagree on what is definitely lost"
t_done
