/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record/tracew.c - writing a recorded trace (record/tracew.h), in the
 * format read/trace.c reads: packed, chunk files of packed blocks
 * (record/packw.h), or CTF, a directory of stream files and the TSDL
 * metadata (read/ctf.c); then our own .rip-index (trace_index_pack).
 *
 * The directory is created with mkdir (never an existing one), files with
 * O_EXCL|O_NOFOLLOW, mode 0600 (the directory 0700): a trace holds a
 * program's addresses, paths and data, for its owner only.  A packet is
 * taken as the ring held it, its packet_size cut down to its content.
 *
 * Packed, packets go into a block until it holds TW_BLOCK bytes of them or
 * its first is a second old (trace_w_pass), then the block is written to
 * the chunk file, after its record header and the stream of each packet.
 * A block that would take a chunk past chunk_bytes begins the next one;
 * past max_bytes of closed chunks, the oldest are removed and what they held
 * counted in the index (struct trace_store), so that a recorder left
 * running keeps the last max_bytes of its trace.  With rotate_ns a chunk
 * is also closed once it is that old (at the next trace_w_pass).  With
 * on_rotate each closed chunk is handed to a command, run without a shell
 * with the chunk's path as its argument: the chunk is the command's from
 * then on (it may move it, send it away, remove it) and no longer counts in
 * the trace's bytes; the commands run while the recording goes on, are
 * reaped at each pass and waited for at the end.
 *
 * A chunk closed gets a tail (read/trace.h): the trace's index as it is at
 * that moment (opts.info makes it: types, names, modules, the clock), so
 * that the chunk is read alone wherever its command takes it; and
 * .rip-index is written anew (TRACE_F_LIVE, counting the chunks closed so
 * far), renamed over the last one, so that the directory is read while the
 * recording goes on, and what a recorder killed had closed is read whole.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <internal/grow.h>

#include "record/packw.h"
#include "record/tracew.h"

#define TW_BLOCK (4u << 20)	  /* packet bytes in a block: its best size (doc/design.md) */
#define TW_BLOCK_NS 1000000000ll /* and the oldest packet a block holds before it is written */
#define TW_INDEX_NS 2000000000ll /* modules loaded: .rip-index anew at most this often */
#define TW_CHUNK_MIN (1u << 20)	  /* the smallest chunk --max-size makes */
#define TW_DEFS_MAX (64u << 20)	  /* bytes of definitions kept for the chunks to come */
#define TW_DEFS_PKT (256u << 10)  /* bytes of a packet of copied definitions, about */
#define TW_DEFS_SLOTS (1u << 20) /* and the table: 786,432 definitions, 24 MiB at most */
#define TW_DEF_MAX 4096u	  /* the largest kept: rip:bt of RIP_BT_MAX_DEPTH is 520 */
#define TW_EV_EXT 13u		  /* the extended event header: id byte, u32 type, u64 time */

static int tr_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * a (alen bytes) then b (blen) written whole, in one call when the file
 * takes them: a recorder killed then leaves a packet whole or not begun
 * (a reader counts a cut one lost, babeltrace2 refuses the stream).
 */
static int tr_write2(int fd, const void *a, size_t alen, const void *b, size_t blen)
{
	struct iovec v[2] = { { (void *)a, alen }, { (void *)b, blen } };
	ssize_t n;

	do
		n = writev(fd, v, 2);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n >= alen)
		return tr_write_all(fd, (const char *)b + ((size_t)n - alen),
				    blen - ((size_t)n - alen));
	n = tr_write_all(fd, (const char *)a + n, alen - (size_t)n);
	return n ? (int)n : tr_write_all(fd, b, blen);
}

struct tw_chunk {
	uint64_t bytes, packets, events;
};

/* A definition kept (tw_def): key (type + 1) << 32 | id, 0 empty; its payload in defs.buf. */
struct tw_def {
	uint64_t key;
	uint64_t off;
	uint32_t len, type;
};

/* What defs.buf holds before each payload: its type and bytes. */
struct tw_def_rec {
	uint32_t type, len;
};

/*
 * The definitions met so far (rip:bt, rip:fn: pk_is_def), one per type and
 * id, the last met: each chunk but the first begins with a copy of them
 * (tw_defs_put), so that a chunk read alone, or the chunks left after
 * --max-size dropped older ones, name every stack and function their
 * events use; and a second recorder that joins gets them all, then each
 * one met after (trace_w_defs_copy), so that its trace names the stacks
 * defined before it joined.  Bounded by TW_DEFS_MAX bytes of payload and
 * TW_DEFS_SLOTS slots of the table; past them new definitions are not kept
 * (gone counts them).
 */
struct tw_defs {
	struct tw_def *tab;
	uint32_t mask, n; /* slots - 1 (0: no table yet), definitions */
	/*
	 * In the order met, each a struct tw_def_rec then its payload, padded
	 * to 4 bytes (a replaced one stays, counted in buf's bytes).
	 */
	uint8_t *buf;
	size_t len, cap;
	uint64_t gone; /* definitions not kept: past the bounds */
	uint64_t seq;  /* packets of copies written: their sequence numbers */
	uint64_t ts;   /* the time of the last copies (they never go back) */
	bool coding;   /* the copies are being coded: tw_def does not look */
};

struct trace_w {
	char dir[PATH_MAX];
	struct trace_w_opts o;
	bool packed;
	int *fds; /* CTF: per stream, -1 until the first packet */
	uint32_t nfds;
	uint32_t nstreams; /* highest stream written + 1 */
	uint64_t events;
	uint64_t bytes; /* of the files kept */
	bool nosync;	/* trace_w_nosync: the caller syncs the file system */
	/* packed */
	struct pk_enc *enc;
	uint32_t *bst; /* the stream of each packet in the block */
	size_t nbst, bstcap;
	int64_t block_t0; /* when the block's first packet came (CLOCK_MONOTONIC ns) */
	int64_t chunk_t0; /* when the chunk being written was begun */
	int cfd;	  /* the chunk being written, -1: none open */
	pid_t *kids;	  /* on_rotate's commands still running */
	size_t nkids, kidcap;
	struct trace_store store;
	struct tw_chunk *chunks; /* per chunk written from chunk0 on (tw_ch) */
	size_t chunkcap;
	uint32_t chunk0; /* no later than store.first_chunk: those before are forgotten */
	uint64_t staged_events;	 /* of the packets in the block being packed */
	uint64_t tail_est;	 /* the bytes a chunk keeps for its tail (0: not known yet) */
	struct trace_info *live; /* opts.info's, at the last chunk's close */
	bool live_indexed;	 /* a .rip-index counts the chunks closed: trace_w_abort keeps them */
	/* what the last .rip-index written names (tw_index_early), and when */
	struct {
		uint32_t types;
		uint64_t gen; /* opts.info_gen's */
		int64_t t;    /* when the last was tried */
		bool any;     /* one was written */
		bool failed;  /* the last try failed: none again before TW_INDEX_NS */
	} ix;
	struct tw_defs defs;	 /* packed, with chunks and opts.defs: what each chunk copies */
};

