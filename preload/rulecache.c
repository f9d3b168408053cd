// SPDX-License-Identifier: Apache-2.0
/*
 * preload/rulecache.c - unwind rules shared by the processes of one
 * `rip run` through files, so that a program run again and again (a
 * compiler under make) does not compute the same rules in every process.
 *
 * unwind.c computes the rule of each return address from the object's
 * .eh_frame once per process: for gcc's cc1, 3,720 rules at ~3,100
 * instructions each, 11.5M of the 41.5M instructions tracing added to it,
 * and each of a make's 24 cc1 processes computed the same ones.  A rule
 * depends only on the object's bytes and the address's offset in it, so
 * rules are kept per object, named by its GNU build ID, in RIP_RULE_CACHE
 * (a private directory `rip run` makes in its ring directory and removes
 * after): the file DIR/BUILDID holds (offset, rule) pairs.
 *
 * A process loads an object's file the first time it computes a rule in
 * that object (raw system calls; no lock, no allocation: the arrays live
 * in an arena mapped at start), and looks every rule up there before
 * computing it.  What it computes is appended to the object's list of new
 * rules; at exit, if there are enough of them, it writes the file again,
 * old rules and new sorted by offset, to a temporary name and renames it
 * into place (the last writer wins; each file holds everything its writer
 * knew).  No thread waits for another: a thread that finds an object
 * being set up by another computes as before.
 *
 * The files are opened, read and written by the watcher thread when it
 * runs (watch.c: rip_pl_watch_file_read and _write), in its own descriptor
 * table, so that they never take a number of the program's; only without
 * one (a single-threaded program, RIP_WATCH=0) or when it does not answer
 * in time does the process do it here.
 *
 * Files are read as hostile: a wrong size, magic, build ID, offset past the
 * object or a zero rule and the file (or the entry) is ignored.  A wrong
 * rule can only give wrong frames: every load the walk makes is checked
 * against the thread's stack.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"
#include "unwind.h"
#include "watch.h"

#define RIP_PL_RC_OBJS 64u	      /* objects a process keeps rules of */
#define RIP_PL_RC_ADD 16384u	      /* new rules kept per object */
#define RIP_PL_RC_MAX (1u << 20)      /* rules in a file, at most */
#define RIP_PL_RC_ARENA (64ull << 20) /* the arena (memory only where written) */
#define RIP_PL_RC_WRITE_MIN 32u	      /* new rules from which a process writes a file again */
#define RIP_PL_RC_BID_MAX 32u	      /* bytes of a build ID kept */

static const char rip_pl_rc_magic[8] = { 'R', 'I', 'P', 'R', 'U', 'L', 'E', '1' };

/* The file: this header, then n entries. */
struct rip_pl_rc_hdr {
	char magic[8];
	uint32_t n;
	uint32_t bidlen;
	uint8_t bid[RIP_PL_RC_BID_MAX];
};

struct rip_pl_rc_ent {
	uint64_t off;  /* the return address less the object's load bias */
	uint64_t rule; /* unwind.c's; 0: not written yet (a new entry being added) */
};

_Static_assert(sizeof(struct rip_pl_rc_hdr) == 48 && sizeof(struct rip_pl_rc_ent) == 16,
	       "the rule cache file's layout");

enum {
	RIP_PL_RC_SETUP,
	RIP_PL_RC_READY,
	RIP_PL_RC_NONE
};

struct rip_pl_rc_obj {
	uintptr_t start; /* dlfo_map_start; 0: a free slot (claimed by CAS) */
	uintptr_t bias;	 /* the object's load bias: offsets are pc - bias */
	uintptr_t lo;	 /* the offsets of its mapping: [lo, hi] (a return address may be its end) */
	uintptr_t hi;
	uint32_t state;	 /* RIP_PL_RC_*: released once the fields below are set */
	uint32_t epoch;	 /* the dlclose epoch at setup: another one, and the slot is stale */
	uint32_t bidlen;
	uint8_t bid[RIP_PL_RC_BID_MAX];
	const struct rip_pl_rc_ent *old; /* loaded, sorted by offset */
	uint32_t nold;
	struct rip_pl_rc_ent *add; /* computed here, RIP_PL_RC_ADD at most */
	uint32_t nadd;		   /* taken (may pass RIP_PL_RC_ADD: then full) */
};

