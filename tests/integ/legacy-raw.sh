#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: `rip ps --legacy FILE --exe EXE` reads raw files in the
# ORIGINAL librip format (tid-indexed slots of a 64-byte name and 32 entries
# of 8-bit counter << 56 | 56-bit address, all-ones = exited).  A non-PIE
# program with known functions is built here; tests/data/legacy_raw.py
# writes a file with addresses of those functions (from nm): a short ring,
# rings wrapped 300 and 258 times (counters past 255), a full one and two
# exited ones.  Every slot must show the right functions in order and the
# exited ones as exited (with --all only); a name's control bytes are
# printed as '?'.  Files whose size is not a whole
# number of slots: exit 1 and a clear message.
. tests/data/common.sh
need_bin "$RIP" "$RIP_ASAN"
need_cmd python3
need_cmd nm
cc=${CC:-cc}
exe=$TEST_TMP/legacy_raw_prog
"$cc" -O1 -g -no-pie -fno-pie -o "$exe" tests/data/legacy_raw_prog.c 2>"$TEST_TMP/cc.err" ||
	die "cannot build a non-PIE program: $(head -n 2 "$TEST_TMP/cc.err")"
nm "$exe" >"$TEST_TMP/nm" || die "nm $exe"
raw=$TEST_TMP/raw.ring
python3 tests/data/legacy_raw.py "$TEST_TMP/nm" "$raw" >"$TEST_TMP/expected" || die "generator"

expect_status 0 "rip ps --legacy --threads --all --json" \
	"$RIP" ps --legacy "$raw" --exe "$exe" --threads --all --json
python3 - "$TEST_TMP/out" "$TEST_TMP/expected" <<'PY' || fail "wrong slots in the --json output"
import json, sys
d = json.load(open(sys.argv[1]))
got = {}
for s in d["slots"]:
    got[s["tid"]] = "%d %s %s %s" % (s["tid"], s["name"], s["state"],
                                     ",".join(p["function"] for p in s["path"]))
want = {int(l.split()[0]): l.strip() for l in open(sys.argv[2]) if l.strip()}
bad = 0
for tid in sorted(set(got) | set(want)):
    if got.get(tid) != want.get(tid):
        bad += 1
        print("tid %d:\n  got  %s\n  want %s" % (tid, got.get(tid), want.get(tid)), file=sys.stderr)
sys.exit(1 if bad else 0)
PY

# Grouped, without --all: the exited ones are left out.
asan_run ps --legacy "$raw" --exe "$exe"
[ "$asan_rc" = 0 ] || fail "rip (asan) ps --legacy: exit $asan_rc"
grep -q 'original librip file, 4 threads, 2 exited' "$TEST_TMP/asan.out" ||
	fail "header line: $(head -n 1 "$TEST_TMP/asan.out")"
grep -q ' 3  *raw_wrap_last .*wrapped' "$TEST_TMP/asan.out" ||
	fail "grouped: want 3 threads in raw_wrap_last: $(cat "$TEST_TMP/asan.out")"
grep -q ' 1  *raw_alpha .*thread alpha' "$TEST_TMP/asan.out" || fail "grouped: alpha"
grep -q 'gone' "$TEST_TMP/asan.out" && fail "exited slots shown without --all"
asan_run ps --legacy "$raw" --exe "$exe" --threads --all -v
[ "$asan_rc" = 0 ] || fail "rip (asan) ps --legacy --threads: exit $asan_rc"
grep -q '^thread  *gone  *tid 20  *exited' "$TEST_TMP/asan.out" ||
	fail "--threads --all: gone not exited: $(cat "$TEST_TMP/asan.out")"

# A name with control bytes (an escape sequence, a bell) is printed with
# them made '?', as a ring file's names are: never raw to the terminal.
cp "$raw" "$TEST_TMP/ctl.ring"
printf 'a\033[2J\007' | dd of="$TEST_TMP/ctl.ring" bs=1 seek=$((3 * 320)) conv=notrunc 2>/dev/null ||
	die "dd"
for fmt in "" --json; do
	# shellcheck disable=SC2086 # no format: no word
	expect_status 0 "rip ps --legacy --threads $fmt (control bytes)" \
		"$RIP" ps --legacy "$TEST_TMP/ctl.ring" --exe "$exe" --threads $fmt
	LC_ALL=C grep -q "$(printf '[\033\007]')" "$TEST_TMP/out" &&
		fail "rip ps --legacy $fmt: a name's control bytes printed raw"
	grep -q 'a?\[2J?' "$TEST_TMP/out" ||
		fail "rip ps --legacy $fmt: the name not made printable: $(cat "$TEST_TMP/out")"
done

# Garbage sizes and usage errors.
head -c 321 "$raw" >"$TEST_TMP/odd.ring"
: >"$TEST_TMP/empty.ring"
head -c 100 /dev/urandom >"$TEST_TMP/small.ring"
for f in odd empty small; do
	expect_status 1 "--legacy on $f.ring" "$RIP" ps --legacy "$TEST_TMP/$f.ring" --exe "$exe"
	[ "$(wc -l <"$TEST_TMP/err")" = 1 ] || fail "$f.ring: not one error line: $(cat "$TEST_TMP/err")"
	grep -q 'not a whole number of 320-byte librip slots' "$TEST_TMP/err" ||
		fail "$f.ring: unclear message: $(cat "$TEST_TMP/err")"
done
expect_status 2 "--legacy without --exe" "$RIP" ps --legacy "$raw"
grep -q -- '--exe' "$TEST_TMP/err" || fail "--legacy without --exe: message does not say --exe"
expect_status 2 "--exe without --legacy" "$RIP" ps --exe "$exe" "$raw"
expect_status 1 "--legacy on a missing file" "$RIP" ps --legacy "$TEST_TMP/nope" --exe "$exe"
t_done
