// SPDX-License-Identifier: Apache-2.0
/*
 * tests/data/module-sqlite3.c - the program of tests/integ/module-sqlite3.sh:
 * SQLite connections and statements, some released, some not.  Built by
 * the test (it needs SQLite's header).
 *
 *   open_kept:  a connection (sqlite3_open_v2) never closed
 *   open_done:  a connection (sqlite3_open) closed
 *   prep_lost:  2 statements (sqlite3_prepare_v2) never finalized
 *   prep_done:  a statement stepped and finalized; sqlite3_exec's own
 *               statements are finalized by SQLite
 */
#include <sqlite3.h>
#include <stdio.h>

#define NOINLINE __attribute__((noinline))

static sqlite3 *kept;
static sqlite3_stmt *lost[2];

static NOINLINE sqlite3 *open_kept(void)
{
	sqlite3 *db = NULL;

	sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
	return db;
}

static NOINLINE void open_done(void)
{
	sqlite3 *db = NULL;

	sqlite3_open(":memory:", &db);
	sqlite3_close(db);
}

static NOINLINE sqlite3_stmt *prep_lost(sqlite3 *db)
{
	sqlite3_stmt *st = NULL;

	sqlite3_prepare_v2(db, "SELECT x FROM t", -1, &st, NULL);
	return st;
}

static NOINLINE int prep_done(sqlite3 *db)
{
	sqlite3_stmt *st = NULL;
	int n = 0;

	sqlite3_prepare_v2(db, "SELECT count(*) FROM t", -1, &st, NULL);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return n;
}

int main(void)
{
	kept = open_kept();
	open_done();
	if (sqlite3_exec(kept, "CREATE TABLE t(x); INSERT INTO t VALUES (1), (2);", NULL, NULL,
			 NULL) != SQLITE_OK)
		return 1;
	for (int i = 0; i < 2; i++)
		lost[i] = prep_lost(kept);
	return prep_done(kept) == 2 && lost[0] && lost[1] ? 0 : 1;
}
