/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/funcs.c - shadow call stacks and the function table of a ring file
 * (rip/abi.h), read from outside the process that writes them.
 *
 * The stack area is sparse: a stack's page is backed when a slot first
 * runs instrumented code.  Reading a hole of a tmpfs file through a
 * mapping would back it (the reader would fill the traced process's tmpfs
 * with zero pages, and could hit a full one), so the pages with data are
 * found first with SEEK_DATA and SEEK_HOLE, and only those are read.  The
 * table is read with pread, which reads holes as zeros without backing
 * them.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "read/funcs.h"
#include "read/trace.h"

void rfn_copy_stack(const struct rip_fn_stack *src, uint32_t owner, struct rfn_stack *d)
{
	memset(d, 0, sizeof(*d));
	for (int tries = 0; tries < 8; tries++) {
		/* Pairs with the release stores of state in the hooks (lib/func.c). */
		uint64_t w1 = __atomic_load_n(&src->state, __ATOMIC_ACQUIRE), w2;
		uint32_t n = RIP_FN_STATE_DEPTH(w1);

		if (__atomic_load_n(&src->owner, __ATOMIC_RELAXED) != owner)
			return; /* an earlier owner's stack, or none yet */
		if (n > RIP_FN_DEPTH)
			n = RIP_FN_DEPTH;
		for (uint32_t k = 0; k < n; k++)
			d->fn[k] = __atomic_load_n(&src->frame[k].fn, __ATOMIC_RELAXED) &
				   RFN_ADDR_MASK;
		d->resync = __atomic_load_n(&src->resync, __ATOMIC_RELAXED);
		/* The frames above are read before state is read again. */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		w2 = __atomic_load_n(&src->state, __ATOMIC_RELAXED);
		d->valid = true;
		d->depth = RIP_FN_STATE_DEPTH(w2);
		d->n = d->depth < n ? d->depth : n;
		/* No push in between: no frame was rewritten, pops only shortened the stack. */
		if (RIP_FN_STATE_PUSHES(w1) == RIP_FN_STATE_PUSHES(w2))
			return;
	}
	d->torn = true;
}

/*
 * The ranges of [lo, hi) of f that hold data (not holes), in order, into a
 * malloc'd array.  Without SEEK_DATA, all of it.  0 or -ENOMEM.
 */
static int rfn_data_ranges(const struct rr_file *f, uint64_t lo, uint64_t hi,
			   struct rfn_range **out, size_t *n)
{
	struct rfn_range *v = NULL;
	size_t cap = 0;
	uint64_t pos = lo;

	*n = 0;
	while (pos < hi) {
		off_t d = lseek(f->fd, (off_t)pos, SEEK_DATA), e;

		if (d < 0 && errno == ENXIO)
			break; /* holes to the end */
		if (d < 0) {
			d = (off_t)pos; /* no SEEK_DATA: take it all */
			e = (off_t)hi;
		} else {
			e = lseek(f->fd, d, SEEK_HOLE);
			if (e < 0 || (uint64_t)e > hi)
				e = (off_t)hi;
		}
		if ((uint64_t)d >= hi)
			break;
		if (*n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct rfn_range *nv = realloc(v, nc * sizeof(*nv));

			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
			cap = nc;
		}
		v[*n].lo = (uint64_t)d;
		v[(*n)++].hi = (uint64_t)e;
		if ((uint64_t)e <= pos)
			break; /* never loop on a confused filesystem */
		pos = (uint64_t)e;
	}
	*out = v;
	return 0;
}

/* Does slot index's stack lie in a data range of rd (a page holds whole stacks)? */
static bool rfn_backed(struct rfn_reader *rd, uint64_t off)
{
	size_t lo = 0, hi = rd->nr;

	/* Slots mostly come in index order: the last range first, else a binary search. */
	if (rd->k < rd->nr && rd->r[rd->k].lo <= off && off < rd->r[rd->k].hi)
		return rd->r[rd->k].hi >= off + RIP_FN_STACK_SIZE;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rd->r[mid].hi <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	rd->k = lo;
	return lo < rd->nr && rd->r[lo].lo <= off && rd->r[lo].hi >= off + RIP_FN_STACK_SIZE;
}