/* What chunk c (chunk0 <= c < store.nchunks) holds. */
static struct tw_chunk *tw_ch(struct trace_w *w, uint32_t c)
{
	return &w->chunks[c - w->chunk0];
}

/* The slot of key in the table (mask + 1 slots, never full): its own, or the empty one it would take. */
static struct tw_def *tw_def_slot(struct tw_def *tab, uint32_t mask, uint64_t key)
{
	uint32_t h = (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & mask;

	while (tab[h].key && tab[h].key != key)
		h = (h + 1) & mask;
	return &tab[h];
}

/* The table twice as big (1024 slots first).  0, or -ENOMEM past TW_DEFS_SLOTS or out of memory. */
static int tw_defs_grow(struct tw_defs *d)
{
	uint32_t m = d->mask ? d->mask * 2 + 1 : 1023;
	struct tw_def *t;

	if (m >= TW_DEFS_SLOTS || !(t = calloc((size_t)m + 1, sizeof(*t))))
		return -ENOMEM;
	for (uint32_t i = 0; d->mask && i <= d->mask; i++)
		if (d->tab[i].key)
			*tw_def_slot(t, m, d->tab[i].key) = d->tab[i];
	free(d->tab);
	d->tab = t;
	d->mask = m;
	return 0;
}

/* Keep a definition met in a packet (pk_def_fn): new, or not the same as the one kept. */
static int tw_def(void *arg, uint32_t type, const uint8_t *p, size_t len)
{
	struct trace_w *w = arg;
	struct tw_defs *d = &w->defs;
	struct tw_def *e = NULL;
	size_t rec_len;
	uint32_t id;
	uint64_t key;

	if (d->coding || len < 4)
		return 0;
	memcpy(&id, p, 4);
	key = (uint64_t)(type + 1) << 32 | id;
	if (d->mask)
		e = tw_def_slot(d->tab, d->mask, key);
	if (e && e->key && e->len == len && !memcmp(d->buf + e->off, p, len))
		return 0; /* the same again (an id interned twice, a copy read back) */
	/* a new one when the table is three quarters full: twice as big first */
	if ((!e || !e->key) && (d->n + 1) * 4 > (d->mask + 1) * 3) {
		if (tw_defs_grow(d)) {
			d->gone++;
			return 0;
		}
		e = tw_def_slot(d->tab, d->mask, key);
	}
	/* not one librip writes (never a packet too big for a block), or past the bound */
	rec_len = sizeof(struct tw_def_rec) + ((len + 3) & ~(size_t)3);
	if (len > TW_DEF_MAX || d->len + rec_len > TW_DEFS_MAX ||
	    RIP_GROW(d->buf, d->cap, d->len + rec_len, 65536)) {
		d->gone++;
		return 0; /* that the chunks after this one miss it is all it costs */
	}
	memcpy(d->buf + d->len, &(struct tw_def_rec){ .type = type, .len = (uint32_t)len },
	       sizeof(struct tw_def_rec));
	memcpy(d->buf + d->len + sizeof(struct tw_def_rec), p, len);
	if (!e->key)
		d->n++;
	*e = (struct tw_def){ .key = key,
			      .off = d->len + sizeof(struct tw_def_rec),
			      .len = (uint32_t)len,
			      .type = type };
	d->len += rec_len;
	return 0;
}

static int tr_create(const char *dir, const char *name, mode_t mode, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int fd, n = snprintf(path, sizeof(path), "%s/%s", dir, name);

	if (n < 0 || (size_t)n >= sizeof(path))
		return rr_fail(err, errlen, -ENAMETOOLONG, "%s/%s: path too long", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return rr_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
	return fd;
}

int trace_w_open(const char *dir, const struct trace_w_opts *opts, struct trace_w **out,
		 char *err, size_t errlen)
{
	struct trace_w *w;
	int ret;

	*out = NULL;
	if (strlen(dir) >= sizeof(w->dir) - 32)
		return rr_fail(err, errlen, -ENAMETOOLONG, "%s: path too long", dir);
	if (mkdir(dir, 0700)) {
		if (errno == EEXIST)
			return rr_fail(err, errlen, -EEXIST,
				       "%s exists: traces are never overwritten; choose another "
				       "with -o",
				       dir);
		return rr_fail(err, errlen, -errno, "%s: %s", dir, strerror(errno));
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		rmdir(dir);
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	}
	snprintf(w->dir, sizeof(w->dir), "%s", dir);
	w->cfd = -1;
	if (opts)
		w->o = *opts;
	w->packed = opts && !opts->ctf;
	if (w->packed) {
		w->store.format = TRACE_STORE_PACKED;
		if (w->o.max_bytes && !w->o.chunk_bytes)
			w->o.chunk_bytes = w->o.max_bytes / 4;
		if (w->o.chunk_bytes && w->o.chunk_bytes < TW_CHUNK_MIN)
			w->o.chunk_bytes = TW_CHUNK_MIN;
		if (getrandom(&w->store.trace_id, sizeof(w->store.trace_id), 0) !=
		    sizeof(w->store.trace_id))
			w->store.trace_id = (uint64_t)rr_mono_ns() ^ (uint64_t)getpid() << 40;
		ret = pk_enc_new(&w->enc, opts->types, opts->level ? opts->level : 3);
		if (ret) {
			free(w);
			rmdir(dir);
			return rr_fail(err, errlen, ret, "out of memory");
		}
		if (w->o.defs && w->o.defs_stream < TRACE_MAX_STREAMS)
			pk_enc_on_def(w->enc, tw_def, w);
	}
	*out = w;
	return 0;
}

/* ---- packed ------------------------------------------------------------------------- */

static int tw_chunk_path(const struct trace_w *w, uint32_t chunk, char *path, size_t len)
{
	size_t d = strlen(w->dir);

	if (d + 32 > len)
		return -ENAMETOOLONG;
	memcpy(path, w->dir, d);
	snprintf(path + d, len - d, "/" TRACE_CHUNK_NAME, chunk);
	return 0;
}

/* A command of on_rotate ended with status st: count a failure. */
static void tw_kid_done(struct trace_w *w, int st)
{
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		w->store.handed_failed++;
}

/* Reap the commands that are done; with wait, all of them. */
static void tw_reap(struct trace_w *w, bool wait)
{
	for (size_t i = 0; i < w->nkids;) {
		int st;
		pid_t p = waitpid(w->kids[i], &st, wait ? 0 : WNOHANG);

		if (p < 0 && errno == EINTR)
			continue;
		if (p == 0) {
			i++;
			continue;
		}
		if (p > 0)
			tw_kid_done(w, st);
		/* p < 0: reaped by someone else (ECHILD), its status unknown */
		w->kids[i] = w->kids[--w->nkids];
	}
}

/*
 * posix_spawnp of on_rotate's command, at the nice value the options say
 * (the one the recorder was started with: it runs lower itself, and a
 * child inherits its value): raised to it for the spawn, lowered back
 * after (allowed: it was lowered before).
 */
static int tw_spawn(const struct trace_w *w, pid_t *pid, const posix_spawn_file_actions_t *fa,
		    const posix_spawnattr_t *at, char *const argv[])
{
	bool back = false;
	int cur = 0, ret;

	if (w->o.nice_set) {
		errno = 0;
		cur = getpriority(PRIO_PROCESS, 0); /* this thread's, on Linux */
		if (!(cur == -1 && errno) && cur < w->o.nice)
			back = !setpriority(PRIO_PROCESS, 0, w->o.nice);
	}
	ret = posix_spawnp(pid, w->o.on_rotate, fa, at, argv, environ);
	if (back)
		setpriority(PRIO_PROCESS, 0, cur);
	return ret;
}

/*
 * Hand chunk c (closed) to on_rotate's command: run it with the chunk's
 * path, stdin from /dev/null, default signal dispositions and mask.  A
 * command that cannot start is counted as failed; the recording goes on.
 */
static void tw_hand(struct trace_w *w, uint32_t c)
{
	char path[PATH_MAX];
	char *argv[3];
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	pid_t pid;
	int ret;

	w->store.handed++;
	if (tw_chunk_path(w, c, path, sizeof(path)) ||
	    RIP_GROW(w->kids, w->kidcap, w->nkids + 1, 8)) {
		w->store.handed_failed++;
		return;
	}
	argv[0] = (char *)w->o.on_rotate;
	argv[1] = path;
	argv[2] = NULL;
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	ret = tw_spawn(w, &pid, &fa, &at, argv);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (ret) {
		w->store.handed_failed++;
		return;
	}
	w->bytes -= tw_ch(w, c)->bytes; /* the command's now */
	w->kids[w->nkids++] = pid;
}

/*
 * The bytes of a file of the trace (.rip-index, CTF's metadata) into a
 * hidden new file (tmp) renamed over name: a reader finds one or the
 * other, whole (babeltrace2 skips hidden files).  Synced with sync.
 */
static int tw_put_file(struct trace_w *w, const char *name, const char *tmpname, const void *buf,
		       size_t len, bool sync, char *err, size_t errlen)
{
	char tmp[PATH_MAX + 32], path[PATH_MAX + 32];
	int fd, ret;

	snprintf(tmp, sizeof(tmp), "%s/%s", w->dir, tmpname);
	snprintf(path, sizeof(path), "%s/%s", w->dir, name);
	unlink(tmp); /* ours, left by a write that failed */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return rr_fail(err, errlen, -errno, "%s: %s", tmp, strerror(errno));
	ret = tr_write_all(fd, buf, len);
	if (!ret && sync && !w->nosync && fsync(fd))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret) {
		unlink(tmp);
		return rr_fail(err, errlen, ret, "%s: %s", path, strerror(-ret));
	}
	return 0;
}

#define TW_INDEX_NEW TRACE_INDEX ".new"
#define TW_META_NEW ".metadata.new"

static int tw_put_index(struct trace_w *w, const uint8_t *buf, size_t len, bool sync, char *err,
			size_t errlen)
{
	return tw_put_file(w, TRACE_INDEX, TW_INDEX_NEW, buf, len, sync, err, errlen);
}

/* CTF: metadata from info (tw_put_file). */
static int tw_put_metadata(struct trace_w *w, const struct trace_info *info, bool sync, char *err,
			   size_t errlen)
{
	FILE *meta;
	char *buf = NULL;
	size_t len = 0;
	int ret;

	meta = open_memstream(&buf, &len);
	if (!meta)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	ret = ctf_write_metadata(meta, info);
	if (fclose(meta) && !ret)
		ret = -ENOMEM;
	if (!ret)
		ret = tw_put_file(w, "metadata", TW_META_NEW, buf, len, sync, err, errlen);
	else
		rr_fail(err, errlen, ret, "%s/metadata: %s", w->dir, strerror(-ret));
	free(buf);
	return ret;
}

/*
 * info's counts and store as the writer's now, for an index that counts
 * chunks 0 .. nchunks - 1: what each held, the events of those kept (none
 * of the block being packed), the bytes of the files kept.
 */
static int tw_info_fill(struct trace_w *w, struct trace_info *info, uint32_t nchunks, char *err,
			size_t errlen)
{
	uint32_t first = w->store.first_chunk, n = nchunks > first ? nchunks - first : 0;
	struct trace_chunk_info *v = realloc(info->chunks, (n ? n : 1) * sizeof(*v));

	if (!v)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	info->chunks = v;
	info->chunk0 = first;
	for (uint32_t c = first; c < nchunks; c++)
		v[c - first] = (struct trace_chunk_info){ .bytes = tw_ch(w, c)->bytes,
							  .packets = tw_ch(w, c)->packets,
							  .events = tw_ch(w, c)->events };
	info->idx.nstreams = w->nstreams;
	info->idx.events = w->events - w->staged_events;
	info->store = w->store;
	info->store.nchunks = nchunks;
	info->store.kept_bytes = w->bytes;
	return 0;
}

/*
 * The tail of the chunk being closed (read/trace.h): the trace's index as
 * it is now, counting this chunk whole (tail and all) and handed on if it
 * is to be, then struct trace_chunk_tail.  fin: the final index (the last
 * chunk); else opts.info makes it, and *made is that info (for the
 * directory's index), NULL when it made none: then the chunk has no tail.
 */
static int tw_seal(struct trace_w *w, struct trace_info *fin, struct trace_info **made, char *err,
		   size_t errlen)
{
	uint32_t c = w->store.nchunks - 1;
	struct trace_info *info = fin;
	struct trace_chunk_tail t;
	char why[RR_ERR_MAX];
	uint8_t *buf;
	size_t len;
	int ret;

	*made = NULL;
	if (!info) {
		if (!w->o.info || (!w->live && !(w->live = calloc(1, sizeof(*w->live)))))
			return 0;
		trace_info_free(w->live);
		memset(w->live, 0, sizeof(*w->live));
		if (w->o.info(w->o.info_arg, w->live, why, sizeof(why))) {
			trace_info_free(w->live); /* no tail: read with the final index */
			return 0;
		}
		info = w->live;
		info->idx.flags |= TRACE_F_LIVE;
	}
	ret = tw_info_fill(w, info, c + 1, err, errlen);
	if (ret)
		return ret;
	if (w->o.on_rotate)
		info->store.handed++;
	/*
	 * The tail is read with its chunk alone (never for the directory): it
	 * lists that chunk only, so that a chunk is as big at its millionth
	 * close as at its first.  (info is filled anew before any other use.)
	 */
	info->store.first_chunk = c;
	/* its size first: the index counts the chunk with its tail */
	ret = trace_index_pack(info, &buf, &len, err, errlen);
	if (ret)
		return ret;
	free(buf);
	info->chunks[c - info->chunk0].bytes += len + sizeof(t);
	info->store.kept_bytes += len + sizeof(t);
	ret = trace_index_pack(info, &buf, &len, err, errlen);
	if (ret)
		return ret;
	memset(&t, 0, sizeof(t));
	memcpy(t.magic, TRACE_CHUNK_TAIL_MAGIC, sizeof(t.magic));
	t.index_off = tw_ch(w, c)->bytes;
	t.index_len = len;
	ret = tr_write_all(w->cfd, buf, len);
	free(buf);
	if (!ret)
		ret = tr_write_all(w->cfd, &t, sizeof(t));
	if (ret) {
		char path[PATH_MAX];

		tw_chunk_path(w, c, path, sizeof(path));
		return rr_fail(err, errlen, ret, "%s: %s", path, strerror(-ret));
	}
	tw_ch(w, c)->bytes += len + sizeof(t);
	w->bytes += len + sizeof(t);
	w->tail_est = len + sizeof(t) + len / 8 + 4096; /* and room to grow (threads, chunks) */
	*made = fin ? NULL : info;
	return 0;
}

/*
 * The first guess of tail_est, before any tail was written: the index as it
 * is now, packed.  A chunk keeps room for its tail within chunk_bytes.
 */
static void tw_tail_guess(struct trace_w *w)
{
	char why[RR_ERR_MAX];
	uint8_t *buf;
	size_t len;

	if (!w->o.info || (!w->live && !(w->live = calloc(1, sizeof(*w->live)))))
		return;
	trace_info_free(w->live);
	memset(w->live, 0, sizeof(*w->live));
	if (!w->o.info(w->o.info_arg, w->live, why, sizeof(why)) &&
	    !tw_info_fill(w, w->live, w->store.nchunks, why, sizeof(why)) &&
	    !trace_index_pack(w->live, &buf, &len, why, sizeof(why))) {
		free(buf);
		w->tail_est = len + sizeof(struct trace_chunk_tail) + len / 8 + 4096;
	}
	trace_info_free(w->live);
}

/* What the .rip-index just written from info names (tw_index_early). */
static void tw_ix_note(struct trace_w *w, const struct trace_info *info)
{
	w->ix.types = info->types.count;
	w->ix.any = true;
}

/*
 * .rip-index anew from live (tw_seal's): the chunks closed so far; with
 * handing, the last of them about to be handed on.
 */
static int tw_live_index(struct trace_w *w, struct trace_info *live, bool handing, char *err,
			 size_t errlen)
{
	uint8_t *buf;
	size_t len;
	int ret = tw_info_fill(w, live, w->store.nchunks, err, errlen);

	if (ret)
		return ret;
	if (handing) {
		live->store.handed++;
		live->store.kept_bytes -= tw_ch(w, w->store.nchunks - 1)->bytes;
	}
	ret = trace_index_pack(live, &buf, &len, err, errlen);
	if (ret)
		return ret;
	ret = tw_put_index(w, buf, len, true, err, errlen);
	free(buf);
	if (!ret) {
		w->live_indexed = true;
		tw_ix_note(w, live);
	}
	return ret;
}

/*
 * .rip-index written while a chunk is being written, so that a recorder
 * killed before it closes its first chunk (or the chunk after the last it
 * closed) leaves a trace that readers read up to its last whole record:
 * they read the chunk after those a TRACE_F_LIVE index counts, and the
 * streams of threads newer than the index with it (read/tracepk.c).
 * Written at the first pass or record, before any record whose packets use
 * a type the last index did not name (a reader cannot decode them), and,
 * every TW_INDEX_NS at most, when modules were loaded (their frames are
 * named).  Names of threads named since come at the chunk's close: with a
 * million coroutines the index is 80 MB.  For CTF, metadata too (babeltrace2
 * reads the stream files with it).  Not synced: it is there for the
 * recorder's death, not the machine's (each chunk's close, and the end,
 * write one that is).  Best effort: a failure leaves the last one, and the
 * record's own write says what is wrong with the disk.
 */
static void tw_index_early(struct trace_w *w)
{
	uint32_t closed = w->store.nchunks - (w->cfd >= 0);
	int64_t now = rr_mono_ns();
	struct trace_info *info;
	char why[RR_ERR_MAX];
	bool types, due;
	uint64_t gen;
	uint8_t *buf;
	size_t len;

	if (!w->o.info || !w->o.types)
		return;
	types = w->o.types->count > w->ix.types;
	due = now - w->ix.t >= TW_INDEX_NS;
	if (w->ix.t && !due && (w->ix.failed || !types))
		return; /* lately: only for new types, and not after a failure */
	gen = w->o.info_gen ? w->o.info_gen(w->o.info_arg) : 0;
	if (w->ix.any && !w->ix.failed && !types && gen == w->ix.gen)
		return; /* nothing new to name */
	w->ix.t = now;
	w->ix.failed = true;
	if (!w->live && !(w->live = calloc(1, sizeof(*w->live))))
		return;
	info = w->live;
	trace_info_free(info);
	memset(info, 0, sizeof(*info));
	if (w->o.info(w->o.info_arg, info, why, sizeof(why)))
		return;
	if (!w->packed) { /* CTF: the streams so far, and metadata for babeltrace2 */
		info->idx.nstreams = w->nstreams;
		info->idx.events = w->events;
		info->store.kept_bytes = w->bytes;
		if (tw_put_metadata(w, info, false, why, sizeof(why)))
			return;
	} else if (tw_info_fill(w, info, closed, why, sizeof(why))) {
		return;
	}
	info->idx.flags |= TRACE_F_LIVE;
	if (trace_index_pack(info, &buf, &len, why, sizeof(why)))
		return;
	if (!tw_put_index(w, buf, len, false, why, sizeof(why))) {
		tw_ix_note(w, info);
		w->ix.gen = gen;
		w->ix.failed = false;
	}
	free(buf);
}

/*
 * Close the chunk being written, its tail written (fin: the final index,
 * else opts.info's), fsync'd unless the caller syncs; then hand it on or
 * drop old ones, and write .rip-index anew.
 */
static int tw_close_chunk(struct trace_w *w, struct trace_info *fin, char *err, size_t errlen)
{
	struct trace_info *live;
	char path[PATH_MAX];
	int ret = 0;

	if (w->cfd < 0)
		return 0;
	ret = tw_seal(w, fin, &live, err, errlen);
	if (ret) {
		close(w->cfd);
		w->cfd = -1;
		return ret;
	}
	if (!w->nosync && fsync(w->cfd))
		ret = -errno;
	if (close(w->cfd) && !ret)
		ret = -errno;
	w->cfd = -1;
	if (ret) {
		tw_chunk_path(w, w->store.nchunks - 1, path, sizeof(path));
		return rr_fail(err, errlen, ret, "%s: %s", path, strerror(-ret));
	}
	if (w->o.on_rotate) {
		/* the directory's index first: the command may read the chunk with it */
		ret = live ? tw_live_index(w, live, true, err, errlen) : 0;
		tw_hand(w, w->store.nchunks - 1);
		return ret; /* no chunk stays to be dropped (store_check: not with max_bytes) */
	}
	/* keep the last max_bytes: the chunk just closed stays whatever its size */
	while (w->o.max_bytes && w->bytes > w->o.max_bytes &&
	       w->store.first_chunk + 1 < w->store.nchunks) {
		const struct tw_chunk *c = tw_ch(w, w->store.first_chunk);

		tw_chunk_path(w, w->store.first_chunk, path, sizeof(path));
		if (unlink(path) && errno != ENOENT)
			return rr_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
		w->bytes -= c->bytes;
		w->events -= c->events;
		w->store.dropped_bytes += c->bytes;
		w->store.dropped_packets += c->packets;
		w->store.dropped_events += c->events;
		w->store.first_chunk++;
	}
	return live ? tw_live_index(w, live, false, err, errlen) : 0;
}

/* Begin chunk number store.nchunks: its file and its header. */
static int tw_open_chunk(struct trace_w *w, char *err, size_t errlen)
{
	struct trace_chunk_hdr h;
	char name[32];
	int fd, ret;

	if (w->store.nchunks >= TRACE_MAX_SEQ ||
	    w->store.nchunks - w->store.first_chunk >= TRACE_MAX_CHUNKS)
		return rr_fail(err, errlen, -EFBIG, "%s: chunk %u: no more (%u kept at most)",
			       w->dir, w->store.nchunks, TRACE_MAX_CHUNKS);
	/*
	 * The dropped chunks are forgotten: what they held is in the store's
	 * sums, so a recording that drops keeps as much as it keeps on disk,
	 * however long it runs.
	 */
	if (w->store.first_chunk - w->chunk0 >= 64 &&
	    w->store.first_chunk - w->chunk0 >= w->store.nchunks - w->store.first_chunk) {
		memmove(w->chunks, tw_ch(w, w->store.first_chunk),
			(w->store.nchunks - w->store.first_chunk) * sizeof(*w->chunks));
		w->chunk0 = w->store.first_chunk;
	}
	if (RIP_GROW(w->chunks, w->chunkcap, (size_t)(w->store.nchunks - w->chunk0) + 1, 16))
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	snprintf(name, sizeof(name), TRACE_CHUNK_NAME, w->store.nchunks);
	fd = tr_create(w->dir, name, 0600, err, errlen);
	if (fd < 0)
		return fd;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, TRACE_CHUNK_MAGIC, sizeof(h.magic));
	h.version = TRACE_CHUNK_VERSION;
	h.seq = w->store.nchunks;
	h.trace_id = w->store.trace_id;
	ret = tr_write_all(fd, &h, sizeof(h));
	if (ret) {
		char path[PATH_MAX];

		close(fd);
		/* not left cut in its header (a full disk): readers take it for damage */
		if (snprintf(path, sizeof(path), "%s/%s", w->dir, name) < (int)sizeof(path))
			unlink(path);
		return rr_fail(err, errlen, ret, "%s/%s: %s", w->dir, name, strerror(-ret));
	}
	w->cfd = fd;
	w->chunk_t0 = rr_mono_ns();
	*tw_ch(w, w->store.nchunks) = (struct tw_chunk){ .bytes = sizeof(h) };
	w->bytes += sizeof(h);
	w->store.nchunks++;
	if (!w->tail_est && w->o.chunk_bytes)
		tw_tail_guess(w);
	return 0;
}

