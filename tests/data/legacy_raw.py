#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
#
# Description: write a raw ring file in the ORIGINAL librip format for
# integ/legacy-raw.sh: slots indexed by tid, each a 64-byte name and 32
# entries of (8-bit counter << 56 | 56-bit address); an all-ones entry marks
# the exit.  Addresses come from `nm` of the non-PIE program.  Prints the
# expected result, one line per slot: TID NAME STATE FUNC,FUNC,... (oldest
# to newest).
#
#   legacy_raw.py NM-OUTPUT OUT-FILE > expected
import struct
import sys

NSLOTS = 40
EXIT = (1 << 64) - 1
addr = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 3 and f[1] in "tT":
        addr[f[2]] = int(f[0], 16)

slots = {}
expected = []


def make(tid, name, snaps, exited=False):
    """snaps: function names, oldest first; the ring keeps the last 32 (31 with an exit mark)."""
    ring = [0] * 32
    for i, fn in enumerate(snaps):
        ring[i % 32] = ((i % 256) << 56) | (addr[fn] + 4 + i % 3)
    if exited:
        ring[len(snaps) % 32] = EXIT
    slots[tid] = name.encode().ljust(64, b"\0") + struct.pack("<32Q", *ring)
    keep = 31 if exited else 32
    expected.append("%d %s %s %s" % (tid, name, "exited" if exited else "running",
                                     ",".join(snaps[-keep:])))


make(3, "alpha", ["raw_beta", "raw_gamma", "raw_alpha"])
# wrapped ring: 300 snaps, counters past 255, the newest in the middle of the ring
make(7, "wrapped", ["raw_alpha", "raw_beta"] * 149 + ["raw_gamma", "raw_wrap_last"])
# wrapped so that the counter goes 255 -> 0 right before the newest entries
make(8, "wrap256", ["raw_beta"] * 256 + ["raw_gamma", "raw_wrap_last"])
# exactly full, never wrapped
make(12, "full", ["raw_alpha"] * 31 + ["raw_wrap_last"])
make(20, "gone", ["raw_alpha", "raw_beta", "raw_before_exit"], exited=True)
# exited after wrapping: the exit mark overwrote the oldest entry
make(21, "gone-wrapped", ["raw_gamma"] * 40 + ["raw_before_exit"], exited=True)

with open(sys.argv[2], "wb") as out:
    for tid in range(NSLOTS):
        out.write(slots.get(tid, bytes(320)))
print("\n".join(expected))
