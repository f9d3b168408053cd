#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the sqlite3 tracing module on libsqlite3 itself.  A program
# (tests/data/module-sqlite3.c) opens two connections and closes one,
# prepares three statements and finalizes one, and runs sqlite3_exec (whose
# statements SQLite finalizes); rip run --module=sqlite3, then rip leaks
# reports exactly 1 connection (sqlite3-db, made in open_kept) and 2
# statements (sqlite3-stmt, made in prep_lost), by the kinds' names; rip
# leaks --resource=sqlite3-stmt keeps the statements alone.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so" "$BUILD/modules/sqlite3.so"
need_cmd python3 pkg-config cc
need_libunwind
pkg-config --exists sqlite3 ||
	die "SQLite's header is missing: make check installs libsqlite3-dev (mk/deps.sh)"

prog=$TEST_TMP/sq
# shellcheck disable=SC2046 # pkg-config's flags, a word each (-O0: a loop is one call site)
cc -O0 -g -o "$prog" tests/data/module-sqlite3.c $(pkg-config --cflags --libs sqlite3) ||
	die "cannot build the SQLite program"

"$RIP" run -q --module=sqlite3 -o "$TEST_TMP/t" -- "$prog" || die "rip run --module=sqlite3 failed"
"$RIP" leaks --json "$TEST_TMP/t" >"$TEST_TMP/leaks.json" || die "rip leaks failed"
python3 - "$TEST_TMP/leaks.json" <<'PY' ||
	fail "rip leaks does not report exactly the connection and statements left"
import json, sys
r = json.load(open(sys.argv[1]))
g = [x for x in r["leaks"] if x.get("module")]
got = sorted((x["resource"], x["count"], x["stack"][0]["function"]) for x in g)
want = [("sqlite3-db", 1, "open_kept"), ("sqlite3-stmt", 2, "prep_lost")]
if got != want:
    print("got: ", got, file=sys.stderr)
    print("want:", want, file=sys.stderr)
    sys.exit(1)
for x in g:
    assert not x["refcounted"] and x["references"] == [], x
    assert x["stack"][1]["function"] == "main", x
assert r["totals"]["sqlite3-db"]["count"] == 1, r["totals"]
assert r["totals"]["sqlite3-stmt"]["count"] == 2, r["totals"]
PY
"$RIP" leaks --json --resource=sqlite3-stmt "$TEST_TMP/t" >"$TEST_TMP/stmt.json" ||
	fail "rip leaks --resource=sqlite3-stmt failed"
python3 - "$TEST_TMP/stmt.json" <<'PY' ||
	fail "--resource=sqlite3-stmt does not keep the statements alone"
import json, sys
r = json.load(open(sys.argv[1]))
assert [(x["resource"], x["count"]) for x in r["leaks"]] == [("sqlite3-stmt", 2)], r["leaks"]
PY
t_done
