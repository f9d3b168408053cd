#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# tests/fuzz/seeds.sh OUT - make the seed corpora of the fuzz harnesses from
# real runs, one directory per harness under OUT:
#   ring/    ring files of programs run under the preload library (small
#            event rings so that each file stays under a megabyte), of a
#            program that only snaps, of one that fills a ring with
#            events of its own types, and of function tracing (a copy taken
#            while stacks went past the 63 frames kept)
#   trace/   traces of `rip run --mem --fd --shm` (and one of `rip run --sample`,
#            one of --ctf, one rotated every second, whole and with its first
#            chunk gone) packed as fuzz-trace reads them (u8 id, u32 length,
#            bytes: 0 .rip-index, N stream_<N-1>, 128 + N chunk-<N>), and
#            relayd's copy of one (255 metadata with the index in it; no .rip-index)
#            when lttng-relayd is installed
#   index/   those traces' .rip-index files
#   legacy/  raw files of the original librip format (tests/data/legacy_raw.py)
#   live/    the ring files again, each followed by a few changes (fuzz-live.c)
#   unpack/  small ring files (function tracing's among them) and a legacy file
#            compressed with gzip and zstd, and small bombs: a real header whose
#            file_size says more than its layout holds, a header of a 50 MB layout,
#            one of a 64 MiB layout, one without the magic, each followed by 40 MiB
#            of one byte or 8 MiB of zeros
#   reply/   a relayd session's exact answers, in a few shapes (fuzz-reply.c), one
#            that breaks and reconnects, and a few HTTP answers of a Pyroscope server
#   pack/    packed blocks (read/pack.h) of the packets tests/unit/pack.c writes
#   chunk/   chunk files of packed traces of `rip run --mem --fd`, each read alone
#            with the index in its tail (fuzz-chunk.c), and a later chunk of the
#            rotated trace (beginning with copied definitions), and one of
#            `rip run --functions` (function records)
# Needs a built tree (make tests), python3, gzip and zstd.  Exit 0, or 1 with a message.
set -u
[ $# = 1 ] || {
	echo "usage: tests/fuzz/seeds.sh OUT" >&2
	exit 2
}
out=$1
BUILD=${BUILD:-build}
RIP=${RIP:-$PWD/$BUILD/rip}
pre=$PWD/$BUILD/librip-preload.so
die() {
	echo "seeds.sh: $*" >&2
	exit 1
}
for b in "$RIP" "$pre" "$BUILD/tests/integ/snapper" "$BUILD/tests/integ/dumpprog" \
	"$BUILD/tests/integ/topprog" "$BUILD/tests/unit/pack" "$BUILD/tests/integ/funcprog"; do
	[ -e "$b" ] || die "$b is missing: run make tests"
done
for c in python3 gzip zstd; do
	command -v $c >/dev/null || die "$c is needed"
done
mkdir -p "$out/ring" "$out/trace" "$out/index" "$out/legacy" "$out/live" "$out/unpack" \
	"$out/reply" "$out/pack" "$out/chunk" || die "mkdir $out"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rip-seeds.XXXXXX") || die "mktemp"
trap 'rm -rf "$tmp"' EXIT

# small rings: every seed is a few hundred kilobytes (no function area but in funcprog's)
small() {
	env RIP_SLOTS=16 RIP_EVENT_RINGS=2 RIP_EVENT_RING_SIZE=16k RIP_EVENT_PACKET_SIZE=2k \
		RIP_EVENT_SMALL_RINGS=2 RIP_EVENT_SMALL_RING_SIZE=8k RIP_EVENT_SMALL_PACKET_SIZE=4k \
		RIP_FUNCTIONS="${RIP_FUNCTIONS:-0}" RIP_FUNCTION_IDS=64 "$@"
}

# ring files
n=0
for cmd in "/bin/true" "/bin/ls /" "/bin/sh -c exit" "/bin/cat /dev/null"; do
	n=$((n + 1))
	# shellcheck disable=SC2086
	small RIP_MODE=overwrite RIP_RING="$out/ring/preload-$n.ring" LD_PRELOAD="$pre" \
		$cmd >/dev/null 2>&1 || die "$cmd under the preload library failed"
