#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the readers on damaged packed traces (read/trace.h: chunk
# files of packed blocks).  A real trace of a few blocks (rip run --mem
# --fd of a program that allocates 400,000 times, --chunk-size=1M so that
# it has several chunks) is damaged one way at a time.  A byte of a block
# changed (its checksum): the readers skip that block's packets, count
# them lost and what they held discarded (read + discarded = the whole),
# read the rest, exit 0 and name the block in a warning (it failed the
# whole trace, 1 bit lost every block), rip top of a trace of samples too;
# rip export --format=ctf leaves the block's packets out (it refused the
# trace) and babeltrace2 reads the rest, counting the gap.  A record's magic, a record's list naming a stream the trace
# does not have, a record whose sizes run past the file, a chunk of another
# trace put in place of one, a chunk's header cut: each must make rip
# dump, rip leaks and rip export --format=ctf (and the ASan/UBSan build of
# rip) exit 1 with a line that names the chunk, and leave no export behind.  A chunk cut inside its last record is read up to the cut,
# what was cut counted as lost; a chunk removed is counted as lost too (once,
# from between two others: it was counted twice); one
# cut inside its tail (the index it carries) lost nothing.  A chunk read
# alone with its tail's index damaged is refused.  Then random bytes
# changed anywhere in a chunk, and in the tail of a chunk read alone: exit
# 0 or 1, never a crash or a sanitizer report.
. tests/data/common.sh
need_bin "$RIP" "$RIP_ASAN" "$BUILD/bench/malloc" "$BUILD/tests/integ/topprog"
need_cmd python3 babeltrace2
mal=$PWD/$BUILD/bench/malloc
top=$PWD/$BUILD/tests/integ/topprog
cd "$TEST_TMP" || die "no TEST_TMP"

"$RIP" run --mem --fd -q --chunk-size=1M -o good -- "$mal" 2 300000 >/dev/null 2>run.err ||
	die "rip run: $(cat run.err)"
n=$(ls good/chunk-*.rpk | wc -l)
[ "$n" -ge 3 ] || die "the trace has $n chunks, want 3 or more"
"$RIP" dump good >good.txt || die "rip dump of the good trace failed"

# damage WHAT OFFSET-EXPR BYTES [FROM]: copy FROM (good) into WHAT and write BYTES (hex) at the
# offset python computes from the chunk-000000.rpk's records ("rec0", "rec1": their offsets)
damage() {
	rm -rf "$1"
	cp -r "${4:-good}" "$1" || die "cp"
	python3 - "$1/chunk-000000.rpk" "$2" "$3" <<'EOF' || die "could not damage $1"
import struct, sys
path, where, data = sys.argv[1], sys.argv[2], bytes.fromhex(sys.argv[3])
f = open(path, "r+b")
b = f.read()
recs, off, end = [], 64, len(b)
if b[-32:-24] == b"RIPCTAIL":  # a closed chunk's tail: its records end at its index
    end = struct.unpack_from("<Q", b, len(b) - 24)[0]
while off + 32 <= end:
    magic, npk, size = struct.unpack_from("<4sIQ", b, off)
    recs.append(off)
    off += 32 + 4 * npk + size
def blk(r):
    return r + 32 + 4 * struct.unpack_from("<I", b, r + 4)[0]
env = {"rec0": recs[0], "rec1": recs[1] if len(recs) > 1 else recs[0], "len": len(b),
       "list0": recs[0] + 32, "blk0": blk(recs[0]), "blk1": blk(recs[1] if len(recs) > 1 else recs[0])}
at = eval(where, {}, env)
f.seek(at)
f.write(data)
EOF
}

# refused NAME: every reader exits 1 naming a chunk; the export leaves nothing
refused() {
	for cmd in dump leaks; do
		"$RIP" $cmd "$1" >out 2>err
		rc=$?
		[ "$rc" = 1 ] || fail "$1: rip $cmd: exit $rc, want 1: $(head -n 2 err)"
		grep -q 'chunk-0000' err || fail "$1: rip $cmd does not name the chunk: $(head -n 2 err)"
		asan_run $cmd "$1"
		[ "$asan_rc" = 1 ] || fail "$1: rip $cmd (asan): exit $asan_rc, want 1"
	done
	"$RIP" export --format=ctf "$1" -o "$1.ctf" >out 2>err
	[ $? = 1 ] || fail "$1: rip export --format=ctf of a damaged trace did not fail"
	[ -e "$1.ctf" ] && fail "$1: rip export left $1.ctf behind"
}

# a changed block (its checksum): its packets skipped and counted, the rest read, every
# reader saying which block; the CTF export, a copy, is refused
damage sum 'blk0 + 200' ff00ff00
"$RIP" dump sum >sum.txt 2>err || fail "rip dump of a damaged block: exit $?: $(head -n 2 err)"
grep -q 'warning: sum: 1 damaged block skipped.*chunk-000000.rpk: offset [0-9]*: packed block: checksum' err ||
	fail "rip dump does not say which block was damaged: $(head -n 2 err)"
