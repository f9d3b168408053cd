/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/tracepk.c - the packets of a packed trace (read/trace.h): its chunk
 * files scanned at open, a packet fetched by stream and number, its block
 * decoded on demand and kept in a cache.
 *
 * Opening reads each chunk's records but not their blocks: a record's
 * header and its list of streams say which packets a block holds, and that
 * makes, for every stream, the list of (block, place in block) of its
 * packets.  A reader that merges the streams in time order asks for
 * packets of many streams in turn, mostly of a few neighbouring blocks (a
 * block holds the packets the recorder took in a few seconds): decoded
 * blocks are kept, the least recently used dropped past TPK_CACHE_BYTES.
 *
 * Everything read is checked: the chunks' headers against the index, each
 * record's sizes against the file and the format's bounds, each stream
 * against the index's count of streams.  A chunk that ends in the middle of
 * a record (its recorder was killed) is read up to there and counted.  A
 * closed chunk's records end where its tail begins (trace_pk_tail: the
 * index it carries, for a chunk read alone, is read by read/trace.c); one
 * cut inside its tail, after every record the index counts, lost nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <internal/grow.h>

#include "read/pack.h"
#include "read/trace.h"

#define TPK_CACHE_BYTES (256u << 20) /* decoded blocks kept */
#define TPK_CACHE_MAX 64u	     /* and at most this many */
#define TPK_AHEAD 3u		     /* blocks decoded ahead of the reader */
#define TPK_AHEAD_FRESH 2u	     /* of them, those that may take an entry without memory */
/* entries a reader may hold packets of (trace_r_packet_hold): the rest stay for decoding */
#define TPK_HELD_MAX (TPK_CACHE_MAX - TPK_AHEAD - 3u)
#define TPK_HUGE (2u << 20) /* a huge page */
/* a huge page's first touch that took this much CPU: the host backs fresh memory anew */
#define TPK_COLD_NS 2000000u
#define TPK_PROBE (256u << 10) /* small pages touched to compare (tpk_probe) */
/* the reader waits on its CPU for the worker's next packet this long at most (tpk_follow) */
#define TPK_SPIN_NS 200000u

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

struct tpk_block {
	uint32_t chunk;
	uint32_t npackets;
	uint32_t left; /* its packets not asked for yet: 0, its memory is the first reused */
	bool taken;    /* decoded once already (or being so): tpk_fill */
	bool damaged;  /* its decoding failed on what it holds: never tried again (mu) */
	uint64_t off; /* of the block in its chunk file */
	uint64_t size;
	uint64_t raw; /* bytes of its packets */
	uint64_t ts_min; /* its header's: no packet of it begins before (0: unknown) */
};

struct tpk_ref {
	uint32_t block;
	uint32_t idx; /* the packet's place in its block */
};

struct tpk_stream {
	struct tpk_ref *v;
	size_t n, cap;
};

enum { TPK_EMPTY, TPK_FREE, TPK_BUSY, TPK_VALID };

struct tpk_cached {
	int state;     /* TPK_*: no memory, memory and no block, being decoded, a block */
	uint32_t block;
	uint64_t used; /* the clock when it was last used */
	uint32_t holds; /* packets of it a reader holds (trace_r_packet_hold): not dropped */
	size_t warm;	/* bytes of b.data touched already (tpk_warm) */
	struct pk_block b;
};

/* What reads and decodes blocks: one for the reader, one for the worker. */
struct tpk_rd {
	struct pk_dec *dec;
	int fd; /* of chunk fd_chunk, kept open between reads */
	uint32_t fd_chunk;
	uint8_t *buf;
	size_t bufcap;
};

struct trace_pk {
	struct tpk_block *blocks;
	size_t nblocks, cap;
	struct tpk_stream *st;
	uint32_t nst;
	struct tpk_cached cache[TPK_CACHE_MAX];
	uint64_t clock, cached;
	uint32_t missing, cut;
	uint64_t raw;
	uint64_t raw_max, npackets_max; /* of one block (tpk_room) */
	uint64_t size_max;		/* bytes of the largest block read (tpk_load's buffer) */
	uint64_t gone_packets, gone_events; /* in the chunks missing */
	uint32_t damaged;		    /* blocks found damaged (mu) */
	char damage[RR_ERR_MAX];	    /* what the first of them said (mu) */
	struct tpk_rd rd;
	/*
	 * The worker decodes ahead of the reader, on another CPU: the blocks
	 * after want, the last one the reader asked for.  mu guards the cache
	 * and these; cv says a block is decoded, or that want moved.
	 */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t worker;
	bool worker_on, stop;
	bool tried; /* tpk_start ran: the worker runs, or will not */
	bool idle; /* the worker waits on cv for want to move */
	bool full; /* ... or for an entry to decode into (every one busy, pinned or held) */
	uint32_t rwait; /* the reader waits on cv (for a block being decoded, or an entry) */
	uint32_t want;
	/*
	 * The blocks in the order a merge first asks for them (tpk_order):
	 * order[i] is the i-th, rank[b] is b's place in it.  "Ahead" and
	 * "after" below are in this order, not in the blocks' own.
	 */
	uint32_t *order, *rank;
	uint32_t untaken; /* every block before it in order was decoded once (tpk_fill) */
	/* entries that hold (or are decoding) a block none of whose packets was asked for yet */
	uint32_t unasked;
	/*
	 * The blocks of the streams' first packets, each once, in the order of
	 * the streams: what a merge asks for, in that order, before its first
	 * event.  The first primed of them were asked for already; all of them
	 * once a packet other than a first one was (the merge has begun, or the
	 * reader reads stream after stream).
	 */
	uint32_t *firsts, nfirsts, primed;
	struct tpk_cached *pinned; /* what the reader was given last: not dropped */
	uint32_t held; /* entries with holds */
	struct tpk_rd wrd;
};

static int tpk_path(const struct trace_r *r, uint32_t chunk, char *path, size_t len)
{
	size_t d = strlen(r->dir);

	if (r->only && r->file[0]) { /* the one chunk read, under whatever name it has */
		if (strlen(r->file) >= len)
			return -ENAMETOOLONG;
		snprintf(path, len, "%s", r->file);
		return 0;
	}
	if (d + 32 > len)
		return -ENAMETOOLONG;
	memcpy(path, r->dir, d);
	snprintf(path + d, len - d, "/" TRACE_CHUNK_NAME, chunk);
	return 0;
}

