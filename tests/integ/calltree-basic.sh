#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip calltree on the events calltreeprog emits itself (mem:alloc,
# mem:free and rip:bt stacks made of its own functions' addresses): the dot
# graph has exactly the expected function nodes and caller -> callee edges
# with their bytes and blocks, for the unreleased blocks and with --all;
# recursion is counted once per stack; the function under 1% goes into
# "(others)"; --top and --min-bytes collapse more, every figure still exact;
# the same from a trace directory and under AddressSanitizer; --svg without
# Graphviz in PATH is a clear failure; usage errors exit 2.
. tests/data/common.sh
prog=$BUILD/tests/integ/calltreeprog
need_bin "$prog" "$RIP" "$RIP_ASAN"
need_cmd python3

ring=$("$prog") || die "calltreeprog failed"
[ -s "$ring" ] || die "calltreeprog made no ring file ($ring)"

# check WHAT FILE NODES EDGES: the graph in FILE has exactly NODES ("func bytes count"
# separated by ;) and EDGES ("caller>callee bytes count" separated by ;)
check() {
	python3 - "$2" "$3" "$4" <<'PY' || fail "$1: graph differs"
import re, sys
text = open(sys.argv[1]).read()
assert text.startswith("digraph calltree {"), text[:80]
names, nodes, edges = {}, set(), set()
for m in re.finditer(r'^\t(n\d+) \[(.*)\];$', text, re.M):
    a = m.group(2)
    f = re.search(r'func="((?:[^"\\]|\\.)*)"', a).group(1)
    b = re.search(r'\bbytes=(\d+)', a).group(1)
    c = re.search(r'\bcount=(\d+)', a).group(1)
    names[m.group(1)] = f
    nodes.add("%s %s %s" % (f, b, c))
for m in re.finditer(r'^\t(n\d+) -> (n\d+) \[(.*)\];$', text, re.M):
    a = m.group(3)
    b = re.search(r'\bbytes=(\d+)', a).group(1)
    c = re.search(r'\bcount=(\d+)', a).group(1)
    edges.add("%s>%s %s %s" % (names[m.group(1)], names[m.group(2)], b, c))
want_n = set(sys.argv[2].split(";"))
want_e = set(sys.argv[3].split(";"))
ok = True
if nodes != want_n:
    print("nodes: missing", sorted(want_n - nodes), "extra", sorted(nodes - want_n),
          file=sys.stderr)
    ok = False
if edges != want_e:
    print("edges: missing", sorted(want_e - edges), "extra", sorted(edges - want_e),
          file=sys.stderr)
    ok = False
sys.exit(0 if ok else 1)
PY
}

UNREL_N="ct_main 7006 8;ct_parse 4396 4;ct_leaf_b 4096 1;ct_load 2600 3;ct_leaf_a 2300 5"
UNREL_N="$UNREL_N;ct_rec 600 1;(others) 10 1"
UNREL_E="ct_main>ct_parse 4396 4;ct_parse>ct_leaf_b 4096 1;ct_main>ct_load 2600 3"
UNREL_E="$UNREL_E;ct_load>ct_leaf_a 2000 2;ct_load>ct_rec 600 1;ct_rec>ct_rec 600 1"
UNREL_E="$UNREL_E;ct_parse>ct_leaf_a 300 3;ct_main>(others) 10 1"

expect_status 0 "rip calltree RING -o FILE" "$RIP" calltree "$ring" -o "$TEST_TMP/u.dot"
check "unreleased" "$TEST_TMP/u.dot" "$UNREL_N" "$UNREL_E"
grep -q 'total_bytes=7006, total_count=8, mode="unreleased"' "$TEST_TMP/u.dot" ||
	fail "unreleased: graph totals wrong"

