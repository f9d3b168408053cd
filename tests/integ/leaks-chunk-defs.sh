#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: every chunk of a trace names the stacks and functions its
# events use, though each is defined once per process (rip:bt, rip:fn), in
# the chunk where it was first met: the recorder copies the definitions met
# so far at the head of each chunk but the first.  A program leaks one
# block at each of three sites at its start, churns a pool of blocks from
# one site for many chunks, then leaks at the three sites again, recorded
# with rip run --mem --max-size=4M (the first chunks dropped): rip leaks
# --json of the directory and of each chunk read alone names every group's
# stack (the three sites at the end, churn's in a middle chunk), with no
# backtrace left undefined, and rip report has the call tree.  Read whole,
# the copies are taken as the same definitions again (no warning).  The
# same for function ids: funcprog under rip run --functions
# --chunk-size=1M, its last chunk read alone and the directory once its
# first chunk is removed, names every function by its rip:fn definition.
# Timeout: 60
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/funcprog
need_bin "$RIP" "$BUILD/librip-preload.so" "$prog"
need_cmd python3
CC=${CC:-cc}
rep=$PWD/tests/data/fn-report.py

cat >"$TEST_TMP/p.c" <<'C'
#include <stdio.h>
#include <stdlib.h>

static void *keep[6];

__attribute__((noinline)) static void site_a(int i) { keep[i] = malloc(1000); }
__attribute__((noinline)) static void site_b(int i) { keep[i] = malloc(2000); }
__attribute__((noinline)) static void site_c(int i) { keep[i] = malloc(3000); }

#include "churn.h"

int main(void)
{
	for (int i = 0; i < 2; i++) { /* each site one stack, met first in chunk 0 */
		site_a(3 * i);
		site_b(3 * i + 1);
		site_c(3 * i + 2);
		if (!i)
			churn(3000000);
	}
	printf("%p\n", keep[0]);
	return 0;
}
C
"$CC" -O0 -g -fno-omit-frame-pointer -Itests/data -o "$TEST_TMP/p" "$TEST_TMP/p.c" ||
	die "cannot build the test program"
cd "$TEST_TMP" || die "no TEST_TMP"

# every group's stack named, no backtrace undefined; $2: the functions that must lead groups
cat >groups.py <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
want = set(sys.argv[2].split()) if len(sys.argv) > 2 else set()
seen = set()
for g in d["leaks"]:
    st = g.get("stack") or []
    names = [f.get("function") for f in st]
    if not st or not any(names):
        print("group of bt %s (%s bytes) has no stack" % (g.get("bt"), g.get("bytes")))
        sys.exit(1)
    seen.update(n for n in names if n)
if not d["leaks"]:
    print("no group")
    sys.exit(1)
miss = want - seen
if miss:
    print("not named: %s (named: %s)" % (" ".join(sorted(miss)), " ".join(sorted(seen))))
    sys.exit(1)
PY

"$RIP" run --mem -q --max-size=4M -o T -- ./p >run.out 2>run.err || fail "rip run: $(cat run.err)"
[ -e T/chunk-000000.rpk ] && die "the first chunk was not dropped: $(ls T)"
chunks=$(ls T | grep '^chunk-' | sort)
last=$(echo "$chunks" | tail -n 1)
[ "$(echo "$chunks" | wc -l)" -ge 2 ] || die "fewer than two chunks kept: $(ls T)"

"$RIP" leaks --json T >whole.json 2>whole.err || fail "rip leaks T: $(cat whole.err)"
python3 groups.py whole.json "site_a site_b site_c" >whole.txt ||
	fail "rip leaks T (first chunks dropped): $(cat whole.txt)"
grep -q 'not defined\|corrupt\|redefin' whole.err && fail "rip leaks T warns: $(cat whole.err)"
for c in $chunks; do
	"$RIP" leaks --json "T/$c" >one.json 2>one.err || fail "rip leaks T/$c: $(cat one.err)"
	w=
	[ "$c" = "$last" ] && w="site_a site_b site_c"
	python3 groups.py one.json "$w" >one.txt || fail "rip leaks T/$c read alone: $(cat one.txt)"
	grep -q 'not defined' one.err && fail "rip leaks T/$c: $(cat one.err)"
done
# a middle chunk: blocks of churn made in it and freed in a later one show as its groups
[ "$(echo "$chunks" | wc -l)" -ge 3 ] && {
	mid=$(echo "$chunks" | head -n 1)
	"$RIP" leaks --json "T/$mid" >mid.json 2>/dev/null || fail "rip leaks T/$mid"
	python3 groups.py mid.json churn >mid.txt || fail "rip leaks T/$mid read alone: $(cat mid.txt)"
}
"$RIP" report "T/$last" >rep.out 2>rep.err || fail "rip report T/$last: $(cat rep.err)"
grep -q 'not defined' rep.out && fail "rip report T/$last: $(grep 'not defined' rep.out | head -n 3)"
grep -q 'site_b' rep.out || fail "rip report T/$last has no call tree: $(head -n 30 rep.out)"

# function ids: rip:fn once per function, in the first chunk
"$RIP" run --functions --chunk-size=1M -o F -- "$prog" count 500000 >frun.out 2>frun.err ||
	fail "rip run --functions: $(cat frun.err)"
flast=$(ls F | grep '^chunk-' | sort | tail -n 1)
[ "$flast" != chunk-000000.rpk ] || die "one chunk only: $(ls F)"
rm F/chunk-000000.rpk
for t in "F/$flast" F; do
	"$RIP" report --functions --json "$t" >fr.json 2>fr.err || fail "rip report --functions $t: $(cat fr.err)"
	python3 "$rep" <fr.json >fr.txt || fail "not JSON: $(head -c 300 fr.json)"
	grep -q '^fn#' fr.txt && fail "rip report --functions $t: functions without a name: $(cat fr.txt)"
	grep -qx 'ids_unknown 0' fr.txt || fail "rip report --functions $t: $(grep ids_unknown fr.txt)"
	grep -q '^count_rec ' fr.txt || fail "rip report --functions $t: no count_rec: $(cat fr.txt)"
	# a chunk read alone takes the function table from its trace's ring copy, not from itself
	grep -q 'bad magic' fr.err && fail "rip report --functions $t: $(cat fr.err)"
done
t_done
