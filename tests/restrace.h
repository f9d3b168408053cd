/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/restrace.h - a trace of resource events that a unit test writes
 * itself, for the passes of analysis/ to read back.
 *
 * The event types are made from the one table the passes bind,
 * role_specs of analysis/roles.h (integers as U64, strings and arrays as
 * such), registered with librip and written through its ring file in
 * $TEST_TMP, in the calling thread's order:
 *
 *	rt_open();
 *	rt_bt(1, frames, 2);  rt_ev(ROLE_MEM_ALLOC, 0x1000, 100, 1, RIP_MEM_MALLOC);
 *	rt_close();
 *	s = rt_source();  ... lk_run(lk, s, ...) ...  evs_close(s);
 */
#ifndef RIP_TESTS_RESTRACE_H
#define RIP_TESTS_RESTRACE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rip.h>
#include <rip/resource.h>

#include "analysis/roles.h"
#include "read/evsource.h"

static struct rip_event_type rt_types[ROLE_N];
static uint32_t rt_ids[ROLE_N];
static char rt_path[4096];

/* Register the types of role_specs and open a ring file in $TEST_TMP; exits on failure. */
static void rt_open(void)
{
	RIP_OPTS(rip_ring_opts, o, .dir = getenv("TEST_TMP"), .slots = 16);
	int ret;

	for (int r = 1; r < ROLE_N; r++) {
		const struct role_spec *sp = &role_specs[r];
		struct rip_event_type *t = &rt_types[r];

		t->name = sp->name;
		t->category = !strncmp(sp->name, "mem:", 4)  ? RIP_CAT_MEM
			      : !strncmp(sp->name, "fd:", 3) ? RIP_CAT_FD
			      : !strncmp(sp->name, "shm:", 4) ? RIP_CAT_SHM
							       : RIP_CAT_BT;
		for (; t->nfields < ROLE_MAXF && sp->fields[t->nfields]; t->nfields++) {
			const char *f = sp->fields[t->nfields];

			t->fields[t->nfields].type = *f == '$'	 ? RIP_FT_STRING
						     : *f == '@' ? RIP_FT_HEX64_ARRAY
								 : RIP_FT_U64;
			t->fields[t->nfields].name = f + (*f == '$' || *f == '@');
		}
		rt_ids[r] = UINT32_MAX;
		t->id = &rt_ids[r];
		ret = rip_event_register(t);
		if (ret) {
			fprintf(stderr, "rip_event_register %s: %s\n", sp->name, strerror(-ret));
			exit(1);
		}
	}
	ret = rip_ring_open(&o);
	if (ret || rip_ring_path(rt_path, sizeof(rt_path))) {
		fprintf(stderr, "cannot open a ring file in %s: %s\n", o.dir, strerror(-ret));
		exit(1);
	}
}

/*
 * An event of role with its integer fields in role_specs' order, then, for
 * a role with a string field, the string (a const char *, cast to
 * uintptr_t).
 */
#define rt_ev(ROLE, ...) rt_emit(ROLE, (const uint64_t[]){ __VA_ARGS__ })

static void rt_emit(int role, const uint64_t *v)
{
	const struct rip_event_type *t = &rt_types[role];

	if (t->fields[t->nfields - 1].type == RIP_FT_STRING)
		rip_event_str(t, v, (const char *)(uintptr_t)v[t->nfields - 1]);
	else if (rip_category_enabled(t->category))
		__rip_event_emit(t, v, t->nfields, __rip_event_clock());
}

/* A backtrace definition: rip:bt {id, frames}. */
static void rt_bt(uint32_t id, const uint64_t *frames, uint32_t n)
{
	const uint64_t v[1] = { id };

	rip_event_array(&rt_types[ROLE_BT], v, frames, n);
}

/* The trace is written: close the ring (the file stays). */
static void rt_close(void)
{
	rip_thread_detach();
	rip_ring_close();
}

/* A new event source on the ring file; exits on failure. */
static struct evs *rt_source(void)
{
	struct evs *s;
	char err[4096];

	if (evs_open(rt_path, &s, err, sizeof(err))) {
		fprintf(stderr, "evs_open: %s\n", err);
		exit(1);
	}
	return s;
}

#endif /* RIP_TESTS_RESTRACE_H */