expect_status 0 "rip calltree --all" "$RIP" calltree --all "$ring" -o "$TEST_TMP/a.dot"
ALL_N="ct_main 12056 10;ct_leaf_b 9096 2;ct_load 7600 4;ct_parse 4446 5;ct_leaf_a 2350 6"
ALL_N="$ALL_N;ct_rec 600 1;(others) 10 1"
ALL_E="ct_main>ct_parse 4446 5;ct_parse>ct_leaf_a 350 4;ct_parse>ct_leaf_b 4096 1"
ALL_E="$ALL_E;ct_main>ct_load 7600 4;ct_load>ct_leaf_a 2000 2;ct_load>ct_leaf_b 5000 1"
ALL_E="$ALL_E;ct_load>ct_rec 600 1;ct_rec>ct_rec 600 1;ct_main>(others) 10 1"
check "--all" "$TEST_TMP/a.dot" "$ALL_N" "$ALL_E"
grep -q 'total_bytes=12056, total_count=10, mode="all"' "$TEST_TMP/a.dot" ||
	fail "--all: graph totals wrong"

# --top=3 keeps ct_main, ct_parse, ct_leaf_b: every other stack goes through (others)
expect_status 0 "rip calltree --top=3" "$RIP" calltree --top=3 "$ring" -o "$TEST_TMP/t.dot"
check "--top=3" "$TEST_TMP/t.dot" \
	"ct_main 7006 8;ct_parse 4396 4;ct_leaf_b 4096 1;(others) 2910 7" \
	"ct_main>ct_parse 4396 4;ct_parse>ct_leaf_b 4096 1;ct_parse>(others) 300 3;ct_main>(others) 2610 4"

# --min-bytes=2500 keeps ct_load too; ct_rec's recursion collapses into one (others)
expect_status 0 "rip calltree --min-bytes=2500" "$RIP" calltree --min-bytes=2500 -o - "$ring"
check "--min-bytes" "$TEST_TMP/out" \
	"ct_main 7006 8;ct_parse 4396 4;ct_leaf_b 4096 1;ct_load 2600 3;(others) 2910 7" \
	"ct_main>ct_parse 4396 4;ct_parse>ct_leaf_b 4096 1;ct_parse>(others) 300 3;$(
	)ct_main>ct_load 2600 3;ct_load>(others) 2600 3;ct_main>(others) 10 1"

# standard output without -o; the same from a trace directory
expect_status 0 "rip calltree RING (stdout)" "$RIP" calltree "$ring"
cmp -s "$TEST_TMP/out" "$TEST_TMP/u.dot" || fail "stdout differs from -o FILE"
expect_status 0 "rip snapshot" "$RIP" snapshot -o "$TEST_TMP/trace" "$ring"
expect_status 0 "rip calltree TRACE" "$RIP" calltree "$TEST_TMP/trace" -o "$TEST_TMP/d.dot"
check "trace directory" "$TEST_TMP/d.dot" "$UNREL_N" "$UNREL_E"

asan_run calltree --all "$ring"
[ "$asan_rc" = 0 ] || fail "asan calltree --all: exit $asan_rc"
cmp -s "$TEST_TMP/asan.out" "$TEST_TMP/a.dot" || fail "asan calltree --all output differs"

# --svg without Graphviz: exit 1 and say what to install
mkdir -p "$TEST_TMP/nodot"
PATH=$TEST_TMP/nodot expect_status 1 "rip calltree --svg without dot" \
	"$RIP" calltree --svg "$ring" -o "$TEST_TMP/x.svg"
grep -q "graphviz" "$TEST_TMP/err" || fail "--svg without dot: no word of graphviz"
[ -e "$TEST_TMP/x.svg" ] && fail "--svg without dot wrote a file"

# usage errors and failures
expect_status 2 "rip calltree (no trace)" "$RIP" calltree
expect_status 2 "rip calltree --top=0" "$RIP" calltree --top=0 "$ring"
expect_status 2 "rip calltree --min-bytes=x" "$RIP" calltree --min-bytes=x "$ring"
expect_status 2 "rip calltree --bogus" "$RIP" calltree --bogus "$ring"
expect_status 1 "rip calltree (no such trace)" "$RIP" calltree "$TEST_TMP/nonexistent"
expect_status 0 "rip calltree --help" "$RIP" calltree --help
grep -q "^usage: rip calltree" "$TEST_TMP/out" || fail "--help prints no usage"

t_done
