#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: `rip ps --legacy FILE --exe EXE` resolves a position-independent
# EXE, whose raw file holds absolute addresses and no load address.
# tests/integ/legacy_prog.c, written for the original librip API, is built
# with -fPIE -pie against tests/data/orig/librip.h (a stand-in for the
# original header, which wrote the raw format) and run.  While it runs, the
# load address comes from its /proc/PID/maps: found by who writes FILE, and
# with --pid.  Once it is killed: found from the snapped addresses alone, and
# given with --base (the start of its first line in /proc/PID/maps, kept from
# the run).  Every time, every thread names its functions in order.  A build
# whose functions are page-aligned makes one snapped address fit several
# bases: a file with only that address exits 1 and says "N candidate bases"
# (and --base resolves it), while the whole file of that build still has one
# base.  A --base that does not fit is noted; an EXE that did not write FILE
# and a dead --pid fail.  Addresses inside functions but after no snap
# (legacy_raw.py's, of a PIE) take the one base that puts them all in
# functions, with a note.
. tests/data/common.sh
need_bin "$RIP" "$RIP_ASAN"
need_cmd python3 nm
[ "$(uname -m)" = x86_64 ] || skip "the original librip header (its snap) is x86-64 only"
cc=${CC:-cc}

# build OUT FLAGS...: legacy_prog.c as a PIE of the original header.  -O1: at -O2,
# gcc's identical-code folding merges the functions whose only code is a snap.
build() {
	b_out=$1
	shift
	"$cc" -std=gnu11 -O1 -g -fPIE -pie "$@" -Itests/data/orig -o "$b_out" \
		tests/integ/legacy_prog.c -pthread 2>"$TEST_TMP/cc.err" ||
		die "cannot build a PIE program: $(head -n 3 "$TEST_TMP/cc.err")"
	[ "$(od -An -tu1 -j16 -N1 "$b_out" | tr -d ' ')" = 3 ] ||
		die "$b_out is not position-independent (not ET_DYN)"
}

# run EXE RAW: start it, wait until its threads snapped; $pid, and $base (hex, no 0x):
# the start of EXE's line of file offset 0 in /proc/PID/maps.
run() {
	rm -f "$TEST_TMP/ready"
	t_bg "$1" "$2" "$TEST_TMP/ready"
	pid=$T_LAST
	wait_file "$TEST_TMP/ready" 20 || die "$1 did not get ready"
	base=$(awk -v n="${1##*/}" '{ k = split($6, p, "/") }
		p[k] == n && $3 == "00000000" { sub(/-.*/, "", $1); print $1; exit }' "/proc/$pid/maps")
	[ -n "$base" ] || die "no line of ${1##*/} in /proc/$pid/maps"
}

# check JSON BASE FROM [WRITER]: the slots of a --threads --all --json output, and
# where it says the executable was loaded.
check() {
	python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
base, frm = int(sys.argv[2], 16), sys.argv[3]
bad = []
if int(d.get("exe_base", "0"), 16) != base or d.get("base_from") != frm:
    bad.append("base %s from %s, want 0x%x from %s" % (d.get("exe_base"), d.get("base_from"),
                                                       base, frm))
if len(sys.argv) > 4 and d.get("writer_pid") != int(sys.argv[4]):
    bad.append("writer_pid %s, want %s" % (d.get("writer_pid"), sys.argv[4]))
want = {"park-%d" % i: ("running", ["legacy_step", "legacy_parked"]) for i in range(1, 5)}
want.update({"gone-%d" % i: ("exited", ["legacy_step", "legacy_before_exit"])
             for i in range(5, 8)})
# The original's rip_init zeroed the record: the coroutine resumed keeps its last part.
want["coro-10"] = ("running", ["legacy_coro_b"])
got = {s["name"]: (s["state"], [p["function"] for p in s["path"]]) for s in d["slots"]}
for name in sorted(set(want) | set(got)):
    if got.get(name) != want.get(name):
        bad.append("%s: got %s, want %s" % (name, got.get(name), want.get(name)))
for b in bad:
    print("   ", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}

exe=$TEST_TMP/legacy_pie
raw=$TEST_TMP/pie.raw
build "$exe"
run "$exe" "$raw"

# Alive: its maps, found by who writes the file, then named with --pid.
expect_status 0 "alive" "$RIP" ps --legacy "$raw" --exe "$exe" --threads --all --json
check "$TEST_TMP/out" "$base" maps "$pid" || fail "alive: wrong slots or base"
expect_status 0 "alive, --pid" "$RIP" ps --legacy "$raw" --exe "$exe" --pid "$pid" \
	--threads --all --json
check "$TEST_TMP/out" "$base" maps "$pid" || fail "alive, --pid: wrong slots or base"

t_kill "$pid"

# Gone: from the addresses alone, and with --base.
expect_status 0 "dead" "$RIP" ps --legacy "$raw" --exe "$exe" --threads --all --json
check "$TEST_TMP/out" "$base" inferred || fail "dead: wrong slots or base"
expect_status 0 "dead, --base" "$RIP" ps --legacy "$raw" --exe "$exe" --base="0x$base" \
	--threads --all --json
check "$TEST_TMP/out" "$base" option || fail "dead, --base: wrong slots or base"
asan_run ps --legacy "$raw" --exe "$exe"
[ "$asan_rc" = 0 ] || fail "rip (asan) ps --legacy: exit $asan_rc"
head=$(head -n 1 "$TEST_TMP/asan.out")
want="original librip file, 5 threads, 3 exited; legacy_pie loaded at 0x$base"
case $head in
*"$want (found from the snapped addresses)") ;;
*) fail "header line: $head" ;;
esac
grep -q ' 4  *legacy_parked .*park-1\.\.4' "$TEST_TMP/asan.out" ||
	fail "grouped: want park-1..4 in legacy_parked: $(cat "$TEST_TMP/asan.out")"
