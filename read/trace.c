/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/trace.c - reading recorded traces (read/trace.h): a CTF directory
 * of stream files, the TSDL metadata, and our own .rip-index; and the
 * index's contents, made from a ring file and packed, for the writers
 * (record/tracew.c, and relayd's copy in the metadata).
 *
 * Reading validates the index against its own size and every packet of a
 * stream file as it comes.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rip/resource.h>

#include "read/trace.h"

#define TRACE_MAX_NAMES (1u << 23)
#define TRACE_MAX_MODS (1u << 20)

void trace_sample_type(struct ev_type *t)
{
	memset(t, 0, sizeof(*t));
	t->valid = true;
	t->id = TRACE_SAMPLE_ID;
	t->category = RIP_CAT_SAMPLE;
	t->nfields = 1;
	snprintf(t->name, sizeof(t->name), "%s", TRACE_SAMPLE_NAME);
	snprintf(t->fields[0].name, sizeof(t->fields[0].name), "stack");
	t->fields[0].type = RIP_FT_HEX64_ARRAY;
	t->array = true;
}

/* ---- the index, from a ring file and in memory ------------------------------------ */

int trace_info_from_file(struct rr_file *f, struct trace_info *info, char *err, size_t errlen)
{
	struct rip_file_hdr *h = &info->idx.file;
	struct rr_slots slots;
	size_t nmods = 0;
	uint32_t fresh;
	uint64_t lost;
	int ret;

	memset(info, 0, sizeof(*info));
	memcpy(info->idx.magic, TRACE_MAGIC, sizeof(info->idx.magic));
	info->idx.version = TRACE_VERSION;
	info->idx.file = f->hdr;
	/* the counters as they are now, not as they were at open (the file may shrink) */
	if (rr_live_u32(f, offsetof(struct rip_file_hdr, fresh), &h->fresh, err, errlen) ||
	    rr_live_u32(f, offsetof(struct rip_file_hdr, ev_fresh), &h->ev_fresh, err, errlen) ||
	    rr_live_u32(f, offsetof(struct rip_file_hdr, proc_flags), &h->proc_flags, err, errlen) ||
	    rr_live_u64(f, offsetof(struct rip_file_hdr, exit_ts), &h->exit_ts, err, errlen) ||
	    rr_live_clock(f, h, err, errlen))
		return -EIO;
	ret = ev_read_types(f, &info->types, err, errlen);
	if (ret)
		return ret;
	ret = rr_read_modules(f, &info->mods, &nmods, err, errlen);
	if (ret)
		return ret;
	info->idx.nmods = (uint32_t)nmods;
	ret = rr_read_slots(f, &slots, err, errlen);
	if (ret)
		goto err_mods;
	info->names = calloc(slots.n ? slots.n : 1, sizeof(*info->names));
	if (!info->names) {
		ret = rr_fail(err, errlen, -ENOMEM, "out of memory");
		goto err_slots;
	}
	for (size_t i = 0; i < slots.n; i++) {
		struct trace_name *n = &info->names[i];

		n->tid = slots.v[i].tid;
		n->slot = slots.v[i].index;
		n->kind = slots.v[i].kind;
		memcpy(n->name, slots.v[i].name, sizeof(n->name));
	}
	info->idx.nnames = (uint32_t)slots.n;
	ret = -EIO;
	if (rr_live_u32(f, offsetof(struct rip_file_hdr, ev_fresh), &fresh, err, errlen))
		goto err_names;
	for (uint32_t r = 0; r < f->hdr.ev_rings && r < fresh; r++) {
		if (rr_live_u64(f, f->hdr.ev_ctl_off + (size_t)r * RIP_EVRING_SIZE +
					   offsetof(struct rip_evring, discarded),
				&lost, err, errlen))
			goto err_names;
		info->idx.discarded += lost;
	}
	/* events no ring could count: none was free, or the thread had given its back */
	if (rr_live_u64(f, offsetof(struct rip_file_hdr, ev_lost), &lost, err, errlen))
		goto err_names;
	info->idx.discarded += lost;
	rr_slots_free(&slots);
	return 0;

err_names:
	free(info->names);
	info->names = NULL;
err_slots:
	rr_slots_free(&slots);
err_mods:
	free(info->mods);
	info->mods = NULL;
	return ret;
}

void trace_info_free(struct trace_info *info)
{
	free(info->names);
	free(info->mods);
	free(info->chunks);
	info->names = NULL;
	info->mods = NULL;
	info->chunks = NULL;
	info->chunk0 = 0;
}

int trace_index_pack(struct trace_info *info, uint8_t **out, size_t *len, char *err,
		     size_t errlen)
{
	struct rip_category cats[RIP_CATEGORIES];
	struct rip_evtype e;
	const struct trace_chunk_info *kept = NULL;
	uint32_t nkept = 0;
	size_t n;
	uint8_t *buf, *p;

	/* the infos of the chunks kept only (version 3), whatever info holds more */
	if (info->store.nchunks > info->store.first_chunk) {
		kept = trace_chunk_of(info, info->store.first_chunk);
		nkept = info->store.nchunks - info->store.first_chunk;
		if (!kept)
			return rr_fail(err, errlen, -EINVAL, "index: chunks %u to %u not known",
				       info->store.first_chunk, info->store.nchunks - 1);
	}
	info->idx.ntypes = 0;
	for (uint32_t i = 0; i < EV_MAX_TYPES; i++)
		info->idx.ntypes += info->types.t[i].valid;
	info->idx.version = TRACE_VERSION;
	n = sizeof(info->idx) + (size_t)info->idx.ntypes * sizeof(e) + sizeof(cats) +
	    (size_t)info->idx.nnames * sizeof(*info->names) +
	    (size_t)info->idx.nmods * sizeof(*info->mods) + sizeof(info->store) +
	    (size_t)nkept * sizeof(*kept);
	buf = p = malloc(n);
	if (!buf)
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	memcpy(p, &info->idx, sizeof(info->idx));
	p += sizeof(info->idx);
	for (uint32_t i = 0; i < EV_MAX_TYPES; i++) {
		const struct ev_type *t = &info->types.t[i];

		if (!t->valid)
			continue;
		memset(&e, 0, sizeof(e));
		e.id = t->id;
		e.category = t->category;
		e.nfields = t->nfields;
		e.flags = t->flags;
		memcpy(e.name, t->name, sizeof(e.name));
		memcpy(e.fields, t->fields, sizeof(e.fields));
		memcpy(e.desc, t->desc, sizeof(e.desc));
		memcpy(p, &e, sizeof(e));
		p += sizeof(e);
	}
	memset(cats, 0, sizeof(cats));
	for (uint32_t i = 0; i < RIP_CATEGORIES; i++)
		memcpy(cats[i].name, info->types.cats[i], sizeof(cats[i].name));
	memcpy(p, cats, sizeof(cats));
	p += sizeof(cats);
	if (info->idx.nnames)
		memcpy(p, info->names, info->idx.nnames * sizeof(*info->names));
	p += info->idx.nnames * sizeof(*info->names);
	if (info->idx.nmods)
		memcpy(p, info->mods, info->idx.nmods * sizeof(*info->mods));
	p += info->idx.nmods * sizeof(*info->mods);
	memcpy(p, &info->store, sizeof(info->store));
	p += sizeof(info->store);
	if (nkept)
		memcpy(p, kept, nkept * sizeof(*kept));
	*out = buf;
	*len = n;
	return 0;
}

/* ---- reading ------------------------------------------------------------------------ */

static int tr_read_exact(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -ENODATA;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Is path a chunk file (a regular file that begins with a chunk's header,
 * whatever its name)?  Its header in *h, its owner in *uid and the
 * directory it is in in dir (of len bytes), or false.
 */
static bool tr_chunk_file(const char *path, struct trace_chunk_hdr *h, uid_t *uid, char *dir,
			  size_t len)
{
	const char *slash = strrchr(path, '/');
	struct stat st;
	size_t dl;
	int fd;
	bool ok;

	/* a device is not opened, even one swapped in for the name: that may do something */
	fd = rr_open_regular(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return false;
	ok = !fstat(fd, &st) && S_ISREG(st.st_mode) && !tr_read_exact(fd, h, sizeof(*h)) &&
	     !memcmp(h->magic, TRACE_CHUNK_MAGIC, sizeof(h->magic)) && h->seq < TRACE_MAX_SEQ;
	close(fd);
	*uid = st.st_uid;
	dl = slash ? (size_t)(slash - path) : 1;
	if (!ok || dl >= len || strlen(path) >= PATH_MAX)
		return false;
	if (!slash)
		memcpy(dir, ".", 1);
	else if (dl == 0) /* /chunk-NNNNNN.rpk */
		memcpy(dir, "/", (dl = 1));
	else
		memcpy(dir, path, dl);
	dir[dl] = 0;
	return true;
}

bool trace_chunk_ring(const char *path, char *ring, size_t len)
{
	struct trace_chunk_hdr h;
	char dir[PATH_MAX];
	struct stat st;
	uid_t uid;

	if (!tr_chunk_file(path, &h, &uid, dir, sizeof(dir)))
		return false;
	if (rr_path_join(ring, len, dir, RR_TRACE_RING) || lstat(ring, &st) || !S_ISREG(st.st_mode))
		ring[0] = 0;
	return true;
}

/*
 * Does directory dir hold a packed trace's first chunk but no index (its
 * recorder writes that chunk still, or was killed before it closed it)?
 */
static bool tr_first_chunk_only(const char *dir)
{
	char p[PATH_MAX];
	struct stat st;
	int n = snprintf(p, sizeof(p), "%s/" TRACE_CHUNK_NAME, dir, 0u);

	return n > 0 && (size_t)n < sizeof(p) && lstat(p, &st) == 0 && S_ISREG(st.st_mode);
}

bool trace_is_dir(const char *path)
{
	char p[PATH_MAX], d[PATH_MAX];
	struct trace_chunk_hdr h;
	struct stat st;
	uid_t uid;
	int n;

	if (tr_chunk_file(path, &h, &uid, d, sizeof(d)))
		return true; /* read with its directory's index, or with its own */
	n = snprintf(p, sizeof(p), "%s/%s", path, TRACE_INDEX);
	if (n <= 0 || (size_t)n >= sizeof(p) || stat(path, &st) || !S_ISDIR(st.st_mode))
		return false;
	if (lstat(p, &st) == 0 && S_ISREG(st.st_mode))
		return true;
	/* a copy without it (relayd's): trace_r_open looks for the index in the metadata */
	n = snprintf(p, sizeof(p), "%s/metadata", path);
	if (n > 0 && (size_t)n < sizeof(p) && lstat(p, &st) == 0 && S_ISREG(st.st_mode))
		return true;
	/*
	 * A first chunk with no index yet: trace_r_open says why.  With a ring
	 * file beside it too (an index lost, a copy without it), for the events
	 * are in the chunks: the ring file read instead said "0 events".
	 */
	return tr_first_chunk_only(path);
}

/* The whole of a regular file (at most max bytes) into memory. */
static int tr_slurp(const char *path, uint64_t max, uid_t owner, uint8_t **out, size_t *len,
		    char *err, size_t errlen)
{
	struct stat st;
	uint8_t *buf;
	int fd, ret;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return rr_fail(err, errlen, -EINVAL, "%s: not a regular file", path);
	}
	if (owner != (uid_t)-1 && st.st_uid != owner) {
		close(fd);
		return rr_fail(err, errlen, -EPERM, "%s: owned by another user", path);
	}
	if ((uint64_t)st.st_size > max) {
		close(fd);
		return rr_fail(err, errlen, -EFBIG, "%s: too big (%llu bytes)", path,
			       (unsigned long long)st.st_size);
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	}
	ret = tr_read_exact(fd, buf, (size_t)st.st_size);
	close(fd);
	if (ret) {
		free(buf);
		return rr_fail(err, errlen, -EBADMSG, "%s: changed while being read", path);
	}
	buf[st.st_size] = 0;
	*out = buf;
	*len = (size_t)st.st_size;
	return 0;
}

/* Take len bytes from the index at *p (end at end); false when it is shorter. */
static bool tr_take(const uint8_t **p, const uint8_t *end, void *dst, size_t len)
{
	if ((size_t)(end - *p) < len)
		return false;
	memcpy(dst, *p, len);
	*p += len;
	return true;
}

/* Validate and load the index bytes (from .rip-index or the metadata); path names them. */
static int tr_parse_index(struct trace_r *r, const uint8_t *buf, size_t len, const char *path,
			  char *err, size_t errlen)
{
	struct trace_index_hdr *h = &r->info.idx;
	struct rip_category cats[RIP_CATEGORIES];
	const uint8_t *p = buf, *end = buf + len;
	char why[RR_ERR_MAX];
	uint32_t ninfo = 0;
	uint64_t need;
	int ret;

	if (!tr_take(&p, end, h, sizeof(*h)))
		return rr_fail(err, errlen, -EBADMSG, "%s: truncated index", path);
	if (memcmp(h->magic, TRACE_MAGIC, sizeof(h->magic)))
		return rr_fail(err, errlen, -EBADMSG, "%s: not a rip trace index (bad magic)", path);
	if (h->version > TRACE_VERSION)
		return rr_fail(err, errlen, -EPROTONOSUPPORT,
			       "%s: trace format %u is newer than this rip understands (%u): use a "
			       "newer rip",
			       path, h->version, TRACE_VERSION);
	if (h->ntypes > EV_MAX_TYPES || h->nnames > TRACE_MAX_NAMES || h->nmods > TRACE_MAX_MODS ||
	    h->nstreams > TRACE_MAX_STREAMS || !h->file.clock_hz ||
	    (h->file.clock_kind != RIP_CLOCK_TSC && h->file.clock_kind != RIP_CLOCK_MONO_RAW))
		return rr_fail(err, errlen, -EBADMSG, "%s: corrupt index (counts out of range)",
			       path);
	ret = rr_check_clock(&h->file, why, sizeof(why));
	if (ret)
		return rr_fail(err, errlen, ret, "%s: %s", path, why);
	need = sizeof(*h) + (uint64_t)h->ntypes * sizeof(struct rip_evtype) + sizeof(cats) +
	       (uint64_t)h->nnames * sizeof(struct trace_name) +
	       (uint64_t)h->nmods * sizeof(struct rip_module);
	if (h->version >= 2) { /* the store, and its count of chunks at the store's start */
		struct trace_store st;

		need += sizeof(st);
		if (len >= need) {
			memcpy(&st, buf + need - sizeof(st), sizeof(st));
			ninfo = h->version >= 3 && st.first_chunk <= st.nchunks
					? st.nchunks - st.first_chunk
					: st.nchunks;
			if (ninfo > TRACE_MAX_CHUNKS || st.nchunks > TRACE_MAX_SEQ)
				return rr_fail(err, errlen, -EBADMSG,
					       "%s: corrupt index (%u chunks)", path, st.nchunks);
			need += (uint64_t)ninfo * sizeof(struct trace_chunk_info);
		}
	}
	if ((uint64_t)len != need)
		return rr_fail(err, errlen, -EBADMSG,
			       "%s: corrupt index: %llu bytes, its counts say %llu", path,
			       (unsigned long long)len, (unsigned long long)need);
	for (uint32_t i = 0; i < h->ntypes; i++) {
		struct rip_evtype e;
		struct ev_type t;

		if (!tr_take(&p, end, &e, sizeof(e)) || ev_type_load(&e, &t))
			return rr_fail(err, errlen, -EBADMSG, "%s: corrupt event type %u", path, i);
		if (!r->info.types.t[t.id].valid) {
			r->info.types.t[t.id] = t;
			r->info.types.count++;
		}
	}
	if (!tr_take(&p, end, cats, sizeof(cats)))
		return rr_fail(err, errlen, -EBADMSG, "%s: truncated index", path);
	for (uint32_t i = 0; i < RIP_CATEGORIES; i++) {
		memcpy(r->info.types.cats[i], cats[i].name, RIP_CATEGORY_NAME_MAX);
		r->info.types.cats[i][RIP_CATEGORY_NAME_MAX - 1] = 0;
	}
	r->info.names = calloc(h->nnames ? h->nnames : 1, sizeof(*r->info.names));
	r->info.mods = calloc(h->nmods ? h->nmods : 1, sizeof(*r->info.mods));
	if (!r->info.names || !r->info.mods) {
		trace_info_free(&r->info);
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	}
	if (!tr_take(&p, end, r->info.names, (size_t)h->nnames * sizeof(*r->info.names)) ||
	    !tr_take(&p, end, r->info.mods, (size_t)h->nmods * sizeof(*r->info.mods)) ||
	    (h->version >= 2 && !tr_take(&p, end, &r->info.store, sizeof(r->info.store)))) {
		trace_info_free(&r->info);
		return rr_fail(err, errlen, -EBADMSG, "%s: truncated index", path);
	}
	if (r->info.store.first_chunk > r->info.store.nchunks) {
		trace_info_free(&r->info);
		return rr_fail(err, errlen, -EBADMSG, "%s: corrupt index (storage out of range)",
			       path);
	}
	r->info.chunk0 = h->version >= 3 ? r->info.store.first_chunk : 0;
	if (ninfo) {
		r->info.chunks = calloc(ninfo, sizeof(*r->info.chunks));
		if (!r->info.chunks ||
		    !tr_take(&p, end, r->info.chunks, ninfo * sizeof(*r->info.chunks))) {
			trace_info_free(&r->info);
			return rr_fail(err, errlen, r->info.chunks ? -EBADMSG : -ENOMEM,
				       "%s: %s", path,
				       r->info.chunks ? "truncated index" : "out of memory");
		}
	}
	if (r->info.store.format > TRACE_STORE_PACKED ||
	    r->info.store.nchunks > (h->version >= 3 ? TRACE_MAX_SEQ : TRACE_MAX_CHUNKS)) {
		trace_info_free(&r->info);
		return rr_fail(err, errlen, -EBADMSG, "%s: corrupt index (storage out of range)",
			       path);
	}
	for (uint32_t i = 0; i < h->nnames; i++)
		r->info.names[i].name[RIP_NAME_MAX - 1] = 0;
	for (uint32_t i = 0; i < h->nmods; i++) {
		r->info.mods[i].path[RIP_MODULE_PATH_MAX - 1] = 0;
		if (r->info.mods[i].build_id_len > RIP_BUILD_ID_MAX)
			r->info.mods[i].build_id_len = 0;
	}
	h->file.boot_id[sizeof(h->file.boot_id) - 1] = 0;
	h->file.comm[sizeof(h->file.comm) - 1] = 0;
	h->file.exe[sizeof(h->file.exe) - 1] = 0;
	h->file.host[sizeof(h->file.host) - 1] = 0;
	return 0;
}

/* After the index: a packed trace's chunks (an index that failed is freed). */
/*
 * A CTF trace read while its recording went on, or whose recorder was
 * killed (TRACE_F_LIVE): its index counts the streams as they were when it
 * was written (the recorder does not write it anew for new threads), and
 * the stream files of threads that came since are read too.
 */
static void tr_ctf_live_streams(struct trace_r *r)
{
	DIR *d;
	struct dirent *de;

	if (r->info.store.format == TRACE_STORE_PACKED || !(r->info.idx.flags & TRACE_F_LIVE) ||
	    !(d = opendir(r->dir)))
		return;
	while ((de = readdir(d))) {
		char *end;
		unsigned long n;

		if (strncmp(de->d_name, "stream_", 7) || !isdigit((unsigned char)de->d_name[7]))
			continue;
		n = strtoul(de->d_name + 7, &end, 10);
		if (!*end && n < TRACE_MAX_STREAMS && n >= r->info.idx.nstreams)
			r->info.idx.nstreams = (uint32_t)n + 1;
	}
	closedir(d);
}

static int tr_open_packed(struct trace_r *r, char *err, size_t errlen)
{
	int ret;

	tr_ctf_live_streams(r);
	ret = trace_pk_open(r, err, errlen);

	if (ret)
		trace_info_free(&r->info);
	return ret;
}

/* The most an index may hold: what tr_parse_index would accept. */
static uint64_t tr_index_max(void)
{
	return sizeof(struct trace_index_hdr) + (uint64_t)EV_MAX_TYPES * sizeof(struct rip_evtype) +
	       sizeof(struct rip_category) * RIP_CATEGORIES +
	       (uint64_t)TRACE_MAX_NAMES * sizeof(struct trace_name) +
	       (uint64_t)TRACE_MAX_MODS * sizeof(struct rip_module) + sizeof(struct trace_store) +
	       (uint64_t)TRACE_MAX_CHUNKS * sizeof(struct trace_chunk_info);
}

/* Is the index loaded in r that of the packed trace chunk h is of, and does it count h? */
static bool tr_index_counts(const struct trace_r *r, const struct trace_chunk_hdr *h)
{
	const struct trace_store *s = &r->info.store;

	return s->format == TRACE_STORE_PACKED && s->trace_id == h->trace_id &&
	       h->seq >= s->first_chunk && h->seq < s->nchunks;
}

/*
 * The index of chunk file r->file alone (header h, read): its directory's
 * .rip-index when that is its trace's and counts it (a chunk of a trace
 * being recorded or ended, read where it was written), else the one in its
 * tail (a chunk handed on, anywhere: it carries its trace's index as it was
 * when the chunk was closed).  Then its records.  The directory may be
 * shared (a spool the chunks are handed to): its .rip-index is taken only
 * when the chunk's owner (uid) owns it too, else another user's would
 * describe the chunk's events.
 */
static int tr_open_chunk(struct trace_r *r, const struct trace_chunk_hdr *h, uid_t uid, char *err,
			 size_t errlen)
{
	char path[PATH_MAX + 16], why[RR_ERR_MAX], name[PATH_MAX + 32];
	struct trace_chunk_tail t;
	struct stat st;
	uint8_t *buf = NULL;
	size_t len = 0;
	ssize_t got;
	int fd, ret;

	snprintf(path, sizeof(path), "%s/%s", r->dir, TRACE_INDEX);
	if (!tr_slurp(path, tr_index_max(), uid, &buf, &len, why, sizeof(why)) &&
	    !tr_parse_index(r, buf, len, path, why, sizeof(why)) && tr_index_counts(r, h)) {
		free(buf);
		return tr_open_packed(r, err, errlen);
	}
	free(buf);
	buf = NULL;
	trace_info_free(&r->info);
	memset(&r->info, 0, sizeof(r->info));
	fd = open(r->file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return rr_fail(err, errlen, -errno, "%s: %s", r->file, strerror(errno));
	ret = fstat(fd, &st) ? -errno : trace_pk_tail(fd, (uint64_t)st.st_size, h->version, &t);
	if (ret < 0) {
		close(fd);
		return rr_fail(err, errlen, ret, "%s: %s", r->file, strerror(-ret));
	}
	if (!ret) {
		close(fd);
		return rr_fail(err, errlen, -ENOENT,
			       "%s: chunk %u of a trace, with no index of its own (%s) and none in "
			       "%s that counts it: read it with its trace",
			       r->file, h->seq,
			       h->version < 2 ? "written by an older rip"
					      : "not closed: its recording goes on, or was killed",
			       r->dir);
	}
	buf = malloc(t.index_len ? t.index_len : 1);
	if (!buf) {
		close(fd);
		return rr_fail(err, errlen, -ENOMEM, "out of memory");
	}
	got = pread(fd, buf, t.index_len, (off_t)t.index_off);
	close(fd);
	if (got < 0 || (uint64_t)got != t.index_len) {
		free(buf);
		return rr_fail(err, errlen, -EBADMSG, "%s: changed while being read", r->file);
	}
	snprintf(name, sizeof(name), "%s (its index)", r->file);
	ret = tr_parse_index(r, buf, t.index_len, name, err, errlen);
	free(buf);
	if (ret) {
		trace_info_free(&r->info);
		return ret;
	}
	if (!tr_index_counts(r, h)) {
		trace_info_free(&r->info);
		return rr_fail(err, errlen, -EBADMSG,
			       "%s: the index in its tail is not of this chunk's trace, or does not "
			       "count it",
			       r->file);
	}
	return tr_open_packed(r, err, errlen);
}

int trace_r_open(const char *dir, struct trace_r *r, char *err, size_t errlen)
{
	char path[PATH_MAX + 16], why[RR_ERR_MAX];
	struct trace_chunk_hdr ch;
	uid_t uid;
	uint8_t *buf = NULL, *idx = NULL;
	size_t len = 0, ilen = 0;
	int ret, n;

	memset(r, 0, sizeof(*r));
	if (strlen(dir) >= sizeof(r->dir))
		return rr_fail(err, errlen, -ENAMETOOLONG, "%s: path too long", dir);
	snprintf(r->dir, sizeof(r->dir), "%s", dir);
	if (tr_chunk_file(dir, &ch, &uid, r->dir, sizeof(r->dir))) {
		snprintf(r->file, sizeof(r->file), "%s", dir);
		r->only = ch.seq + 1;
		return tr_open_chunk(r, &ch, uid, err, errlen);
	}
	n = snprintf(path, sizeof(path), "%s/%s", dir, TRACE_INDEX);
	if (n < 0 || (size_t)n >= sizeof(path))
		return rr_fail(err, errlen, -ENAMETOOLONG, "%s: path too long", dir);
	ret = tr_slurp(path, /* a directory named: its index, whoever owns it */
		       sizeof(struct trace_index_hdr) +
			       (uint64_t)EV_MAX_TYPES * sizeof(struct rip_evtype) +
			       sizeof(struct rip_category) * RIP_CATEGORIES +
			       (uint64_t)TRACE_MAX_NAMES * sizeof(struct trace_name) +
			       (uint64_t)TRACE_MAX_MODS * sizeof(struct rip_module),
		       (uid_t)-1, &buf, &len, err, errlen);
	if (ret == -ENOENT) {
		/* a copy without our index (relayd's): the metadata carries it */
		int e;

		snprintf(path, sizeof(path), "%s/metadata", dir);
		e = tr_slurp(path, CTF_INDEX_MAX * 2, (uid_t)-1, &buf, &len, err, errlen);
		if (e == -ENOENT && tr_first_chunk_only(dir))
			return rr_fail(err, errlen, -ENOENT,
				       "%s: no index (.rip-index): its recorder is writing its "
				       "first chunk, or was killed before it closed it (the index "
				       "is written as each chunk closes; --rotate or --max-size "
				       "close them sooner), or this is a copy without its hidden "
				       "files (copy the directory, cp -a DIR, not DIR/*; a closed "
				       "chunk is read alone: %s/chunk-000000.rpk)",
				       dir, dir);
		if (e == -ENOENT || e == -ENOTDIR)
			return rr_fail(err, errlen, -ENOENT, "%s: not a rip trace (%s)", dir,
				       strerror(ENOENT));
		if (e < 0 && e != -EFBIG && e != -EINVAL && e != -EBADMSG && e != -ENOMEM)
			return rr_fail(err, errlen, e, "%s: not a rip trace (%s)", dir,
				       strerror(-e));
		if (e)
			return e;
		e = ctf_read_index((const char *)buf, len, &idx, &ilen, why, sizeof(why));
		free(buf);
		if (e == -ENOENT)
			return rr_fail(err, errlen, -ENOENT,
				       "%s: not a rip trace (no .rip-index, and its metadata "
				       "carries none)",
				       dir);
		if (e)
			return rr_fail(err, errlen, e, "%s: %s", path, why);
		ret = tr_parse_index(r, idx, ilen, path, err, errlen);
		free(idx);
		return ret ? ret : tr_open_packed(r, err, errlen);
	}
	if (ret < 0 && ret != -EFBIG && ret != -EINVAL && ret != -EBADMSG && ret != -ENOMEM)
		return rr_fail(err, errlen, ret, "%s: not a rip trace (%s)", dir, strerror(-ret));
	if (ret)
		return ret;
	ret = tr_parse_index(r, buf, len, path, err, errlen);
	free(buf);
	return ret ? ret : tr_open_packed(r, err, errlen);
}

void trace_r_close(struct trace_r *r)
{
	trace_pk_close(r);
	trace_info_free(&r->info);
}

/*
 * The last packet of a stream file runs past its end (hdr: its header,
 * NULL: the header is cut too).  In a trace read while its recording went
 * on, or whose recorder was killed (TRACE_F_LIVE), that is the packet being
 * written: the stream ends before it, counted in the index as lost (with
 * its events when its header says), so that a copy counts it.  True then;
 * false in a finished trace, where it is damage.
 */
static bool tr_live_cut(struct trace_r *r, const struct rip_packet *hdr)
{
	if (!(r->info.idx.flags & TRACE_F_LIVE))
		return false;
	r->info.idx.lost_packets++;
	if (hdr)
		r->info.idx.discarded += hdr->events;
	return true;
}

/* trace_r_stream of a packed trace: the same checks, packets from the chunks. */
static int tr_stream_packed(struct trace_r *r, uint32_t stream, ev_packet_cb cb, void *arg,
			    char *err, size_t errlen)
{
	uint64_t n = trace_r_npackets(r, stream), expect_seq = 0;
	char why[256];
	int ret = 0;

	for (uint64_t k = 0; k < n && !ret; k++) {
		const uint8_t *data;
		struct ev_packet p;
		size_t len;

		memset(&p, 0, sizeof(p));
		ret = trace_r_packet(r, stream, k, &data, &len, err, errlen);
		if (ret == TRACE_R_DAMAGED && r->skip_damaged) {
			r->skipped++; /* the next one's sequence number says it is missing */
			ret = 0;
			continue;
		}
		if (ret)
			break;
		if (len < sizeof(p.hdr)) {
			ret = rr_fail(why, sizeof(why), -EBADMSG, "shorter than its header");
		} else {
			memcpy(&p.hdr, data, sizeof(p.hdr));
			ret = ev_check_packet(&p.hdr, len, why, sizeof(why));
		}
		if (!ret && (p.hdr.content_size != p.hdr.packet_size ||
			     p.hdr.content_size / 8 != len || p.hdr.stream_instance_id != stream))
			ret = rr_fail(why, sizeof(why), -EBADMSG, "packet does not belong here");
		if (!ret && k && p.hdr.packet_seq_num < expect_seq)
			ret = rr_fail(why, sizeof(why), -EBADMSG, "packet sequence goes back");
		if (!ret) {
			ret = ev_decode(&r->info.types, data, len, p.hdr.timestamp_begin, NULL, NULL,
					why, sizeof(why));
			if (ret >= 0 && (uint32_t)ret != p.hdr.events)
				ret = rr_fail(why, sizeof(why), -EBADMSG,
					      "packet says %u events, holds %d", p.hdr.events, ret);
			ret = ret < 0 ? ret : 0;
		}
		if (ret)
			return rr_fail(err, errlen, -EBADMSG, "%s: stream %u, packet %" PRIu64 ": %s",
				       r->dir, stream, k, why);
		p.len = len;
		p.ring = stream;
		p.data = (uint8_t *)data;
		ret = cb(&p, arg);
		expect_seq = p.hdr.packet_seq_num + 1;
	}
	return ret;
}

int trace_r_stream(struct trace_r *r, uint32_t stream, ev_packet_cb cb, void *arg, char *err,
		   size_t errlen)
{
	char path[PATH_MAX], why[256];
	uint64_t off = 0, expect_seq = 0;
	struct stat st;
	int fd, ret = 0, n;
	bool first = true;

	if (r->pk)
		return tr_stream_packed(r, stream, cb, arg, err, errlen);
	n = snprintf(path, sizeof(path), "%s/stream_%u", r->dir, stream);
	if (n < 0 || (size_t)n >= sizeof(path))
		return rr_fail(err, errlen, -ENAMETOOLONG, "%s: path too long", r->dir);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0; /* a ring that never wrote a packet */
		return rr_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		ret = rr_fail(err, errlen, -EINVAL, "%s: not a regular file", path);
		goto out_close;
	}
	while (off < (uint64_t)st.st_size) {
		struct ev_packet p;
		uint64_t left = (uint64_t)st.st_size - off;

		memset(&p, 0, sizeof(p));
		if (left < sizeof(p.hdr) && tr_live_cut(r, NULL))
			break;
		if (left < sizeof(p.hdr)) {
			ret = rr_fail(err, errlen, -EBADMSG, "%s: truncated packet at byte %llu",
				      path, (unsigned long long)off);
			break;
		}
		ret = tr_read_exact(fd, &p.hdr, sizeof(p.hdr));
		if (ret)
			break;
		if (p.hdr.magic == RIP_CTF_MAGIC && p.hdr.content_size / 8 > left &&
		    tr_live_cut(r, &p.hdr))
			break;
		ret = ev_check_packet(&p.hdr, left > (1u << 30) ? (1u << 30) : (size_t)left, why,
				      sizeof(why));
		if (!ret && (p.hdr.content_size != p.hdr.packet_size ||
			     p.hdr.stream_instance_id != stream))
			ret = rr_fail(why, sizeof(why), -EBADMSG, "packet does not belong here");
		if (!ret && !first && p.hdr.packet_seq_num < expect_seq)
			ret = rr_fail(why, sizeof(why), -EBADMSG, "packet sequence goes back");
		if (ret) {
			ret = rr_fail(err, errlen, -EBADMSG, "%s: byte %llu: %s", path,
				      (unsigned long long)off, why);
			break;
		}
		p.len = p.hdr.content_size / 8;
		p.ring = stream;
		p.data = malloc(p.len);
		if (!p.data) {
			ret = rr_fail(err, errlen, -ENOMEM, "out of memory");
			break;
		}
		memcpy(p.data, &p.hdr, sizeof(p.hdr));
		ret = tr_read_exact(fd, p.data + sizeof(p.hdr), p.len - sizeof(p.hdr));
		if (!ret) {
			ret = ev_decode(&r->info.types, p.data, p.len, p.hdr.timestamp_begin, NULL,
					NULL, why, sizeof(why));
			if (ret >= 0 && (uint32_t)ret != p.hdr.events)
				ret = rr_fail(why, sizeof(why), -EBADMSG,
					      "packet says %u events, holds %d", p.hdr.events, ret);
			ret = ret < 0 ? rr_fail(err, errlen, -EBADMSG, "%s: packet at byte %llu: %s",
						path, (unsigned long long)off, why)
				      : 0;
		} else {
			ret = rr_fail(err, errlen, -EBADMSG, "%s: truncated packet at byte %llu",
				      path, (unsigned long long)off);
		}
		if (!ret)
			ret = cb(&p, arg);
		free(p.data);
		if (ret)
			break;
		off += p.len;
		expect_seq = p.hdr.packet_seq_num + 1;
		first = false;
	}
out_close:
	close(fd);
	return ret;
}