static struct rip_pl_rc_obj rip_pl_rc_objs[RIP_PL_RC_OBJS];
static char rip_pl_rc_dir[256]; /* RIP_RULE_CACHE; empty: off */
static char *rip_pl_rc_arena;
static uint64_t rip_pl_rc_used; /* bytes of the arena handed out */

/* Bytes of the arena, 64-byte aligned, or NULL when it is used up. */
static void *rip_pl_rc_alloc(uint64_t len)
{
	uint64_t at;

	len = (len + 63) & ~63ull;
	/* Relaxed: a bump counter; the memory is zero and each part has one owner. */
	at = __atomic_fetch_add(&rip_pl_rc_used, len, __ATOMIC_RELAXED);
	if (at > RIP_PL_RC_ARENA || len > RIP_PL_RC_ARENA - at)
		return NULL;
	return rip_pl_rc_arena + at;
}

/* The GNU build ID of the object whose ELF header is at base (its first page). */
static uint32_t rip_pl_rc_build_id(uintptr_t base, uintptr_t bias, uintptr_t end, uint8_t *out)
{
	unsigned nph;
	const ElfW(Phdr) *ph = rip_pl_elf_phdrs(base, &nph);

	if (!ph)
		return 0;
	for (unsigned i = 0; i < nph; i++) {
		uintptr_t p = bias + ph[i].p_vaddr, e = p + ph[i].p_filesz;

		if (ph[i].p_type != PT_NOTE || p < base || e > end || e < p)
			continue;
		while (e - p >= sizeof(ElfW(Nhdr))) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			uintptr_t name = p + sizeof(*nh);
			uint64_t nsz = ((uint64_t)nh->n_namesz + 3) & ~3ull;
			uint64_t dsz = ((uint64_t)nh->n_descsz + 3) & ~3ull;

			if (nsz > e - name || dsz > e - name - nsz)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp((const void *)name, "GNU", 4) && nh->n_descsz >= 8 &&
			    nh->n_descsz <= RIP_PL_RC_BID_MAX) {
				memcpy(out, (const void *)(name + nsz), nh->n_descsz);
				return nh->n_descsz;
			}
			p = name + nsz + dsz;
		}
	}
	return 0;
}

/* DIR/HEX (tmp: DIR/.HEX.PID) into path. */
static void rip_pl_rc_path(char *path, const struct rip_pl_rc_obj *o, bool tmp)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = strlen(rip_pl_rc_dir);

	memcpy(path, rip_pl_rc_dir, n);
	path[n++] = '/';
	if (tmp)
		path[n++] = '.';
	for (uint32_t i = 0; i < o->bidlen; i++) {
		path[n++] = hex[o->bid[i] >> 4];
		path[n++] = hex[o->bid[i] & 15];
	}
	if (tmp) {
		unsigned long pid = (unsigned long)syscall(SYS_getpid);
		char d[24];
		int k = 0;

		path[n++] = '.';
		do
			d[k++] = (char)('0' + pid % 10);
		while ((pid /= 10));
		while (k)
			path[n++] = d[--k];
	}
	path[n] = 0;
}

/* Sift v[r] down the heap v[0 .. n). */
static void rip_pl_rc_sift(struct rip_pl_rc_ent *v, uint32_t r, uint32_t n)
{
	for (;;) {
		uint32_t c = 2 * r + 1;
		struct rip_pl_rc_ent t;

		if (c >= n)
			return;
		if (c + 1 < n && v[c + 1].off > v[c].off)
			c++;
		if (v[r].off >= v[c].off)
			return;
		t = v[r];
		v[r] = v[c];
		v[c] = t;
		r = c;
	}
}

/* Sort v[0 .. n) by offset: a heap sort (qsort may allocate). */
static void rip_pl_rc_sort(struct rip_pl_rc_ent *v, uint32_t n)
{
	for (uint32_t s = n / 2; s-- > 0;)
		rip_pl_rc_sift(v, s, n);
	for (uint32_t end = n; end-- > 1;) {
		struct rip_pl_rc_ent t = v[0];

		v[0] = v[end];
		v[end] = t;
		rip_pl_rc_sift(v, 0, end);
	}
}