static int tpk_pread(int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -ENODATA;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

int trace_pk_tail(int fd, uint64_t size, uint32_t version, struct trace_chunk_tail *t)
{
	const uint64_t least = sizeof(struct trace_chunk_hdr) + sizeof(*t);
	int ret;

	if (version < 2 || size < least + sizeof(struct trace_index_hdr))
		return 0;
	ret = tpk_pread(fd, t, sizeof(*t), size - sizeof(*t));
	if (ret)
		return ret == -ENODATA ? 0 : ret; /* it shrank: as if not closed */
	if (memcmp(t->magic, TRACE_CHUNK_TAIL_MAGIC, sizeof(t->magic)) ||
	    t->index_off < sizeof(struct trace_chunk_hdr) || t->index_off > size - sizeof(*t) ||
	    t->index_len != size - sizeof(*t) - t->index_off ||
	    t->index_len < sizeof(struct trace_index_hdr) || t->index_len > CTF_INDEX_MAX)
		return 0; /* no tail (its last bytes are a record's): the records run to the end */
	return 1;
}

/*
 * Open chunk's file, checked: its descriptor, -ENOENT when it is not there,
 * -ENODATA when it is cut in its header (a recorder killed as it made it,
 * or a disk that filled then), or -errno.  *size: the file's; *end, where
 * its records end (its tail's index, or the file's end).
 */
static int tpk_open_chunk(struct trace_r *r, uint32_t chunk, uint64_t *size, uint64_t *end,
			  char *err, size_t errlen)
{
	struct trace_chunk_tail t;
	struct trace_chunk_hdr h;
	char path[PATH_MAX];
	struct stat sb;
	int fd, ret;

	if (tpk_path(r, chunk, path, sizeof(path)))
		return rr_fail(err, errlen, -ENAMETOOLONG, "%s: path too long", r->dir);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT
				       : rr_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		return rr_fail(err, errlen, -EINVAL, "%s: not a regular file", path);
	}
	ret = tpk_pread(fd, &h, sizeof(h), 0);
	if (ret || memcmp(h.magic, TRACE_CHUNK_MAGIC, sizeof(h.magic)) ||
	    !h.version || h.version > TRACE_CHUNK_VERSION || h.seq != chunk ||
	    h.trace_id != r->info.store.trace_id) {
		close(fd);
		return rr_fail(err, errlen, ret == -ENODATA ? -ENODATA : -EBADMSG,
			       "%s: not chunk %u of this trace (%s)", path, chunk,
			       ret ? "cut in its header" :
			       memcmp(h.magic, TRACE_CHUNK_MAGIC, sizeof(h.magic)) ? "bad magic" :
			       !h.version || h.version > TRACE_CHUNK_VERSION ? "another version" :
			       h.seq != chunk				     ? "another number" :
									       "another trace's");
	}
	*size = *end = (uint64_t)sb.st_size;
	ret = trace_pk_tail(fd, *size, h.version, &t);
	if (ret < 0) {
		close(fd);
		return rr_fail(err, errlen, ret, "%s: %s", path, strerror(-ret));
	}
	if (ret)
		*end = t.index_off;
	return fd;
}

static int tpk_add_ref(struct tpk_stream *st, uint32_t block, uint32_t idx)
{
	if (RIP_GROW(st->v, st->cap, st->n + 1, 16))
		return -ENOMEM;
	st->v[st->n++] = (struct tpk_ref){ .block = block, .idx = idx };
	return 0;
}

/*
 * A record of a chunk no index counts (the one a live index's recorder was
 * writing) may hold packets of streams the index does not name yet (threads
 * newer than it): pk's streams grown to hold them all (the trace's count
 * follows: trace_pk_open).  0, -EBADMSG past TRACE_MAX_STREAMS, -ENOMEM.
 */
static int tpk_streams_grow(struct trace_pk *pk, const uint32_t *streams, uint32_t n)
{
	uint32_t want = pk->nst;
	struct tpk_stream *st;

	for (uint32_t i = 0; i < n; i++)
		if (streams[i] >= want)
			want = streams[i] + 1;
	if (want == pk->nst)
		return 0;
	if (want > TRACE_MAX_STREAMS)
		return -EBADMSG;
	st = realloc(pk->st, want * sizeof(*st));
	if (!st)
		return -ENOMEM;
	memset(st + pk->nst, 0, (want - pk->nst) * sizeof(*st));
	pk->st = st;
	pk->nst = want;
	return 0;
}

/* The records of one chunk into pk's lists. */
static int tpk_scan(struct trace_r *r, struct trace_pk *pk, uint32_t chunk, int fd, uint64_t fsize,
		    uint64_t size, char *err, size_t errlen)
{
	uint64_t off = sizeof(struct trace_chunk_hdr), packets = 0, events = 0;
	/*
	 * A file as long as the index says was written whole: a record past its
	 * end is damage.  size: where the records end (before a closed chunk's
	 * tail), fsize the file's.
	 */
	const struct trace_chunk_info *ci = trace_chunk_of(&r->info, chunk);
	bool whole = ci && ci->bytes == fsize;
	uint32_t *streams = NULL;
	size_t scap = 0;
	char path[PATH_MAX];
	int ret = 0;

	tpk_path(r, chunk, path, sizeof(path));
	while (off < size) {
		struct trace_rec_hdr h;
		struct pk_hdr ph;
		uint64_t list;
		uint32_t b;

		/*
		 * Every record the index counts read, in a chunk cut short: what
		 * follows is its tail, cut (its index is not needed here).
		 */
		if (!whole && ci && packets == ci->packets && events == ci->events && packets)
			break;
		if (size - off < sizeof(h) ||
		    (ret = tpk_pread(fd, &h, sizeof(h), off)) == -ENODATA) {
			if (whole) {
				ret = rr_fail(err, errlen, -EBADMSG,
					      "%s: offset %" PRIu64 ": a record cut short", path, off);
				break;
			}
			pk->cut++; /* its recorder stopped in the middle of a record */
			ret = 0;
			break;
		}
		if (ret) {
			ret = rr_fail(err, errlen, ret, "%s: %s", path, strerror(-ret));
			break;
		}
		list = (uint64_t)h.npackets * 4;
		if (memcmp(h.magic, TRACE_REC_MAGIC, sizeof(h.magic)) || !h.npackets ||
		    h.npackets > PK_RAW_MAX / RIP_PACKET_HDR_SIZE || h.size > TRACE_REC_MAX ||
		    h.size < sizeof(struct pk_hdr) || h.raw > PK_RAW_MAX) {
			ret = rr_fail(err, errlen, -EBADMSG,
				      "%s: offset %" PRIu64 ": not a record of packets (%s)", path,
				      off,
				      memcmp(h.magic, TRACE_REC_MAGIC, sizeof(h.magic))
					      ? "bad magic"
					      : "sizes out of range");
			break;
		}
		if (size - off - sizeof(h) < list + h.size) {
			if (whole)
				ret = rr_fail(err, errlen, -EBADMSG,
					      "%s: offset %" PRIu64 ": a record of %" PRIu64
					      " bytes runs past the end of the file",
					      path, off, sizeof(h) + list + h.size);
			else
				pk->cut++;
			break;
		}
		if (h.npackets > scap) {
			uint32_t *v = realloc(streams, h.npackets * sizeof(*v));

			if (!v) {
				ret = rr_fail(err, errlen, -ENOMEM, "out of memory");
				break;
			}
			streams = v;
			scap = h.npackets;
		}
		ret = tpk_pread(fd, streams, list, off + sizeof(h));
		if (ret) {
			ret = rr_fail(err, errlen, ret, "%s: %s", path, strerror(-ret));
			break;
		}
		if (!ci && (ret = tpk_streams_grow(pk, streams, h.npackets))) {
			ret = ret == -ENOMEM ? rr_fail(err, errlen, -ENOMEM, "out of memory") :
					       rr_fail(err, errlen, ret,
						       "%s: offset %" PRIu64 ": a stream past %u",
						       path, off, TRACE_MAX_STREAMS);
			break;
		}
		if (RIP_GROW(pk->blocks, pk->cap, pk->nblocks + 1, 64)) {
			ret = rr_fail(err, errlen, -ENOMEM, "out of memory");
			break;
		}
		/* its header's earliest begin: a hint for the merge, checked by nothing (0: none) */
		if (tpk_pread(fd, &ph, sizeof(ph), off + sizeof(h) + list) ||
		    memcmp(ph.magic, PK_MAGIC, sizeof(ph.magic)))
			ph.ts_min = 0;
		b = (uint32_t)pk->nblocks++;
		pk->blocks[b] = (struct tpk_block){ .chunk = chunk,
						    .npackets = h.npackets,
						    .left = h.npackets,
						    .off = off + sizeof(h) + list,
						    .size = h.size,
						    .raw = h.raw,
						    .ts_min = ph.ts_min };
		for (uint32_t i = 0; i < h.npackets && !ret; i++) {
			if (streams[i] >= pk->nst) {
				ret = rr_fail(err, errlen, -EBADMSG,
					      "%s: offset %" PRIu64 ": packet of stream %u, the trace "
					      "has %u",
					      path, off, streams[i], pk->nst);
				break;
			}
			if (tpk_add_ref(&pk->st[streams[i]], b, i))
				ret = rr_fail(err, errlen, -ENOMEM, "out of memory");
		}
		if (ret)
			break;
		pk->raw += h.raw;
		if (h.size > pk->size_max)
			pk->size_max = h.size;
		if (h.raw > pk->raw_max)
			pk->raw_max = h.raw;
		if (h.npackets > pk->npackets_max)
			pk->npackets_max = h.npackets;
		packets += h.npackets;
		events += h.events;
		off += sizeof(h) + list + h.size;
	}
	free(streams);
	/* a chunk cut short: what its records after the cut held is lost (the index knows) */
	if (!ret && ci) {
		if (ci->packets > packets)
			pk->gone_packets += ci->packets - packets;
		if (ci->events > events)
			pk->gone_events += ci->events - events;
	}
	return ret;
}