done
small RIP_RING="$out/ring/snapper.ring" "$BUILD/tests/integ/snapper" || die "snapper failed"
# CPU samples in the snap rings (rip run --sample): 0.2 s of CPU at 1000 Hz
small RIP_RING="$out/ring/sampled.ring" RIP_SAMPLE=1000 RIP_DISABLE=1,2,3 LD_PRELOAD="$pre" \
	"$BUILD/tests/integ/topprog" sigprof 20 >/dev/null || die "topprog sigprof failed"
ring=$(RIP_DIR=$tmp small "$BUILD/tests/integ/dumpprog" fill 300) || die "dumpprog fill failed"
mv "$ring" "$out/ring/dumpprog.ring" || die "no ring file from dumpprog"
# function tracing: shadow stacks (a longjmp, coroutines), records, the function table
RIP_FUNCTIONS=1 small RIP_RING="$out/ring/funcprog.ring" "$BUILD/tests/integ/funcprog" count 20 \
	>/dev/null || die "funcprog count failed"
# stacks past the 63 frames kept (their depth counts the levels not stored) and frames with
# their top bits set, copied while two threads recurse up and down across depth 63
RIP_FUNCTIONS=1 small RIP_RING="$tmp/deep.ring" "$BUILD/tests/integ/funcprog" spindeep 2 2 60 \
	"$tmp/deep.ready" >/dev/null &
deep=$!
i=0
while [ $i -lt 100 ] && [ ! -e "$tmp/deep.ready" ]; do
	sleep 0.05
	i=$((i + 1))
done
sleep 0.2
cp "$tmp/deep.ring" "$out/ring/funcdeep.ring" || die "no ring file from funcprog spindeep"
wait $deep || die "funcprog spindeep failed"

# traces (small programs: a trace of a megabyte takes a second a run under the sanitizers)
# pack_trace DIR OUT: a trace directory as fuzz-trace reads it
pack_trace() {
	python3 - "$1" "$2" <<'PY'
import os, struct, sys
d, out = sys.argv[1], sys.argv[2]
b = bytearray()
for name in [".rip-index"] + sorted(f for f in os.listdir(d)
                                    if f.startswith("stream_") or f.startswith("chunk-")):
    if name == ".rip-index":
        fid = 0
    elif name.startswith("chunk-"):
        fid = 128 + int(name[6:12])
    else:
        fid = int(name[7:]) + 1
    if fid > 254 or (name.startswith("stream_") and fid > 127):
        continue
    data = open(os.path.join(d, name), "rb").read()
    b += struct.pack("<BI", fid, len(data)) + data
open(out, "wb").write(b)
PY
}
n=0
mkdir -p "$tmp/fd"
for cmd in "/bin/true" "/bin/ls /" "$BUILD/tests/integ/memprog basic" \
	"$BUILD/tests/integ/fdprog $tmp/fd"; do
	n=$((n + 1))
	[ -x "${cmd%% *}" ] || continue
	# shellcheck disable=SC2086 # the command and its arguments
	"$RIP" run -q --mem --fd --shm -o "$tmp/t$n" -- $cmd >/dev/null 2>&1 </dev/null ||
		die "rip run $cmd failed"
	cp "$tmp/t$n/.rip-index" "$out/index/t$n.rip-index"
	pack_trace "$tmp/t$n" "$out/trace/t$n.trace" || die "packing trace $n failed"
done
# function records in a trace, with their stacks in its .rip-ring (not packed: too big)
"$RIP" run -q --functions -o "$tmp/tf" -- "$BUILD/tests/integ/funcprog" count 30 \
	>/dev/null 2>&1 </dev/null || die "rip run --functions funcprog failed"
pack_trace "$tmp/tf" "$out/trace/funcs.trace" || die "packing the function trace failed"
# a trace of CTF streams (rip run --ctf): stream_N files and metadata, no chunks
"$RIP" run -q --ctf --mem --fd -o "$tmp/tc" -- "$BUILD/tests/integ/memprog" basic \
	>/dev/null 2>&1 </dev/null || die "rip run --ctf memprog basic failed"
cp "$tmp/tc/.rip-index" "$out/index/ctf.rip-index"
pack_trace "$tmp/tc" "$out/trace/ctf.trace" || die "packing the CTF trace failed"
# a rotated trace (a chunk every second or two: a block is written once it is a second
# old; the samples going into each as they are taken), its first chunk gone as
# --max-size or --on-rotate leaves it: a chunk after the first begins with copies of the
# definitions met before it.  That chunk is a chunk seed too.
"$RIP" run -q --mem --fd --sample=200 --rotate=1s -o "$tmp/tr" -- \
	"$BUILD/tests/integ/topprog" burn 3000 >/dev/null 2>&1 </dev/null ||
	die "rip run --rotate=1s topprog burn failed"
