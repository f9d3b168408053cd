#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip leaks on damaged trace directories.  A real trace of
# several packets (the program of leaks-accept.sh, its noise made 300
# times, under rip run --mem --fd --shm) is damaged one way at a time:
# the stream file cut inside a packet header, inside the events and one
# byte short; a packet header with a bad magic, absurd sizes, content
# bigger than the packet, a sequence number that goes back, a wrong event
# count, another stream's id, an end before its begin; the .rip-index
# garbage, empty, cut short, or of a newer format; and, as the index says
# how many events the stream files hold, a stream file cut at a packet
# boundary, emptied or removed, and an index whose event count is wrong.
# Each must make rip leaks (text and --json, and the ASan/UBSan build)
# exit 1 with exactly one line on stderr that names the damaged file, and
# nothing on stdout.  So must an empty directory, a directory without an
# index, and a directory that does not exist.  Then random bit flips in the
# packet headers: exit 0 or 1, never a crash or a sanitizer report.
. tests/data/common.sh
need_bin "$RIP" "$RIP_ASAN" "$BUILD/librip-preload.so"
need_cmd python3
CXX=${CXX:-c++}
command -v "$CXX" >/dev/null || die "no C++ compiler ($CXX): make check installs g++ (mk/deps.sh)"

src=$TEST_TMP/leaks_accept.cc
prog=$TEST_TMP/leaks_accept
shm=/rip-accept-$$
trap 't_cleanup; rm -f "/dev/shm$shm"' EXIT
cp tests/integ/leaks_accept.cc "$src" || die "no tests/integ/leaks_accept.cc"
"$CXX" -O0 -g -fno-omit-frame-pointer -Wl,-z,now -Itests -o "$prog" "$src" || die "cannot build $src"
good=$TEST_TMP/good
"$RIP" run --ctf --mem --fd --shm -q -o "$good" -- "$prog" "$shm" 300 >/dev/null 2>"$TEST_TMP/run.err" ||
	{ cat "$TEST_TMP/run.err" >&2; die "rip run failed"; }
rm -f "/dev/shm$shm"
expect_status 0 "rip leaks on the intact trace" "$RIP" leaks "$good"
grep -q '^240 bytes in 5 blocks never freed (malloc)' "$TEST_TMP/out" ||
	fail "intact trace: the malloc group is not there"

# The packets of stream_0: "offset size" per line (sizes from the headers).
python3 - "$good/stream_0" >"$TEST_TMP/packets" <<'EOF' || die "cannot read the packets"
import struct, sys
b = open(sys.argv[1], "rb").read()
off = 0
while off < len(b):
    size = struct.unpack_from("<Q", b, off + 40)[0] // 8
    assert size >= 80, (off, size)
    print(off, size)
    off += size
EOF
npk=$(wc -l <"$TEST_TMP/packets")
[ "$npk" -ge 3 ] || die "the trace has $npk packets, want 3 or more"
p1=$(sed -n 2p "$TEST_TMP/packets" | cut -d' ' -f1)  # the second packet
p2=$(sed -n 3p "$TEST_TMP/packets" | cut -d' ' -f1)  # the third
size=$(wc -c <"$good/stream_0")

# poke FILE OFFSET FORMAT VALUE: store VALUE (python struct FORMAT) at OFFSET
poke() {
	python3 -c 'import struct, sys
p, off, fmt, val = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4], 0)
b = bytearray(open(p, "rb").read())
struct.pack_into(fmt, b, off, val)
open(p, "wb").write(b)' "$@" || die "cannot poke $1"
}

# refused NAME FILE-NAMED TRACE: rip leaks (text, --json, ASan) exits 1 with
# one line on stderr that names FILE-NAMED, and nothing on stdout.
refused() {
	name=$1 named=$2 trace=$3
	for run in "$RIP leaks" "$RIP leaks --json" "$RIP_ASAN leaks"; do
		# shellcheck disable=SC2086
		ASAN_OPTIONS=detect_leaks=1:exitcode=99 \
			UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=98 \
			timeout 60 $run "$trace" >"$TEST_TMP/out" 2>"$TEST_TMP/err"
		rc=$?
		case $run in
		"$RIP_ASAN"*) what="$name: rip (asan) ${run#* }" ;;
		*) what="$name: rip ${run#* }" ;;
		esac
		if [ "$rc" != 1 ]; then
			fail "$what: exit $rc, want 1 ($(head -c 100 "$TEST_TMP/out" | head -n 1))"
			head -n 5 "$TEST_TMP/err" >&2
			continue
		fi
		[ "$(wc -l <"$TEST_TMP/err")" = 1 ] ||
			fail "$what: not one line on stderr: $(head -n 5 "$TEST_TMP/err")"
		grep -q "^rip: .*$named" "$TEST_TMP/err" ||
			fail "$what: the message does not name $named: $(head -n 1 "$TEST_TMP/err")"
		[ -s "$TEST_TMP/out" ] && fail "$what: output on stdout despite the error"
	done
	return 0
}