static void tpk_rd_free(struct tpk_rd *rd)
{
	pk_dec_free(rd->dec);
	if (rd->fd >= 0)
		close(rd->fd);
	free(rd->buf);
}

static void tpk_free(struct trace_pk *pk)
{
	if (!pk)
		return;
	if (pk->worker_on) {
		pthread_mutex_lock(&pk->mu);
		pk->stop = true;
		pthread_cond_broadcast(&pk->cv); /* pairs with the worker's wait */
		pthread_mutex_unlock(&pk->mu);
		pthread_join(pk->worker, NULL);
		tpk_rd_free(&pk->wrd);
	}
	pthread_mutex_destroy(&pk->mu);
	pthread_cond_destroy(&pk->cv);
	for (uint32_t i = 0; i < TPK_CACHE_MAX; i++)
		pk_block_free(&pk->cache[i].b);
	for (uint32_t i = 0; i < pk->nst; i++)
		free(pk->st[i].v);
	tpk_rd_free(&pk->rd);
	free(pk->firsts);
	free(pk->order);
	free(pk->rank);
	free(pk->st);
	free(pk->blocks);
	free(pk);
}

/* qsort_r's: blocks (numbers into bl) by ts_min, then by number */
static int tpk_by_ts(const void *a, const void *b, void *bl)
{
	const struct tpk_block *v = bl;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t tx = v[x].ts_min, ty = v[y].ts_min;

	return tx != ty ? (tx < ty ? -1 : 1) : (x > y) - (x < y);
}

/*
 * pk->order and pk->rank: the blocks by their earliest packet's begin
 * (ts_min), which is when a merge first asks for each (read/evsource.c's
 * evs_defer puts a stream that needs its next packet in the heap at the
 * time of that packet's block): the order the worker decodes them in.
 * Where the recorder took a packet long after it began (a thread given
 * little CPU), its block comes early in that order: at 60 threads the
 * merge asked for block 14 right after block 7, and a worker that decoded
 * the blocks after 7 by number decoded blocks wanted later, held them,
 * and left the reader to decode 14, 11, 13 and 12 itself.  A trace with a
 * block whose ts_min is not known (0: no packet with a time, or a header
 * not read) keeps the blocks' own order.  0 or -ENOMEM.
 */
static int tpk_order(struct trace_pk *pk, char *err, size_t errlen)
{
	size_t n = pk->nblocks ? pk->nblocks : 1;
	bool known = true;

	pk->order = malloc(n * sizeof(*pk->order));
	pk->rank = malloc(n * sizeof(*pk->rank));
	if (!pk->order || !pk->rank)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	for (uint32_t b = 0; b < pk->nblocks; b++) {
		pk->order[b] = b;
		known &= pk->blocks[b].ts_min != 0;
	}
	if (known && pk->nblocks > 1)
		qsort_r(pk->order, pk->nblocks, sizeof(*pk->order), tpk_by_ts, pk->blocks);
	for (uint32_t i = 0; i < pk->nblocks; i++)
		pk->rank[pk->order[i]] = i;
	return 0;
}

/* pk->firsts, from the streams' lists.  0 or -ENOMEM. */
static int tpk_firsts(struct trace_pk *pk, char *err, size_t errlen)
{
	uint8_t *seen = calloc(pk->nblocks ? pk->nblocks : 1, 1);

	pk->firsts = calloc(pk->nst ? pk->nst : 1, sizeof(*pk->firsts));
	if (!seen || !pk->firsts) {
		free(seen);
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	}
	for (uint32_t i = 0; i < pk->nst; i++) {
		uint32_t b;

		if (!pk->st[i].n || seen[b = pk->st[i].v[0].block])
			continue;
		seen[b] = 1;
		pk->firsts[pk->nfirsts++] = b;
	}
	free(seen);
	return 0;
}