[ -e "$tmp/tr/chunk-000001.rpk" ] || die "rip run --rotate=1s made fewer than 2 chunks"
pack_trace "$tmp/tr" "$out/trace/rotated-all.trace" || die "packing the rotated trace failed"
cp "$tmp/tr/chunk-000001.rpk" "$out/chunk/rotated-1.rpk"
rm -f "$tmp/tr/chunk-000000.rpk"
cp "$tmp/tr/.rip-index" "$out/index/rotated.rip-index"
pack_trace "$tmp/tr" "$out/trace/rotated-dropped.trace" || die "packing the rotated trace failed"
# CPU samples in a trace (rip:sample events: rip run --sample)
"$RIP" run -q --sample=1000 -o "$tmp/ts" -- "$BUILD/tests/integ/topprog" burn 50 \
	>/dev/null 2>&1 </dev/null || die "rip run --sample topprog burn failed"
pack_trace "$tmp/ts" "$out/trace/sampled.trace" || die "packing the sampled trace failed"

# a trace as lttng-relayd stores it (rip run --relayd): no .rip-index, the index in
# the metadata's env block, which the trace reader then parses (id 255 in the pack)
if command -v lttng-relayd >/dev/null 2>&1 && command -v ss >/dev/null 2>&1; then
	for attempt in 1 2 3 4 5; do
		c=$(( ($$ * 13 + attempt * 2003) % 30000 + 20000 ))
		ss -Hltn "sport = :$c" | grep -q . && continue
		ss -Hltn "sport = :$((c + 1))" | grep -q . && continue
		ss -Hltn "sport = :$((c + 2))" | grep -q . && continue
		mkdir -p "$tmp/rd-home"
		LTTNG_HOME=$tmp/rd-home lttng-relayd -C "tcp://127.0.0.1:$c" \
			-D "tcp://127.0.0.1:$((c + 1))" -L "tcp://127.0.0.1:$((c + 2))" \
			-o "$tmp/rd-out" >"$tmp/rd.log" 2>&1 &
		rd=$!
		i=0
		while [ $i -lt 100 ] && kill -0 $rd 2>/dev/null &&
			! ss -Hltn "sport = :$((c + 1))" | grep -q .; do
			sleep 0.1
			i=$((i + 1))
		done
		if kill -0 $rd 2>/dev/null; then
			"$RIP" run -q --mem --relayd="net://127.0.0.1:$c:$((c + 1))" --session=seed \
				--hostname=fz -o - -- "$BUILD/tests/integ/memprog" basic >/dev/null 2>&1
			rc=$?
			kill $rd
			wait $rd 2>/dev/null
			[ $rc = 0 ] || die "rip run --relayd failed"
			break
		fi
		wait $rd 2>/dev/null
	done
	copy=$(ls -d "$tmp"/rd-out/fz/seed-* 2>/dev/null | head -n 1)
	[ -n "$copy" ] || die "no relayd copy (lttng-relayd would not start: $tmp/rd.log)"
	python3 - "$copy" "$out/trace/relayd-copy.trace" <<'PY' || die "packing the relayd copy failed"
import os, struct, sys
d, out = sys.argv[1], sys.argv[2]
b = bytearray()
for name in ["metadata"] + sorted(f for f in os.listdir(d) if f.startswith("stream_")):
    fid = 255 if name == "metadata" else int(name[7:]) + 1
    if fid > 254 and name != "metadata":
        continue
    data = open(os.path.join(d, name), "rb").read()
    b += struct.pack("<BI", fid, len(data)) + data
open(out, "wb").write(b)
PY
fi

# legacy raw files, with made-up addresses for the functions legacy_raw.py names
printf '%s\n' "0000000000401000 T raw_alpha" "0000000000401100 T raw_beta" \
	"0000000000401200 T raw_gamma" "0000000000401300 T raw_wrap_last" \
	"0000000000401400 T raw_before_exit" >"$tmp/nm"
python3 tests/data/legacy_raw.py "$tmp/nm" "$out/legacy/legacy.raw" >/dev/null ||
	die "legacy_raw.py failed"