/* Is h the header of o's file, one of size bytes? */
static bool rip_pl_rc_hdr_ok(const struct rip_pl_rc_obj *o, const struct rip_pl_rc_hdr *h,
			     uint64_t size)
{
	return size >= sizeof(*h) && !memcmp(h->magic, rip_pl_rc_magic, sizeof(h->magic)) &&
	       h->n <= RIP_PL_RC_MAX && h->bidlen == o->bidlen &&
	       !memcmp(h->bid, o->bid, o->bidlen) &&
	       size == sizeof(*h) + (uint64_t)h->n * sizeof(struct rip_pl_rc_ent);
}

/* Keep o's loaded entries v[0 .. n) that can be right, sorted, as o->old. */
static void rip_pl_rc_keep(struct rip_pl_rc_obj *o, struct rip_pl_rc_ent *v, uint32_t n)
{
	uint32_t k = 0;

	/* keep the entries that can be right: inside the object, a rule */
	for (uint32_t i = 0; i < n; i++)
		if (v[i].off >= o->lo && v[i].off <= o->hi && v[i].rule)
			v[k++] = v[i];
	/* written sorted (rip_pl_rc_write); a file that is not gets sorted here */
	for (uint32_t i = 1; i < k; i++) {
		if (v[i - 1].off > v[i].off) {
			rip_pl_rc_sort(v, k);
			break;
		}
	}
	o->old = v;
	o->nold = k;
}

/*
 * Load o's file at path here, in the program's descriptor table: only
 * when no watcher runs (a single-threaded program, RIP_WATCH=0) or none
 * answered in time (rip_pl_rc_load).
 */
