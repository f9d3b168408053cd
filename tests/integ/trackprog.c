/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: the program of tests/integ/track-*.sh (not a test itself):
 * regular expressions and SQLite handles, some of each released and some
 * not, each kind leaked from a function of its own so that the leak's
 * stack names it.  Traced by rip run --track with the three specs of
 * rip-run(1):
 *
 *	regex: REGEX_OK compiled and freed, REGEX_LEAK compiled in leak_regex
 *	db:    one connection opened and closed, one opened in leak_db (never
 *	       closed)
 *	stmt:  STMT_OK statements prepared and finalized on each connection,
 *	       STMT_LEAK prepared in leak_stmt on the leaked one
 *
 * With the argument dlsym it only compiles one regular expression through
 * a pointer from dlsym(3), in leak_dlsym, and never frees it.
 *
 * It checks each call's result itself (exit 1 when one failed: a
 * trampoline that lost an argument or a result shows here first), and
 * that a variadic call with floating-point arguments (sqlite3_mprintf)
 * still formats them through the trampolines when tracked.
 */
#include <dlfcn.h>
#include <regex.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REGEX_OK 4
#define REGEX_LEAK 2
#define STMT_OK 3
#define STMT_LEAK 3

static regex_t kept[REGEX_LEAK];
static sqlite3_stmt *kept_stmt[STMT_LEAK];

static void die(const char *what)
{
	fprintf(stderr, "trackprog: %s failed\n", what);
	exit(1);
}

static __attribute__((noinline)) void leak_regex(int i)
{
	if (regcomp(&kept[i], "^le+ak[0-9]*$", REG_EXTENDED | REG_NOSUB))
		die("regcomp (leak)");
	if (regexec(&kept[i], "leeak42", 0, NULL, 0))
		die("regexec (leak)");
}

static __attribute__((noinline)) sqlite3 *leak_db(void)
{
	sqlite3 *db = NULL;

	if (sqlite3_open(":memory:", &db) != SQLITE_OK)
		die("sqlite3_open (leak)");
	return db;
}

static __attribute__((noinline)) void leak_stmt(sqlite3 *db, int i)
{
	if (sqlite3_prepare_v2(db, "SELECT 40 + 2", -1, &kept_stmt[i], NULL) != SQLITE_OK ||
	    !kept_stmt[i])
		die("sqlite3_prepare_v2 (leak)");
	if (sqlite3_step(kept_stmt[i]) != SQLITE_ROW || sqlite3_column_int(kept_stmt[i], 0) != 42)
		die("sqlite3_step (leak)");
}

static __attribute__((noinline)) int leak_dlsym(void)
{
	int (*comp)(regex_t *, const char *, int) =
		(int (*)(regex_t *, const char *, int))dlsym(RTLD_DEFAULT, "regcomp");

	if (!comp || comp(&kept[0], "^d+l$", REG_EXTENDED | REG_NOSUB) ||
	    regexec(&kept[0], "ddl", 0, NULL, 0))
		die("regcomp through dlsym");
	return 0;
}

/* STMT_OK statements on db, each prepared, run and finalized. */
static void balanced_stmts(sqlite3 *db)
{
	for (int i = 0; i < STMT_OK; i++) {
		sqlite3_stmt *st = NULL;
		const char *tail = NULL;
		const char *sql = "SELECT ?1 * 2; SELECT 1";

		if (sqlite3_prepare_v2(db, sql, -1, &st, &tail) != SQLITE_OK || !st || !tail ||
		    strcmp(tail, " SELECT 1"))
			die("sqlite3_prepare_v2");
		if (sqlite3_bind_int(st, 1, i) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW ||
		    sqlite3_column_int(st, 0) != 2 * i)
			die("sqlite3_step");
		if (sqlite3_finalize(st) != SQLITE_OK)
			die("sqlite3_finalize");
	}
}

int main(int argc, char **argv)
{
	sqlite3 *db = NULL, *leaked;
	char *s;

	if (argc > 1 && !strcmp(argv[1], "dlsym"))
		return leak_dlsym();

	for (int i = 0; i < REGEX_OK; i++) {
		regex_t re;

		if (regcomp(&re, "a+b", REG_EXTENDED) || regexec(&re, "xaab", 0, NULL, 0))
			die("regcomp");
		regfree(&re);
	}
	for (int i = 0; i < REGEX_LEAK; i++)
		leak_regex(i);

	if (sqlite3_open(":memory:", &db) != SQLITE_OK || !db)
		die("sqlite3_open");
	balanced_stmts(db);
	if (sqlite3_close(db) != SQLITE_OK)
		die("sqlite3_close");

	leaked = leak_db();
	balanced_stmts(leaked);
	for (int i = 0; i < STMT_LEAK; i++)
		leak_stmt(leaked, i);

	s = sqlite3_mprintf("%d %s %.2f %g", 42, "x", 1.5, 0.25);
	if (!s || strcmp(s, "42 x 1.50 0.25"))
		die("sqlite3_mprintf");
	sqlite3_free(s);
	printf("trackprog: done\n");
	return 0;
}
