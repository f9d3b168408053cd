#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a rip record that takes the rings over from the one before
# it holds each event once when that one wrote an open packet in pieces
# (every 250 ms: record/consume.c rec_tick).  python3 under
# librip-preload.so allocates (its main thread's packet stays open), then
# polls a file every 50 ms: the first recorder writes what the packet held in pieces, and the
# second, attached, gets copies of them.  The first gets Ctrl-C and says
# where it stopped; the second must go on from there in its own pieces
# (it idles on) and in the packet's rest, not from the packet's start.  Checked: no event twice in
# the second's trace, its packets' sequence numbers follow each other, and
# it holds the allocations made after the takeover.
. tests/data/common.sh
pre=$PWD/$BUILD/librip-preload.so
need_bin "$pre" "$RIP"
need_cmd python3
export RIP_DIR="$TEST_TMP/rings"
mkdir -p "$RIP_DIR"
cd "$TEST_TMP" || die "no TEST_TMP"

cat >prog.py <<'PY'
import os, time
x = [bytearray(100 + i) for i in range(200)]
open("ready.tmp", "w").write("1")
os.rename("ready.tmp", "ready")
while not os.path.exists("go"):
    time.sleep(0.05)
x = [bytearray(5000 + i) for i in range(300)]
PY
t_bg env RIP_RING=1 RIP_MODE=block LD_PRELOAD="$pre" python3 prog.py >prog.out 2>&1
prog=$T_LAST
wait_until 30 test -e ready || die "python3 did not start: $(cat prog.out)"
t_bg "$RIP" record -o first "$prog" 2>first.err
first=$T_LAST
wait_until 30 grep -q "recording python3" first.err ||
	die "the first rip record did not start: $(cat first.err)"
t_bg "$RIP" record -o second "$prog" 2>second.err
second=$T_LAST
wait_until 30 grep -q "copies every packet to us" second.err ||
	die "the second rip record did not start: $(cat second.err)"
# idle: the open packet's polling allocations go out in pieces
sleep 1
kill -INT "$first"
wait "$first" || fail "the first rip record: exit $?: $(cat first.err)"
wait_until 30 grep -q "this one consumes the rings now" second.err ||
	die "the second rip record did not take over: $(cat second.err)"
# idle again: now the second writes pieces of the same packet
sleep 1
touch go
wait "$prog" || fail "python3: exit $?: $(cat prog.out)"
wait "$second" || fail "the second rip record: exit $?: $(cat second.err)"
cat first.err second.err

"$RIP" dump second >second.dump 2>dump.err || fail "rip dump second: $(cat dump.err)"
twice=$(sed '$d' second.dump | sort | uniq -d | wc -l)
[ "$twice" = 0 ] || fail "$twice events twice in the second's trace: $(sed '$d' second.dump |
	sort | uniq -d | head -n 2)"
big=$(grep -c "mem:alloc .*size=5[0-9][0-9][0-9] " second.dump)
[ "$big" -ge 300 ] || fail "the second holds $big of the 300 allocations after the takeover"
tail -n 1 second.dump | grep -q " 0 packets lost$" || fail "rip dump second: $(tail -n 1 second.dump)"
"$RIP" export --format=ctf -o second.ctf second 2>export.err ||
	fail "rip export second: $(cat export.err)"
python3 - second.ctf <<'PY' || fail "the second's packets' sequence numbers"
import glob, os, struct, sys

bad = 0
for f in sorted(glob.glob(os.path.join(sys.argv[1], "stream_*"))):
    b = open(f, "rb").read()
    off, seq = 0, None
    while off + 80 <= len(b):
        (magic, _, _, _, _, _, psize, s) = struct.unpack_from("<IIQQQQQQ", b, off)
        if magic != 0xC1FC1FC1 or psize < 640:
            sys.exit(f"{f}: offset {off}: not a packet")
        if seq is not None and s != seq + 1:
            print(f"{f}: packet sequence {s} after {seq}")
            bad += 1
        seq = s
        off += psize // 8
sys.exit(1 if bad else 0)
PY
t_done
