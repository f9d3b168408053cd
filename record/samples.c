// SPDX-License-Identifier: Apache-2.0
/*
 * record/samples.c - CPU samples out of a live ring file's sample rings into
 * rip:sample packets (record/samples.h says what and why).
 *
 * A pass reads two words of every slot ever used (rr_slot_marks: gen and
 * the sample ring's seq, or snap_seq in files without sample rings) and
 * copies, with the snap-ring protocol, only the slots whose words moved
 * since the pass before (rr_read_slot).  Of a slot still owned
 * by the thread seen last time (same gen), the samples written since are
 * new; of a slot taken again, all it holds.  A sample is whole from its
 * head (depth 0) through the entries that follow it one depth deeper; a
 * tail whose head was overwritten is left out (the count of what was lost
 * covers it).
 *
 * Passes are timed from the sampling rate: a sample ring holds
 * RIP_SAMPLE_RING - 1 readable entries, sample_depth per sample at most, so
 * a thread on a CPU all the time fills it in (entries / depth) / rate
 * seconds; a pass comes every half of that, between 2 and 200 ms.
 *
 * Each packet goes to the consumer as it is made (smp_packet_cb), from one
 * buffer: nothing is kept but the packet being made.
 *
 * The per-slot arrays are anonymous mappings: zero pages until the slots
 * are used, however many the file has (4M at most).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <rip/resource.h>
#include <internal/grow.h>

#include "record/samples.h"

#define SMP_PERIOD_MIN_NS 2000000LL
#define SMP_PERIOD_MAX_NS 200000000LL
#define SMP_EV_HDR 13u /* the extended event header: our id does not fit the compact one */

struct smp {
	struct rr_file *f;
	uint32_t nslots; /* slot_count */
	uint64_t *seen;	 /* per slot: gen << 32 | sample sequence read up to */
	uint64_t *now;	 /* per slot: the marks of this pass */
	uint32_t *named; /* per slot: gen + 1 of the owner whose name is kept, 0: none */
	int64_t next_ns, period_ns;
	uint64_t taken, packets;
	struct trace_name *names;
	size_t nnames, capnames;
	uint8_t *buf; /* the packet being made */
	size_t cap;
};

