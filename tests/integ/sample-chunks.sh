#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the CPU samples of rip run --sample go into the trace as the
# run goes, each into the chunk written when it was taken.  recprog --spin
# keeps a thread on a CPU while it emits events of noise (a few MB packed)
# under rip run --sample --max-size=4M: while it runs, the trace takes no
# more than 4 MiB plus a chunk on disk, files rip holds open but removed
# (a temporary file of samples) counted, and no such file grows past one
# pass's worth; at the end every chunk kept holds rip:sample events, read
# alone too (rip dump, rip export --format=folded and rip top of one chunk
# file), rip top T counts them, the chunks' samples
# add up to the trace's, and the events kept and dropped add up to those
# recorded.  Then rip run --sample --chunk-size=1M is killed with SIGKILL
# after two chunks were closed: the closed chunks, and the directory, hold
# the samples taken while they were written.
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/recprog
need_bin "$prog" "$RIP"
command -v python3 >/dev/null || skip "python3 is needed to check the JSON output"
cd "$TEST_TMP" || die "no TEST_TMP"
here=$(pwd -P)

# ---- 1. --max-size: the samples within the bound, in every chunk kept ----
env RIP_RING=1 RIP_MODE=block "$RIP" run --sample=1000 --max-size=4M -o T -- \
	"$prog" 3000000 --noise --spin 700 >run.out 2>run.err &
rp=$!
max=0 hidden=0
while kill -0 "$rp" 2>/dev/null; do
	# the files in T: each one's size, or its allocated bytes when fewer (.rip-ring is sparse)
	disk=$(find T -type f -printf '%s %b\n' 2>/dev/null |
		awk '{ a = $2 * 512; s += $1 < a ? $1 : a } END { printf "%d\n", s / 1024 }')
	# and the files of T rip holds open though removed: du does not see them
	gone=0
	for fd in /proc/"$rp"/fd/*; do
		case $(readlink "$fd" 2>/dev/null) in
		"$here"/T/*" (deleted)")
			s=$(stat -L -c %s "$fd" 2>/dev/null)
			gone=$((gone + ${s:-0}))
			;;
		esac
	done
	[ "$gone" -gt "$hidden" ] && hidden=$gone
	disk=$((${disk:-0} + gone / 1024))
	[ "$disk" -gt "$max" ] && max=$disk
	sleep 0.02
done
wait "$rp" || fail "rip run: exit $?: $(cat run.err)"
grep -q '^thread 0 emitted 3000000$' run.out || die "the program did not finish: $(cat run.out)"
# 4 MiB, one chunk of 1 MiB (max/4) being written, the index and directory
[ "$max" -le $((5 * 1024 + 128)) ] || fail "the trace took ${max} KiB on disk, over 4M + a chunk"
[ "$max" -gt 3000 ] || fail "the trace never got near its bound (${max} KiB): not enough written"
# a pass of one thread's samples is a few KB: nothing waits outside the trace
[ "$hidden" -le 16384 ] || fail "rip held ${hidden} bytes of removed files in T"
grep -Eq 'the oldest [1-9][0-9]* events \([0-9]+ chunks\) removed' run.err ||
	fail "no chunk was dropped: $(cat run.err)"
taken=$(sed -n 's/^rip run: \([0-9]*\) CPU samples of them.*/\1/p' run.err)
[ "${taken:-0}" -gt 0 ] || die "no CPU sample taken: $(cat run.err)"

"$RIP" dump T >dump.txt 2>dump.err || fail "rip dump T: $(cat dump.err)"
n=$(grep -c ' rip:sample ' dump.txt)
[ "$n" -gt 0 ] || fail "no rip:sample event in the chunks kept"
[ "$n" -lt "$taken" ] || fail "all the $taken samples were kept: none dropped with their chunk"
# what was kept and what was dropped (samples included) add up to what was recorded,
# and the discarded count has the samples lost too (periods never sampled: not recorded)
rec=$(sed -n 's/^rip run: \([0-9]*\) events (.*/\1/p' run.err)
slost=$(sed -n 's/^rip run: [0-9]* CPU samples of them.*, \([0-9]*\) lost.*/\1/p' run.err)
kept=$(tail -n 1 dump.txt | sed -n 's/^\([0-9]*\) events, .*/\1/p')
drop=$(tail -n 1 dump.txt | sed -n 's/.* streams, \([0-9]*\) discarded.*/\1/p')
[ $((kept + drop)) = $((rec + ${slost:-0})) ] ||
	fail "$kept events kept and $drop dropped, $rec recorded, ${slost:-0} samples lost: $(tail -n 1 dump.txt)"