head -c 960 "$out/legacy/legacy.raw" >"$out/legacy/three-slots.raw"

# the ring files again with changes after them (fuzz-live.c's format)
python3 - "$out/ring" "$out/live" <<'PY' || die "live seeds failed"
import os, random, struct, sys
src, dst = sys.argv[1], sys.argv[2]
rnd = random.Random(1)
for name in sorted(os.listdir(src)):
    b = open(os.path.join(src, name), "rb").read()
    size = len(b)
    ops = b""
    for i in range(12):
        op = rnd.choice([0, 0, 1, 1, 2, 3])
        # aim at the header, the slots and the first ring's control words and data
        off = rnd.choice([rnd.randrange(0, 4096), rnd.randrange(4096, 12288),
                          rnd.randrange(0, size)])
        ops += struct.pack("<IBBHQ", off, op, rnd.randrange(8), 0, rnd.getrandbits(64))
    # written with holes where the ring file has them: the preload library's are 64 MiB,
    # mostly holes (read as zeros all the same); whole, the five were 330 MB of writes
    data = memoryview(b + ops)
    with open(os.path.join(dst, name), "wb") as f:
        for off in range(0, len(data), 4096):
            page = data[off:off + 4096]
            if page != bytes(len(page)):
                f.seek(off)
                f.write(page)
        f.truncate(len(data))
PY

# compressed copies (fuzz-unpack.c) of the small files (the preload library's are 64 MiB
# of copy area, mostly holes: one of them, smaller, made again)
small RIP_WATCH_COPIES=8 RIP_MODE=overwrite RIP_RING="$tmp/preload.ring" LD_PRELOAD="$pre" \
	/bin/ls / >/dev/null 2>&1 || die "/bin/ls / under the preload library failed"
