#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: sqlite3 (the CLI) runs a script from stdin (a table, 5,000
# rows from a recursive CTE, an index, aggregates, an update and a
# delete) on a database file under rip run --mem --fd --shm as it runs
# plain: the same output and exit status, no hang, 0 events lost, the
# trace read by rip leaks and rip report.  Then exact agreement with
# valgrind on the same script: rip report's allocations, bytes allocated,
# frees, and rip leaks' blocks and bytes left equal valgrind's "total heap
# usage" and "in use at exit".  Both count a realloc as one allocation of
# its new size plus one free of the old block (none when it was NULL) and
# neither counts free(NULL); valgrind runs with --run-libc-freeres=no
# --run-cxx-freeres=no so that it does not free glibc's and libstdc++'s
# internal buffers at exit, which the program never frees itself.
# Timeout: 150
. tests/data/real.sh
real_need sqlite3
cat >"$W/script.sql" <<'SQL'
CREATE TABLE t (id INTEGER PRIMARY KEY, grp INTEGER, val TEXT);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 5000)
INSERT INTO t SELECT i, i % 7, printf('row-%06d', i * 31) FROM c;
CREATE INDEX t_grp ON t (grp);
SELECT grp, count(*), sum(length(val)), min(val), max(val) FROM t GROUP BY grp ORDER BY grp;
UPDATE t SET val = val || '-x' WHERE id % 3 = 0;
DELETE FROM t WHERE id % 5 = 0;
SELECT count(DISTINCT val), total(id), max(length(val)) FROM t;
SQL
cp "$W/script.sql" "$W/stdin"
real_run "sqlite3 script" "$REAL_OPTS" "rm -f \"\$W/db.sqlite\"" sqlite3 "$W/db.sqlite"
grep -q '^6|714|7140|' "$TEST_TMP/plain.out" || fail "sqlite3: unexpected output: $(head -n 3 "$TEST_TMP/plain.out")"

# valgrind agreement: the same command, a fresh database each time
if ! command -v valgrind >/dev/null 2>&1; then
	fail "valgrind is not installed (mk/deps.sh check installs it): no agreement check"
	t_done
fi
rm -f "$W/db.sqlite"
timeout -k 5 120 valgrind --run-libc-freeres=no --run-cxx-freeres=no sqlite3 "$W/db.sqlite" \
	<"$W/stdin" >"$TEST_TMP/vg.out" 2>"$TEST_TMP/vg.err" || die "sqlite3 under valgrind failed: $(tail -n 3 "$TEST_TMP/vg.err")"
cmp -s "$TEST_TMP/vg.out" "$TEST_TMP/plain.out" || fail "sqlite3's output under valgrind differs"
# ==PID==     in use at exit: 8,937 bytes in 15 blocks
# ==PID==   total heap usage: 229 allocs, 214 frees, 45,855 bytes allocated
vg=$(sed -n 's/^==[0-9]*== *in use at exit: \([0-9,]*\) bytes in \([0-9,]*\) blocks$/\1 \2/p;
	s/^==[0-9]*== *total heap usage: \([0-9,]*\) allocs, \([0-9,]*\) frees, \([0-9,]*\) bytes allocated$/\1 \2 \3/p' \
	"$TEST_TMP/vg.err" | tr -d , | tr '\n' ' ')
set -- $vg
[ $# = 5 ] || die "cannot read valgrind's heap summary: $(grep -A3 'HEAP SUMMARY' "$TEST_TMP/vg.err")"
vg_live_bytes=$1 vg_live_blocks=$2 vg_allocs=$3 vg_frees=$4 vg_bytes=$5
"$RIP" report --json "$real_trace" >"$TEST_TMP/r.json" || die "rip report --json failed"
mem=$(grep -o '"memory":{[^}]*' "$TEST_TMP/r.json")
memf() { echo "$mem" | grep -o "\"$1\":[0-9]*" | head -n 1 | cut -d: -f2; }
rip_allocs=$(memf allocations) rip_bytes=$(memf bytes) rip_frees=$(memf frees)
rip_live_blocks=$(memf live_blocks) rip_live_bytes=$(memf live_bytes)
echo "valgrind: $vg_allocs allocs, $vg_frees frees, $vg_bytes bytes; at exit $vg_live_bytes bytes in $vg_live_blocks blocks"
echo "rip:      $rip_allocs allocs, $rip_frees frees, $rip_bytes bytes; at exit $rip_live_bytes bytes in $rip_live_blocks blocks" \
	"(reallocs $(memf reallocs), frees unseen $(memf frees_unseen), allocated again $(memf allocated_again))"
[ "$rip_allocs" = "$vg_allocs" ] || fail "allocations: rip $rip_allocs, valgrind $vg_allocs"
[ "$rip_bytes" = "$vg_bytes" ] || fail "bytes allocated: rip $rip_bytes, valgrind $vg_bytes"
[ "$rip_frees" = "$vg_frees" ] || fail "frees: rip $rip_frees, valgrind $vg_frees"
[ "$rip_live_blocks" = "$vg_live_blocks" ] || fail "blocks at exit: rip $rip_live_blocks, valgrind $vg_live_blocks"
[ "$rip_live_bytes" = "$vg_live_bytes" ] || fail "bytes at exit: rip $rip_live_bytes, valgrind $vg_live_bytes"
[ "$(memf frees_unseen)" = 0 ] || fail "rip saw $(memf frees_unseen) frees of blocks never allocated"
# rip leaks says the same about the heap at exit
"$RIP" leaks --json -r mem "$real_trace" >"$TEST_TMP/l.json" || die "rip leaks --json failed"
lk=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
g = [x for x in d["leaks"] if x["resource"] == "mem" and "mmap" not in x["kinds"]]
print(sum(x["count"] for x in g), sum(x["bytes"] for x in g))' "$TEST_TMP/l.json") || die "cannot read rip leaks --json"
[ "$lk" = "$vg_live_blocks $vg_live_bytes" ] ||
	fail "rip leaks: heap blocks and bytes left $lk, valgrind $vg_live_blocks $vg_live_bytes"
t_done