grep -q ' 1  *legacy_coro_b .*coro-10' "$TEST_TMP/asan.out" ||
	fail "grouped: want coro-10 in legacy_coro_b: $(cat "$TEST_TMP/asan.out")"

# A --base that puts no address after a snap: resolved as asked, and noted.
wrong=$(printf '%x' $((0x$base + 0x1000)))
expect_status 0 "wrong --base" "$RIP" ps --legacy "$raw" --exe "$exe" --base="$wrong"
grep -q "note: 4 of the 4 snapped addresses are not just after a snap in .* loaded at 0x$wrong" \
	"$TEST_TMP/err" || fail "wrong --base not noted: $(cat "$TEST_TMP/err")"
expect_status 1 "--pid of a dead process" "$RIP" ps --legacy "$raw" --exe "$exe" --pid "$pid"
grep -q "cannot read /proc/$pid/maps" "$TEST_TMP/err" || fail "dead --pid: $(cat "$TEST_TMP/err")"

# Page-aligned functions: the four that are nothing but a snap have it at one page offset.
exe_al=$TEST_TMP/legacy_pie_aligned
raw_al=$TEST_TMP/aligned.raw
build "$exe_al" -falign-functions=4096
run "$exe_al" "$raw_al"
t_kill "$pid"
expect_status 0 "aligned, whole file" "$RIP" ps --legacy "$raw_al" --exe "$exe_al" \
	--threads --all --json
check "$TEST_TMP/out" "$base" inferred || fail "aligned, whole file: wrong slots or base"
# Record 10 alone (coro-10: one address, in legacy_coro_b).
head -c 3520 /dev/zero >"$TEST_TMP/one.raw"
dd if="$raw_al" of="$TEST_TMP/one.raw" bs=320 skip=10 seek=10 count=1 conv=notrunc 2>/dev/null ||
	die "dd"
