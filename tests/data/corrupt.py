#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
#
# Description: make damaged copies of a valid ring file for integ/corrupt.sh.
#
#   corrupt.py named SRC OUTDIR     one file per named damage (NAME.ring), and
#                                   NAME.want: the words the error must contain
#   corrupt.py flips SRC OUTDIR N SEED
#                                   N files with one random bit flipped each,
#                                   half in the header, half in the used slots
#
# Offsets follow include/rip/abi.h (struct rip_file_hdr, struct rip_slot).
import os
import random
import struct
import sys

HDR = {
    "version": (8, "<I"), "hdr_size": (12, "<I"), "byte_order": (16, "<Q"),
    "file_size": (32, "<Q"), "slot_count": (52, "<I"), "fifo_off": (64, "<Q"),
    "mod_off": (72, "<Q"), "mod_cap": (84, "<I"), "clock_kind": (1536, "<I"),
    "clock_hz": (1544, "<Q"), "fresh": (3072, "<I"), "mod_count": (3264, "<I"),
    "ev_rings": (136, "<I"), "ev_big": (152, "<I"), "ev_small_packet_size": (160, "<I"),
    "ev_small_off": (168, "<Q"),
}


def get(b, field):
    off, fmt = HDR[field]
    return struct.unpack_from(fmt, b, off)[0]


def put(b, field, value):
    off, fmt = HDR[field]
    struct.pack_into(fmt, b, off, value)


PAGE = 4096
ZERO = bytes(PAGE)


def data_pages(data):
    """The offsets of the pages of data that are not all zero."""
    view = memoryview(data)
    return [off for off in range(0, len(data), PAGE)
            if view[off:off + PAGE] != ZERO[:len(view[off:off + PAGE])]]


def write_sparse(path, data, pages=None):
    """Write data with holes where whole pages are zero, as the source file has.

    The source file is 20 MB of mostly unbacked pages; 300 full copies were 6 GB
    of writes, a third of the test's time.  pages: the offsets to write (all
    pages that are not zero when None)."""
    view = memoryview(data)
    with open(path, "wb") as f:
        for off in data_pages(data) if pages is None else pages:
            f.seek(off)
            f.write(view[off:off + PAGE])
        f.truncate(len(data))


def write(outdir, name, data, want):
    write_sparse(os.path.join(outdir, name + ".ring"), data)
    with open(os.path.join(outdir, name + ".want"), "w") as f:
        f.write(want + "\n")


def named(src, outdir):
    orig = open(src, "rb").read()
    size = len(orig)
    write(outdir, "trunc-0", b"", "truncated")
    write(outdir, "trunc-100", orig[:100], "truncated")
    write(outdir, "trunc-4095", orig[:4095], "truncated")
    write(outdir, "trunc-half", orig[:size // 2], "truncated")
    write(outdir, "trunc-hdr-only", orig[:4096], "truncated")
    b = bytearray(orig)
    b[0:8] = b"NOTRING\0"
    write(outdir, "bad-magic", b, "magic")
    b = bytearray(orig)
    b[0:8] = bytes(8)
    write(outdir, "zero-magic", b, "magic")
    b = bytearray(orig)
    put(b, "version", get(b, "version") + 1)
    write(outdir, "newer-version", b, "newer")
    b = bytearray(orig)
    put(b, "version", 0xffffffff)
    write(outdir, "huge-version", b, "newer")
    # the other byte order: every header field as a big-endian writer stores it
    b = bytearray(orig)
    for field, (off, fmt) in HDR.items():
        struct.pack_into(">" + fmt[1], b, off, get(orig, field))
    write(outdir, "other-byte-order", b, "byte order")
    b = bytearray(orig)
    put(b, "slot_count", 0xffffffff)
    write(outdir, "slot-count-max", b, "slots")
    b = bytearray(orig)
    put(b, "slot_count", 0)
    write(outdir, "slot-count-0", b, "slots")
    b = bytearray(orig)
    put(b, "mod_count", 0xfffffff0)
    write(outdir, "mod-count-huge", b, "modules")
    b = bytearray(orig)
    put(b, "mod_cap", 0xffffffff)
    put(b, "mod_count", 0xfffffff0)
    write(outdir, "mod-cap-huge", b, "module")
    b = bytearray(orig)
    put(b, "fresh", get(b, "slot_count") + 1)
    write(outdir, "fresh-over", b, "slots used")
    b = bytearray(orig)
    put(b, "fresh", 0xffffffff)
    write(outdir, "fresh-max", b, "slots used")
    b = bytearray(orig)
    put(b, "file_size", 1 << 62)
    write(outdir, "file-size-huge", b, "bytes")
    b = bytearray(orig)
    put(b, "fifo_off", (1 << 64) - 16)
    write(outdir, "fifo-off-wrap", b, "queue")
    b = bytearray(orig)
    put(b, "mod_off", (1 << 64) - 512)
    write(outdir, "mod-off-wrap", b, "module")
    b = bytearray(orig)
    put(b, "clock_hz", 0)
    write(outdir, "clock-hz-0", b, "clock")
    b = bytearray(orig)
    put(b, "hdr_size", 8192)
    write(outdir, "hdr-size", b, "layout")
    # the small event rings past the big ones (the source file has some)
    assert get(orig, "ev_big"), "the source file has no small event rings"
    b = bytearray(orig)
    put(b, "ev_big", get(b, "ev_rings"))
    write(outdir, "ev-big-over", b, "small event rings")
    b = bytearray(orig)
    put(b, "ev_small_packet_size", 5000)
    write(outdir, "small-packet-odd", b, "small event rings")
    b = bytearray(orig)
    put(b, "ev_small_off", (1 << 64) - 4096)
    write(outdir, "small-off-wrap", b, "small event rings")


def flips(src, outdir, n, seed):
    orig = open(src, "rb").read()
    rnd = random.Random(seed)
    used = max(1, get(orig, "fresh"))
    slots_end = 4096 + used * 512
    pages = set(data_pages(orig))
    for i in range(n):
        b = bytearray(orig)
        if i % 2 == 0:
            # the header: mostly its meaningful parts (identity, process, clock, counters)
            off = rnd.choice([rnd.randrange(0, 96), rnd.randrange(512, 1600),
                              rnd.randrange(3072, 3300), rnd.randrange(0, 4096)])
        else:
            off = rnd.randrange(4096, slots_end)
        b[off] ^= 1 << rnd.randrange(8)
        write_sparse(os.path.join(outdir, "flip-%04d-at-%d.ring" % (i, off)), b,
                     sorted(pages | {off - off % PAGE}))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "named":
        named(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 6 and sys.argv[1] == "flips":
        flips(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    else:
        sys.exit("usage: corrupt.py named SRC OUTDIR | flips SRC OUTDIR N SEED")
