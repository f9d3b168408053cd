#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a packed trace whose recorder has not closed its first chunk
# yet has no index: rip record of a running program (no --rotate), read
# while it records, and again once the recorder is killed (SIGKILL) with
# that chunk still open.  Every reader (dump, leaks, report, top, export)
# must say so (no index yet: the first chunk is being written, or its
# recorder was killed), not call the directory one without a ring file.
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
		grep -q 'T: no index yet: its recorder is writing its first chunk, or was killed' r.err ||
			fail "$1: rip $c does not say the trace has no index yet: $(cat r.err)"
	done
}
[ -e T/.rip-index ] && die "an index before the first chunk closed: $(ls -a T)"
readers "while recording"
t_kill "$rec"
readers "recorder killed"
t_done
