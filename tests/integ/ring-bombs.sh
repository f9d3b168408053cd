#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: compressed ring files that unpack to gigabytes (decompression
# bombs) are refused early, by name, in the directory rip ls scans.  Ring
# files are made by the snapper helper with the names the library gives
# them; all but one are then replaced by bombs: a real header whose
# file_size says 8 GiB (more than its layout holds) followed by 4 GiB of 'A'
# in zstd and 1 GiB in gzip; a header whose layout really holds 3 GiB, with
# the same runs of 'A' (past 32 MiB of data, more than 256 bytes of data per
# compressed byte); one whose layout holds 8 GiB (more than RIP_UNPACK_MAX's
# default); one without the magic.  The last stays a real ring file,
# compressed.  rip ls must list the real one and name every bomb as bad with
# its reason, within 2 s, with at most 64 MiB more memory (maximum RSS) than
# rip ls of the real file alone, and at most 64 MiB written into any memory
# file it unpacks into (strace's count of pwrite64 into each memfd).  Then
# RIP_UNPACK_MAX: a lower ceiling refuses the real file, naming the
# variable; a value that is no size is an error that says so.
. tests/data/common.sh
prog=$BUILD/tests/integ/snapper
need_bin "$prog" "$RIP"
need_cmd python3 zstd gzip strace /usr/bin/time

d=$TEST_TMP/scan
mkdir -p "$d" "$TEST_TMP/alone" || die "mkdir"
# ring NAME [VAR=VALUE...]: a ring file of snapper with the name the library gives it,
# in $d (its path in $TEST_TMP/NAME.path).
ring() {
	n=$1
	shift
	ls "$d" >"$TEST_TMP/before"
	env RIP_DIR="$d" RIP_RING=1 "$@" "$prog" || die "snapper $* failed"
	f=$(ls "$d" | grep -vxF -f "$TEST_TMP/before" | head -n 1)
	[ -n "$f" ] || die "snapper $* made no ring file in $d"
	echo "$d/$f" >"$TEST_TMP/$n.path"
}
ring real
ring hdr8-zst
ring hdr8-gz
ring lay3-zst RIP_EVENT_RINGS=12000
ring lay3-gz RIP_EVENT_RINGS=12000
ring lay8-zst RIP_EVENT_RINGS=32768
ring nomagic-gz
p() { cat "$TEST_TMP/$1.path"; }

# 64 MiB of 'A', compressed once: the bombs repeat it (a stream of several frames or
# members unpacks as their concatenation).
python3 -c 'import sys; sys.stdout.buffer.write(b"A" * (64 << 20))' >"$TEST_TMP/a64" ||
	die "python3 failed"
zstd -q -c "$TEST_TMP/a64" >"$TEST_TMP/a64.zst" || die "zstd failed"
gzip -c "$TEST_TMP/a64" >"$TEST_TMP/a64.gz" || die "gzip failed"
rm -f "$TEST_TMP/a64"
# head SRC OUT [file_size|nomagic]: SRC's first 4 KiB, changed as asked
head4k() {
	python3 - "$@" <<'PY' || die "python3 head4k failed"
import struct, sys
src, out = sys.argv[1], sys.argv[2]
h = bytearray(open(src, "rb").read(4096))
if len(sys.argv) > 3 and sys.argv[3] == "nomagic":
    h[0:8] = b"XXXXXXXX"
elif len(sys.argv) > 3:
    struct.pack_into("<Q", h, 32, int(sys.argv[3]))
open(out, "wb").write(h)
PY
}
# bomb NAME HEADER zst|gz COUNT: the ring file of NAME becomes HEADER then COUNT x 64 MiB of 'A'
bomb() {
	f=$(p "$1")
	if [ "$3" = zst ]; then
		zstd -q -c "$2" >"$f" || die "zstd failed"
	else
		gzip -c "$2" >"$f" || die "gzip failed"
	fi
	i=0
	while [ $i -lt "$4" ]; do
		cat "$TEST_TMP/a64.$3"
		i=$((i + 1))
	done >>"$f"
}
head4k "$(p hdr8-zst)" "$TEST_TMP/h8" $((8 << 30))
bomb hdr8-zst "$TEST_TMP/h8" zst 64
bomb hdr8-gz "$TEST_TMP/h8" gz 16
head4k "$(p lay3-zst)" "$TEST_TMP/l3"
bomb lay3-zst "$TEST_TMP/l3" zst 64
bomb lay3-gz "$TEST_TMP/l3" gz 16
head4k "$(p lay8-zst)" "$TEST_TMP/l8"
bomb lay8-zst "$TEST_TMP/l8" zst 64
head4k "$(p nomagic-gz)" "$TEST_TMP/nm" nomagic
bomb nomagic-gz "$TEST_TMP/nm" gz 16
zstd -q --rm -f "$(p real)" -o "$(p real).zst" && mv "$(p real).zst" "$(p real)" ||
	die "zstd of the real ring failed"
