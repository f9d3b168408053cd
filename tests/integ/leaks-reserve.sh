#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: address space reserved with PROT_NONE is not memory.  A
# JVM reserves its heap so (5.9 GB for java -version here) and rip leaks
# said "5914.0 MB in 1 block never freed (mmap)".  reserve_prog
# (tests/integ/reserve_prog.c) reserves 64 MiB, makes 1 MiB of it memory by
# mprotect and 2 MiB by a mapping placed over it, gives 512 KiB of those
# back, and leaves.  rip leaks: 1 MiB at commit_mprotect (kind mprotect),
# 1.5 MiB at commit_fixed, nothing at reserve_site, and a line (and --json
# "reserved") with the 61.5 MiB still reserved in 2 ranges; an mprotect
# of memory (read-only, and a malloc'd page) makes nothing.  rip report
# (with the same line of what is reserved), the pprof heap profile, rip
# export -f folded and rip calltree --all count the same memory.
. tests/data/common.sh
prog=$BUILD/tests/integ/reserve_prog
need_bin "$RIP" "$prog" "$BUILD/librip-preload.so"
need_cmd python3
t=$TEST_TMP/trace

expect_status 0 "rip run" "$RIP" run --mem -o "$t" -- "$prog"
grep -q '^done$' "$TEST_TMP/out" || die "the program did not finish: $(cat "$TEST_TMP/out")"
grep -q ", 0 lost" "$TEST_TMP/err" || fail "losses: $(cat "$TEST_TMP/err")"

expect_status 0 "rip leaks" "$RIP" leaks "$t"
grep -q "^not counted: .*(64487424 bytes) of address space still reserved (mmap with PROT_NONE) in 2 ranges" \
	"$TEST_TMP/out" || fail "no line of what is reserved: $(grep -A1 '^total' "$TEST_TMP/out")"
grep -q "reserve_site" "$TEST_TMP/out" && fail "a reservation reported as memory: $(cat "$TEST_TMP/out")"
grep -q "^not counted: .*whole process" "$TEST_TMP/out" &&
	fail "rip leaks with no filter says one is not applied: $(grep '^not counted' "$TEST_TMP/out")"
# the line is the whole process's: a filter says so; with no memory shown, no line
expect_status 0 "rip leaks --min-size" "$RIP" leaks --min-size=1 "$t"
grep -q "^not counted: .*(64487424 bytes) .*(by the whole process: the filters are not applied to it)" \
	"$TEST_TMP/out" || fail "rip leaks --min-size: the reserved line does not say it is not filtered: $(grep -A1 '^total' "$TEST_TMP/out")"
expect_status 0 "rip leaks -r fd" "$RIP" leaks -r fd "$t"
grep -q "^not counted" "$TEST_TMP/out" && fail "rip leaks -r fd: a line of memory reserved: $(cat "$TEST_TMP/out")"

expect_status 0 "rip leaks --json" "$RIP" leaks --json "$t"
cp "$TEST_TMP/out" "$TEST_TMP/leaks.json"
python3 - "$TEST_TMP/leaks.json" <<'PY' || fail "rip leaks --json"
import json, sys
d = json.load(open(sys.argv[1]))
MIB = 1 << 20
assert d["reserved"] == {"bytes": 64487424, "ranges": 2}, d["reserved"]
sites = {}
for g in d["leaks"]:
    names = " ".join(f.get("function") or "" for f in g["stack"])
    for fn in ("commit_mprotect", "commit_fixed", "reserve_site", "reserve_freed", "reprotect"):
        if fn in names:
            sites[fn] = (g["count"], g["bytes"], g["kinds"])
assert sites.get("commit_mprotect") == (1, MIB, ["mprotect"]), sites
assert sites.get("commit_fixed") == (1, MIB + MIB // 2, ["mmap"]), sites
assert "reserve_site" not in sites and "reserve_freed" not in sites and "reprotect" not in sites, sites
mem = d["totals"]["mem"]
# and the stdio buffer puts() made
assert mem["count"] == 3 and mem["bytes"] == 2 * MIB + MIB // 2 + 4096, mem
PY

expect_status 0 "rip report --json" "$RIP" report --json "$t"
python3 - "$TEST_TMP/out" <<'PY' || fail "rip report --json"
import json, sys
m = json.load(open(sys.argv[1]))["memory"]
MIB = 1 << 20
# 2 MiB + 1 MiB made, the aligned page and the stdio buffer: no reservation counted
assert m["allocations"] == 4 and m["bytes"] == 3 * MIB + 2 * 4096, m
assert m["live_blocks"] == 3 and m["live_bytes"] == 2 * MIB + MIB // 2 + 4096, m
assert m["reserved"] == {"bytes": 64487424, "ranges": 2}, m
PY
expect_status 0 "rip report" "$RIP" report "$t"
grep -q "^  not counted: .*(64487424 bytes) of address space still reserved (mmap with PROT_NONE) in 2 ranges" \
	"$TEST_TMP/out" || fail "rip report: no line of what is reserved: $(head -n 12 "$TEST_TMP/out")"

expect_status 0 "rip export -f pprof" "$RIP" export -f pprof --force -o "$TEST_TMP/p.pb.gz" "$t"
python3 tests/data/pprof.py samples "$TEST_TMP/p.pb.gz" >"$TEST_TMP/samples.json" ||
	die "pprof.py cannot read the profile"
python3 - "$TEST_TMP/samples.json" "$TEST_TMP/p.pb.gz" <<'PY' || fail "the pprof inuse values"
import json, subprocess, sys
summ = json.loads(subprocess.check_output(["python3", "tests/data/pprof.py", "summary", sys.argv[2]]))
types = [t[0] if isinstance(t, list) else t.get("type", t) for t in summ["sample_types"]]
io, isp = types.index("inuse_objects"), types.index("inuse_space")
objs = sum(s["values"][io] for s in json.load(open(sys.argv[1])))
space = sum(s["values"][isp] for s in json.load(open(sys.argv[1])))
assert (objs, space) == (3, 2 * (1 << 20) + (1 << 19) + 4096), (objs, space)
PY

expect_status 0 "rip export -f folded" "$RIP" export -f folded --value=leaked -o - "$t"
sum=$(awk '{ s += $NF } END { print s }' "$TEST_TMP/out")
[ "$sum" = $((2 * 1048576 + 524288 + 4096)) ] || fail "folded leaked bytes: $sum"
expect_status 0 "rip export -f folded" "$RIP" export -f folded --value=bytes -o - "$t"
sum=$(awk '{ s += $NF } END { print s }' "$TEST_TMP/out")
[ "$sum" = $((3 * 1048576 + 8192)) ] || fail "folded bytes allocated: $sum"

# rip calltree --all counts what was made as rip report does: the mprotect's MiB too
expect_status 0 "rip calltree --all" "$RIP" calltree --all -o - "$t"
grep -q 'label="rip calltree: .*(3153920 bytes) in 4 blocks allocated' "$TEST_TMP/out" ||
	fail "calltree --all: $(grep -o 'label="rip calltree[^"]*' "$TEST_TMP/out")"
t_done
