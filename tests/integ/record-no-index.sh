#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a packed trace whose recorder has not closed its first chunk
# yet has no index: rip record of a running program (no --rotate), read
# while it records, and again once the recorder is killed (SIGKILL) with
# that chunk still open.  Every reader (dump, leaks, report, top, export)
# must say so (no index yet: the first chunk is being written, or its
# recorder was killed), not call the directory one without a ring file.
# The same of a closed trace copied without its hidden files, and of one
# whose index is gone but whose ring file is there.
# Timeout: 60
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/recprog
need_bin "$prog"
cd "$TEST_TMP" || die "no TEST_TMP"

t_bg env RIP_RING=1 "$prog" 1 --forever --threads 2 --rate 20000 --progress progress \
	>p.out 2>p.err
pid=$T_LAST
wait_file progress 20 || die "recprog did not start: $(cat p.err)"
t_bg "$RIP" record -q -o T "$pid"
rec=$T_LAST
wait_file T/chunk-000000.rpk 20 || die "rip record wrote no chunk: $(ls -a T 2>&1)"

# readers SECOND: each refuses T, saying it has no index yet
readers() {
	for c in "dump T" "leaks T" "report T" "top --once T" "export --format=chrome -o x.json T"; do
		# shellcheck disable=SC2086
		"$RIP" $c >r.out 2>r.err && fail "$1: rip $c read a trace with no index"
		grep -q 'T: no index (.rip-index): its recorder is writing its first chunk, or was killed' r.err ||
			fail "$1: rip $c does not say the trace has no index yet: $(cat r.err)"
	done
}
[ -e T/.rip-index ] && die "an index before the first chunk closed: $(ls -a T)"
readers "while recording"
t_kill "$rec"
readers "recorder killed"

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