/*
 * A block taken (blk, len bytes, its header ph) into the chunk open, after
 * its record header and the stream of each of its packets (w->bst).
 */
static int tw_record(struct trace_w *w, const uint8_t *blk, size_t len, const struct pk_hdr *ph,
		     char *err, size_t errlen)
{
	struct trace_rec_hdr rh;
	struct tw_chunk *c;
	int ret;

	memcpy(rh.magic, TRACE_REC_MAGIC, sizeof(rh.magic));
	rh.npackets = (uint32_t)w->nbst;
	rh.size = len;
	rh.raw = ph->raw;
	rh.events = ph->events;
	ret = tr_write_all(w->cfd, &rh, sizeof(rh));
	if (!ret)
		ret = tr_write_all(w->cfd, w->bst, w->nbst * sizeof(*w->bst));
	if (!ret)
		ret = tr_write_all(w->cfd, blk, len);
	if (ret) {
		char path[PATH_MAX];

		tw_chunk_path(w, w->store.nchunks - 1, path, sizeof(path));
		return rr_fail(err, errlen, ret, "%s: %s", path, strerror(-ret));
	}
	c = tw_ch(w, w->store.nchunks - 1);
	len += sizeof(rh) + w->nbst * sizeof(*w->bst);
	c->bytes += len;
	c->packets += w->nbst;
	c->events += ph->events;
	w->bytes += len;
	w->nbst = 0;
	return 0;
}