# damaged NAME: a fresh copy of the good trace, in $d
damaged() {
	d=$TEST_TMP/$1
	rm -rf "$d"
	cp -r "$good" "$d" || die "cannot copy the trace"
}

# ---- stream files ----
for cut in 7 100 $((p1 + 40)) $((p1 + 500)) $((size - 1)); do
	damaged "cut-$cut"
	truncate -s "$cut" "$d/stream_0"
	refused "stream_0 cut to $cut bytes" "$d/stream_0" "$d"
done
damaged magic && poke "$d/stream_0" "$p1" '<I' 0xdeadbeef
refused "bad packet magic" "$d/stream_0: offset $p1" "$d"
damaged huge && poke "$d/stream_0" $((p1 + 40)) '<Q' 0x7fffffffffffffff
refused "huge packet size" "$d/stream_0: offset $p1" "$d"
damaged zero && poke "$d/stream_0" $((p1 + 40)) '<Q' 0
refused "packet size 0" "$d/stream_0: offset $p1" "$d"
damaged content && poke "$d/stream_0" $((p1 + 32)) '<Q' 0x7fffffff
refused "content bigger than the packet" "$d/stream_0: offset $p1" "$d"
damaged seq && poke "$d/stream_0" $((p2 + 48)) '<Q' 0
refused "sequence number going back" "$d/stream_0: offset $p2" "$d"
damaged count && poke "$d/stream_0" $((p1 + 72)) '<I' 3
refused "wrong event count" "$d/stream_0: offset $p1" "$d"
damaged instance && poke "$d/stream_0" $((p1 + 8)) '<Q' 5
refused "another stream's packet" "$d/stream_0: offset $p1" "$d"
damaged ends && poke "$d/stream_0" $((p1 + 24)) '<Q' 1
refused "a packet that ends before it begins" "$d/stream_0: offset $p1" "$d"

# ---- the index ----
idx_size=$(wc -c <"$good/.rip-index")
damaged idx-garbage && head -c "$idx_size" /dev/urandom >"$d/.rip-index"
refused "garbage index" "$d/.rip-index" "$d"
damaged idx-empty && : >"$d/.rip-index"
refused "empty index" "$d/.rip-index" "$d"
damaged idx-short && truncate -s 100 "$d/.rip-index"
refused "index cut short" "$d/.rip-index" "$d"
damaged idx-long && head -c 10 /dev/zero >>"$d/.rip-index"
refused "index too long" "$d/.rip-index" "$d"
damaged idx-version && poke "$d/.rip-index" 8 '<I' 1000
refused "newer index version" "$d/.rip-index" "$d"
damaged idx-ntypes && poke "$d/.rip-index" 12 '<I' 0x7fffffff
refused "absurd type count" "$d/.rip-index" "$d"

# ---- directories that are no trace ----
mkdir "$TEST_TMP/empty"
refused "empty directory" "$TEST_TMP/empty" "$TEST_TMP/empty"
damaged no-index && rm "$d/.rip-index"
refused "no .rip-index" "$d" "$d"
refused "no such directory" "$TEST_TMP/nothing-here" "$TEST_TMP/nothing-here"
grep -q 'No such file' "$TEST_TMP/err" || fail "missing directory: $(cat "$TEST_TMP/err")"

# ---- the index says how many events the streams hold ----
# (The index's "events" is the number of events in the stream files,
# doc/format.md; a reader that does not compare it reports a cut trace as
# complete, with the frees after the cut turned into false leaks.)
damaged cut-at-packet && truncate -s "$p2" "$d/stream_0"
refused "stream_0 cut at a packet boundary" "$d" "$d"
damaged stream-empty && : >"$d/stream_0"
refused "stream_0 emptied" "$d" "$d"
damaged stream-gone && rm "$d/stream_0"
refused "stream_0 removed" "$d" "$d"
damaged idx-events && poke "$d/.rip-index" 48 '<Q' 5
refused "index with a wrong event count" "$d" "$d"

# ---- random bit flips in the packet headers: no crash, no sanitizer report ----
bad=0 read=0 refused=0
for seed in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
	damaged flip
	python3 - "$d/stream_0" "$TEST_TMP/packets" "$seed" <<'EOF' || die "cannot flip bits"
import random, sys
p = sys.argv[1]
random.seed(int(sys.argv[3]))
heads = [int(l.split()[0]) for l in open(sys.argv[2])]
b = bytearray(open(p, "rb").read())
for _ in range(3):
    i = random.choice(heads) + random.randrange(80)
    b[i] ^= 1 << random.randrange(8)
open(p, "wb").write(b)
EOF
	asan_run leaks "$d"
	case $asan_rc in
	0) read=$((read + 1)) ;;
	1) refused=$((refused + 1)) ;;
	*) bad=$((bad + 1)) ;;
	esac
done
echo "bit flips in packet headers: $read read, $refused refused, $bad crashed"
[ "$bad" = 0 ] || fail "$bad runs on bit-flipped traces crashed or tripped the sanitizers"
t_done
