/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/funcs.c - names, globs and the pass of function tracing for the
 * front-ends (funcs.h).  A function is looked up at its entry address
 * (not minus one: it is no return address); of its inline chain the last
 * frame is the function itself.
 */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hmap.h"
#include "analysis/stacks.h"
#include "read/funcs.h"
#include "read/sym.h"
#include "tools/funcs.h"
#include "tools/tool.h"

/* A name, and whether its func is a string of ours (made up) rather than the symbolizer's. */
struct tfn_entry {
	struct tfn_name pub;
	bool owned;
};

struct tfn_slot {
	uint64_t key; /* the address, or 1 << 63 | id when it is unknown */
	uint8_t used;
	struct tfn_entry *name;
};
HMAP_SLOT_CHECK(struct tfn_slot);

struct tfn {
	struct rip_sym *sym;
	HMAP_OF(struct tfn_slot) names;
};

int tfn_open(struct evs *s, const char *sysroot, const char *debug_dir, struct tfn **out)
{
	char err[RR_ERR_MAX];
	struct tfn *t = calloc(1, sizeof(*t));
	int ret;

	*out = NULL;
	if (!t) {
		tool_err("out of memory");
		return -1;
	}
	ret = stk_sym_open(s, sysroot, debug_dir, &t->sym, err, sizeof(err));
	if (ret) {
		tool_err("%s", err);
		free(t);
		return -1;
	}
	*out = t;
	return 0;
}

static struct tfn_entry *tfn_make(struct tfn *t, uint32_t id, uint64_t addr)
{
	struct rip_frame fr[STK_MAX_INLINE];
	struct tfn_entry *n;
	char buf[64];
	int k = addr && t->sym ? rip_sym_lookup(t->sym, addr, fr, STK_MAX_INLINE) : 0;

	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	if (k > 0 && fr[k - 1].func) {
		n->pub.func = fr[k - 1].func;
		n->pub.file = fr[k - 1].file;
		n->pub.line = fr[k - 1].line;
		n->pub.module = fr[k - 1].module;
		return n;
	}
	if (k > 0)
		n->pub.module = fr[0].module;
	if (addr && n->pub.module)
		snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, tool_base(n->pub.module), fr[0].offset);
	else if (addr)
		snprintf(buf, sizeof(buf), "0x%" PRIx64, addr);
	else
		snprintf(buf, sizeof(buf), "fn#%" PRIu32, id);
	n->pub.func = strdup(buf);
	if (!n->pub.func) {
		free(n);
		return NULL;
	}
	n->owned = true;
	return n;
}

const struct tfn_name *tfn_name(struct tfn *t, uint32_t id, uint64_t addr)
{
	static const struct tfn_name none = { .func = "?" };
	uint64_t key = addr ? addr : 1ull << 63 | id;
	struct tfn_slot *e;
	bool fresh;

	e = hmap_get(&t->names.h, sizeof(*e), key, &fresh);
	if (!e)
		return &none;
	if (fresh)
		e->name = tfn_make(t, id, addr);
	if (!e->name) {
		hmap_del(&t->names.h, sizeof(*e), e);
		return &none;
	}
	return &e->name->pub;
}

bool tfn_match(struct tfn *t, const char *const *globs, size_t n, uint32_t id, uint64_t addr)
{
	const char *name;
	bool any_pos = false, hit = false;

	if (!n)
		return true;
	name = tfn_name(t, id, addr)->func;
	for (size_t i = 0; i < n; i++) {
		if (globs[i][0] == '!') {
			if (!fnmatch(globs[i] + 1, name, 0))
				return false;
			continue;
		}
		any_pos = true;
		hit = hit || !fnmatch(globs[i], name, 0);
	}
	return !any_pos || hit;
}

void tfn_problems(struct tfn *t)
{
	unsigned problems = 0;

	if (t && t->sym)
		rip_sym_problems(t->sym, tool_sym_problem, &problems);
}

void tfn_free(struct tfn *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->names.cap; i++) {
		struct tfn_entry *n = t->names.v[i].used ? t->names.v[i].name : NULL;

		if (!n)
			continue;
		if (n->owned)
			free((char *)n->pub.func);
		free(n);
	}
	hmap_free(&t->names.h);
	if (t->sym)
		rip_sym_free(t->sym);
	free(t);
}

int tfn_pass(struct evs *s, const struct fa_opts *opts, struct fa **out)
{
	char err[RR_ERR_MAX];
	uint64_t *tab = NULL;
	uint32_t n = 0;
	int ret;

	*out = NULL;
	if (fa_new(evs_types(s), opts, out)) {
		tool_err("out of memory");
		return -1;
	}
	ret = rfn_source_table(evs_source(s), &tab, &n, err, sizeof(err));
	if (ret)
		tool_err("warning: %s (function ids are named only by the trace's rip:fn events)",
			 err);
	else if (n && fa_add_table(*out, tab, n))
		ret = -ENOMEM;
	free(tab);
	if (ret == -ENOMEM) {
		tool_err("out of memory");
		fa_free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}