static void *smp_zalloc(size_t n, size_t size)
{
	void *p = mmap(NULL, (n ? n : 1) * size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void smp_zfree(void *p, size_t n, size_t size)
{
	if (p)
		munmap(p, (n ? n : 1) * size);
}

int smp_new(struct rr_file *f, struct smp **out, char *err, size_t errlen)
{
	struct smp *s = calloc(1, sizeof(*s));
	uint32_t hz = f->hdr.sample_hz, depth = f->hdr.sample_depth;
	int ret;

	*out = NULL;
	if (!s)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	s->f = f;
	s->nslots = f->hdr.slot_count;
	s->seen = smp_zalloc(s->nslots, sizeof(*s->seen));
	s->now = smp_zalloc(s->nslots, sizeof(*s->now));
	s->named = smp_zalloc(s->nslots, sizeof(*s->named));
	if (!s->seen || !s->now || !s->named) {
		ret = rr_fail(err, errlen, -ENOMEM, "out of memory");
		goto err_free;
	}
	/* live, these two are what the sampler wrote at its start (rr_live_hdr by the caller) */
	if (!hz)
		hz = 100;
	if (!depth || depth > RIP_SAMPLE_MAX_DEPTH)
		depth = RIP_SAMPLE_MAX_DEPTH;
	s->period_ns = 1000000000LL * (RIP_SAMPLE_RING - 1) / depth / hz / 2;
	if (s->period_ns < SMP_PERIOD_MIN_NS)
		s->period_ns = SMP_PERIOD_MIN_NS;
	if (s->period_ns > SMP_PERIOD_MAX_NS)
		s->period_ns = SMP_PERIOD_MAX_NS;
	*out = s;
	return 0;

err_free:
	smp_free(s);
	return ret;
}

static int smp_reserve(struct smp *s, size_t need)
{
	return RIP_GROW(s->buf, s->cap, need, 4096);
}

/* Keep the name of slot d's owner once (the index of a trace names threads by tid). */
static int smp_name(struct smp *s, const struct rr_slot *d)
{
	struct trace_name *n;

	if (s->named[d->index] == d->gen + 1)
		return 0;
	if (RIP_GROW(s->names, s->capnames, s->nnames + 1, 64))
		return -ENOMEM;

	n = &s->names[s->nnames++];
	memset(n, 0, sizeof(*n));
	n->tid = d->tid;
	n->slot = d->index;
	n->kind = d->kind;
	memcpy(n->name, d->name, sizeof(n->name));
	n->name[sizeof(n->name) - 1] = 0;
	s->named[d->index] = d->gen + 1;
	return 0;
}

/*
 * The whole samples of slot d written at positions from on, as one packet
 * timed ts, to cb.  The samples taken, or -errno.
 */
static int smp_slot(struct smp *s, const struct rr_slot *d, uint32_t from, uint64_t ts,
		    smp_packet_cb cb, void *arg, char *err, size_t errlen)
{
	struct rip_packet h;
	uint32_t events = 0;
	size_t len = sizeof(h);
	int ret;

	if (smp_reserve(s, sizeof(h) + (size_t)d->nsamp * (SMP_EV_HDR + 4 + 8)))
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	for (uint32_t k = 0; k < d->nsamp;) {
		uint32_t id = TRACE_SAMPLE_ID, n = 1, pos = d->samp_pos[k];
		uint8_t *p = s->buf + len;

		if (RIP_SAMPLE_DEPTH_OF(d->samp[k]) != 0 || (int32_t)(pos - from) < 0) {
			k++; /* a tail whose head we did not see, or a sample taken before */
			continue;
		}
		/* its frames: the entries just after it, each one deeper */
		while (k + n < d->nsamp && d->samp_pos[k + n] == pos + n &&
		       RIP_SAMPLE_DEPTH_OF(d->samp[k + n]) == n)
			n++;
		p[0] = RIP_EVENT_ID_EXTENDED;
		memcpy(p + 1, &id, 4);
		memcpy(p + 5, &ts, 8);
		memcpy(p + SMP_EV_HDR, &n, 4);
		for (uint32_t j = 0; j < n; j++) {
			uint64_t a = d->samp[k + j] & RIP_SAMPLE_ADDR_MASK;

			memcpy(p + SMP_EV_HDR + 4 + 8 * j, &a, 8);
		}
		len += SMP_EV_HDR + 4 + 8 * (size_t)n;
		events++;
		k += n;
	}
	if (!events)
		return 0;
	memset(&h, 0, sizeof(h));
	h.magic = RIP_CTF_MAGIC;
	h.timestamp_begin = h.timestamp_end = ts;
	h.content_size = h.packet_size = (uint64_t)len * 8;
	h.packet_seq_num = s->packets;
	h.tid = d->tid;
	h.coro = d->kind == RIP_KIND_CORO ? d->index + 1 : 0;
	h.events = events;
	memcpy(s->buf, &h, sizeof(h));
	ret = smp_name(s, d);
	if (ret)
		return rr_fail(err, errlen, ret, "out of memory");
	/* counted first: the lost count the consumer reads in cb leaves them out */
	s->packets++;
	s->taken += events;
	ret = cb(&h, s->buf + sizeof(h), len - sizeof(h), arg, err, errlen);
	return ret ? ret : (int)events;
}

int smp_poll(struct smp *s, bool final, smp_packet_cb cb, void *arg, char *err, size_t errlen)
{
	int64_t now = rr_mono_ns();
	uint32_t fresh;
	uint64_t ts;
	int ret, taken = 0;

	if (!final && now < s->next_ns)
		return 0;
	s->next_ns = now + s->period_ns;
	ret = rr_live_u32(s->f, offsetof(struct rip_file_hdr, fresh), &fresh, err, errlen);
	if (ret)
		return ret;
	if (fresh > s->nslots)
		fresh = s->nslots;
	ret = rr_slot_marks(s->f, s->now, fresh, err, errlen);
	if (ret)
		return ret;
	ts = rr_now_ticks(&s->f->hdr);
	for (uint32_t i = 0; i < fresh; i++) {
		struct rr_slot d;
		uint32_t from;

		if (s->now[i] == s->seen[i])
			continue;
		ret = rr_read_slot(s->f, i, &d, err, errlen);
		if (ret == -EIO)
			return ret;
		if (ret) {
			/* free, changing (next pass), or corrupt (not again until it moves) */
			if (ret < 0)
				s->seen[i] = s->now[i];
			continue;
		}
		from = (uint32_t)(s->seen[i] >> 32) == d.gen ? (uint32_t)s->seen[i] : 0;
		s->seen[i] = (uint64_t)d.gen << 32 | d.samp_seq;
		if (!d.nsamp)
			continue;
		ret = smp_slot(s, &d, from, ts, cb, arg, err, errlen);
		if (ret < 0)
			return ret;
		taken += ret;
	}
	return taken;
}

uint64_t smp_taken(const struct smp *s)
{
	return s->taken;
}

uint64_t smp_lost(struct smp *s)
{
	char err[RR_ERR_MAX];
	uint64_t stored;

	uint64_t overrun = 0;

	if (rr_live_u64(s->f, offsetof(struct rip_file_hdr, samples), &stored, err, sizeof(err)))
		return 0;
	/* periods merged into another's signal were never sampled (a file before them: 0) */
	if (rr_live_u64(s->f, offsetof(struct rip_file_hdr, sample_overrun), &overrun, err,
			sizeof(err)))
		overrun = 0;
	return (stored > s->taken ? stored - s->taken : 0) + overrun;
}

uint64_t smp_merged(struct smp *s)
{
	char err[RR_ERR_MAX];
	uint64_t overrun = 0;

	if (rr_live_u64(s->f, offsetof(struct rip_file_hdr, sample_overrun), &overrun, err,
			sizeof(err)))
		return 0;
	return overrun;
}

void smp_names(const struct smp *s, const struct trace_name **v, size_t *n)
{
	*v = s->names;
	*n = s->nnames;
}

void smp_free(struct smp *s)
{
	if (!s)
		return;
	smp_zfree(s->seen, s->nslots, sizeof(*s->seen));
	smp_zfree(s->now, s->nslots, sizeof(*s->now));
	smp_zfree(s->named, s->nslots, sizeof(*s->named));
	free(s->names);
	free(s->buf);
	free(s);
}
