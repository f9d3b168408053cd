#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip record --max-size=4M of a program that emits 8 million
# counters and 2 million events of random noise (recprog --noise: 120 MB
# of packets, about 2 bytes an event packed): the trace never takes more than 4 MiB
# plus one chunk on disk while it is recorded (its size is polled), each
# chunk within its 1 MiB whatever the blocks' sizes; at the
# end it holds the last chunks, whose counters run on to the program's last
# event; every reader reads what remains and counts what was dropped, and
# the summary line says so.  A chunk removed by hand after the end is
# counted too, and the CTF export of the trace reads the same (rip export
# warns that a CTF reader cannot see the chunks removed).  The index
# lists the chunks kept only (what the dropped ones held is summed), so it
# stays as big as what is kept.
# Timeout: 120
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/recprog
need_bin "$prog"
cd "$TEST_TMP" || die "no TEST_TMP"

N=4000000
t_bg env RIP_RING=1 RIP_MODE=block "$prog" "$N" --threads 2 --noise --rate 2000000 \
	--progress progress >prog.out 2>prog.err
pid=$T_LAST
wait_file progress 20 || die "the program did not start: $(cat prog.err)"
"$RIP" record --max-size=4M -o T "$pid" 2>rec.err &
rp=$!
# the disk the trace takes (each file's size, or its allocated bytes when fewer: the
# copy of the ring file is sparse), polled while it is written, and the largest chunk
max=0 big=0
while kill -0 "$rp" 2>/dev/null; do
	now=$(find T -type f -printf '%s %b %f\n' 2>/dev/null | awk '
		{ a = $2 * 512; s += $1 < a ? $1 : a; if ($3 ~ /^chunk-/ && $1 > c) c = $1 }
		END { printf "%d %d\n", s / 1024, c / 1024 }')
	disk=${now% *} chunk=${now#* }
	[ "${disk:-0}" -gt "$max" ] && max=$disk
	[ "${chunk:-0}" -gt "$big" ] && big=$chunk
	sleep 0.02
done
wait "$rp" || fail "rip record: exit $?: $(cat rec.err)"
wait "$pid"
# 4 MiB, one chunk of 1 MiB (max/4) being written, the index and directory
[ "$max" -le $((5 * 1024 + 128)) ] || fail "the trace took ${max} KiB on disk, over 4M + a chunk"
[ "$max" -gt 3000 ] || fail "the trace never got near its bound (${max} KiB): not enough written"
# a chunk stays within its size: the bound above holds however the blocks fall
[ "$big" -le 1024 ] || fail "a chunk of ${big} KiB, over --max-size/4 (1 MiB)"
ls T/chunk-000000.rpk 2>/dev/null && fail "the oldest chunk is still there: $(ls T)"
grep -Eq 'the oldest [1-9][0-9]* events \([0-9]+ chunks\) removed to keep within --max-size' \
	rec.err || fail "rip record does not say what it dropped: $(cat rec.err)"

# what remains: each thread's counters run without a gap to N - 1
"$RIP" dump T >dump.txt 2>dump.err || fail "rip dump: $(cat dump.err)"
tail -n 1 dump.txt | grep -Eq ' [1-9][0-9]* discarded/overwritten, [1-9][0-9]* packets lost \(in them: [0-9]+ chunks of the trace gone\)$' ||
	fail "rip dump does not count the dropped chunks: $(tail -n 1 dump.txt)"
awk -v N="$N" '
/events:count n=/ {
	t = $2; n = $NF; sub(/n=/, "", n)
	if ((t in last) && n + 0 != last[t] + 1) { bad++; if (bad < 4) print t ": " n " after " last[t] }
	last[t] = n + 0
}
END {
	for (t in last) { threads++; if (last[t] != N - 1) { print t " ends at " last[t]; bad++ } }
	if (threads != 2) { print threads " threads"; bad++ }
	exit bad > 0
}' dump.txt >check.txt || fail "the counters that remain: $(head -n 4 check.txt)"
kept=$(grep -c 'events:' dump.txt)
# the index (and the last chunk's tail) holds what the chunks kept held, not what the
# dropped ones did (their sums are in its store): it stays that size however long the
# recording runs.  The store (64 bytes: format, nchunks, first_chunk, ...) comes right
# before one 24-byte entry per chunk kept.
nk=$(ls T | grep -c '^chunk-')
python3 - T/.rip-index "$nk" <<'PY' || fail "the index does not hold the kept chunks only"
import struct, sys
b = open(sys.argv[1], "rb").read()
k = int(sys.argv[2])
fmt, n, first = struct.unpack_from("<III", b, len(b) - 24 * k - 64)
ver = struct.unpack_from("<I", b, 8)[0]
ok = ver >= 3 and fmt == 1 and first > 0 and n - first == k
print("version %d, format %d, chunks %d to %d, %d files" % (ver, fmt, first, n - 1, k))
sys.exit(0 if ok else 1)
PY
asan_run leaks T
[ "$asan_rc" = 0 ] || fail "rip leaks (asan): exit $asan_rc"
grep -q 'incomplete\|discarded\|lost' "$TEST_TMP/asan.err" "$TEST_TMP/asan.out" ||
	fail "rip leaks says nothing of the dropped chunks: $(head -n 3 "$TEST_TMP/asan.err")"

# the CTF form: the same events, the losses in its index
"$RIP" export --format=ctf T -o T.ctf 2>ex.err || fail "rip export --format=ctf: $(cat ex.err)"
"$RIP" dump T.ctf >dump2.txt 2>&1 || fail "rip dump of the export: $(tail -n 2 dump2.txt)"
[ "$(grep -c 'events:' dump2.txt)" = "$kept" ] || fail "the export holds other events"
tail -n 1 dump2.txt | grep -Eq ' [1-9][0-9]* discarded/overwritten' ||
	fail "the export forgot the losses: $(tail -n 1 dump2.txt)"
# which a CTF reader cannot see (they went before the first packet kept): rip export says so
grep -Eq 'warning: T: the [1-9][0-9]* events of the [1-9][0-9]* chunks gone .* a CTF reader does not see them' \
	ex.err || fail "rip export does not say the chunks gone are invisible to CTF readers: $(cat ex.err)"

# a chunk taken away by hand (a rotation's command would): counted, the rest read
first=$(ls T/chunk-*.rpk | head -n 1)
rm -f "$first"
"$RIP" dump T >dump3.txt 2>dump3.err || fail "rip dump without $first: $(cat dump3.err)"
[ "$(grep -c 'events:' dump3.txt)" -lt "$kept" ] || fail "removing $first removed no event"
l2=$(tail -n 1 dump.txt | sed -n 's/.* streams, \([0-9]*\) discarded.*/\1/p')
l3=$(tail -n 1 dump3.txt | sed -n 's/.* streams, \([0-9]*\) discarded.*/\1/p')
[ "$l3" -gt "$l2" ] || fail "the removed chunk is not counted: $l2 then $l3"
[ $((l3 - l2)) = $((kept - $(grep -c 'events:' dump3.txt))) ] ||
	fail "the removed chunk counted $((l3 - l2)) events, it held $((kept - $(grep -c 'events:' dump3.txt)))"

expect_status 2 "--max-size too small" "$RIP" record --max-size=1M -o X "$pid"
expect_status 2 "--max-size with --ctf" "$RIP" record --ctf --max-size=10M -o X "$pid"
expect_status 2 "--max-size=lots" "$RIP" record --max-size=lots -o X "$pid"
expect_status 2 "--chunk-size over half of --max-size" \
	"$RIP" record --max-size=4M --chunk-size=16M -o X "$pid"
grep -q "a chunk is half of it at most" "$TEST_TMP/err" ||
	fail "--chunk-size=16M --max-size=4M: $(cat "$TEST_TMP/err")"
expect_status 2 "--rotate over half of --max-size" "$RIP" run --max-size=4M --rotate=3M -o X -- true
t_done