static void rip_pl_rc_load_here(struct rip_pl_rc_obj *o, const char *path)
{
	struct rip_pl_rc_hdr h;
	struct rip_pl_rc_ent *v;
	struct stat st;
	size_t len;
	long fd, got;

	fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	if (syscall(SYS_fstat, fd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_uid != (uid_t)syscall(SYS_geteuid) || (size_t)st.st_size < sizeof(h) ||
	    syscall(SYS_read, fd, &h, sizeof(h)) != (long)sizeof(h) ||
	    !rip_pl_rc_hdr_ok(o, &h, (uint64_t)st.st_size))
		goto out_close;
	len = (size_t)h.n * sizeof(*v);
	v = len ? rip_pl_rc_alloc(len) : NULL;
	if (!v)
		goto out_close;
	for (size_t at = 0; at < len; at += (size_t)got) {
		got = syscall(SYS_read, fd, (char *)v + at, len - at);
		if (got <= 0)
			goto out_close; /* the arena's bytes are lost: a rare failure */
	}
	rip_pl_rc_keep(o, v, h.n);
out_close:
	syscall(SYS_close, fd);
}

/*
 * Load o's file, if there is a good one, into o->old.  The watcher reads
 * it when it runs, in its own descriptor table: read here, the file's
 * descriptor would take the lowest free number of the program's table
 * for a moment, where another thread's open, dup or close_range expects
 * its own (tests/integ/trust-rulecachefd).  Two requests: the header and
 * the size, then, in the arena, the whole file again, which must be the
 * same size and header (else it was replaced meanwhile: not used).
 */
static void rip_pl_rc_load(struct rip_pl_rc_obj *o)
{
	char path[sizeof(rip_pl_rc_dir) + 2 * RIP_PL_RC_BID_MAX + 32];
	struct rip_pl_rc_hdr h;
	uint64_t size = 0, again = 0;
	size_t len;
	char *b;
	long got;

	rip_pl_rc_path(path, o, false);
	got = rip_pl_watch_file_read(path, &h, sizeof(h), &size);
	if (got == -EAGAIN) {
		rip_pl_rc_load_here(o, path);
		return;
	}
	if (got != (long)sizeof(h) || !rip_pl_rc_hdr_ok(o, &h, size) || !h.n)
		return;
	len = sizeof(h) + (size_t)h.n * sizeof(struct rip_pl_rc_ent);
	b = rip_pl_rc_alloc(len); /* 64-byte aligned: the entries after the header are 16 */
	if (!b)
		return;
	got = rip_pl_watch_file_read(path, b, len, &again);
	if (got == -EAGAIN) {
		rip_pl_rc_load_here(o, path); /* the arena's bytes are lost: a rare failure */
		return;
	}
	if (got != (long)len || again != size || memcmp(b, &h, sizeof(h)))
		return;
	rip_pl_rc_keep(o, (struct rip_pl_rc_ent *)(b + sizeof(h)), h.n);
}

/*
 * The slot of the object that holds pc (ip = pc - 1 lies in it), set up on
 * first sight; NULL when there is none to use (no cache, no build ID,
 * being set up by another thread, slots full).
 */
static struct rip_pl_rc_obj *rip_pl_rc_obj_of(uintptr_t pc)
{
	struct dl_find_object fo;
	struct rip_pl_rc_obj *o;
	uintptr_t start;
	uint32_t i;

	if (!rip_pl_rc_arena || _dl_find_object((void *)(pc - 1), &fo) != 0 || !fo.dlfo_link_map)
		return NULL;
	start = (uintptr_t)fo.dlfo_map_start;
	for (i = 0; i < RIP_PL_RC_OBJS; i++) {
		/* Relaxed: a claim's key; the state, acquired below, orders the rest. */
		uintptr_t s = __atomic_load_n(&rip_pl_rc_objs[i].start, __ATOMIC_RELAXED);

		if (s == start) {
			o = &rip_pl_rc_objs[i];
			/* Acquire: pairs with the release store of the state below. */
			if (__atomic_load_n(&o->state, __ATOMIC_ACQUIRE) != RIP_PL_RC_READY ||
			    o->epoch != rip_pl_unwind_epoch())
				return NULL;
			return o;
		}
		if (!s)
			break;
	}
	/*
	 * A signal handler's hook that interrupted our work (nest.c) sets no
	 * object up: that work may hold the watcher's mailbox, which the load
	 * would then wait for, and a signal handler opens no file of ours in
	 * the program's table.  It computes; a later hook sets the object up.
	 */
	if (rip_pl_self.nested & RIP_PL_NESTED)
		return NULL;
	for (; i < RIP_PL_RC_OBJS; i++) {
		uintptr_t s = 0;

		o = &rip_pl_rc_objs[i];
		/* Relaxed: the slot is ours once claimed; its state publishes it. */
		if (__atomic_compare_exchange_n(&o->start, &s, start, false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			break;
		if (s == start)
			return NULL; /* another thread sets it up: compute meanwhile */
	}
	if (i == RIP_PL_RC_OBJS)
		return NULL;
	o->bias = fo.dlfo_link_map->l_addr;
	o->lo = start - o->bias;
	o->hi = (uintptr_t)fo.dlfo_map_end - o->bias;
	o->epoch = rip_pl_unwind_epoch();
	o->bidlen = rip_pl_rc_build_id(start, o->bias, (uintptr_t)fo.dlfo_map_end, o->bid);
	o->add = o->bidlen ? rip_pl_rc_alloc((uint64_t)RIP_PL_RC_ADD * sizeof(*o->add)) : NULL;
	if (o->add)
		rip_pl_rc_load(o);
	/* Release: pairs with the acquire loads of the state (the fields above before it). */
	__atomic_store_n(&o->state, o->add ? RIP_PL_RC_READY : RIP_PL_RC_NONE, __ATOMIC_RELEASE);
	return o->add && o->epoch == rip_pl_unwind_epoch() ? o : NULL;
}

uint64_t rip_pl_rc_get(uintptr_t pc, void **slot)
{
	struct rip_pl_rc_obj *o = rip_pl_rc_obj_of(pc);
	uint64_t off;
	uint32_t lo = 0, hi;

	*slot = o;
	if (!o)
		return 0;
	off = pc - o->bias;
	hi = o->nold;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (o->old[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < o->nold && o->old[lo].off == off ? o->old[lo].rule : 0;
}

void rip_pl_rc_put(void *slot, uintptr_t pc, uint64_t rule)
{
	struct rip_pl_rc_obj *o = slot;
	uint32_t i;

	if (!o || !rule)
		return;
	/* Relaxed: a claim of an entry; its rule, stored with release, says it is whole. */
	i = __atomic_fetch_add(&o->nadd, 1, __ATOMIC_RELAXED);
	if (i >= RIP_PL_RC_ADD)
		return;
	o->add[i].off = pc - o->bias;
	/* Release: pairs with the acquire load in rip_pl_rc_write (the offset before it). */
	__atomic_store_n(&o->add[i].rule, rule, __ATOMIC_RELEASE);
}

/*
 * Write o's file again: its old rules and the new ones, sorted by offset
 * (readers then need not sort), to a temporary name, then renamed.
 */
static void rip_pl_rc_write(struct rip_pl_rc_obj *o, uint32_t nadd)
{
	char path[sizeof(rip_pl_rc_dir) + 2 * RIP_PL_RC_BID_MAX + 32];
	char tmp[sizeof(path)];
	struct rip_pl_rc_hdr h = { .bidlen = o->bidlen };
	struct rip_pl_rc_ent *v;
	size_t len;
	bool ok;
	long fd;

	memcpy(h.magic, rip_pl_rc_magic, sizeof(h.magic));
	memcpy(h.bid, o->bid, o->bidlen);
	if ((uint64_t)o->nold + nadd > RIP_PL_RC_MAX)
		return;
	v = rip_pl_rc_alloc(((uint64_t)o->nold + nadd) * sizeof(*v));
	if (!v)
		return;
	memcpy(v, o->old, (size_t)o->nold * sizeof(*v));
	h.n = o->nold;
	for (uint32_t i = 0; i < nadd; i++) {
		/* Acquire: pairs with the release store of the rule in rip_pl_rc_put. */
		uint64_t rule = __atomic_load_n(&o->add[i].rule, __ATOMIC_ACQUIRE);

		if (rule) {
			v[h.n].off = o->add[i].off;
			v[h.n++].rule = rule;
		}
	}
	rip_pl_rc_sort(v, h.n);
	len = (size_t)h.n * sizeof(*v);
	rip_pl_rc_path(path, o, false);
	rip_pl_rc_path(tmp, o, true);
	/* The watcher writes it when it runs, in its own table (as rip_pl_rc_load reads). */
	if (rip_pl_watch_file_write(path, tmp, &h, sizeof(h), v, len) != -EAGAIN)
		return;
	fd = syscall(SYS_openat, AT_FDCWD, tmp,
		     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	ok = syscall(SYS_write, fd, &h, sizeof(h)) == (long)sizeof(h) &&
	     (!len || syscall(SYS_write, fd, v, len) == (long)len);
	syscall(SYS_close, fd);
	if (!ok || syscall(SYS_rename, tmp, path))
		syscall(SYS_unlink, tmp);
}

/* At exit (after the program's destructors): write what is worth writing. */
__attribute__((destructor)) static void rip_pl_rc_at_exit(void)
{
	struct rip_pl_thread *t = &rip_pl_self;

	if (!rip_pl_rc_arena)
		return;
	t->guard++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* pairs with the hooks' checks */
	for (uint32_t i = 0; i < RIP_PL_RC_OBJS; i++) {
		struct rip_pl_rc_obj *o = &rip_pl_rc_objs[i];
		/* Acquire: pairs with the release store of the state (the slot is whole). */
		uint32_t state = __atomic_load_n(&o->state, __ATOMIC_ACQUIRE), n;

		if (state != RIP_PL_RC_READY)
			continue;
		/* Relaxed: entries past the count may still be written: their rules say so. */
		n = __atomic_load_n(&o->nadd, __ATOMIC_RELAXED);
		if (n > RIP_PL_RC_ADD)
			n = RIP_PL_RC_ADD;
		/* the first file of an object, or enough to add to one */
		if (n >= RIP_PL_RC_WRITE_MIN || (n && !o->nold))
			rip_pl_rc_write(o, n);
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->guard--;
}

int rip_pl_rc_init(void)
{
	const char *d = secure_getenv("RIP_RULE_CACHE");
	void *p;

	if (!d || d[0] != '/' || strlen(d) >= sizeof(rip_pl_rc_dir))
		return 0; /* off: every process computes its rules */
	p = mmap(NULL, RIP_PL_RC_ARENA, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return 0; /* a speed-up only */
	strcpy(rip_pl_rc_dir, d);
	rip_pl_own_map_add(p, RIP_PL_RC_ARENA);
	rip_pl_rc_arena = p;
	return 0;
}
