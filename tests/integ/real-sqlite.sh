#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: sqlite3 (the CLI) runs a script from stdin (a table, 5,000
# rows from a recursive CTE, an index, aggregates, an update and a
# delete) on a database file under rip run --mem --fd --shm as it runs
# plain: the same output and exit status, no hang, 0 events lost, the
# trace read by rip leaks and rip report.  Then exact agreement with
# valgrind on the same script (real_valgrind in tests/data/real.sh):
# allocations, bytes, frees, and blocks and bytes left at exit.
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
real_valgrind "sqlite3 script" "rm -f \"\$W/db.sqlite\"" sqlite3 "$W/db.sqlite"
t_done
