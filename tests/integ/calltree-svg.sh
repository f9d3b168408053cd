#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: Graphviz accepts what rip calltree writes: `dot -Tsvg` renders
# the graph of calltreeprog's events (unreleased and --all) without a
# warning, and rip calltree --svg runs it itself and writes an SVG that
# names the functions.  Graphviz is one of the tools make check installs.
. tests/data/common.sh
prog=$BUILD/tests/integ/calltreeprog
need_bin "$prog" "$RIP"
need_cmd dot

ring=$("$prog") || die "calltreeprog failed"
for mode in "" --all; do
	expect_status 0 "rip calltree $mode" "$RIP" calltree $mode "$ring" -o "$TEST_TMP/g.dot"
	if ! dot -Tsvg "$TEST_TMP/g.dot" -o "$TEST_TMP/g.svg" 2>"$TEST_TMP/dot.err"; then
		fail "dot -Tsvg rejects the graph ($mode)"
		head -n 5 "$TEST_TMP/dot.err" >&2
	fi
	[ -s "$TEST_TMP/dot.err" ] && fail "dot -Tsvg warns ($mode): $(head -n 2 "$TEST_TMP/dot.err")"
	grep -q "<svg" "$TEST_TMP/g.svg" || fail "dot wrote no SVG ($mode)"
done

expect_status 0 "rip calltree --svg" "$RIP" calltree --svg "$ring" -o "$TEST_TMP/c.svg"
grep -q "<svg" "$TEST_TMP/c.svg" || fail "--svg wrote no SVG"
for f in ct_main ct_parse ct_load ct_leaf_a ct_leaf_b ct_rec "(others)"; do
	grep -qF ">$f<" "$TEST_TMP/c.svg" || fail "--svg: no node $f"
done
expect_status 0 "rip calltree --svg -o -" "$RIP" calltree --svg -o - "$ring"
grep -q "<svg" "$TEST_TMP/out" || fail "--svg -o -: no SVG on standard output"

t_done
