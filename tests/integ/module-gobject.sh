#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the gobject tracing module on GLib itself.  A program
# (tests/data/module-gobject.c) makes GObjects, balances some and leaks
# others through a missing g_object_unref; rip run --module=gobject, then
# rip leaks reports exactly the leaked objects: 2 made in make_kept with
# the extra reference taken in keep_ref still held, and 1 made in
# make_lost; the balanced ones (ref/unref in use, ref_sink) are not
# reported.  The kind is named by the trace (no reader knows a module):
# rip dump, rip export (chrome's kind_name, folded --kind=gobject of the
# leaked bytes) and rip calltree --kind show it by name; and
# --list-modules lists the module and its refcounted kind.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so" "$BUILD/modules/gobject.so"
need_cmd python3 pkg-config cc
need_libunwind
pkg-config --exists gobject-2.0 ||
	die "GLib's headers are missing: make check installs libglib2.0-dev (mk/deps.sh)"

prog=$TEST_TMP/gobj
# shellcheck disable=SC2046 # pkg-config's flags, a word each (-O0: a loop is one call site)
cc -O0 -g -o "$prog" tests/data/module-gobject.c \
	$(pkg-config --cflags --libs gobject-2.0) || die "cannot build the GLib program"

"$RIP" run --list-modules >"$TEST_TMP/list" || fail "rip run --list-modules failed"
grep -q -- '--module=gobject:' "$TEST_TMP/list" || fail "--list-modules does not list gobject"
grep -q 'kind gobject: GObject instance (refcounted)' "$TEST_TMP/list" ||
	fail "--list-modules does not list the gobject kind"

"$RIP" run -q --module=gobject -o "$TEST_TMP/t" -- "$prog" || die "rip run --module=gobject failed"
"$RIP" leaks --json "$TEST_TMP/t" >"$TEST_TMP/leaks.json" || die "rip leaks failed"
python3 - "$TEST_TMP/leaks.json" <<'PY' ||
	fail "rip leaks does not report exactly the leaked GObjects"
import json, sys
r = json.load(open(sys.argv[1]))
g = [x for x in r["leaks"] if x["resource"] == "gobject"]
def fn(stack):
    return stack[0]["function"] if stack else None
got = sorted((x["count"], fn(x["stack"]),
              [(y["count"], fn(y["stack"])) for y in x["references"]]) for x in g)
want = [(1, "make_lost", []), (2, "make_kept", [(2, "keep_ref")])]
if got != want:
    print("got: ", got, file=sys.stderr)
    print("want:", want, file=sys.stderr)
    sys.exit(1)
for x in g:
    assert x["module"] and x["refcounted"] and x["description"] == "GObject instance", x
    assert x["bytes"] > 0 and x["bytes"] % x["count"] == 0, x
    assert x["stack"][1]["function"] == "main", x
t = r["totals"]["gobject"]
assert t["count"] == 3, t
PY
"$RIP" leaks "$TEST_TMP/t" >"$TEST_TMP/leaks.txt" || fail "rip leaks (text) failed"
grep -q '^2 gobject never released.*(GObject instance, refcounted)' "$TEST_TMP/leaks.txt" ||
	fail "the text report does not name the kind"
grep -q '2 references still held, taken at:' "$TEST_TMP/leaks.txt" ||
	fail "the text report does not show the reference held"
grep -q '^gobject: 3 never released' "$TEST_TMP/leaks.txt" || fail "no total for the kind"
# the other readers name the kind too, from the trace
"$RIP" dump "$TEST_TMP/t" >"$TEST_TMP/dump.txt" || fail "rip dump failed"
[ "$(grep -c ' res:acquire .* kind=gobject$' "$TEST_TMP/dump.txt")" = 7 ] ||
	fail "rip dump does not show 7 res:acquire of kind=gobject"
"$RIP" export --format=chrome -o "$TEST_TMP/chrome.json" "$TEST_TMP/t" ||
	fail "rip export --format=chrome failed"
grep -q '"kind_name":"gobject"' "$TEST_TMP/chrome.json" || fail "rip export does not name the kind"
"$RIP" calltree --kind=gobject -o "$TEST_TMP/ct.dot" "$TEST_TMP/t" ||
	fail "rip calltree --kind failed"
grep -q 'in 3 blocks never released' "$TEST_TMP/ct.dot" && grep -q 'make_kept' "$TEST_TMP/ct.dot" ||
	fail "rip calltree --kind=gobject does not draw the leaked objects"
"$RIP" export --format=folded --kind=gobject --value=leaked -o "$TEST_TMP/g.folded" "$TEST_TMP/t" ||
	fail "rip export --format=folded --kind=gobject failed"
[ "$(sed 's/.*;//' "$TEST_TMP/g.folded" | sort | tr '\n' ' ')" = "make_kept 48 make_lost 24 " ] ||
	fail "the folded stacks of the leaked GObjects are not make_kept's and make_lost's"
t_done
