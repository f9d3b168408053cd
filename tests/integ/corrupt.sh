#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip reads hostile ring files without crashing, hanging or
# lying.  A real file (from the snapper helper, run with RIP_RING) is damaged
# by tests/data/corrupt.py: truncated (0, 100, 4095 bytes, half, header
# only), wrong or zero magic, a newer format version, the other byte order,
# absurd counts and offsets (slot_count 0xffffffff, mod_count huge, fresh
# over slot_count, offsets that wrap, small event rings that do not fit).
# Each must give exit 1 and exactly one
# error line that names the problem, from rip and from the ASan/UBSan build.
# Then 150 copies with one random bit flipped each (header and used slots):
# the ASan rip must exit 0 or 1, never die of a signal, and print no
# sanitizer report.  A directory, /dev/null and a fifo as TARGET: exit 1, a
# clear message, no hang.  `rip ls` and `rip gc` list corrupt files in
# RIP_DIR as bad and never remove them.
# 350 runs of the ASan build (0.1 s each of start and leak check alone): 45 s
# alone, up to 3 minutes beside other tests on a busy host.
# Timeout: 480
. tests/data/common.sh
prog=$BUILD/tests/integ/snapper
need_bin "$prog" "$RIP" "$RIP_ASAN"
need_cmd python3
flips=${CORRUPT_FLIPS:-150}
seed=${CORRUPT_SEED:-1}

src=$TEST_TMP/good.ring
# a small file (few slots, few small event rings) so that the copies stay cheap,
# with both kinds of event ring
RIP_SLOTS=4096 RIP_EVENT_SMALL_RINGS=64 RIP_RING=$src "$prog" || die "snapper failed"
[ -s "$src" ] || die "snapper with RIP_RING=$src made no file"
expect_status 0 "rip ps on the intact file" "$RIP" ps "$src"
grep -q snapper_work "$TEST_TMP/out" || fail "intact file: snapper_work not shown"