int rfn_reader_open(struct rr_file *f, struct rfn_reader *rd, char *err, size_t errlen)
{
	const struct rip_file_hdr *h = &f->hdr;

	memset(rd, 0, sizeof(*rd));
	rd->f = f;
	/* rr_check_hdr: slot_count stacks fit the file from fn_off */
	if (f->legacy_raw || !h->fn_off || f->fd < 0)
		return 0; /* no stacks: every slot reads as none */
	rd->area = true;
	if (rfn_data_ranges(f, h->fn_off, h->fn_off + (uint64_t)h->slot_count * RIP_FN_STACK_SIZE,
			    &rd->r, &rd->nr))
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	return 0;
}

int rfn_reader_get(struct rfn_reader *rd, const struct rr_slot *sl, struct rfn_stack *out,
		   char *err, size_t errlen)
{
	const struct rip_file_hdr *h = &rd->f->hdr;
	uint64_t off = h->fn_off + (uint64_t)sl->index * RIP_FN_STACK_SIZE;
	sigjmp_buf jb;

	memset(out, 0, sizeof(*out));
	if (!rd->area || sl->index >= h->slot_count || !rfn_backed(rd, off))
		return 0; /* a hole: never read (it would be backed) */
	if (rr_guard_enter(&jb))
		return rr_fail(err, errlen, -EIO, "%s: the file shrank while being read",
			       rd->f->path);
	rfn_copy_stack((const struct rip_fn_stack *)(rd->f->map + off), (uint32_t)sl->attach_ts,
		       out);
	rr_guard_leave();
	return 0;
}

void rfn_reader_close(struct rfn_reader *rd)
{
	free(rd->r);
	memset(rd, 0, sizeof(*rd));
}

int rfn_read_stacks(struct rr_file *f, const struct rr_slots *s, struct rfn_stack **out, char *err,
		    size_t errlen)
{
	struct rfn_reader rd;
	struct rfn_stack *v;
	int ret;

	*out = NULL;
	v = calloc(s->n ? s->n : 1, sizeof(*v));
	if (!v)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	ret = rfn_reader_open(f, &rd, err, errlen);
	for (size_t i = 0; !ret && i < s->n; i++)
		ret = rfn_reader_get(&rd, &s->v[i], &v[i], err, errlen);
	rfn_reader_close(&rd);
	if (ret) {
		free(v);
		return ret;
	}
	*out = v;
	return 0;
}

int rfn_read_table(struct rr_file *f, uint64_t **out, uint32_t *n, char *err, size_t errlen)
{
	const struct rip_file_hdr *h = &f->hdr;
	uint32_t count = 0;
	uint64_t *v;
	size_t want, got = 0;

	*out = NULL;
	*n = 0;
	if (f->legacy_raw || !h->fn_ids || f->fd < 0)
		return 0;
	if (rr_live_u32(f, offsetof(struct rip_file_hdr, fn_count), &count, err, errlen))
		return -EIO;
	if (count > h->fn_ids)
		count = h->fn_ids; /* ids past the table were never given */
	if (!count)
		return 0;
	want = (size_t)count * sizeof(uint64_t);
	v = malloc(want);
	if (!v)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	/* pread: holes read as zeros without being backed (rr_check_hdr: the table fits) */
	while (got < want) {
		ssize_t r = pread(f->fd, (char *)v + got, want - got, (off_t)(h->fn_tab_off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break; /* the file shrank: the rest is unknown */
		got += (size_t)r;
	}
	memset((char *)v + got, 0, want - got);
	for (uint32_t i = 0; i < count; i++)
		v[i] &= RFN_ADDR_MASK;
	*out = v;
	*n = count;
	return 0;
}

int rfn_source_table(const char *source, uint64_t **out, uint32_t *n, char *err, size_t errlen)
{
	char ring[PATH_MAX];
	struct rr_file f;
	int ret;

	*out = NULL;
	*n = 0;
	/* A chunk read alone: its trace's copy of the ring file, if it is still beside it. */
	if (trace_chunk_ring(source, ring, sizeof(ring))) {
		if (!ring[0])
			return 0;
		source = ring;
	}
	ret = rr_open_target(source, &f, err, errlen);
	if (ret == -ENOENT)
		return 0; /* a trace without the copy of its ring file */
	if (ret)
		return ret;
	ret = rfn_read_table(&f, out, n, err, errlen);
	rr_close(&f);
	return ret;
}