int trace_pk_open(struct trace_r *r, char *err, size_t errlen)
{
	const struct trace_store *s = &r->info.store;
	struct trace_pk *pk;
	uint32_t last;
	int ret = 0;

	if (s->format != TRACE_STORE_PACKED)
		return r->only ? rr_fail(err, errlen, -EINVAL, "%s: a CTF trace has no chunk files",
					 r->dir)
			       : 0;
	if (r->only && (r->only - 1 >= s->nchunks || r->only - 1 < s->first_chunk))
		return rr_fail(err, errlen, -ENOENT,
			       "%s: chunk %u is not one of the trace's (%u to %u are kept)", r->dir,
			       r->only - 1, s->first_chunk, s->nchunks ? s->nchunks - 1 : 0);
	pk = calloc(1, sizeof(*pk));
	if (!pk || !(pk->st = calloc(r->info.idx.nstreams ? r->info.idx.nstreams : 1,
				     sizeof(*pk->st)))) {
		free(pk);
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	}
	pk->nst = r->info.idx.nstreams;
	pk->rd.fd = pk->wrd.fd = -1;
	pthread_mutex_init(&pk->mu, NULL);
	pthread_cond_init(&pk->cv, NULL);
	if (pk_dec_new(&pk->rd.dec)) {
		tpk_free(pk);
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	}
	/*
	 * An index written while the recording went on (TRACE_F_LIVE) counts
	 * the chunks closed; the one after them, being written or left by a
	 * recorder killed, is read too, up to its last whole record (the
	 * recorder wrote the index before any record whose types it did not
	 * name: tw_index_early), its streams as they come (tpk_streams_grow).
	 * It may not be there (between two chunks, or no record written yet).
	 */
	last = r->only ? r->only : s->nchunks + !!(r->info.idx.flags & TRACE_F_LIVE);
	for (uint32_t c = r->only ? r->only - 1 : s->first_chunk; c < last && !ret; c++) {
		uint64_t size, end;
		int fd = tpk_open_chunk(r, c, &size, &end, err, errlen);

		/*
		 * The chunk no index counts not there yet, or cut in its header:
		 * nothing was written into it.
		 */
		if ((fd == -ENOENT || fd == -ENODATA) && c == s->nchunks)
			break;
		if (fd == -ENOENT) {
			const struct trace_chunk_info *ci = trace_chunk_of(&r->info, c);

			pk->missing++;
			if (ci) {
				pk->gone_packets += ci->packets;
				pk->gone_events += ci->events;
			}
			continue;
		}
		if (fd < 0) {
			ret = fd;
			break;
		}
		ret = tpk_scan(r, pk, c, fd, size, end, err, errlen);
		close(fd);
	}
	/* streams newer than a live index, in the chunk it does not count (tpk_streams_grow) */
	if (!ret && pk->nst > r->info.idx.nstreams)
		r->info.idx.nstreams = pk->nst;
	if (!ret)
		ret = tpk_firsts(pk, err, errlen);
	if (!ret)
		ret = tpk_order(pk, err, errlen);
	if (ret) {
		tpk_free(pk);
		return ret;
	}
	r->pk = pk;
	return 0;
}

void trace_pk_close(struct trace_r *r)
{
	tpk_free(r->pk);
	r->pk = NULL;
}

uint64_t trace_r_packet_after(const struct trace_r *r, uint32_t stream, uint64_t k)
{
	const struct trace_pk *pk = r->pk;

	if (!pk || stream >= pk->nst || k >= pk->st[stream].n)
		return 0;
	return pk->blocks[pk->st[stream].v[k].block].ts_min;
}

void trace_r_merge_defers(struct trace_r *r)
{
	if (r->pk)
		r->pk->nfirsts = 0; /* nothing to decode ahead for a prime: tpk_first */
}

uint64_t trace_r_npackets(const struct trace_r *r, uint32_t stream)
{
	return r->pk && stream < r->pk->nst ? r->pk->st[stream].n : 0;
}

void trace_r_gone(const struct trace_r *r, uint64_t *packets, uint64_t *events,
		  uint32_t *chunks)
{
	const struct trace_store *s = &r->info.store;
	bool all = !r->only; /* one chunk read: the others are not counted */

	*packets = (all ? s->dropped_packets : 0) + (r->pk ? r->pk->gone_packets : 0);
	*events = (all ? s->dropped_events : 0) + (r->pk ? r->pk->gone_events : 0);
	*chunks = (all ? s->first_chunk : 0) + (r->pk ? r->pk->missing + r->pk->cut : 0);
}

uint32_t trace_r_damaged(struct trace_r *r, char *msg, size_t len)
{
	struct trace_pk *pk = r->pk;
	uint32_t n;

	if (!pk)
		return 0;
	pthread_mutex_lock(&pk->mu);
	n = pk->damaged;
	snprintf(msg, len, "%s", n ? pk->damage : "");
	pthread_mutex_unlock(&pk->mu);
	return n;
}

uint64_t trace_r_raw_bytes(const struct trace_r *r)
{
	return r->pk ? r->pk->raw : 0;
}

void trace_r_missing(const struct trace_r *r, uint32_t *chunks, uint32_t *cut)
{
	*chunks = r->pk ? r->pk->missing : 0;
	*cut = r->pk ? r->pk->cut : 0;
}

/*
 * Room in out for the largest block of the trace, so that pk_decode never
 * grows it: an entry that held a smaller block grew by realloc, which
 * copied the 4 MiB it held (to be overwritten) and took fresh pages where
 * it moved (6 of 22 blocks decoded at 1,000 threads).  0 or -ENOMEM.
 */
static int tpk_room(const struct trace_pk *pk, struct tpk_cached *c)
{
	struct pk_block *out = &c->b;
	size_t data = (size_t)pk->raw_max + PK_DEC_SLACK,
	       off = (size_t)pk->npackets_max * sizeof(*out->off);
	void *d = out->data, *o = out->off;
	int ret = 0;

	if (out->cap < data) { /* what it holds is not needed: no copy */
		c->warm = 0;
		ret = rip_room(&d, &out->cap, data);
		out->data = d;
	}
	if (!ret) {
		ret = rip_room(&o, &out->offcap, off);
		out->off = o;
	}
	return ret;
}

static void (*tpk_slow_huge)(void); /* trace_r_on_slow_huge */
/* fresh huge pages slow, small ones cheaper or not: set once, by either thread (tpk_probe) */
enum {
	TPK_UNDECIDED,
	TPK_SMALL,
	TPK_HUGE_KEPT
};
static int tpk_cold;

void trace_r_on_slow_huge(void (*fn)(void))
{
	tpk_slow_huge = fn;
}

static uint64_t tpk_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The pages within [lo, hi) in small pages (pg: the page size - 1) from now on. */
static void tpk_small(uintptr_t lo, uintptr_t hi, uintptr_t pg)
{
	lo = (lo + pg) & ~pg;
	hi &= ~pg;
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_NOHUGEPAGE);
}