cp "$(p real)" "$TEST_TMP/alone/" || die "cp"

# measure DIR: rip ls of DIR, its output in $TEST_TMP/ls.out; sets took (seconds), rss
# (maximum RSS, KiB) and rc (exit status)
measure() {
	RIP_DIR=$1 /usr/bin/time -o "$TEST_TMP/time" -f "%e %M %x" "$RIP" ls >"$TEST_TMP/ls.out" 2>&1
	read -r took rss rc <"$TEST_TMP/time" || die "no measure of rip ls"
}
measure "$TEST_TMP/alone"
base_rss=$rss
grep -q "$(basename "$(p real)")" "$TEST_TMP/ls.out" && ! grep -q ' bad ' "$TEST_TMP/ls.out" ||
	fail "rip ls of the real compressed file alone: $(cat "$TEST_TMP/ls.out")"
measure "$d"
echo "rip ls of the bombs: $took s, max RSS $rss KiB (alone: $base_rss KiB), exit $rc"
[ "$rc" = 0 ] || fail "rip ls exit $rc: $(head -n 5 "$TEST_TMP/ls.out")"
awk -v t="$took" 'BEGIN { exit !(t < 2) }' || fail "rip ls took $took s (at most 2)"
[ $((rss - base_rss)) -le 65536 ] ||
	fail "rip ls took $((rss - base_rss)) KiB more memory than for the real file alone"
# bad NAME PATTERN: rip ls lists NAME's file as bad, saying PATTERN
bad() {
	line=$(grep -F "$(p "$1")" "$TEST_TMP/ls.out")
	case $line in *" bad "*) ;; *) fail "$1 is not listed as bad: ${line:-not listed}" ;; esac
	echo "$line" | grep -q "$2" || fail "$1: the reason does not say '$2': $line"
}
bad hdr8-zst 'it says 8589934592 bytes, but the areas it lays out end at'
bad hdr8-gz 'it says 8589934592 bytes, but the areas it lays out end at'
bad lay3-zst 'decompression bomb'
bad lay3-gz 'decompression bomb'
bad lay8-zst 'more than RIP_UNPACK_MAX allows'
bad nomagic-gz 'bad magic'
line=$(grep -F "$(p real)" "$TEST_TMP/ls.out")
case $line in *" bad "* | "") fail "the real compressed ring file is not listed as valid: $line" ;; esac

# The data written into the memory files rip unpacks into, at most 64 MiB each.
strace -f -o "$TEST_TMP/strace" -e trace=memfd_create,pwrite64 env RIP_DIR="$d" "$RIP" ls \
	>/dev/null 2>&1 || fail "rip ls under strace failed"
most=$(awk '
	/memfd_create\(/ { sub(/.*= /, ""); fd = $1; n[fd] = 0 }
	/pwrite64\(/ { split($0, a, "("); split(a[2], b, ","); f = b[1]
		if (f in n) { sub(/.*= /, ""); n[f] += $1; if (n[f] > m) m = n[f] } }
	END { printf "%d\n", m }' "$TEST_TMP/strace")
echo "most data written into one memory file: $most bytes"
[ "$most" -gt 0 ] || fail "strace saw nothing written into a memory file"
[ "$most" -le $((64 << 20)) ] || fail "$most bytes written into one memory file (at most 64 MiB)"

# RIP_UNPACK_MAX: the ceiling, named when it refuses; not a size: an error that says so.
expect_status 1 "rip ps with RIP_UNPACK_MAX=1m" env RIP_UNPACK_MAX=1m "$RIP" ps "$(p real)"
grep -q 'more than RIP_UNPACK_MAX allows' "$TEST_TMP/err" ||
	fail "RIP_UNPACK_MAX=1m: $(head -n 2 "$TEST_TMP/err")"
expect_status 0 "rip ps with RIP_UNPACK_MAX=1g" env RIP_UNPACK_MAX=1g "$RIP" ps "$(p real)"
expect_status 1 "rip ps with RIP_UNPACK_MAX=lots" env RIP_UNPACK_MAX=lots "$RIP" ps "$(p real)"
grep -q 'RIP_UNPACK_MAX=lots: not a size' "$TEST_TMP/err" ||
	fail "RIP_UNPACK_MAX=lots: $(head -n 2 "$TEST_TMP/err")"
t_done
