#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a recording writes what a thread's open packet held for a
# flush period (250 ms) in pieces, so that no packet of the trace spans
# much more time than that (a reader that merges by time then needs the
# blocks of a short span only; doc/design.md, "Packets in pieces").
# recprog's two threads emit one event a millisecond for 3 s into packets
# of 32 KiB, which hold about 2,700 of them: one packet written whole
# spans 2.7 s.  Checked: every packet of the trace (read from its CTF
# export) spans less than 1 s; the sequence numbers of each stream follow
# each other; rip dump counts every event and no packet lost, and lists
# them the same with the merge that takes packets up when their time
# comes and with the one that loads them at once (RIP_READ_DEFER=0);
# babeltrace2 reads the export and counts them all.
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/recprog
need_bin "$prog" "$RIP"
need_cmd python3
cd "$TEST_TMP" || die "no TEST_TMP"

N=3000
RIP_EVENT_PACKET_SIZE=32768 "$RIP" run -q -o tr -- "$prog" "$N" --threads 2 --rate 1000 \
	>prog.out 2>run.err ||
	die "rip run failed: $(cat run.err)"
"$RIP" dump tr >dump.txt 2>dump.err || die "rip dump failed: $(cat dump.err)"
tail -n 1 dump.txt | grep -q "^$((2 * N)) events, 2 streams, 0 discarded/overwritten, 0 packets lost$" ||
	fail "rip dump: $(tail -n 1 dump.txt), want $((2 * N)) events, nothing lost"
RIP_READ_DEFER=0 "$RIP" dump tr >dump0.txt 2>dump.err || die "rip dump (no deferring) failed"
cmp -s dump.txt dump0.txt || fail "the two merges list the events differently"

"$RIP" export --format=ctf -o ctf tr 2>export.err || die "rip export failed: $(cat export.err)"
python3 - ctf "$N" <<'PY' || fail "the exported packets"
import glob, os, re, struct, sys

d, n = sys.argv[1], int(sys.argv[2])
hz = int(re.search(r"freq\s*=\s*(\d+)", open(os.path.join(d, "metadata")).read()).group(1))
events, packets, bad = 0, 0, 0
for f in sorted(glob.glob(os.path.join(d, "stream_*"))):
    b = open(f, "rb").read()
    off, seq = 0, None
    while off + 80 <= len(b):
        (magic, _, _, begin, end, csize, psize, s, _, _, _, ev, _) = struct.unpack_from(
            "<IIQQQQQQQiIII", b, off)
        if magic != 0xC1FC1FC1 or psize < 640 or off + psize // 8 > len(b):
            sys.exit(f"{f}: offset {off}: not a packet")
        if seq is not None and s != seq + 1:
            print(f"{f}: packet sequence {s} after {seq}")
            bad += 1
        seq = s
        if ev and (end - begin) / hz >= 1.0:
            print(f"{f}: a packet of {ev} events spans {(end - begin) / hz:.3f} s")
            bad += 1
        events += ev
        packets += 1
        off += psize // 8
if events != 2 * n:
    sys.exit(f"{events} events in the export, want {2 * n}")
if packets < 6:
    sys.exit(f"{packets} packets: not written in pieces")
sys.exit(1 if bad else 0)
PY
if command -v babeltrace2 >/dev/null 2>&1; then
	got=$(babeltrace2 ctf 2>bt.err | grep -c 'events:count')
	[ "$got" = $((2 * N)) ] || fail "babeltrace2 counts $got events, want $((2 * N)): $(head -3 bt.err)"
fi
t_done