/*
 * A huge page took slow CPU ns for len bytes (tpk_warm): are small pages
 * cheaper here?  TPK_PROBE bytes of a fresh mapping of small pages (fresh:
 * the heap's pages were often touched before, and cost nothing) are
 * written a byte a page, timed, and their cost a byte compared.  Written,
 * not populated: on a virtual machine whose host keeps shadow page tables
 * the program's first touch of a page exits to the host even when the
 * kernel populated it, and that is most of the cost (here 0.3 ms a MiB to
 * populate, 5 ms to write, when a slow huge page is 3.5: buffers populated
 * in small pages took the decoder 2.6 times its CPU).  The answer is kept
 * (tpk_cold) for every buffer after, and the program told when small
 * pages are cheaper (trace_r_on_slow_huge).  True when they are.
 */
static bool tpk_probe(uint64_t slow, size_t len)
{
	const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *m =
		mmap(NULL, TPK_PROBE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int undecided = TPK_UNDECIDED;
	uint64_t t;
	bool small;

	if (m == MAP_FAILED)
		return false; /* no measure: huge pages stay, undecided */
	madvise(m, TPK_PROBE, MADV_NOHUGEPAGE);
	t = tpk_cpu_ns();
	for (size_t i = 0; i < TPK_PROBE; i += pg)
		*(volatile uint8_t *)(m + i) = 1;
	t = tpk_cpu_ns() - t;
	munmap(m, TPK_PROBE);
	/*
	 * ns a byte, small (t / TPK_PROBE) below half of huge (slow / len),
	 * without dividing: half, as the probe's loop is the best case of
	 * small pages (the decoder in small pages took 1.4 times as long
	 * when they measured about as costly as slow huge ones)
	 */
	small = (unsigned __int128)t * len * 2 < (unsigned __int128)slow * TPK_PROBE;
	/* the first thread to decide decides for both: pairs with no one, a hint */
	if (!__atomic_compare_exchange_n(&tpk_cold, &undecided, small ? TPK_SMALL : TPK_HUGE_KEPT,
					 false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return undecided == TPK_SMALL;
	if (small && tpk_slow_huge)
		tpk_slow_huge();
	return small;
}

/*
 * The first touches of c's buffer up to need bytes, a huge page at a time,
 * timed: the decoder then writes into memory it need not fault.  On this
 * virtual machine a fresh huge page costs 0.1 ms when the guest freed it
 * lately and 5 ms when its host had taken it back (the guest reports free
 * 2 MiB blocks to the host, which unbacks them).  What small pages cost
 * varies too.  So after the first slow huge page small ones are measured
 * (tpk_probe), and if they are cheaper, the rest of this buffer and every
 * buffer after it are made of small pages; if not, huge pages stay.
 * Times are the thread's CPU time, which the host's work counts in and a
 * preemption does not.  The touches are MADV_POPULATE_WRITE, whose pages
 * may lie partly outside the buffer (it writes nothing), or, where the
 * kernel lacks it, a write a page inside it.
 */
static void tpk_warm(struct tpk_cached *c, size_t need)
{
	const uintptr_t p = (uintptr_t)c->b.data, pg = (uintptr_t)sysconf(_SC_PAGESIZE) - 1;
	int cold = __atomic_load_n(&tpk_cold, __ATOMIC_RELAXED); /* a hint: pairs with no one */
	size_t at = c->warm;

	if (need > c->b.cap)
		need = c->b.cap;
	if (cold == TPK_SMALL && !at && need) /* small pages are cheaper: this buffer is of them */
		tpk_small(p, p + c->b.cap, pg);
	while (at < need) {
		uintptr_t a = (p + at) & ~pg;
		size_t end = (((p + at) & ~(uintptr_t)(TPK_HUGE - 1)) + TPK_HUGE) - p;
		uint64_t t;

		if (end > need)
			end = need;
		t = cold != TPK_UNDECIDED ? 0 : tpk_cpu_ns();
		if (madvise((void *)a, ((p + end + pg) & ~pg) - a, MADV_POPULATE_WRITE)) {
			if (errno == EINTR)
				continue;
			for (uintptr_t q = (p + at + pg) & ~pg; q < p + need; q += pg + 1)
				*(volatile uint8_t *)q = 0; /* the kernel lacks it: a write a page */
			break;
		}
		t = t ? tpk_cpu_ns() - t : 0;
		if (t > TPK_COLD_NS) {
			if (tpk_probe(t, end - at))
				tpk_small(p + end, p + c->b.cap, pg);
			cold = __atomic_load_n(&tpk_cold, __ATOMIC_RELAXED);
		}
		at = end;
	}
	c->warm = need;
}

/*
 * Read and decode block b into out with rd (its own descriptor, buffer and
 * decoder: the reader's and the worker's run at once).  0, or -errno with
 * the reason in err.
 */
static int tpk_load(struct trace_r *r, struct tpk_rd *rd, uint32_t b, struct tpk_cached *c,
		    char *err, size_t errlen)
{
	const struct tpk_block *bl = &r->pk->blocks[b];
	struct pk_block *out = &c->b;
	char path[PATH_MAX], why[RR_ERR_MAX];
	int ret;

	tpk_path(r, bl->chunk, path, sizeof(path));
	if (rd->fd < 0 || rd->fd_chunk != bl->chunk) {
		uint64_t size, end;
		int fd = tpk_open_chunk(r, bl->chunk, &size, &end, err, errlen);

		if (fd < 0)
			return fd == -ENOENT ? rr_fail(err, errlen, -ENOENT,
						       "%s: removed while being read", path)
					     : fd;
		if (rd->fd >= 0)
			close(rd->fd);
		rd->fd = fd;
		rd->fd_chunk = bl->chunk;
	}
	if (bl->size > rd->bufcap) {
		/*
		 * Room for the largest block at once: grown by realloc, it was
		 * copied, and moved to fresh pages, at each block larger than
		 * those before it.
		 */
		free(rd->buf);
		rd->bufcap = 0;
		if (!(rd->buf = malloc(r->pk->size_max)))
			return rr_fail(err, errlen, -ENOMEM, "out of memory");
		rd->bufcap = r->pk->size_max;
	}
	ret = tpk_pread(rd->fd, rd->buf, bl->size, bl->off);
	if (ret)
		return rr_fail(err, errlen, ret, "%s: offset %" PRIu64 ": %s", path, bl->off,
			       ret == -ENODATA ? "the file shrank while being read"
					       : strerror(-ret));
	if (tpk_room(r->pk, c))
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	tpk_warm(c, (size_t)bl->raw + PK_DEC_SLACK);
	ret = pk_decode(rd->dec, &r->info.types, rd->buf, bl->size, out, why, sizeof(why));
	if (!ret && (out->npackets != bl->npackets || out->len != bl->raw))
		ret = rr_fail(why, sizeof(why), -EBADMSG,
			      "%u packets of %zu bytes, its record says %u of %" PRIu64,
			      out->npackets, out->len, bl->npackets, bl->raw);
	if (ret)
		return rr_fail(err, errlen, ret, "%s: offset %" PRIu64 ": %s", path, bl->off, why);
	return 0;
}

/* Is block c within span blocks after block b (or b itself), in pk->order? */
static bool tpk_near(const struct trace_pk *pk, uint32_t b, uint32_t c, uint32_t span)
{
	return pk->rank[c] - pk->rank[b] <= span; /* before b: wraps, far */
}

/* With mu: how many of the blocks after b the worker decodes ahead are decoded or being so. */
static uint32_t tpk_nahead(const struct trace_pk *pk, uint32_t b)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < TPK_CACHE_MAX; i++) {
		const struct tpk_cached *c = &pk->cache[i];

		if ((c->state == TPK_VALID || c->state == TPK_BUSY) && c->block != b &&
		    tpk_near(pk, b, c->block, TPK_AHEAD))
			n++;
	}
	return n;
}

/*
 * An entry to decode a block into, or NULL (all busy or pinned): one that
 * holds memory but no block, else a block whose packets have all been
 * asked for (a reader that goes through the trace once needs it no more),
 * else one never used while under the budget, else the least recently
 * used block but the reader's and keep's (keep and the span blocks after
 * it).  Memory used again is memory the kernel need not clear: fresh pages
 * were a sixth of a read's time.
 * For a block decoded ahead of keep (ahead), an entry never used is
 * taken only while fewer than TPK_AHEAD_FRESH blocks are ahead already,
 * and past that no block but a done one: one stream read through took six
 * entries of 4 MiB, five with this (taking the least recently used block
 * instead had blocks decoded twice at 60 threads).
 * With mu.
 */
static struct tpk_cached *tpk_victim(struct trace_pk *pk, uint32_t keep, uint32_t span, bool ahead)
{
	struct tpk_cached *lru = NULL, *spare = NULL, *fresh = NULL, *done = NULL;

	for (uint32_t i = 0; i < TPK_CACHE_MAX; i++) {
		struct tpk_cached *c = &pk->cache[i];

		if (c->state == TPK_VALID) {
			if (c == pk->pinned || c->holds || tpk_near(pk, keep, c->block, span))
				continue;
			if (!lru || c->used < lru->used)
				lru = c;
			if (!pk->blocks[c->block].left && (!done || c->used < done->used))
				done = c;
		} else if (c->state == TPK_FREE && c != pk->pinned && !c->holds) {
			/* (a block that failed after the reader read some of it: tpk_block) */
			spare = spare ? spare : c;
		} else if (c->state == TPK_EMPTY) {
			fresh = fresh ? fresh : c;
		}
	}
	if (spare)
		return spare;
	if (done)
		return done;
	if (fresh && ahead && tpk_nahead(pk, keep) >= TPK_AHEAD_FRESH)
		return NULL; /* nor a block that may be wanted again: wait for one done */
	if (fresh && (pk->cached < TPK_CACHE_BYTES || !lru))
		return fresh;
	return lru;
}

/* With mu: the entry holding block b (valid or being decoded), or NULL. */
static struct tpk_cached *tpk_find(struct trace_pk *pk, uint32_t b)
{
	for (uint32_t i = 0; i < TPK_CACHE_MAX; i++) {
		struct tpk_cached *c = &pk->cache[i];

		if ((c->state == TPK_VALID || c->state == TPK_BUSY) && c->block == b)
			return c;
	}
	return NULL;
}

/* Has none of block b's packets been asked for yet? */
static bool tpk_unasked(const struct trace_pk *pk, uint32_t b)
{
	return pk->blocks[b].left == pk->blocks[b].npackets;
}

/* With mu: decode b into c with rd, mu let go meanwhile (c is busy: nobody takes it). */
static int tpk_fill(struct trace_r *r, struct tpk_rd *rd, struct tpk_cached *c, uint32_t b,
		    char *err, size_t errlen)
{
	struct trace_pk *pk = r->pk;
	int ret;

	pk->cached -= c->b.cap;
	if (c->state == TPK_VALID && tpk_unasked(pk, c->block))
		pk->unasked--; /* dropped before it was used */
	pk->unasked += tpk_unasked(pk, b);
	c->state = TPK_BUSY;
	c->block = b;
	/*
	 * None of it decoded: what the entry held counts no more (the reader
	 * reads packets of a block being decoded up to there, tpk_block).
	 * Pairs with the reader's loads of done, under mu.
	 */
	__atomic_store_n(&c->b.done, 0, __ATOMIC_RELAXED);
	pk->blocks[b].taken = true;
	while (pk->untaken < pk->nblocks && pk->blocks[pk->order[pk->untaken]].taken)
		pk->untaken++;
	if (pk->blocks[b].damaged) { /* found so before: not read again */
		ret = rr_fail(err, errlen, -EBADMSG, "a damaged block");
	} else {
		pthread_mutex_unlock(&pk->mu);
		ret = tpk_load(r, rd, b, c, err, errlen);
		pthread_mutex_lock(&pk->mu);
	}

	/* its bytes, not our means (memory, the file): its packets are skipped, the rest read */
	if (ret == -EBADMSG && !pk->blocks[b].damaged) {
		pk->blocks[b].damaged = true;
		if (!pk->damaged++)
			snprintf(pk->damage, sizeof(pk->damage), "%s", err);
	}
	pk->cached += c->b.cap;
	c->state = ret ? (c->b.cap ? TPK_FREE : TPK_EMPTY) : TPK_VALID;
	if (ret && tpk_unasked(pk, b))
		pk->unasked--;
	c->used = ++pk->clock;
	/*
	 * Only those who wait for this are woken: the reader, for the block or
	 * an entry, and the worker for an entry.  A worker idle for want to
	 * move has nothing to do with a block decoded: a wake-up at each of
	 * the reader's blocks cost it a futex call and a sleep for nothing.
	 */
	if (pk->rwait || pk->full)
		pthread_cond_broadcast(&pk->cv); /* pairs with the waits in tpk_block, tpk_worker */
	return ret;
}

/*
 * With mu: the first of the blocks after b the worker decodes ahead that
 * no entry has, or nblocks: none.
 */
static uint32_t tpk_ahead(struct trace_pk *pk, uint32_t b)
{
	for (uint32_t k = pk->rank[b] + 1; k <= pk->rank[b] + TPK_AHEAD && k < pk->nblocks; k++)
		if (!pk->blocks[pk->order[k]].damaged && !tpk_find(pk, pk->order[k]))
			return pk->order[k];
	return (uint32_t)pk->nblocks;
}

/*
 * With mu: while the merge is being primed, the first of the streams' first
 * blocks not decoded yet, or nblocks: none (or 2 * TPK_AHEAD blocks decoded
 * that the reader has not come to: they are all held at once in the end,
 * but there may be more of them than the cache keeps).
 */
static uint32_t tpk_first(struct trace_pk *pk)
{
	while (pk->primed < pk->nfirsts && !tpk_unasked(pk, pk->firsts[pk->primed]))
		pk->primed++;
	for (uint32_t i = pk->primed; i < pk->nfirsts && pk->unasked < 2 * TPK_AHEAD; i++)
		if (!pk->blocks[pk->firsts[i]].taken)
			return pk->firsts[i];
	return (uint32_t)pk->nblocks;
}

/* The worker: decode the blocks after the reader's, a few ahead. */
static void *tpk_worker(void *arg)
{
	struct trace_r *r = arg;
	struct trace_pk *pk = r->pk;
	char err[RR_ERR_MAX];

	pthread_mutex_lock(&pk->mu);
	while (!pk->stop) {
		struct tpk_cached *c = NULL;
		uint32_t lo = pk->want, b = tpk_first(pk);
		bool any = b < pk->nblocks;

		if (any) /* the merge's first packets, wanted now */
			c = tpk_victim(pk, b, 0, false);
		/*
		 * Never more than TPK_AHEAD blocks decoded that the reader has not
		 * come to yet: a worker faster than the reader went on through the
		 * blocks never decoded (below) into fresh entries, up to the
		 * cache's budget (16 entries of 4 MiB at 60 threads, not 10).
		 */
		if (!any && pk->unasked < TPK_AHEAD) {
			b = tpk_ahead(pk, lo);
			any = b < pk->nblocks;
			/*
			 * The blocks after the reader's all there: the first block
			 * never decoded yet, which a merge of many streams (whose
			 * reader goes back and forth over the dozen blocks that hold
			 * their current packets) asks for next, and which the reader
			 * decoded itself while the worker waited (70-260 ms of a read
			 * at 1,000 threads).  Block 0 too: a merge whose first stream
			 * begins in the last block (a program's main thread, one
			 * packet written at its end) asks for that one first, and the
			 * worker waited while the reader decoded it and took its
			 * fresh pages (20 ms of a read at 60 threads).
			 */
			if (!any && pk->untaken < pk->nblocks) {
				lo = pk->order[pk->untaken ? pk->untaken - 1 : 0];
				b = pk->order[pk->untaken];
				any = true;
			}
			if (any)
				c = tpk_victim(pk, lo, TPK_AHEAD, true);
		}
		if (!c) {
			pk->idle = true;
			pk->full = any;
			/* pairs with tpk_block's signal, tpk_fill's and the release's broadcasts */
			pthread_cond_wait(&pk->cv, &pk->mu);
			pk->idle = pk->full = false;
			continue;
		}
		tpk_fill(r, &pk->wrd, c, b, err, sizeof(err)); /* an error: the reader meets it */
	}
	pthread_mutex_unlock(&pk->mu);
	return NULL;
}

/*
 * Start the worker when there is a CPU for it and blocks to decode ahead,
 * once: a reader without one asked again at every packet, and sysconf read
 * /sys/devices/system/cpu/online each time (21,000 opens in a read of
 * tr1000 with RIP_READ_THREADS=0, 40% of its CPU time in the kernel).
 */
static void tpk_start(struct trace_r *r)
{
	struct trace_pk *pk = r->pk;
	sigset_t all, old;
	const char *env = getenv("RIP_READ_THREADS");

	pk->tried = true;
	if (pk->worker_on || pk->nblocks < 2 || (env && !strcmp(env, "0")) ||
	    sysconf(_SC_NPROCESSORS_ONLN) < 2 || pk_dec_new(&pk->wrd.dec))
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* the worker takes no signal of ours */
	pk->worker_on = !pthread_create(&pk->worker, NULL, tpk_worker, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!pk->worker_on) {
		pk_dec_free(pk->wrd.dec);
		pk->wrd.dec = NULL;
	}
}

/*
 * With mu: the block the reader decodes while it waits for the worker to
 * decode b (in c), or nblocks: none.  While the merge is being primed, one
 * of the streams' first blocks (*first set): the first event waits for them
 * all and for nothing else.  Once they are all taken, one of the few after
 * b, but only when the worker has at least half as much of b left to decode
 * as that block holds (its progress: pk_block's done): a block decoded
 * then for later kept the reader from b for the time of a whole block (2
 * blocks to prime at 2 threads: the reader decoded a third, and the merge
 * began 5 ms later), and waiting for b kept it idle (a1: its first
 * streams' blocks the last, of a few packets, and the first, the reader
 * idle 4 ms while the worker decoded the first).  After the prime, one of
 * the few after b.
 */
static uint32_t tpk_meanwhile(struct trace_pk *pk, uint32_t b, const struct tpk_cached *c,
			      bool *first)
{
	const struct tpk_block *bl = &pk->blocks[b];
	uint32_t f = tpk_first(pk), k;
	uint64_t left, done;

	*first = f < pk->nblocks;
	if (*first)
		return f;
	k = tpk_ahead(pk, b);
	if (k >= pk->nblocks || pk->primed >= pk->nfirsts)
		return k;
	if (pk->unasked >= TPK_AHEAD)
		return (uint32_t)pk->nblocks; /* first blocks held back (tpk_first): no more */
	done = __atomic_load_n(&c->b.done, __ATOMIC_RELAXED); /* a hint: pairs with no one */
	left = done < bl->npackets ? bl->raw / bl->npackets * (bl->npackets - done) : 0;
	return 2 * left >= pk->blocks[k].raw ? k : (uint32_t)pk->nblocks;
}

static uint64_t tpk_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Without mu: wait, on the CPU, for the worker to have decoded want of the
 * packets of c (the block it decodes), while it makes progress: true, or
 * false after TPK_SPIN_NS without a packet decoded (the worker is off its
 * CPU, or finishing the block: the caller waits on cv).  A packet takes
 * 5 to 20 us to decode: a sleep and a wake-up for each cost more.
 */
static bool tpk_follow(const struct tpk_cached *c, uint32_t want)
{
	uint32_t last = __atomic_load_n(&c->b.done, __ATOMIC_RELAXED); /* a hint, rechecked */
	uint64_t t0 = tpk_mono_ns();

	for (;;) {
		uint32_t d = __atomic_load_n(&c->b.done, __ATOMIC_RELAXED);
		uint64_t now;

		if (d >= want)
			return true;
		now = tpk_mono_ns();
		if (d != last) {
			last = d;
			t0 = now;
		} else if (now - t0 > TPK_SPIN_NS) {
			return false;
		}
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	}
}

/*
 * Block b decoded, for its packet idx (later: not a stream's first): from
 * the cache, from the worker (waited for), or read now.  A block the
 * worker is decoding is given once that packet and the start of the next
 * are (its done): the reader reads on while the worker decodes the rest,
 * and does not wait for all of it (the last block of a read: the reader
 * passed all of it alone after the worker was done).  Packets up to done
 * were decoded and checked whole; a block that fails later fails the read
 * then, when a packet past the failure is asked for (after the packets
 * before it were read: only a block forged to pass its checksum can).
 * It stays valid until the next call.
 */
static struct pk_block *tpk_block(struct trace_r *r, uint32_t b, uint32_t idx, bool later,
				  int *retp, char *err, size_t errlen)
{
	struct trace_pk *pk = r->pk;
	struct tpk_cached *c = NULL;
	bool stalled = false;
	int ret = 0;

	if (!pk->tried) {
		pk->want = b; /* what the worker starts from (no worker yet: nobody else reads it) */
		tpk_start(r);
	}
	pthread_mutex_lock(&pk->mu);
	if (later)
		pk->primed = pk->nfirsts;
	/*
	 * The worker decodes after the block asked for last, whichever way the
	 * reader moved: a merge that starts with a stream whose first packet is
	 * in the last block (a thread that wrote one packet, at the end) then
	 * goes back to block 0, and the worker, waiting past the last block,
	 * decoded nothing.  The worker is woken only when it waits and the
	 * blocks after b want decoding: a merge of 1,000 streams moves between
	 * two or three neighbouring blocks, and a wake-up at every move (10,000
	 * in a read of 20,000 packets) found nothing to do.
	 */
	if (b != pk->want || !pk->clock) {
		pk->want = b;
		if (!pk->clock ||
		    (pk->idle && pk->unasked < TPK_AHEAD && tpk_ahead(pk, b) < pk->nblocks))
			pthread_cond_broadcast(&pk->cv); /* pairs with the worker's wait */
	}
	for (;;) {
		if (pk->blocks[b].damaged) {
			ret = rr_fail(err, errlen, TRACE_R_DAMAGED,
				      "%s: chunk %u, offset %" PRIu64
				      ": a damaged block (the first "
				      "found: %s)",
				      r->dir, pk->blocks[b].chunk, pk->blocks[b].off, pk->damage);
			break;
		}
		c = tpk_find(pk, b);
		if (c && c->state == TPK_VALID)
			break;
		if (c) { /* the worker decodes it: read on, decode another meanwhile, or wait */
			struct tpk_cached *n = NULL;
			bool first;
			uint32_t k;

			/* pairs with pk_decode's release of done, its packets written */
			if (idx + 1 < __atomic_load_n(&c->b.done, __ATOMIC_ACQUIRE))
				break;
			k = tpk_meanwhile(pk, b, c, &first);
			if (k < pk->nblocks) /* a first block is wanted now: not decoded ahead */
				n = first ? tpk_victim(pk, k, 0, false) :
					    tpk_victim(pk, b, TPK_AHEAD, true);
			if (n) {
				char why[RR_ERR_MAX];

				/* an error: met again when the block is asked for */
				tpk_fill(r, &pk->rd, n, k, why, sizeof(why));
				continue;
			}
			if (!stalled && idx + 1 < pk->blocks[b].npackets) {
				pthread_mutex_unlock(&pk->mu);
				stalled = !tpk_follow(c, idx + 2);
				pthread_mutex_lock(&pk->mu);
				continue;
			}
			pk->rwait++;
			pthread_cond_wait(&pk->cv, &pk->mu); /* pairs with tpk_fill's broadcast */
			pk->rwait--;
			stalled = false;
			continue;
		}
		c = tpk_victim(pk, b, 0, false);
		if (!c) { /* every entry busy or pinned: wait for the worker */
			pk->rwait++;
			/* pairs with tpk_fill's and trace_r_packet_release's broadcasts */
			pthread_cond_wait(&pk->cv, &pk->mu);
			pk->rwait--;
			continue;
		}
		ret = tpk_fill(r, &pk->rd, c, b, err, errlen);
		if (ret == -EBADMSG)
			continue; /* damaged: said above */
		if (ret)
			break;
	}
	if (!ret) {
		c->used = ++pk->clock;
		pk->pinned = c;
		if (tpk_unasked(pk, b)) { /* the first of its packets asked for */
			pk->unasked--;
			if (pk->idle)
				pthread_cond_broadcast(&pk->cv); /* pairs with the worker's wait */
		}
		if (pk->blocks[b].left)
			pk->blocks[b].left--; /* one of its packets asked for */
	}
	pthread_mutex_unlock(&pk->mu);
	*retp = ret;
	return ret ? NULL : &c->b;
}

/*
 * Packet k of stream into *data and *len, from its block decoded; with
 * hold, the block is held for the caller when it can be (*hold its entry
 * + 1, else 0).
 */
static int tpk_packet(struct trace_r *r, uint32_t stream, uint64_t k, const uint8_t **data,
		      size_t *len, uint32_t *hold, char *err, size_t errlen)
{
	const struct tpk_ref *ref;
	struct trace_pk *pk = r->pk;
	struct pk_block *b;
	size_t end;
	int ret;

	if (hold)
		*hold = 0;
	if (!pk || stream >= pk->nst || k >= pk->st[stream].n)
		return rr_fail(err, errlen, -EINVAL, "%s: no packet %" PRIu64 " in stream %u",
			       r->dir, k, stream);
	ref = &pk->st[stream].v[k];
	b = tpk_block(r, ref->block, ref->idx, k > 0, &ret, err, errlen);
	if (!b)
		return ret ? ret : -EBADMSG;
	/* the record's count: b's is set when the worker is done with it */
	end = ref->idx + 1 < pk->blocks[ref->block].npackets ? b->off[ref->idx + 1] : b->len;
	*data = b->data + b->off[ref->idx];
	*len = end - b->off[ref->idx];
	if (hold) {
		/* the block just given is pinned: only the reader changes holds and pinned */
		struct tpk_cached *c = pk->pinned;

		pthread_mutex_lock(&pk->mu);
		if (c->holds || (pk->held < TPK_HELD_MAX && pk->cached <= TPK_CACHE_BYTES)) {
			pk->held += !c->holds;
			c->holds++;
			*hold = (uint32_t)(c - pk->cache) + 1;
		}
		pthread_mutex_unlock(&pk->mu);
	}
	return 0;
}

int trace_r_packet(struct trace_r *r, uint32_t stream, uint64_t k, const uint8_t **data,
		   size_t *len, char *err, size_t errlen)
{
	return tpk_packet(r, stream, k, data, len, NULL, err, errlen);
}

int trace_r_packet_hold(struct trace_r *r, uint32_t stream, uint64_t k, const uint8_t **data,
			size_t *len, uint32_t *hold, char *err, size_t errlen)
{
	return tpk_packet(r, stream, k, data, len, hold, err, errlen);
}

void trace_r_packet_release(struct trace_r *r, uint32_t hold)
{
	struct trace_pk *pk = r->pk;
	struct tpk_cached *c;

	if (!hold || !pk || hold > TPK_CACHE_MAX)
		return;
	c = &pk->cache[hold - 1];
	pthread_mutex_lock(&pk->mu);
	if (c->holds && !--c->holds) {
		pk->held--;
		if (pk->rwait || pk->full)
			pthread_cond_broadcast(&pk->cv); /* pairs with the waits for an entry */
	}
	pthread_mutex_unlock(&pk->mu);
}