good_n=$(tail -n 1 good.txt | cut -d' ' -f1)
python3 - "$(tail -n 1 sum.txt)" "$good_n" <<'PY' || fail "a damaged block: $(tail -n 1 sum.txt)"
import re, sys
m = re.match(r"(\d+) events, \d+ streams, (\d+) discarded/overwritten, (\d+) packets lost", sys.argv[1])
ev, disc, lost = (int(x) for x in m.groups())
# what was read and what the block held add up to the whole; its packets counted lost
sys.exit(0 if 0 < ev < int(sys.argv[2]) and ev + disc == int(sys.argv[2]) and lost > 0 else 1)
PY
"$RIP" leaks --json sum >sum.json 2>err || fail "rip leaks of a damaged block: $(head -n 2 err)"
grep -q '"complete": *false' sum.json || fail "rip leaks --json of a damaged block: complete"
grep -q 'damaged block skipped' err || fail "rip leaks does not warn of the damaged block"
asan_run leaks sum
[ "$asan_rc" = 0 ] || fail "rip leaks (asan) of a damaged block: exit $asan_rc"
# the CTF export leaves the block's packets out, and says so; babeltrace2 reads the rest, and
# counts the packets lost after a stream's first (a later block damaged) as discarded
"$RIP" export --format=ctf sum -o sum.ctf >out 2>err || fail "rip export --format=ctf of a damaged block: exit $?: $(cat err)"
grep -q 'warning: sum: 1 damaged block skipped, [1-9][0-9]* packets lost .*checksum' err ||
	fail "rip export of a damaged block does not say so: $(cat err)"
bt_n=$(babeltrace2 sum.ctf 2>bt.err | wc -l)
[ "$bt_n" = "$(tail -n 1 sum.txt | cut -d' ' -f1)" ] ||
	fail "babeltrace2 reads $bt_n events of the export, rip dump $(tail -n 1 sum.txt)"
damage sum1 'blk1 + 200' ff00ff00
"$RIP" dump sum1 >sum1.txt 2>/dev/null || fail "rip dump of a damaged second block: exit $?"
"$RIP" export --format=ctf sum1 -o sum1.ctf >out 2>err || fail "rip export of a damaged second block: $(cat err)"
babeltrace2 sum1.ctf 2>bt.err >/dev/null || fail "babeltrace2 of the export: $(head -n 3 bt.err)"
python3 - "$(tail -n 1 sum1.txt)" bt.err <<'PY' || fail "babeltrace2 does not count the packets lost: $(head -n 3 bt.err)"
import re, sys
lost = int(re.search(r"(\d+) packets lost", sys.argv[1]).group(1))
seen = sum(int(n) for n in re.findall(r"Tracer discarded (\d+) packets", open(sys.argv[2]).read()))
sys.exit(0 if lost > 0 and seen == lost else 1)
PY

# rip top of a trace of samples says so too (it reads the samples on its own)
"$RIP" run -q --sample -o smp -- "$top" burn 200 >/dev/null 2>run.err || die "rip run --sample: $(cat run.err)"
damage smpsum 'blk0 + 200' ff00ff00 smp
"$RIP" top smpsum >out 2>err || fail "rip top of a damaged block: exit $?: $(head -n 2 err)"
grep -q 'warning: smpsum: 1 damaged block skipped.*checksum' err ||
	fail "rip top does not say which block was damaged: $(head -n 2 err)"

damage magic rec1 58585858
refused magic
damage stream 'list0' ffff0000
refused stream
damage sizes 'rec0 + 8' ffffff0000000000
refused sizes
damage header 0 00
refused header

# another trace's chunk in place of one
"$RIP" run --mem -q --chunk-size=1M -o other -- "$mal" 1 1000 >/dev/null 2>run.err ||
	die "rip run (other): $(cat run.err)"
rm -rf swapped
cp -r good swapped
cp other/chunk-000000.rpk swapped/chunk-000000.rpk
refused swapped
grep -q "another trace" err || fail "another trace's chunk: $(cat err)"

# where the records of chunk FILE end: the offset its tail gives
records_end() {
	python3 -c 'import struct, sys; b = open(sys.argv[1], "rb").read()
assert b[-32:-24] == b"RIPCTAIL"; print(struct.unpack_from("<Q", b, len(b) - 24)[0])' "$1"
}