/* Take the block of copies being coded and write it (tw_defs_put). */
static int tw_defs_take(struct trace_w *w, char *err, size_t errlen)
{
	const uint8_t *blk;
	struct pk_hdr ph;
	size_t len;
	int ret = pk_enc_take(w->enc, &blk, &len, err, errlen);

	if (ret)
		return ret;
	memcpy(&ph, blk, sizeof(ph));
	w->events += ph.events;
	return tw_record(w, blk, len, &ph, err, errlen);
}

/* A packet of copied definitions being built (tw_pkt_add, tw_pkt_close). */
struct tw_pkt {
	uint8_t *pkt;
	size_t cap, len; /* len: from the packet's start, its header's room included */
	uint32_t events;
};

/* Add a definition of type (payload p, len bytes), timed ts.  0 or -ENOMEM. */
static int tw_pkt_add(struct tw_pkt *b, uint32_t type, uint64_t ts, const uint8_t *p, uint32_t len)
{
	if (!b->len)
		b->len = sizeof(struct rip_packet);
	if (RIP_GROW(b->pkt, b->cap, b->len + TW_EV_EXT + len, TW_DEFS_PKT + 4096))
		return -ENOMEM;
	b->pkt[b->len] = RIP_EVENT_ID_EXTENDED;
	memcpy(b->pkt + b->len + 1, &type, 4);
	memcpy(b->pkt + b->len + 5, &ts, 8);
	memcpy(b->pkt + b->len + TW_EV_EXT, p, len);
	b->len += TW_EV_EXT + len;
	b->events++;
	return 0;
}

