#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a rotated trace read while it is being recorded.  rip record
# --rotate=1M --on-rotate=CMD of a program that runs until it is stopped (--noise:
# random fields, so the packed chunks fill at a known pace):
# CMD runs rip dump and rip leaks on the chunk it is given while the
# recording goes on (the program is stopped only once three commands have
# done so), then moves the chunk away, where it is read again alone (with
# the index in its tail) with the same events.  The chunks hold what the
# program wrote: per thread, the counters of the chunks read one after the
# other run without a gap, are those of the whole trace (the chunks put
# back) and end at the count each thread says it emitted.  Then rip record
# --rotate=1M without a command: the trace directory is read while the
# recording goes on (the readers warn that what comes after is not in it;
# not once the recording ended), and once the recorder is killed (SIGKILL) after some
# rotations, the chunks it had closed read whole (the directory, each chunk
# alone, the ASan build), and the chunk it had open is refused, saying so.
# Timeout: 90
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/recprog
need_bin "$prog" "$RIP_ASAN"
cd "$TEST_TMP" || die "no TEST_TMP"

# thread counter lines of rip dump output FILE, per thread in order (a stable sort by thread)
per_thread() {
	awk '/events:count n=/ { v = $NF; sub(/n=/, "", v); print $2, v }' "$1" | LC_ALL=C sort -s -k 1,1
}
# do the counters of per_thread's output FILE run without a gap on each thread?
no_gap() {
	awk '{ if (($1 in next_) && $2 != next_[$1]) bad++; next_[$1] = $2 + 1 } END { exit bad > 0 }' "$1"
}
summary_ok='^[1-9][0-9]* events, 2 streams, [0-9]+ discarded/overwritten, 0 packets lost$'