asan_run ps --legacy "$TEST_TMP/one.raw" --exe "$exe_al"
[ "$asan_rc" = 1 ] || fail "one address, aligned: exit $asan_rc, want 1"
grep -Eq '[2-9] candidate bases fit the 1 snapped address equally well \(0x.*\): give --base' \
	"$TEST_TMP/asan.err" || fail "one address, aligned: unclear message: $(cat "$TEST_TMP/asan.err")"
[ -s "$TEST_TMP/asan.out" ] &&
	fail "one address, aligned: printed a guess: $(cat "$TEST_TMP/asan.out")"
expect_status 0 "one address, --base" "$RIP" ps --legacy "$TEST_TMP/one.raw" --exe "$exe_al" \
	--base="0x$base"
grep -q ' 1  *legacy_coro_b .*coro-10' "$TEST_TMP/out" ||
	fail "one address, --base: $(cat "$TEST_TMP/out")"

# Addresses inside functions but after no snap (made up by tests/data/legacy_raw.py from
# nm of a PIE, moved to a base of its own): the one base that puts them all in the
# functions, with a note that it is a weaker guess.
fn_exe=$TEST_TMP/legacy_raw_pie
"$cc" -O1 -g -fPIE -pie -o "$fn_exe" tests/data/legacy_raw_prog.c 2>"$TEST_TMP/cc.err" ||
	die "cannot build a PIE program: $(head -n 2 "$TEST_TMP/cc.err")"
fn_base=5612a4c3f000
nm "$fn_exe" >"$TEST_TMP/nm.pie" || die "nm $fn_exe"
python3 -c 'import sys
for l in open(sys.argv[1]):
    f = l.split()
    if len(f) == 3:
        print("%x %s %s" % (int(f[0], 16) + int(sys.argv[2], 16), f[1], f[2]))' \
	"$TEST_TMP/nm.pie" "$fn_base" >"$TEST_TMP/nm" || die "moving the addresses of nm"
python3 tests/data/legacy_raw.py "$TEST_TMP/nm" "$TEST_TMP/fn.raw" >"$TEST_TMP/fn.want" ||
	die "legacy_raw.py"
expect_status 0 "function bounds" "$RIP" ps --legacy "$TEST_TMP/fn.raw" --exe "$fn_exe" \
	--threads --all --json
grep -q "is a weaker guess" "$TEST_TMP/err" ||
	fail "function bounds: no note: $(cat "$TEST_TMP/err")"
python3 - "$TEST_TMP/out" "$TEST_TMP/fn.want" "$fn_base" <<'PY' || fail "function bounds: wrong"
import json, sys
d = json.load(open(sys.argv[1]))
bad = 0
if int(d.get("exe_base", "0"), 16) != int(sys.argv[3], 16) or d.get("base_from") != "functions":
    bad = print("    exe_base %s from %s, want 0x%s from functions" % (
        d.get("exe_base"), d.get("base_from"), sys.argv[3]), file=sys.stderr) or 1
got = {s["tid"]: "%d %s %s %s" % (s["tid"], s["name"], s["state"],
                                   ",".join(p["function"] for p in s["path"])) for s in d["slots"]}
for l in open(sys.argv[2]):
    tid = int(l.split()[0])
    if got.get(tid) != l.strip():
        bad = print("    got  %s\n    want %s" % (got.get(tid), l.strip()), file=sys.stderr) or 1
sys.exit(bad)
PY

# The wrong executable, and usage errors.
expect_status 1 "another executable" "$RIP" ps --legacy "$raw" --exe "$exe_al"
grep -q 'no base puts most of the 4 snapped addresses just after a snap' "$TEST_TMP/err" ||
	fail "another executable: unclear message: $(cat "$TEST_TMP/err")"
expect_status 2 "--base without --legacy" "$RIP" ps --base=0x1000 "$raw"
expect_status 2 "--base and --pid" "$RIP" ps --legacy "$raw" --exe "$exe" --base=0x1000 --pid 1
expect_status 2 "--base not page-aligned" "$RIP" ps --legacy "$raw" --exe "$exe" --base=0x1234
t_done