for f in "$out/ring/snapper.ring" "$out/ring/dumpprog.ring" "$tmp/preload.ring" \
	"$out/ring/funcprog.ring" "$out/ring/funcdeep.ring" \
	"$out/legacy/legacy.raw"; do
	b=${f##*/}
	gzip -c "$f" >"$out/unpack/$b.gz" || die "gzip $f"
	zstd -q -c "$f" >"$out/unpack/$b.zst" || die "zstd $f"
done
# bombs, small compressed: headers followed by 40 MiB of 'A' or 8 MiB of zeros.  A layout
# of 50 MB (200 event rings of 256 KiB, a sparse file) lets the 'A's past 32 MiB of data;
# the preload library's 64 MiB is over fuzz-unpack's RIP_UNPACK_MAX.
RIP_EVENT_RINGS=200 RIP_RING="$tmp/big.ring" "$BUILD/tests/integ/snapper" || die "snapper failed"
python3 - "$out/ring/snapper.ring" "$tmp/big.ring" "$out/ring/preload-1.ring" "$tmp" <<'PY' ||
import struct, sys
small, big, huge, tmp = sys.argv[1:5]
h = bytearray(open(small, "rb").read(4096))
struct.pack_into("<Q", h, 32, 8 << 30)  # file_size: more than its layout holds
open(tmp + "/h-claims", "wb").write(h)
open(tmp + "/h-big", "wb").write(open(big, "rb").read(4096))
open(tmp + "/h-huge", "wb").write(open(huge, "rb").read(4096))
h[0:8] = b"XXXXXXXX"
open(tmp + "/h-nomagic", "wb").write(h)
PY
	die "bomb headers failed"
python3 -c 'import sys; sys.stdout.buffer.write(b"A" * (40 << 20))' >"$tmp/a40" || die "python3"
head -c $((8 << 20)) /dev/zero >"$tmp/z8" || die "head"
for h in claims big huge nomagic; do
	for run in a40 z8; do
		cat "$tmp/h-$h" "$tmp/$run" | gzip -c >"$out/unpack/bomb-$h-$run.gz" || die "gzip"
		cat "$tmp/h-$h" "$tmp/$run" | zstd -q -c >"$out/unpack/bomb-$h-$run.zst" || die "zstd"
	done
done
rm -f "$tmp/a40" "$tmp/z8"

# what servers answer (fuzz-reply.c): relayd sessions simulated as the client reads them
python3 - "$out/reply" <<'PY' || die "reply seeds failed"
import struct, sys
out = sys.argv[1]
OK = struct.pack(">I", 10)

def handle(n):
    return struct.pack(">Q", 100 + n) + OK

def session(streams, packets):
    # the answers to fuzz-reply.c's session, in the order the client reads them
    a = struct.pack(">II", 2, 10) + struct.pack(">Q", 1) + OK + handle(0)
    queued, added, sent, last = 0, set(), set(), {}
    nstreams = 0
    for i in range(packets):
        s = i % streams
        if s not in added:
            # every index queued so far is answered, then ADD_STREAM, STREAMS_SENT
            a += OK * queued
            queued = 0
            nstreams += 1
            a += handle(nstreams) + OK
            added.add(s)
        queued += 1
        sent.add(s)
        end = 1000 + i * 10 + 5
        last[s] = end
        if i % 7 == 3 and end + 100 > last[s]:
            queued += 1
            last[s] = end + 100
    # rly_close: the indexes, DATA_PENDING 0 for each stream that sent, the closing
    # beacons of the streams that end before the last one, the stream closes, metadata's
    a += OK * queued
    a += struct.pack(">I", 0) * len(sent)
    top = max(last.values()) if last else 0
    a += OK * sum(1 for s in sent if last[s] < top)
    a += OK * len(added) + OK
    return a

def relayd(opts, first, second=b""):
    return bytes([opts << 1]) + struct.pack("<H", len(first)) + first + second

shapes = [(0, 0), (1, 1), (3, 6), (1, 7), (2, 4)]  # (streams - 1, packet class)
for st, pc in shapes:
    for live in (0, 4):
        opts = st | live | pc << 4
        data = relayd(opts, session(st + 1, 1 + pc * 5))
        open("%s/relayd-%d-%d%s" % (out, st + 1, 1 + pc * 5, "-live" if live else ""),
             "wb").write(data)
# the first connection ends after the metadata stream; a reconnection then runs a
# session of 3 packets in 2 streams
first = struct.pack(">II", 2, 10) + struct.pack(">Q", 1) + OK + handle(0)
open(out + "/relayd-reconnect", "wb").write(relayd(1 | 8 | 2 << 4, first, session(2, 3)))
open(out + "/relayd-old", "wb").write(relayd(0, struct.pack(">II", 2, 4)))
for name, ans in [
        ("http-200", b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
        ("http-204", b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n"),
        ("http-400", b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n"
                     b"Content-Length: 34\r\n\r\nprofile: unknown sample type \"x\"\n"),
        ("http-500", b"HTTP/1.0 500 Internal Server Error\r\n\r\nupstream\r\nfailed"),
        ("http-chunked", b"HTTP/1.1 413 Payload Too Large\r\nTransfer-Encoding: chunked"
                         b"\r\n\r\n10\r\nrequest too big\n\r\n0\r\n\r\n"),
        ("http-garbage", b"SSH-2.0-OpenSSH_9.6\r\n")]:
    open("%s/%s" % (out, name), "wb").write(b"\x01" + ans)
PY

# packed blocks (fuzz-pack.c)
"$BUILD/tests/unit/pack" --seeds "$out/pack" || die "tests/unit/pack --seeds failed"

# chunk files read alone (fuzz-chunk.c): one chunk each, closed with its tail
n=0
for cmd in "/bin/true" "/bin/ls /" "$BUILD/tests/integ/memprog basic"; do
	n=$((n + 1))
	[ -x "${cmd%% *}" ] || continue
	# shellcheck disable=SC2086 # the command and its arguments
	small "$RIP" run -q --mem --fd -o "$tmp/c$n" -- $cmd >/dev/null 2>&1 </dev/null ||
		die "rip run $cmd failed"
	cp "$tmp/c$n/chunk-000000.rpk" "$out/chunk/c$n.rpk" || die "no chunk in $tmp/c$n"
done
# a chunk of function records (rip:fn definitions, entries and exits packed), read alone:
# without its trace's .rip-ring, their ids have no table
"$RIP" run -q --functions -o "$tmp/cfn" -- "$BUILD/tests/integ/funcprog" count 30 \
	>/dev/null 2>&1 </dev/null || die "rip run --functions funcprog failed"
cp "$tmp/cfn/chunk-000000.rpk" "$out/chunk/funcs.rpk" || die "no chunk in $tmp/cfn"
exit 0