/* The packet built, as packet seq of stream, timed ts: its bytes (b->pkt), and b starts anew. */
static size_t tw_pkt_close(struct tw_pkt *b, uint32_t stream, uint64_t ts, uint64_t seq)
{
	struct rip_packet h = { .magic = RIP_CTF_MAGIC,
				.stream_instance_id = stream,
				.timestamp_begin = ts,
				.timestamp_end = ts,
				.content_size = (uint64_t)b->len * 8,
				.packet_size = (uint64_t)b->len * 8,
				.packet_seq_num = seq,
				.events = b->events };
	size_t len = b->len;

	memcpy(b->pkt, &h, sizeof(h));
	b->len = 0;
	b->events = 0;
	return len;
}

/*
 * The copies of every definition kept, at the head of the chunk just begun
 * (before any block of it is read, none of its events uses one it lacks):
 * events of their own types in packets of stream opts.defs_stream, timed
 * ts (just before the first block's earliest packet; never before the last
 * copies), in blocks of their own.  Nothing is staged in the coder (tw_flush took it).
 */
static int tw_defs_put(struct trace_w *w, uint64_t ts, char *err, size_t errlen)
{
	struct tw_defs *d = &w->defs;
	struct tw_pkt b = { 0 };
	uint32_t done = 0;
	int ret = 0;

	if (ts < d->ts)
		ts = d->ts;
	d->ts = ts;
	d->coding = true;
	for (uint32_t i = 0; i <= d->mask && !ret; i++) {
		const struct tw_def *e = &d->tab[i];
		size_t len;

		if (e->key) {
			if (tw_pkt_add(&b, e->type, ts, d->buf + e->off, e->len)) {
				ret = rr_fail(err, errlen, -ENOMEM, "out of memory");
				break;
			}
			done++;
		}
		if (!b.events || (b.len < TW_DEFS_PKT && done < d->n))
			continue;
		/* a packet full, or the last: into the block, which is taken when full */
		len = tw_pkt_close(&b, w->o.defs_stream, ts, d->seq);
		if (w->nbst && pk_enc_raw(w->enc) + len > TW_BLOCK &&
		    (ret = tw_defs_take(w, err, errlen)))
			break;
		if (RIP_GROW(w->bst, w->bstcap, w->nbst + 1, 256)) {
			ret = rr_fail(err, errlen, -ENOMEM, "out of memory");
			break;
		}
		ret = pk_enc_add(w->enc, b.pkt, len);
		if (ret) {
			rr_fail(err, errlen, ret, "%s: packing the definitions: %s", w->dir,
				strerror(-ret));
			break;
		}
		w->bst[w->nbst++] = w->o.defs_stream;
		d->seq++;
	}
	if (!ret && w->nbst)
		ret = tw_defs_take(w, err, errlen);
	d->coding = false;
	free(b.pkt);
	if (!ret && w->o.defs_stream >= w->nstreams)
		w->nstreams = w->o.defs_stream + 1;
	return ret;
}