sum=0 chunks=0
for c in T/chunk-*.rpk; do
	"$RIP" dump "$c" >one.txt 2>one.err || fail "rip dump $c: $(cat one.err)"
	k=$(grep -c ' rip:sample ' one.txt)
	[ "$k" -gt 0 ] || fail "$c, read alone, holds no sample"
	sum=$((sum + k)) chunks=$((chunks + 1))
done
[ "$chunks" -ge 3 ] || fail "only $chunks chunks kept: $(ls T)"
[ "$sum" = "$n" ] || fail "the chunks read alone hold $sum samples, the trace $n"
# a profile of a chunk alone: its index names the samples' type and threads
mid=$(ls T/chunk-*.rpk | sed -n 2p)
"$RIP" dump "$mid" >mid.txt 2>/dev/null
"$RIP" export --format=folded -o mid.folded "$mid" 2>exp.err || fail "export $mid: $(cat exp.err)"
f=$(awk '{ s += $NF } END { print s + 0 }' mid.folded)
[ "$f" = "$(grep -c ' rip:sample ' mid.txt)" ] || fail "the profile of $mid has $f samples"
# rip top of the chunk: the threads and waits of the trace's ring file beside it
"$RIP" top --json "$mid" >midtop.json 2>midtop.err || fail "rip top $mid: $(cat midtop.err)"
python3 - midtop.json "$f" <<'PY' || fail "rip top $mid: wrong samples"
import json, sys
d, n = json.load(open(sys.argv[1])), int(sys.argv[2])
if not d["trace"] or d["samples"] != n:
    print("trace %s, %s samples, the chunk has %d" % (d["trace"], d["samples"], n), file=sys.stderr)
    sys.exit(1)
PY
# away from its trace: said so, not taken for a ring file
cp "$mid" away.rpk
expect_status 1 "rip top of a chunk away from its trace" "$RIP" top --json away.rpk
grep -q 'away from its trace' "$TEST_TMP/err" || fail "rip top away.rpk: $(cat "$TEST_TMP/err")"
"$RIP" top --json T >top.json 2>top.err || fail "rip top T: $(cat top.err)"
python3 - top.json "$n" <<'PY' || fail "rip top T: wrong samples"
import json, sys
d, n = json.load(open(sys.argv[1])), int(sys.argv[2])
if not d["trace"] or d["samples"] != n:
    print("trace %s, %s samples, rip dump has %d" % (d["trace"], d["samples"], n), file=sys.stderr)
    sys.exit(1)
PY

# ---- 2. the recorder killed: the closed chunks keep their samples ----
t_bg "$RIP" run --sample=1000 --chunk-size=1M -o K -- "$prog" 1 --forever --noise --spin 700 \
	>k.out 2>k.err
rp=$T_LAST
wait_until 20 test -e K/chunk-000002.rpk || fail "no third chunk in 20 s: $(cat k.err)"
child=$(ps -o pid= --ppid "$rp" | tr -d ' ')
t_kill "$rp"
[ -n "$child" ] && kill "$child" 2>/dev/null
for c in K/chunk-000000.rpk K/chunk-000001.rpk; do
	"$RIP" dump "$c" >one.txt 2>one.err || fail "rip dump $c: $(cat one.err)"
	grep -q ' rip:sample ' one.txt || fail "$c, closed before the recorder was killed, has no sample"
done
"$RIP" dump K >k.dump 2>k.derr || fail "rip dump K, its recorder killed: $(cat k.derr)"
grep -q ' rip:sample ' k.dump || fail "K, its recorder killed, has no sample"
t_done