# ---- 1. each chunk read by the command it is handed to, while the recording goes on ----
mkdir got live
cat >look <<EOF
#!/bin/sh
[ \$# = 1 ] || exit 3
n=\$(basename "\$1" .rpk)
"$RIP" dump "\$1" >"$TEST_TMP/live/\$n.dump" 2>"$TEST_TMP/live/\$n.err" || exit 4
"$RIP" leaks "\$1" >"$TEST_TMP/live/\$n.leaks" 2>>"$TEST_TMP/live/\$n.err" || exit 5
mv "\$1" "$TEST_TMP/got/" || exit 6
echo "\$n" >>"$TEST_TMP/looked"
EOF
chmod +x look
: >looked
t_bg env RIP_RING=1 RIP_MODE=block "$prog" 1 --forever --threads 2 --rate 400000 --noise \
	--progress progress >p.out 2>p.err
pid=$T_LAST
wait_file progress 20 || die "the program did not start: $(cat p.err)"
t_bg "$RIP" record --rotate=1M --on-rotate="$TEST_TMP/look" -o T "$pid" 2>rec.err
rec=$T_LAST
three() { [ "$(wc -l <looked)" -ge 3 ]; }
wait_until 40 three || fail "3 chunks were not read by their command in 40 s: $(cat live/*.err)"
kill -TERM "$pid"
wait "$rec" || fail "rip record: $(cat rec.err)"
wait "$pid"
n=$(wc -l <looked)
[ "$n" -ge 4 ] || fail "$n chunks read by their command, 4 at least (the last one too)"
grep -Eq "; $n chunks handed to --on-rotate's command\$" rec.err ||
	fail "the commands did not all succeed: $(cat rec.err; cat live/*.err)"
for f in got/chunk-*.rpk; do
	c=$(basename "$f" .rpk)
	tail -n 1 "live/$c.dump" | grep -Eq "$summary_ok" ||
		fail "$c read by its command: $(tail -n 1 "live/$c.dump")"
	# away from its trace: the index in its tail, the same events (times: the clock's
	# calibration of then, a few ns apart at most)
	"$RIP" dump "$f" >"got/$c.dump" 2>"got/$c.err" || fail "$f read alone: $(cat "got/$c.err")"
	cut -d ' ' -f 2- "live/$c.dump" >a.ev
	cut -d ' ' -f 2- "got/$c.dump" >b.ev
	cmp -s a.ev b.ev || fail "$c: read in T and alone, not the same events"
	cat "live/$c.dump" >>chunks.dump
done
asan_run dump got/chunk-000001.rpk
[ "$asan_rc" = 0 ] || fail "rip dump (asan) of a chunk away from its trace: exit $asan_rc"
asan_run leaks got/chunk-000001.rpk
[ "$asan_rc" = 0 ] || fail "rip leaks (asan) of a chunk away from its trace: exit $asan_rc"
per_thread chunks.dump >chunks.pt
no_gap chunks.pt || fail "the chunks read by their commands, one after the other, have a gap"
mv got/chunk-*.rpk T/
"$RIP" dump T >whole.dump 2>whole.err || fail "rip dump T: $(cat whole.err)"
tail -n 1 whole.dump | grep -Eq "$summary_ok" || fail "rip dump T: $(tail -n 1 whole.dump)"
grep -q 'recording went on' whole.err && fail "T, recorded to its end, said to be read while recording"
per_thread whole.dump >whole.pt
cmp -s chunks.pt whole.pt || fail "the chunks read live do not hold the whole trace's events"
# the last counter of each thread is the last event it emitted
awk '{ last[$1] = $2 } END { for (t in last) print last[t] + 1 }' whole.pt | sort >got.n
sed -n 's/^thread [0-9]* emitted //p' p.out | sort >want.n
[ -s want.n ] && cmp -s got.n want.n ||
	fail "the threads emitted $(tr '\n' ' ' <want.n), the trace ends at $(tr '\n' ' ' <got.n)"

# ---- 2. the directory read while recording; the recorder killed ----
t_bg env RIP_RING=1 RIP_MODE=block "$prog" 1 --forever --threads 2 --rate 400000 --noise \
	--progress progress2 >p2.out 2>p2.err
pid=$T_LAST
wait_file progress2 20 || die "the program did not start: $(cat p2.err)"
t_bg "$RIP" record --rotate=1M -o K "$pid" 2>rec2.err
rec=$T_LAST
wait_until 40 test -e K/chunk-000002.rpk || fail "no third chunk in 40 s: $(cat rec2.err)"
"$RIP" dump K >k1.dump 2>k1.err || fail "rip dump K while recording: $(cat k1.err)"
tail -n 1 k1.dump | grep -Eq "$summary_ok" || fail "rip dump K while recording: $(tail -n 1 k1.dump)"
grep -q 'K was read while its recording went on' k1.err ||
	fail "rip dump K while recording does not say the rest is not there: $(cat k1.err)"
"$RIP" leaks K >/dev/null 2>k1l.err || fail "rip leaks K while recording: $(cat k1l.err)"
grep -q 'recording went on' k1l.err || fail "rip leaks K while recording does not say so: $(cat k1l.err)"
per_thread k1.dump >k1.pt
no_gap k1.pt || fail "K read while recording has a gap"
wait_until 40 test -e K/chunk-000004.rpk || fail "no fifth chunk in 40 s: $(cat rec2.err)"
t_kill "$rec"
t_kill "$pid"
[ -e K/.rip-index ] || fail "the recorder killed left no index"
"$RIP" dump K >k2.dump 2>k2.err || fail "rip dump K, its recorder killed: $(cat k2.err)"
tail -n 1 k2.dump | grep -Eq "$summary_ok" || fail "rip dump K, recorder killed: $(tail -n 1 k2.dump)"
grep -q 'recording went on (or its recorder was killed' k2.err ||
	fail "rip dump K, recorder killed, does not say the rest is not there: $(cat k2.err)"
per_thread k2.dump >k2.pt
no_gap k2.pt || fail "K has a gap, its recorder killed"
# what was read while recording is the start of what is read now, on each thread
for t in $(cut -d ' ' -f 1 k1.pt | uniq); do
	grep "^$t " k1.pt >a.pt
	grep "^$t " k2.pt | head -n "$(wc -l <a.pt)" >b.pt
	cmp -s a.pt b.pt || fail "K read while recording is not the start of K read after ($t)"
done
asan_run leaks K
[ "$asan_rc" = 0 ] || fail "rip leaks (asan) of K, its recorder killed: exit $asan_rc"
# each chunk alone: the closed ones whole, the one open (if any: the newest) refused;
# the directory reads the closed ones and the one open up to its last whole record: at
# least what the closed ones hold (all, or all but the newest if the recorder was killed
# between a chunk's tail and the index)
total=$(sed -n 's/ events, .*//p' k2.dump | tail -n 1)
sums=" 0"
sum=0
closed=0
last=$(ls K/chunk-*.rpk | tail -n 1)
for f in K/chunk-*.rpk; do
	if "$RIP" dump "$f" >one.dump 2>one.err; then
		tail -n 1 one.dump | grep -Eq "$summary_ok" || fail "$f alone: $(tail -n 1 one.dump)"
		sum=$((sum + $(sed -n 's/ events, .*//p' one.dump | tail -n 1)))
		sums="$sums $sum"
		closed=$((closed + 1))
	elif [ "$f" = "$last" ]; then
		grep -q 'not closed' one.err || fail "the open chunk $f: $(cat one.err)"
	else
		fail "$f, closed, does not read alone: $(cat one.err)"
	fi
done
[ "$closed" -ge 4 ] || fail "$closed chunks closed before the kill, 4 at least"
prev=$(echo "$sums" | awk '{ print $(NF - 1) }')
[ "$total" -ge "$prev" ] ||
	fail "K holds $total events, its chunks read alone $sums (all but the newest: $prev)"
t_done