int trace_w_defs_copy(struct trace_w *w, size_t *from, uint64_t ts, trace_w_pkt_fn *fn, void *arg)
{
	const struct tw_defs *d = &w->defs;
	struct tw_pkt b = { 0 };
	uint64_t seq = 0;
	size_t off = *from;
	int ret = 0;

	while (off < d->len && !ret) {
		struct tw_def_rec h;

		memcpy(&h, d->buf + off, sizeof(h));
		ret = tw_pkt_add(&b, h.type, ts, d->buf + off + sizeof(h), h.len);
		off += sizeof(h) + ((h.len + 3) & ~(size_t)3);
		if (!ret && (b.len >= TW_DEFS_PKT || off >= d->len)) {
			size_t len = tw_pkt_close(&b, w->o.defs_stream, ts, seq++);

			ret = fn(arg, w->o.defs_stream, b.pkt, len);
		}
	}
	free(b.pkt);
	if (!ret)
		*from = off;
	return ret;
}

/* Write the block being packed into the chunk, after its record header and streams. */
static int tw_flush(struct trace_w *w, char *err, size_t errlen)
{
	struct tw_chunk *c;
	struct pk_hdr ph;
	const uint8_t *blk;
	bool fresh = false;
	size_t len;
	int ret;

	if (!w->nbst)
		return 0;
	ret = pk_enc_take(w->enc, &blk, &len, err, errlen);
	if (ret)
		return ret;
	memcpy(&ph, blk, sizeof(ph));
	/*
	 * A block that would take the chunk past chunk_bytes, with room kept
	 * for its tail, begins the next one: a chunk stays within its size (or
	 * is one block bigger than it), so the disk a trace takes stays within
	 * max_bytes and one chunk.
	 */
	if (w->cfd >= 0 && w->o.chunk_bytes &&
	    tw_ch(w, w->store.nchunks - 1)->bytes > sizeof(struct trace_chunk_hdr) &&
	    tw_ch(w, w->store.nchunks - 1)->bytes + sizeof(struct trace_rec_hdr) +
			    w->nbst * sizeof(*w->bst) + len + w->tail_est >
		    w->o.chunk_bytes &&
	    (ret = tw_close_chunk(w, NULL, err, errlen)))
		return ret;
	/* the record's types named first, and before its chunk is there */
	tw_index_early(w);
	if (w->cfd < 0) {
		ret = tw_open_chunk(w, err, errlen);
		if (ret)
			return ret;
		fresh = true;
	}
	ret = tw_record(w, blk, len, &ph, err, errlen);
	if (ret)
		return ret;
	w->staged_events = 0;
	/* the block is written: the coder is free for the copies */
	/* a tick before the block's first: the merge puts them first even at equal times */
	if (fresh && w->store.nchunks > 1 && w->defs.n &&
	    (ret = tw_defs_put(w, ph.ts_min ? ph.ts_min - 1 : 0, err, errlen)))
		return ret;
	c = tw_ch(w, w->store.nchunks - 1);
	if (w->o.chunk_bytes && c->bytes + w->tail_est >= w->o.chunk_bytes)
		return tw_close_chunk(w, NULL, err, errlen);
	return 0;
}

