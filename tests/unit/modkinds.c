/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: the kinds of tracing modules (rip/module.h) as the passes
 * read them, on a trace this test writes itself (tests/restrace.h): kinds
 * declared in the type table (kind:NAME, with the flags and description
 * librip-preload.so would write, set in the file here), and res:* events
 * naming them.  rip leaks' pass groups by
 * kind and stack, releases a refcounted object when its count reaches 0,
 * and lists the references still held (an unref that shares no caller
 * with any drops the acquire's own); a counter kind stays out of the
 * groups and is counted; res:* events whose kind is not a kind (another
 * type's id, an id past the table) are bad events, an unref of an unseen
 * id is counted; rip report's pass gives the sites and totals per kind;
 * the kind filter keeps one kind.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rip/abi.h>

#include "analysis/leaks.h"
#include "analysis/report.h"
#include "helpers.h"
#include "restrace.h"

enum {
	BT_WIDGET = 1,
	BT_NEW,
	BT_KEEP,
	BT_USE,
	BT_UNREF,
	BT_COPY
};

/* kind:widget (plain), kind:obj (refcounted), kind:bytes (a counter) */
static uint32_t id_widget = UINT32_MAX, id_obj = UINT32_MAX, id_bytes = UINT32_MAX;
static const struct rip_event_type k_widget = { .name = "kind:widget",
						.category = RIP_CAT_RES,
						.id = &id_widget };
static const struct rip_event_type k_obj = { .name = "kind:obj",
					     .category = RIP_CAT_RES,
					     .id = &id_obj };
static const struct rip_event_type k_bytes = { .name = "kind:bytes",
					       .category = RIP_CAT_RES,
					       .id = &id_bytes };

static void bt(uint32_t id, uint64_t f0, uint64_t f1)
{
	const uint64_t f[3] = { f0, f1, 0x900000 };

	rt_bt(id, f, 3);
}

/*
 * What librip-preload.so's registration of a kind writes into the type
 * table (through librip's private registration): the flags and the description
 * of the kind's entry, set here in the ring file itself.
 */
static void declare_kind(const char *name, uint32_t flags, const char *desc)
{
	int fd = open(rt_path, O_RDWR);
	struct stat st;
	char *m;

	if (fd < 0 || fstat(fd, &st) ||
	    (m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) ==
		    MAP_FAILED) {
		perror(rt_path);
		exit(1);
	}
	const struct rip_file_hdr *h = (const struct rip_file_hdr *)m;
	int found = 0;

	for (uint32_t i = 0; i < h->types_count; i++) {
		struct rip_evtype *e =
			(struct rip_evtype *)(m + h->types_off + i * RIP_EVTYPE_SIZE);

		if (strcmp(e->name, name))
			continue;
		e->flags = RIP_EVTYPE_KIND | flags;
		snprintf(e->desc, sizeof(e->desc), "%s", desc);
		found = 1;
	}
	T_CHECK(found);
	munmap(m, (size_t)st.st_size);
	close(fd);
}

static void write_trace(void)
{
	rt_open();
	T_EQ(rip_event_register(&k_widget), 0);
	T_EQ(rip_event_register(&k_obj), 0);
	T_EQ(rip_event_register(&k_bytes), 0);
	declare_kind("kind:widget", 0, "a widget");
	declare_kind("kind:obj", RIP_EVTYPE_REFCOUNT, "an object");
	declare_kind("kind:bytes", RIP_EVTYPE_COUNTER, "bytes copied");
	/* a type with fields is no kind, whatever its flags say (the readers check) */
	declare_kind("rip:bt", RIP_EVTYPE_REFCOUNT, "no kind");
	bt(BT_WIDGET, 0x1000, 0x2000);
	bt(BT_NEW, 0x3000, 0x4000);   /* obj made in a function of its own */
	bt(BT_KEEP, 0x5000, 0x6000);  /* an extra reference, kept */
	bt(BT_USE, 0x7000, 0x8000);   /* a ref ... */
	bt(BT_UNREF, 0x7100, 0x8000); /* ... and its unref, in the same function */
	bt(BT_COPY, 0xa000, 0xb000);
	/* widget: 3 made, 1 released */
	for (uint64_t i = 1; i <= 3; i++)
		rt_ev(ROLE_RES_ACQUIRE, i, 10 * i, BT_WIDGET, id_widget);
	rt_ev(ROLE_RES_RELEASE, 2, BT_WIDGET, id_widget);
	/* obj 0x10: new, a scoped ref/unref, an extra ref, the owner's unref: leaked */
	rt_ev(ROLE_RES_ACQUIRE, 0x10, 24, BT_NEW, id_obj);
	rt_ev(ROLE_RES_REF, 0x10, BT_USE, id_obj);
	rt_ev(ROLE_RES_UNREF, 0x10, BT_UNREF, id_obj);
	rt_ev(ROLE_RES_REF, 0x10, BT_KEEP, id_obj);
	rt_ev(ROLE_RES_UNREF, 0x10, BT_WIDGET, id_obj);
	/* obj 0x20: new, ref, two unrefs: released */
	rt_ev(ROLE_RES_ACQUIRE, 0x20, 24, BT_NEW, id_obj);
	rt_ev(ROLE_RES_REF, 0x20, BT_USE, id_obj);
	rt_ev(ROLE_RES_UNREF, 0x20, BT_UNREF, id_obj);
	rt_ev(ROLE_RES_UNREF, 0x20, BT_WIDGET, id_obj);
	/* bytes: 3 transfers */
	rt_ev(ROLE_RES_TRANSFER, 0xb0, 10, BT_COPY, id_bytes);
	rt_ev(ROLE_RES_TRANSFER, 0xb0, 20, BT_COPY, id_bytes);
	rt_ev(ROLE_RES_TRANSFER, 0xc0, 30, BT_COPY, id_bytes);
	/* hostile or unseen: not kinds (rip:bt has fields), an unref and a ref of nothing */
	rt_ev(ROLE_RES_ACQUIRE, 0x99, 1, BT_COPY, *rt_types[ROLE_BT].id);
	rt_ev(ROLE_RES_ACQUIRE, 0x98, 1, BT_COPY, 5000);
	rt_ev(ROLE_RES_UNREF, 0x77, BT_COPY, id_obj);
	rt_ev(ROLE_RES_REF, 0x76, BT_COPY, id_obj);
	rt_close();
}

static struct lk *run(const struct lk_opts *o)
{
	struct evs *s = rt_source();
	struct lk *lk = lk_new(o);
	char err[512];

	if (!lk || lk_run(lk, s, err, sizeof(err))) {
		fprintf(stderr, "lk_run: %s\n", lk ? err : "out of memory");
		exit(1);
	}
	evs_close(s);
	return lk;
}

static void check_leaks(void)
{
	struct lk *lk = run(NULL);
	const struct lk_group *w = NULL, *o = NULL;
	const struct ev_type *t;

	for (size_t i = 0; i < lk->ngroups; i++) {
		const char *name = lk_group_name(lk, &lk->groups[i]);

		T_EQ(lk->groups[i].res, LK_RES);
		if (!strcmp(name, "widget"))
			w = &lk->groups[i];
		else if (!strcmp(name, "obj"))
			o = &lk->groups[i];
		else
			T_CHECK(!"a group of another kind");
	}
	T_EQ(lk->ngroups, 2);
	T_CHECK(w && o);
	if (w) {
		T_EQ(w->bt, BT_WIDGET);
		T_EQ(w->count, 2);
		T_EQ(w->bytes, 40);
		T_EQ(w->nrefs, 0);
	}
	if (o) {
		T_EQ(o->bt, BT_NEW);
		T_EQ(o->count, 1);
		T_EQ(o->bytes, 24);
		T_EQ(o->nrefs, 1);
		if (o->nrefs == 1) {
			T_EQ(o->refs[0].bt, BT_KEEP);
			T_EQ(o->refs[0].count, 1);
		}
	}
	t = lk_kind(lk, id_obj);
	T_CHECK(t && (t->flags & RIP_EVTYPE_REFCOUNT) && !strcmp(t->desc, "an object"));
	T_EQ(lk->kind_count[id_widget], 2);
	T_EQ(lk->kind_transfers[id_bytes], 3);
	T_EQ(lk->bad_events, 2);
	T_EQ(lk->un.release[LK_RES], 1);
	lk_free(lk);

	/* one kind only */
	lk = run(&(struct lk_opts){ .resources = LK_F_RES, .kind = "obj" });
	T_EQ(lk->ngroups, 1);
	if (lk->ngroups == 1)
		T_STREQ(lk_group_name(lk, &lk->groups[0]), "obj");
	lk_free(lk);
}

static void check_report(void)
{
	struct evs *s = rt_source();
	struct rp *rp = rp_new();
	char err[512];
	int seen = 0;

	if (!rp || rp_run(rp, s, err, sizeof(err))) {
		fprintf(stderr, "rp_run: %s\n", rp ? err : "out of memory");
		exit(1);
	}
	for (size_t i = 0; i < rp->nmkinds; i++) {
		const struct rp_mkind *k = &rp->mkinds[i];

		if (k->kind == id_widget) {
			seen |= 1;
			T_EQ(k->count, 3);
			T_EQ(k->bytes, 60);
			T_EQ(k->releases, 1);
			T_EQ(k->live_count, 2);
			T_EQ(k->live_bytes, 40);
		} else if (k->kind == id_obj) {
			seen |= 2;
			T_EQ(k->count, 2);
			T_EQ(k->releases, 1);
			T_EQ(k->live_count, 1);
			T_EQ(k->releases_unseen, 0);
		} else if (k->kind == id_bytes) {
			seen |= 4;
			T_EQ(k->count, 3);
			T_EQ(k->bytes, 60);
			T_EQ(k->live_count, 0);
		} else {
			T_CHECK(!"a kind the trace does not declare");
		}
	}
	T_EQ(seen, 7);
	for (size_t i = 0; i < rp->nmsites; i++)
		if (rp->msites[i].kind == id_bytes) {
			T_EQ(rp->msites[i].bt, BT_COPY);
			T_EQ(rp->msites[i].count, 3);
			T_EQ(rp->msites[i].bytes, 60);
		}
	rp_free(rp);
	evs_close(s);
}

int main(void)
{
	write_trace();
	check_leaks();
	check_report();
	unlink(rt_path);
	return t_result();
}