mkdir -p "$TEST_TMP/named" "$TEST_TMP/flips"
python3 tests/data/corrupt.py named "$src" "$TEST_TMP/named" || die "generator failed"
n=0
for f in "$TEST_TMP"/named/*.ring; do
	name=$(basename "$f" .ring)
	want=$(cat "$TEST_TMP/named/$name.want")
	n=$((n + 1))
	for bin in "$RIP" "$RIP_ASAN"; do
		timeout 20 "$bin" ps "$f" >"$TEST_TMP/out" 2>"$TEST_TMP/err"
		rc=$?
		lines=$(wc -l <"$TEST_TMP/err")
		[ "$rc" = 1 ] || fail "$name: $(basename "$bin") exit $rc, want 1"
		[ "$lines" = 1 ] || fail "$name: $lines error lines, want 1: $(head -n 3 "$TEST_TMP/err")"
		grep -q "^rip: .*$want" "$TEST_TMP/err" ||
			fail "$name: the message does not say '$want': $(head -n 1 "$TEST_TMP/err")"
		[ -s "$TEST_TMP/out" ] && fail "$name: output on stdout despite the error"
	done
done
echo "$n damaged files refused cleanly"

# A damaged slot (the only one in use): the slot is skipped with one line that
# says so, exit 1, and no sanitizer report.
python3 - "$src" "$TEST_TMP/slot.ring" <<'PY' || die "cannot damage the copy"
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
struct.pack_into("<I", b, 4096 + 4, 7)  # slot 0: state 7 (no such state)
open(sys.argv[2], "wb").write(b)
PY
asan_run ps "$TEST_TMP/slot.ring"
[ "$asan_rc" = 1 ] || fail "slot 0 with a bad state: exit $asan_rc, want 1"
grep -q 'corrupt slot.*slot 0, unknown state' "$TEST_TMP/asan.err" ||
	fail "slot 0 with a bad state: message: $(head -n 2 "$TEST_TMP/asan.err")"

# Random single-bit flips: anything goes but a crash, a hang or a sanitizer report.
python3 tests/data/corrupt.py flips "$src" "$TEST_TMP/flips" "$flips" "$seed" || die "generator"
bad=0 ok=0 refused=0
for f in "$TEST_TMP"/flips/*.ring; do
	for args in "ps" "ps --threads --all -v --json"; do
		try=0
		while :; do
			# shellcheck disable=SC2086
			ASAN_OPTIONS=detect_leaks=1:exitcode=99 \
				UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=98 \
				timeout 20 "$RIP_ASAN" $args "$f" >/dev/null 2>"$TEST_TMP/err"
			rc=$?
			# 126/127: the binary is being rebuilt under us; that is no verdict
			{ [ "$rc" = 126 ] || [ "$rc" = 127 ]; } && [ "$try" -lt 10 ] || break
			try=$((try + 1))
			sleep 1
		done
		if [ "$rc" -gt 1 ] || grep -Eq 'Sanitizer|runtime error' "$TEST_TMP/err"; then
			bad=$((bad + 1))
			[ "$bad" -le 5 ] && fail "$(basename "$f") (seed $seed): rip $args: exit $rc:" \
				"$(grep -E 'ERROR|runtime error|SUMMARY' "$TEST_TMP/err" | head -n 3)"
		elif [ "$rc" = 1 ]; then
			refused=$((refused + 1))
		else
			ok=$((ok + 1))
		fi
	done
done
echo "bit flips (seed $seed): $ok runs read, $refused refused, $bad crashed"
[ "$bad" = 0 ] || fail "$bad runs on bit-flipped files crashed or tripped the sanitizers"

# Things that are not ring files at all.
mkfifo "$TEST_TMP/fifo" || die "mkfifo"
for t in "$TEST_TMP" /dev/null "$TEST_TMP/fifo" "$TEST_TMP/nonexistent.ring"; do
	timeout 10 "$RIP" ps "$t" >"$TEST_TMP/out" 2>"$TEST_TMP/err"
	rc=$?
	[ "$rc" = 124 ] && fail "rip ps $t hangs"
	[ "$rc" = 1 ] || fail "rip ps $t: exit $rc, want 1"
	[ "$(wc -l <"$TEST_TMP/err")" = 1 ] || fail "rip ps $t: not one error line: $(cat "$TEST_TMP/err")"
	grep -q "^rip: .*$t" "$TEST_TMP/err" || fail "rip ps $t: message does not name it"
done
grep -q 'No such file' "$TEST_TMP/err" || fail "missing file: $(cat "$TEST_TMP/err")"

# rip ls / rip gc with corrupt files among good ones.
d=$TEST_TMP/dir
mkdir -p "$d"
cp "$src" "$d/rip-1-1.ring"
cp "$TEST_TMP/named/bad-magic.ring" "$d/rip-2-2.ring"
cp "$TEST_TMP/named/trunc-half.ring" "$d/rip-3-3.ring"
cp "$TEST_TMP/named/newer-version.ring" "$d/other.ring"
cp "$TEST_TMP/named/trunc-0.ring" "$d/rip-4-4.ring"
RIP_DIR=$d expect_status 0 "rip ls" "$RIP" ls
for x in rip-2-2 rip-3-3 other rip-4-4; do
	grep -q "^- .* bad .*$x.ring" "$TEST_TMP/out" || fail "rip ls does not list $x as bad"
done
grep -q "^[0-9].* \(dead\|exited\) .*rip-1-1.ring" "$TEST_TMP/out" ||
	fail "rip ls does not list the good file as dead/exited: $(cat "$TEST_TMP/out")"
RIP_DIR=$d expect_status 0 "rip ls --json" "$RIP" ls --json
python3 -c 'import json,sys; d=json.load(sys.stdin); bad=[e for e in d if not e["valid"]]
assert len(d) == 5 and len(bad) == 4, d' <"$TEST_TMP/out" || fail "rip ls --json: wrong entries"
RIP_DIR=$d expect_status 0 "rip gc" "$RIP" gc
[ -e "$d/rip-1-1.ring" ] && fail "rip gc kept the dead file"
for x in rip-2-2 rip-3-3 other rip-4-4; do
	[ -e "$d/$x.ring" ] || fail "rip gc removed the corrupt file $x.ring"
done
t_done