static int tw_packet(struct trace_w *w, const struct ev_packet *p, const struct rip_packet *hdr,
		     char *err, size_t errlen)
{
	int ret;

	if (w->nbst && pk_enc_raw(w->enc) + p->len > TW_BLOCK && (ret = tw_flush(w, err, errlen)))
		return ret;
	if (RIP_GROW(w->bst, w->bstcap, w->nbst + 1, 256))
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	/* the header as written, the events where they are: no copy of the packet */
	ret = pk_enc_add_hdr(w->enc, hdr, p->data, p->len);
	if (ret)
		return rr_fail(err, errlen, ret, "%s: packing a packet of stream %u: %s", w->dir,
			       p->ring, strerror(-ret));
	if (!w->nbst)
		w->block_t0 = rr_mono_ns();
	w->bst[w->nbst++] = p->ring;
	return 0;
}

int trace_w_pass(struct trace_w *w, char *err, size_t errlen)
{
	int64_t now = rr_mono_ns();
	int ret = 0;

	if (!w->packed)
		return 0;
	if (w->nkids)
		tw_reap(w, false);
	tw_index_early(w);
	if (w->o.rotate_ns && w->cfd >= 0 && now - w->chunk_t0 >= w->o.rotate_ns) {
		ret = tw_flush(w, err, errlen); /* the block goes into the chunk it closes */
		return ret ? ret : tw_close_chunk(w, NULL, err, errlen);
	}
	if (!w->nbst || now - w->block_t0 < TW_BLOCK_NS)
		return 0;
	return tw_flush(w, err, errlen);
}

void trace_w_defs(const struct trace_w *w, uint64_t *n, uint64_t *mem, uint64_t *gone)
{
	const struct tw_defs *d = &w->defs;

	*n = d->n;
	*mem = d->cap + (d->mask ? ((uint64_t)d->mask + 1) * sizeof(*d->tab) : 0);
	*gone = d->gone;
}

uint64_t trace_w_bytes(const struct trace_w *w)
{
	return w->bytes;
}

int trace_w_packet(struct trace_w *w, const struct ev_packet *p, char *err, size_t errlen)
{
	struct rip_packet hdr;
	char name[32];
	int ret;

	if (p->ring >= TRACE_MAX_STREAMS || p->len < sizeof(hdr))
		return rr_fail(err, errlen, -EINVAL, "bad packet for stream %u", p->ring);
	/* The packet as the ring held it, cut to its content. */
	hdr = p->hdr;
	hdr.packet_size = hdr.content_size = (uint64_t)p->len * 8;
	hdr.open = 0;
	/*
	 * Definitions a consumer copied for us (trace_w_defs_copy): the stream
	 * of copies is the writer's, numbered in its own sequence, and the
	 * chunks' copies come no earlier.
	 */
	if (w->o.defs && p->ring == w->o.defs_stream) {
		hdr.packet_seq_num = w->defs.seq++;
		if (w->defs.ts < hdr.timestamp_end)
			w->defs.ts = hdr.timestamp_end;
	}
	if (w->packed) {
		ret = tw_packet(w, p, &hdr, err, errlen);
		if (ret)
			return ret;
		if (p->ring >= w->nstreams)
			w->nstreams = p->ring + 1;
		w->events += p->hdr.events;
		w->staged_events += p->hdr.events;
		return 0;
	}
	if (p->ring >= w->nfds) {
		uint32_t n = p->ring + 1 > w->nfds * 2 ? p->ring + 1 : w->nfds * 2;
		int *fds = realloc(w->fds, n * sizeof(*fds));

		if (!fds)
			return rr_fail(err, errlen, -ENOMEM, "out of memory");
		w->fds = fds;
		for (uint32_t i = w->nfds; i < n; i++)
			fds[i] = -1;
		w->nfds = n;
	}
	if (p->ring >= w->nstreams)
		w->nstreams = p->ring + 1;
	tw_index_early(w); /* the packet's type named first */
	if (w->fds[p->ring] < 0) {
		snprintf(name, sizeof(name), "stream_%u", p->ring);
		ret = tr_create(w->dir, name, 0600, err, errlen);
		if (ret < 0)
			return ret;
		w->fds[p->ring] = ret;
	}
	ret = tr_write2(w->fds[p->ring], &hdr, sizeof(hdr), p->data + sizeof(hdr),
			p->len - sizeof(hdr));
	if (ret)
		return rr_fail(err, errlen, ret, "%s/stream_%u: %s", w->dir, p->ring,
			       strerror(-ret));
	w->events += p->hdr.events;
	w->bytes += p->len;
	return 0;
}

static int tr_write_index(struct trace_w *w, struct trace_info *info, char *err, size_t errlen)
{
	uint8_t *buf;
	size_t len;
	int ret;

	info->idx.flags &= ~TRACE_F_LIVE; /* the last: the recording ended */
	ret = trace_index_pack(info, &buf, &len, err, errlen);
	if (ret)
		return ret;
	ret = tw_put_index(w, buf, len, true, err, errlen);
	free(buf);
	return ret;
}

static void tw_free(struct trace_w *w)
{
	tw_reap(w, true);
	free(w->kids);
	pk_enc_free(w->enc);
	free(w->defs.tab);
	free(w->defs.buf);
	free(w->bst);
	free(w->chunks);
	free(w->fds);
	if (w->live)
		trace_info_free(w->live);
	free(w->live);
	free(w);
}

