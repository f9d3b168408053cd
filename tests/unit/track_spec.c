/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: the parser of rip run --track specs (internal/track.h).  The
 * three specs the man page shows parse to their kinds, functions and ids
 * (ret, N, *N), with spaces around the parts; each kind of wrong spec is
 * refused with a message that names the wrong part (no '=', a bad kind, a
 * missing or bad function name, a missing '(' or ')', an id that is not
 * ret, N or a star and N, an argument out of 1..6, a release by ret, a missing second
 * function, something left over, one function both ways, a name too
 * long); a list joined by ';' as RIP_TRACK carries it parses whole, and a
 * kind or a function given twice in it is refused.
 */
#include <internal/track.h>

#include "helpers.h"

static struct rip_track_spec t;
static char err[256];

static int parse(const char *s)
{
	err[0] = '\0';
	return rip_track_parse(s, strlen(s), &t, err, sizeof(err));
}

/* s is refused with a message that holds want. */
static void refused(const char *s, const char *want)
{
	T_EQ(parse(s), -EINVAL);
	if (!strstr(err, want)) {
		fprintf(stderr, "'%s': message '%s' lacks '%s'\n", s, err, want);
		t_failures++;
	}
}

int main(void)
{
	struct rip_track_spec list[RIP_TRACK_MAX];
	char longname[300];
	unsigned n;

	T_EQ(parse("regex=regcomp(1),regfree(1)"), 0);
	T_STREQ(t.kind, "regex");
	T_STREQ(t.acq.name, "regcomp");
	T_EQ(t.acq.where, RIP_TRACK_ARG);
	T_EQ(t.acq.arg, 1);
	T_STREQ(t.rel.name, "regfree");
	T_EQ(t.rel.where, RIP_TRACK_ARG);
	T_EQ(t.rel.arg, 1);

	T_EQ(parse("stmt=sqlite3_prepare_v2(*4),sqlite3_finalize(1)"), 0);
	T_STREQ(t.kind, "stmt");
	T_STREQ(t.acq.name, "sqlite3_prepare_v2");
	T_EQ(t.acq.where, RIP_TRACK_DEREF);
	T_EQ(t.acq.arg, 4);
	T_STREQ(t.rel.name, "sqlite3_finalize");

	T_EQ(parse(" my-kind.2 = fopen ( ret ) , fclose( 1 ) "), 0);
	T_STREQ(t.kind, "my-kind.2");
	T_STREQ(t.acq.name, "fopen");
	T_EQ(t.acq.where, RIP_TRACK_RET);
	T_STREQ(t.rel.name, "fclose");
	T_EQ(t.rel.arg, 1);

	T_EQ(parse("k=_ZN3FooC1Ev(1),_ZN3FooD1Ev(*6)"), 0);
	T_EQ(t.rel.where, RIP_TRACK_DEREF);
	T_EQ(t.rel.arg, 6);

	refused("", "no '='");
	refused("regcomp(1),regfree(1)", "no '='");
	refused("=regcomp(1),regfree(1)", "kind's name before '=' is missing");
	refused("re gex=regcomp(1),regfree(1)", "kind 're gex'");
	refused("1re=regcomp(1),regfree(1)", "kind '1re'");
	refused("regex=(1),regfree(1)", "acquiring function's name is missing");
	refused("regex=9comp(1),regfree(1)", "'9comp' is not a function's name");
	refused("regex=regcomp(1),", "releasing function's name is missing");
	refused("regex=regcomp 1),regfree(1)", "regcomp: expected '(ID)'");
	refused("regex=regcomp(1,regfree(1)", "regcomp(1,regfree(1): the id");
	refused("regex=regcomp(1", "no ')'");
	refused("regex=regcomp(x),regfree(1)", "regcomp(x): the id is ret");
	refused("regex=regcomp(*),regfree(1)", "regcomp(*): the id is ret");
	refused("regex=regcomp(**1),regfree(1)", "regcomp(**1)");
	refused("regex=regcomp(0),regfree(1)", "argument 0");
	refused("regex=regcomp(7),regfree(1)", "argument 7");
	refused("regex=regcomp(123),regfree(1)", "regcomp(123)");
	refused("regex=regcomp(1),regfree(ret)", "regfree(ret): a release's id");
	refused("regex=regcomp(1)", "after regcomp(...): expected ','");
	refused("regex=regcomp(1);regfree(1)", "found ';regfree(1)'");
	refused("regex=regcomp(1),regfree(1),x(2)", "',x(2)' is left over");
	refused("regex=f(1),f(1)", "f both acquires and releases regex");
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	memcpy(longname, "k=", 2);
	longname[200] = '(';
	memcpy(longname + 201, "1),b(1)", 8);
	refused(longname, "a name is at most 127 bytes");
	memset(longname, 'k', 40);
	strcpy(longname + 40, "=a(1),b(1)");
	refused(longname, "a name is at most 31 bytes");

	T_EQ(rip_track_parse_list("regex=regcomp(1),regfree(1);"
				  "stmt=sqlite3_prepare_v2(*4),sqlite3_finalize(1);"
				  "db=sqlite3_open(*2),sqlite3_close(1)",
				  list, RIP_TRACK_MAX, &n, err, sizeof(err)),
	     0);
	T_EQ(n, 3);
	T_STREQ(list[2].kind, "db");
	T_STREQ(list[2].acq.name, "sqlite3_open");
	T_EQ(list[2].acq.arg, 2);
	T_EQ(rip_track_parse_list("a=f(1),g(1);a=h(1),i(1)", list, RIP_TRACK_MAX, &n, err,
				  sizeof(err)),
	     -EINVAL);
	T_EQ(n, 1);
	T_CHECK(strstr(err, "kind a is given twice") != NULL);
	T_EQ(rip_track_parse_list("a=f(1),g(1);b=h(1),f(1)", list, RIP_TRACK_MAX, &n, err,
				  sizeof(err)),
	     -EINVAL);
	T_CHECK(strstr(err, "f is tracked twice (kinds a and b)") != NULL);
	T_EQ(rip_track_parse_list("a=f(1),g(1);b=h(1),i(1)", list, 1, &n, err, sizeof(err)),
	     -EINVAL);
	T_CHECK(strstr(err, "at most 1 --track") != NULL);
	return t_result();
}
