/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: the function-call pass (analysis/funcs.c) takes the calls a
 * trace says were open when it began (rip:fn_open, outermost first: a
 * forked child's calls open at the fork) as calls that began before the
 * trace: each pairs with its exit (no exit without its entry, no call
 * without its exit), counts as a call of its function and in before, its
 * time runs from its rip:fn_open, and its span says before.  The calls
 * entered under them are counted as usual.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/funcs.h"
#include "helpers.h"
#include "read/evread.h"
#include "read/evsource.h"

#define OPEN 4u /* the type id of rip:fn_open here (a dynamic one in a trace) */

static struct ev_types *types;
static struct evs_plan plan = { .valid = true, .nfix = 1, .size = { 4 }, .shift = { 32 } };
static int64_t now;
static unsigned spans_before, spans;

/* Hand fa one record of type t (1 entry, 2 exit, OPEN) of function id, 10 ns after the last. */
static void rec(struct fa *p, uint32_t t, uint32_t id)
{
	uint8_t raw[16] = { 0 };
	struct evs_event e = { 0 };

	memcpy(raw, &id, 4);
	now += 10;
	e.ns = now;
	e.tid = 1;
	e.thread = "main";
	e.type = &types->t[t];
	e.raw = raw;
	e.plan = &plan;
	T_EQ(fa_event(p, &e), 1);
}

static void span(void *arg, const struct fa_span *s)
{
	(void)arg;
	spans++;
	if (s->before) {
		spans_before++;
		/* opened at 10, 20, 30 */
		T_EQ(s->start_ns, (int64_t)s->id * 10);
		T_EQ(s->depth, s->id);
	}
}

int main(void)
{
	static const char *const names[] = { NULL, "rip:fn_entry", "rip:fn_exit", NULL,
					     "rip:fn_open" };
	struct fa_opts o = { .span = span };
	struct fa_totals tot;
	const struct fa_fn *fn;
	struct fa *p;
	size_t n;

	types = calloc(1, sizeof(*types));
	T_CHECK(types);
	if (!types)
		return T_FAIL;
	for (uint32_t i = 1; i <= OPEN; i++) {
		if (!names[i])
			continue;
		types->t[i].valid = true;
		types->t[i].id = i;
		types->t[i].nfields = 1;
		types->t[i].fixed = 4;
		strcpy(types->t[i].name, names[i]);
	}
	types->count = OPEN + 1;
	T_EQ(fa_new(types, &o, &p), 0);

	/* open at the start: 1 > 2 > 3; then 3 calls 4 three times; then the exits */
	for (uint32_t id = 1; id <= 3; id++)
		rec(p, OPEN, id);
	for (int i = 0; i < 3; i++) {
		rec(p, 1, 4);
		rec(p, 2, 4);
	}
	for (uint32_t id = 3; id >= 1; id--)
		rec(p, 2, id);
	T_EQ(fa_end(p, now + 10), 0);

	fa_totals(p, &tot);
	T_EQ(tot.entries, 3);
	T_EQ(tot.exits, 6);
	T_EQ(tot.before, 3);
	T_EQ(tot.no_entry, 0);
	T_EQ(tot.no_exit, 0);
	T_EQ(tot.running, 0);
	fn = fa_funcs(p, &n);
	T_EQ(n, 4);
	for (size_t i = 0; fn && i < n; i++) {
		T_EQ(fn[i].calls, fn[i].id == 4 ? 3 : 1);
		T_EQ(fn[i].before, fn[i].id == 4 ? 0 : 1);
		/* 1 opened at 10 and ended at 120, its last record */
		if (fn[i].id == 1)
			T_EQ(fn[i].total_ns, 110);
	}
	T_EQ(spans, 6);
	T_EQ(spans_before, 3);
	fa_free(p);
	free(types);
	return t_result();
}
