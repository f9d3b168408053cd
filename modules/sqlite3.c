// SPDX-License-Identifier: Apache-2.0
/*
 * modules/sqlite3.c - the sqlite3 tracing module (rip run --module=sqlite3):
 * SQLite's connections and prepared statements.  A connection is acquired
 * by sqlite3_open, sqlite3_open16 and sqlite3_open_v2 (whenever they hand
 * back a handle: one that failed must still be closed) and released by
 * sqlite3_close and sqlite3_close_v2; a statement by sqlite3_prepare and
 * its _v2, _v3 and 16 variants, released by sqlite3_finalize.  rip leaks
 * then reports the connections never closed and the statements never
 * finalized, where they were made.
 *
 * Written against <rip/module.h> alone: SQLite's few types are opaque
 * pointers here, and nothing links libsqlite3.  A connection is released
 * after sqlite3_close returns SQLITE_OK (SQLITE_BUSY leaves it open: it
 * still has statements), not before the call as other releases are;
 * sqlite3_close_v2 always releases it (SQLite closes it once its last
 * statement is finalized).
 */
#include <stddef.h>

#include <rip/module.h>

RIP_MODULE("sqlite3", "SQLite connections and prepared statements");
RIP_KIND(db_kind, "sqlite3-db", "SQLite connection (sqlite3_open*, sqlite3_close*)", 0);
RIP_KIND(stmt_kind, "sqlite3-stmt", "SQLite prepared statement (sqlite3_prepare*, finalize)", 0);

#define EXPORT __attribute__((visibility("default")))
#define SQLITE_OK 0
#define SQLITE_MISUSE 21

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;

EXPORT int sqlite3_open(const char *name, sqlite3 **db)
{
	static int (*real)(const char *, sqlite3 **);
	int ret;

	if (!RIP_REAL(real, "sqlite3_open"))
		return SQLITE_MISUSE;
	ret = real(name, db);
	if (db && *db)
		rip_acquire(db_kind, *db, 1);
	return ret;
}

EXPORT int sqlite3_open16(const void *name, sqlite3 **db)
{
	static int (*real)(const void *, sqlite3 **);
	int ret;

	if (!RIP_REAL(real, "sqlite3_open16"))
		return SQLITE_MISUSE;
	ret = real(name, db);
	if (db && *db)
		rip_acquire(db_kind, *db, 1);
	return ret;
}

EXPORT int sqlite3_open_v2(const char *name, sqlite3 **db, int flags, const char *vfs)
{
	static int (*real)(const char *, sqlite3 **, int, const char *);
	int ret;

	if (!RIP_REAL(real, "sqlite3_open_v2"))
		return SQLITE_MISUSE;
	ret = real(name, db, flags, vfs);
	if (db && *db)
		rip_acquire(db_kind, *db, 1);
	return ret;
}

EXPORT int sqlite3_close(sqlite3 *db)
{
	static int (*real)(sqlite3 *);
	int ret;

	if (!RIP_REAL(real, "sqlite3_close"))
		return SQLITE_MISUSE;
	ret = real(db);
	if (db && ret == SQLITE_OK)
		rip_release(db_kind, db);
	return ret;
}

EXPORT int sqlite3_close_v2(sqlite3 *db)
{
	static int (*real)(sqlite3 *);

	if (!RIP_REAL(real, "sqlite3_close_v2"))
		return SQLITE_MISUSE;
	if (db)
		rip_release(db_kind, db);
	return real(db);
}

/* The prepare family: the same arguments but for the text's type and v3's flags. */
#define PREPARE(NAME, TEXT)                                                                        \
	EXPORT int NAME(sqlite3 *db, const TEXT *sql, int n, sqlite3_stmt **stmt,                  \
			const TEXT **tail)                                                         \
	{                                                                                          \
		static int (*real)(sqlite3 *, const TEXT *, int, sqlite3_stmt **, const TEXT **);  \
		int ret;                                                                           \
                                                                                                   \
		if (!RIP_REAL(real, #NAME))                                                        \
			return SQLITE_MISUSE;                                                      \
		ret = real(db, sql, n, stmt, tail);                                                \
		if (ret == SQLITE_OK && stmt && *stmt)                                             \
			rip_acquire(stmt_kind, *stmt, 1);                                          \
		return ret;                                                                        \
	}

PREPARE(sqlite3_prepare, char)
PREPARE(sqlite3_prepare_v2, char)
PREPARE(sqlite3_prepare16, void)
PREPARE(sqlite3_prepare16_v2, void)

#define PREPARE_V3(NAME, TEXT)                                                                     \
	EXPORT int NAME(sqlite3 *db, const TEXT *sql, int n, unsigned int flags,                   \
			sqlite3_stmt **stmt, const TEXT **tail)                                    \
	{                                                                                          \
		static int (*real)(sqlite3 *, const TEXT *, int, unsigned int, sqlite3_stmt **,    \
				   const TEXT **);                                                 \
		int ret;                                                                           \
                                                                                                   \
		if (!RIP_REAL(real, #NAME))                                                        \
			return SQLITE_MISUSE;                                                      \
		ret = real(db, sql, n, flags, stmt, tail);                                         \
		if (ret == SQLITE_OK && stmt && *stmt)                                             \
			rip_acquire(stmt_kind, *stmt, 1);                                          \
		return ret;                                                                        \
	}

PREPARE_V3(sqlite3_prepare_v3, char)
PREPARE_V3(sqlite3_prepare16_v3, void)

EXPORT int sqlite3_finalize(sqlite3_stmt *stmt)
{
	static int (*real)(sqlite3_stmt *);

	if (!RIP_REAL(real, "sqlite3_finalize"))
		return SQLITE_MISUSE;
	if (stmt)
		rip_release(stmt_kind, stmt);
	return real(stmt);
}