void trace_w_abort(struct trace_w *w)
{
	char path[PATH_MAX + 32];

	/*
	 * Chunks closed and counted by a .rip-index: they stay, read as those
	 * of a recorder killed (a disk that filled after a day of recording
	 * keeps the day); only the chunk open goes, which no index counts.
	 */
	if (w->packed && w->live_indexed) {
		if (w->cfd >= 0) {
			close(w->cfd);
			w->cfd = -1;
			if (!tw_chunk_path(w, w->store.nchunks - 1, path, sizeof(path)))
				unlink(path);
		}
		snprintf(path, sizeof(path), "%s/%s", w->dir, TW_INDEX_NEW);
		unlink(path);
		tw_free(w);
		return;
	}

	for (uint32_t i = 0; i < w->nfds; i++) {
		if (w->fds[i] < 0)
			continue;
		close(w->fds[i]);
		snprintf(path, sizeof(path), "%s/stream_%u", w->dir, i);
		unlink(path);
	}
	if (w->cfd >= 0) {
		close(w->cfd);
		/* the chunks handed on are their command's: only the open one goes */
		if (w->o.on_rotate && !tw_chunk_path(w, w->store.nchunks - 1, path, sizeof(path)))
			unlink(path);
	}
	for (uint32_t c = w->store.first_chunk; c < w->store.nchunks && !w->o.on_rotate; c++)
		if (!tw_chunk_path(w, c, path, sizeof(path)))
			unlink(path);
	snprintf(path, sizeof(path), "%s/%s", w->dir, TRACE_INDEX);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%s", w->dir, TW_INDEX_NEW);
	unlink(path);
	snprintf(path, sizeof(path), "%s/metadata", w->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%s", w->dir, TW_META_NEW);
	unlink(path);
	rmdir(w->dir);
	tw_free(w);
}

void trace_w_nosync(struct trace_w *w)
{
	w->nosync = true;
}

int trace_w_finish(struct trace_w *w, struct trace_info *info, char *err, size_t errlen)
{
	int ret = 0;

	if (w->packed) {
		info->idx.flags &= ~TRACE_F_LIVE;
		ret = tw_flush(w, err, errlen);
		if (!ret)
			ret = tw_close_chunk(w, info, err, errlen);
		if (ret)
			goto out_free;
		tw_reap(w, true); /* what every command did goes into the index */
		w->store.kept_bytes = w->bytes;
		ret = tw_info_fill(w, info, w->store.nchunks, err, errlen);
		if (!ret)
			ret = tr_write_index(w, info, err, errlen);
		goto out_free;
	}
	for (uint32_t i = 0; i < w->nfds; i++) {
		if (w->fds[i] >= 0 && !w->nosync && fsync(w->fds[i]) && !ret)
			ret = rr_fail(err, errlen, -errno, "%s/stream_%u: %s", w->dir, i,
				      strerror(errno));
		if (w->fds[i] >= 0)
			close(w->fds[i]);
	}
	if (ret)
		goto out_free;
	info->idx.nstreams = w->nstreams;
	info->idx.events = w->events;
	info->store.kept_bytes = w->bytes;
	ret = tw_put_metadata(w, info, true, err, errlen);
	if (!ret)
		ret = tr_write_index(w, info, err, errlen);
out_free:
	if (w->cfd >= 0)
		close(w->cfd);
	tw_free(w);
	return ret;
}

/* ---- a copy in another storage ------------------------------------------------------ */

struct tw_copy {
	struct trace_w *w;
	void (*progress)(uint64_t done, uint64_t total, void *arg);
	void *arg;
	uint64_t done, total;
	char *err;
	size_t errlen;
};

/* opts.info of a copy: the source's index (its store is the copy's own). */
static int tw_copy_info(void *arg, struct trace_info *info, char *err, size_t errlen)
{
	const struct trace_r *r = arg;
	size_t nb = (size_t)r->info.idx.nnames * sizeof(*info->names),
	       mb = (size_t)r->info.idx.nmods * sizeof(*info->mods);

	info->idx = r->info.idx;
	info->types = r->info.types;
	info->names = malloc(nb ? nb : 1);
	info->mods = malloc(mb ? mb : 1);
	if (!info->names || !info->mods)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	if (nb)
		memcpy(info->names, r->info.names, nb);
	if (mb)
		memcpy(info->mods, r->info.mods, mb);
	return 0;
}

static int tw_copy_packet(const struct ev_packet *p, void *arg)
{
	struct tw_copy *c = arg;
	int ret = trace_w_packet(c->w, p, c->err, c->errlen);

	c->done += p->len;
	if (c->progress)
		c->progress(c->done, c->total, c->arg);
	return ret;
}

/* Copy src's RR_TRACE_RING into dst's, if it has one: holes stay holes. */
static int tw_copy_ring(const char *src, const char *dst, char *err, size_t errlen)
{
	char from[PATH_MAX + 16], to[PATH_MAX + 16];
	uint8_t buf[1u << 16];
	off_t off = 0;
	int in, out, ret = 0;

	snprintf(from, sizeof(from), "%s/%s", src, RR_TRACE_RING);
	snprintf(to, sizeof(to), "%s/%s", dst, RR_TRACE_RING);
	in = open(from, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (in < 0)
		return errno == ENOENT ? 0 : rr_fail(err, errlen, -errno, "%s: %s", from,
						      strerror(errno));
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0) {
		ret = rr_fail(err, errlen, -errno, "%s: %s", to, strerror(errno));
		close(in);
		return ret;
	}
	for (;;) {
		off_t data = lseek(in, off, SEEK_DATA);
		ssize_t n;

		if (data < 0)
			break; /* holes to the end (or no SEEK_DATA: read on) */
		n = pread(in, buf, sizeof(buf), data);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (pwrite(out, buf, (size_t)n, data) != n) {
			ret = rr_fail(err, errlen, -EIO, "%s: %s", to, strerror(errno));
			break;
		}
		off = data + n;
	}
	if (!ret) {
		struct stat sb;

		if (fstat(in, &sb) || ftruncate(out, sb.st_size))
			ret = rr_fail(err, errlen, -errno, "%s: %s", to, strerror(errno));
	}
	close(in);
	close(out);
	if (ret)
		unlink(to);
	return ret;
}

/* Remove dir, which we made: the files in it, then it. */
static void tw_remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d) {
		while ((e = readdir(d)))
			if (e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")))
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	rmdir(dir);
}

int trace_w_copy(struct trace_r *r, const char *dst, const struct trace_w_opts *opts,
		 void (*progress)(uint64_t done, uint64_t total, void *arg), void *arg, char *err,
		 size_t errlen)
{
	struct tw_copy c = { .progress = progress, .arg = arg, .err = err, .errlen = errlen };
	struct trace_w_opts o;
	struct trace_info info;
	uint64_t gone_packets, gone_events;
	uint32_t gone_chunks;
	int ret;

	if (opts && !opts->ctf) { /* each chunk's tail: the source's index */
		o = *opts;
		o.info = tw_copy_info;
		o.info_arg = r;
		opts = &o;
	}
	ret = trace_w_open(dst, opts, &c.w, err, errlen);
	if (ret)
		return ret;
	c.total = trace_r_raw_bytes(r);
	for (uint32_t s = 0; s < r->info.idx.nstreams && !ret; s++)
		ret = trace_r_stream(r, s, tw_copy_packet, &c, err, errlen);
	if (ret) {
		trace_w_abort(c.w);
		return ret;
	}
	/* the index as the source's, its losses (and what its dropped chunks held) kept */
	info = r->info;
	memset(&info.store, 0, sizeof(info.store));
	info.chunks = NULL;
	trace_r_gone(r, &gone_packets, &gone_events, &gone_chunks);
	info.idx.discarded += gone_events;
	info.idx.lost_packets += gone_packets + r->skipped;
	ret = trace_w_finish(c.w, &info, err, errlen);
	free(info.chunks); /* a packed copy's, made by trace_w_finish */
	if (!ret)
		ret = tw_copy_ring(r->dir, dst, err, errlen);
	if (ret)
		tw_remove_dir(dst); /* whole but for the error: take it all away */
	return ret;
}