# the last chunk cut inside its tail: every record is there, nothing lost
last=$(ls good/chunk-*.rpk | tail -n 1)
rend=$(records_end "$last") || die "$last has no tail"
rm -rf cuttail
cp -r good cuttail
truncate -s $((rend + 100)) "cuttail/${last#good/}"
"$RIP" dump cuttail >cuttail.txt 2>cuttail.err || fail "rip dump of a cut tail: $(cat cuttail.err)"
cmp -s cuttail.txt good.txt || fail "a chunk cut inside its tail: $(tail -n 1 cuttail.txt)"

# a chunk read alone, its tail's index damaged (no index beside it): refused
mkdir alone
cp good/chunk-000000.rpk alone/c0
python3 -c 'import sys; f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2]) + 20)
f.write(b"\xff\xff\xff\x7f")' alone/c0 "$(records_end good/chunk-000000.rpk)" || die "damage the tail"
for cmd in dump leaks; do
	"$RIP" $cmd alone/c0 >out 2>err
	[ $? = 1 ] || fail "rip $cmd of a chunk whose tail's index is damaged did not fail"
	grep -q 'alone/c0 (its index): corrupt index' err || fail "a damaged tail's index: $(cat err)"
	asan_run $cmd alone/c0
	[ "$asan_rc" = 1 ] || fail "rip $cmd (asan) of a damaged tail: exit $asan_rc, want 1"
done

# the last chunk cut inside its last record: read to the cut, the rest counted lost
rm -rf cut
cp -r good cut
truncate -s $((rend - 100)) "cut/${last#good/}"
"$RIP" dump cut >cut.txt 2>cut.err || fail "rip dump of a cut chunk: $(cat cut.err)"
tail -n 1 cut.txt | grep -Eq ' [1-9][0-9]* discarded/overwritten, [1-9][0-9]* packets lost \(in them: 1 chunks' ||
	fail "the cut is not counted: $(tail -n 1 cut.txt)"
[ "$(wc -l <cut.txt)" -lt "$(wc -l <good.txt)" ] || fail "the cut chunk lost no event"
asan_run leaks cut
[ "$asan_rc" = 0 ] || fail "rip leaks (asan) of a cut chunk: exit $asan_rc"

# a chunk missing between two: its packets counted lost once (they were counted by the gaps in
# the streams' sequence numbers and again as the chunk's), what they held discarded
rm -rf mid
cp -r good mid
python3 - mid/chunk-000001.rpk >mid.packets <<'EOF' || die "count chunk 1's packets"
import struct, sys
b = open(sys.argv[1], "rb").read()
off, end, n = 64, len(b), 0
if b[-32:-24] == b"RIPCTAIL":
    end = struct.unpack_from("<Q", b, len(b) - 24)[0]
while off + 32 <= end:
    magic, npk, size = struct.unpack_from("<4sIQ", b, off)
    n += npk
    off += 32 + 4 * npk + size
print(n)
EOF
rm mid/chunk-000001.rpk
"$RIP" dump mid >mid.txt 2>/dev/null || fail "rip dump with chunk 1 missing: exit $?"
tail -n 1 mid.txt | grep -q " $(cat mid.packets) packets lost (in them: 1 chunks of the trace gone)" ||
	fail "chunk 1 missing ($(cat mid.packets) packets): $(tail -n 1 mid.txt)"

# random bytes changed anywhere in the first chunk: refused or read, never a crash
python3 - good/chunk-000000.rpk <<'EOF' >flips.txt
import random, sys
size = len(open(sys.argv[1], "rb").read())
random.seed(7)
for _ in range(24):
    print(random.randrange(64, size), random.randrange(256))
EOF
crashed=0
while read -r off val; do
	rm -rf flip
	cp -r good flip
	python3 -c 'import sys; f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2]));
f.write(bytes([int(sys.argv[3])]))' flip/chunk-000000.rpk "$off" "$val" || die "flip"
	asan_run leaks flip
	[ "$asan_rc" -le 1 ] || crashed=$((crashed + 1))
done <flips.txt
[ "$crashed" = 0 ] || fail "$crashed of 24 damaged chunks crashed rip leaks (asan)"

# random bytes changed in the tail of a chunk read alone (its index, where it is): the same
rend=$(records_end good/chunk-000000.rpk) || die "chunk 0 has no tail"
python3 - good/chunk-000000.rpk "$rend" <<'EOF' >flips.txt
import random, sys
size = len(open(sys.argv[1], "rb").read())
random.seed(11)
for _ in range(12):
    print(random.randrange(int(sys.argv[2]), size), random.randrange(256))
EOF
while read -r off val; do
	cp good/chunk-000000.rpk alone/flip
	python3 -c 'import sys; f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2]));
f.write(bytes([int(sys.argv[3])]))' alone/flip "$off" "$val" || die "flip"
	asan_run leaks alone/flip
	[ "$asan_rc" -le 1 ] || crashed=$((crashed + 1))
done <flips.txt
[ "$crashed" = 0 ] || fail "$crashed of 12 chunks read alone, their tail damaged, crashed rip (asan)"
t_done
