#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a packed trace whose recorder has not closed its first chunk
# yet is read: rip record of a running program (no --rotate), read while it
# records, and again once the recorder is killed (SIGKILL) with that chunk
# still open.  The recorder writes .rip-index before the first record of a
# chunk (and again when the types or streams grow), so every reader (dump,
# leaks, report, export) reads the chunk up to its last whole record
# and says the recording went on or its recorder was killed; the counters
# of each thread run from 0 without a gap, and the trace read after the
# kill holds at least what was read before it.  (Readers refused such a
# trace: "no index".)  A closed trace copied without its hidden files, and
# one whose index is gone but whose ring file is there, are refused as
# having no index, with the copy hint.
# Timeout: 60
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/recprog
need_bin "$prog"
cd "$TEST_TMP" || die "no TEST_TMP"

# the counters of a dump, "tid n" sorted by thread, and whether they run from 0 without a gap
per_thread() {
	awk '/events:count n=/ { v = $NF; sub(/n=/, "", v); print $2, v }' "$1" | LC_ALL=C sort -s -k 1,1
}
from0_no_gap() {
	awk '{ if (!($1 in next_) && $2 != 0) bad++; if (($1 in next_) && $2 != next_[$1]) bad++
	       next_[$1] = $2 + 1 } END { exit bad > 0 || NR == 0 }' "$1"
}

t_bg env RIP_RING=1 "$prog" 1 --forever --threads 2 --rate 20000 --progress progress \
	>p.out 2>p.err
pid=$T_LAST
wait_file progress 20 || die "recprog did not start: $(cat p.err)"
t_bg "$RIP" record -q -o T "$pid"
rec=$T_LAST
wait_file T/chunk-000000.rpk 20 || die "rip record wrote no chunk: $(ls -a T 2>&1)"
[ -e T/.rip-index ] || fail "the first chunk is there before an index: $(ls -a T)"

# readers WHEN: each reads T, says the recording went on, and dump's counters run from 0
readers() {
	for c in "dump T" "leaks T" "report T" "export --format=chrome --force -o x.json T"; do
		# shellcheck disable=SC2086
		"$RIP" $c >r.out 2>r.err || fail "$1: rip $c: $(cat r.err)"
		grep -q 'T was read while its recording went on (or its recorder was killed' r.err ||
			fail "$1: rip $c does not say the recording went on: $(cat r.err)"
	done
	"$RIP" dump T >"$1.dump" 2>/dev/null || fail "$1: rip dump T failed"
	per_thread "$1.dump" >"$1.pt"
	from0_no_gap "$1.pt" || fail "$1: the counters do not run from 0 without a gap: $(head -n 3 "$1.pt")"
}
readers recording
t_kill "$rec"
readers killed
n1=$(wc -l <recording.pt)
n2=$(wc -l <killed.pt)
[ "$n2" -ge "$n1" ] || fail "read after the kill: $n2 counters, $n1 before it"

# a closed trace copied without its hidden files (cp T/* C), or whose index
# was lost beside its ring file: refused as having no index (the second was
# read as the ring file alone: "0 events"), the copy hint given
t_kill "$pid"
"$RIP" run -q -o R -- "$prog" 20000 --threads 2 >/dev/null 2>&1 ||
	die "rip record of a short run failed"
[ -e R/.rip-index ] && [ -e R/.rip-ring ] || die "no index or ring file in R: $(ls -a R)"
mkdir C && cp R/* C/
rm R/.rip-index
for d in C R; do
	"$RIP" leaks $d >r.out 2>r.err && fail "$d: rip leaks read a trace without its index: $(head -n 2 r.out)"
	grep -q "$d: no index (.rip-index): .* or this is a copy without its hidden files" r.err ||
		fail "$d: rip leaks does not say what is missing: $(cat r.err)"
done
t_done
