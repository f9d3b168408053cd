#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a trace that rotates (recprog --noise: counters alone pack
# too well to fill chunks).  rip run --rotate=1M --on-rotate=CMD
# hands every closed chunk, the last one too, to CMD (run without a shell,
# the chunk's path its one argument), which moves it away: the summary and
# the index count them, a reader of what is left counts every event as
# gone, and with the chunks put back it reads every event in order; one
# chunk file read alone (rip dump DIR/chunk-N.rpk) gives exactly that
# chunk's events, with no loss claimed for the others, and so does a copy
# of it anywhere under another name (with the index in its tail, which
# lists that chunk alone), but not
# one of an older rip (no tail) away from its index.  A command that
# fails is counted and its chunk stays to be read.  rip record
# --rotate=1s (no command: the chunks stay for collection) of a paced
# program closes a chunk every second.  Options that do not go together
# are usage errors.
# Timeout: 60
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/recprog
need_bin "$prog"
cd "$TEST_TMP" || die "no TEST_TMP"

# the command: the chunk moved to got/, its path noted
mkdir got
cat >take <<EOF
#!/bin/sh
[ \$# = 1 ] || exit 3
echo "\$1" >>"$TEST_TMP/handed"
mv "\$1" "$TEST_TMP/got/"
EOF
chmod +x take
N=1000000
E=$((2 * (N + (N + 3) / 4))) # the counters of 2 threads, and one noise event every 4
"$RIP" run --rotate=1M --on-rotate="$TEST_TMP/take" -o T -- "$prog" "$N" --noise --threads 2 \
	>run.out 2>run.err || fail "rip run: $(cat run.err)"
n=$(ls got | grep -c '^chunk-')
[ "$n" -ge 3 ] || fail "$n chunks handed, 1M each of ~5 MB packed: 3 at least"
[ "$(wc -l <handed)" = "$n" ] || fail "the command ran $(wc -l <handed) times for $n chunks"
grep -q "^T/chunk-000000.rpk\$" handed || fail "the command was not given the chunk's path: $(head -n 2 handed)"
ls T | grep -q '^chunk-' && fail "chunks left in T: $(ls T)"
grep -Eq "; $n chunks handed to --on-rotate's command" run.err ||
	fail "rip run does not say it handed $n chunks: $(cat run.err)"
for f in got/*; do
	[ "$(stat -c %s "$f")" -le 1048576 ] || fail "$f is over its 1M: $(stat -c %s "$f")"
done
# each chunk's tail lists that chunk alone (a chunk is as big at its millionth close as at
# its first): the tail's index ends with the store (64 bytes: format, nchunks, first_chunk)
# and one 24-byte entry
python3 - got/chunk-* <<'PY' || fail "a chunk's tail lists other chunks than itself"
import struct, sys
bad = 0
for path in sys.argv[1:]:
    b = open(path, "rb").read()
    seq = struct.unpack_from("<I", b, 12)[0]
    magic, off, ln = struct.unpack_from("<8sQQ", b, len(b) - 32)
    idx = b[off:off + ln]
    fmt, n, first = struct.unpack_from("<III", idx, len(idx) - 24 - 64)
    if magic != b"RIPCTAIL" or fmt != 1 or first != seq or n != seq + 1:
        print("%s: chunk %d, its tail lists %d to %d" % (path, seq, first, n - 1))
        bad += 1
sys.exit(bad > 0)
PY
"$RIP" dump T >d0.txt 2>d0.err || fail "rip dump of T without its chunks: $(cat d0.err)"
tail -n 1 d0.txt | grep -Eq "^0 events, 0 streams, $E discarded/overwritten, [1-9][0-9]* packets lost \\(in them: $n chunks of the trace gone\\)" ||
	fail "what was handed away is not counted: $(tail -n 1 d0.txt)"

# the chunks back: every event, each thread's counters in order
mv got/* T/
"$RIP" dump T >d1.txt 2>d1.err || fail "rip dump of T: $(cat d1.err)"
tail -n 1 d1.txt | grep -q "^$E events, 2 streams, 0 discarded/overwritten, 0 packets lost\$" ||
	fail "rip dump of the chunks put back: $(tail -n 1 d1.txt)"
awk -v N="$N" '/events:count n=/ {
	t = $2; v = $NF; sub(/n=/, "", v)
	if (v + 0 != next_[t] + 0) bad++
	next_[t] = v + 1
}
END { for (t in next_) { k++; if (next_[t] != N) bad++ } exit bad || k != 2 }' d1.txt ||
	fail "the counters of the chunks put back do not run 0..N-1 on both threads"

# one chunk alone: its events, in order, nothing claimed lost
"$RIP" dump T/chunk-000001.rpk >d2.txt 2>d2.err || fail "rip dump of one chunk: $(cat d2.err)"
k=$(grep -c 'events:' d2.txt)
[ "$k" -gt 0 ] || fail "chunk 1 read alone holds no event"
tail -n 1 d2.txt | grep -q "^$k events, 2 streams, 0 discarded/overwritten, 0 packets lost\$" ||
	fail "one chunk read alone: $(tail -n 1 d2.txt)"
awk '/events:count n=/ {
	t = $2; v = $NF; sub(/n=/, "", v)
	if ((t in next_) && v + 0 != next_[t]) bad++
	next_[t] = v + 1
}
END { exit bad > 0 }' d2.txt || fail "chunk 1's counters have a gap"
# the events of chunk 1 are those of the whole trace between its first and last
first=$(grep -m 1 'events:count' d2.txt | sed 's/.* n=//')
grep -q "events:count n=$first\$" d1.txt || fail "chunk 1's first event is not in the trace"
asan_run leaks T/chunk-000002.rpk
[ "$asan_rc" = 0 ] || fail "rip leaks (asan) of one chunk: exit $asan_rc"
expect_status 1 "a chunk the trace does not have" "$RIP" dump T/chunk-000999.rpk
mkdir away
cp T/chunk-000001.rpk away/one
"$RIP" dump away/one >d4.txt 2>d4.err || fail "rip dump of a chunk away from its trace: $(cat d4.err)"
# the same events (the times may differ by a few ns: the clock's calibration as the chunk closed)
cut -d ' ' -f 2- d2.txt >d2.ev
cut -d ' ' -f 2- d4.txt >d4.ev
cmp -s d2.ev d4.ev || fail "chunk 1 read away from T: $(tail -n 1 d4.txt)"
# an older rip's chunk (version 1): no tail, and away from its index
python3 -c 'import sys; f = open(sys.argv[1], "r+b"); f.seek(8); f.write(b"\x01")' away/one ||
	die "python3"
expect_status 1 "an older chunk without its trace's index" "$RIP" dump away/one
grep -q "written by an older rip" err || fail "an older chunk away from its index: $(cat err)"

# a command that fails: counted, its chunks stay
"$RIP" run --rotate=1M --on-rotate=false -o F -- "$prog" 600000 --noise --threads 2 \
	>run2.out 2>run2.err || fail "rip run --on-rotate=false: $(cat run2.err)"
n=$(ls F | grep -c '^chunk-')
grep -Eq "; $n chunks? handed to --on-rotate's command \\($n of them failed\\)" run2.err ||
	fail "the failed commands are not counted: $(cat run2.err)"
[ "$n" -ge 2 ] || fail "1.5M events in $n chunk(s) of 1M"
"$RIP" dump F | tail -n 1 | grep -q '^1500000 events, 2 streams, 0 discarded' ||
	fail "the chunks a failed command left are not all read"

# rotation by time, no command: a chunk every second of a 3-second recording
t_bg env RIP_RING=1 RIP_MODE=block "$prog" 300000 --threads 2 --rate 100000 \
	--progress progress >p.out 2>p.err
pid=$T_LAST
wait_file progress 20 || die "the program did not start: $(cat p.err)"
"$RIP" record --rotate=1s -o R "$pid" 2>rec.err || fail "rip record --rotate=1s: $(cat rec.err)"
wait "$pid"
n=$(ls R | grep -c '^chunk-')
[ "$n" -ge 2 ] || fail "--rotate=1s over 3 seconds made $n chunk(s)"
"$RIP" dump R >d3.txt 2>d3.err || fail "rip dump R: $(cat d3.err)"
tail -n 1 d3.txt | grep -Eq '^[1-9][0-9]* events, 2 streams, [0-9]+ discarded/overwritten, 0 packets lost$' ||
	fail "rip dump R: $(tail -n 1 d3.txt)"

expect_status 2 "--on-rotate without --rotate" "$RIP" run --on-rotate=true -o X -- true
expect_status 2 "--on-rotate with --max-size" \
	"$RIP" run --rotate=1M --max-size=8M --on-rotate=true -o X -- true
expect_status 2 "--rotate=5x" "$RIP" run --rotate=5x -o X -- true
expect_status 2 "--rotate with --ctf" "$RIP" run --ctf --rotate=10s -o X -- true
expect_status 2 "--rotate=0s" "$RIP" record --rotate=0s -o X 1
[ -e X ] && fail "a usage error left X behind"
t_done
