/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rip/resource.h - the events of resource tracing: what librip-preload.so
 * records for memory, file descriptors and shared memory, and what rip
 * leaks, rip report and rip dump read back.  Readers find these types by
 * name in a trace's type table (ids are assigned at registration).
 *
 *   rip:bt       {U32 id, HEX64_ARRAY frames}        a new backtrace, once per distinct
 *                                                    stack: frames[0] is the caller of
 *                                                    the hooked function, then its
 *                                                    callers (return addresses)
 *   mem:alloc    {HEX64 addr, U64 size, U32 bt, U32 kind}
 *                   addr 0: a failed call of function kind (malloc, calloc,
 *                   realloc, reallocarray...); size UINT64_MAX: n * size overflowed
 *   mem:free     {HEX64 addr, U32 bt, U32 kind}
 *   mem:realloc  {HEX64 old, HEX64 addr, U64 size, U32 bt}
 *                   old 0: an allocation; size 0 and addr 0: a free of old;
 *                   a failed realloc is a mem:alloc of addr 0 (old stays)
 *   mem:unmap    {HEX64 addr, U64 size, U32 bt, U32 kind}
 *                   a range unmapped (munmap, mremap's old range, a MAP_FIXED
 *                   mapping placed over it: kind mmap): any part of one or
 *                   more anonymous mappings; readers keep the rest live.
 *                   A mem:alloc of kind mmap or mremap replaces what it
 *                   covers, with no mem:unmap
 *   fd:open      {S32 fd, U32 bt, U32 kind, S32 flags, STRING path}
 *                   one event per descriptor (pipe and socketpair: two)
 *   fd:close     {S32 fd, U32 bt, U32 kind}
 *   fd:close_range {U32 first, U32 last, U32 bt, U32 kind}
 *                   close_range (not with CLOSE_RANGE_CLOEXEC), closefrom
 *                   (last 0xffffffff): every descriptor in [first, last]
 *                   that is open is closed; readers close the ones they hold
 *   shm:create   {S64 id, U64 size, U32 bt, U32 kind, STRING name}
 *                   shm_open (id = fd), shmget (id = shmid), memfd_create;
 *                   an object that existed already is kind
 *                   RIP_SHM_OPEN_EXISTING or RIP_SHM_GET_EXISTING: the
 *                   process got it but did not make it (no leak of its)
 *   shm:attach   {HEX64 addr, U64 size, S64 id, U32 bt, U32 kind}
 *                   shmat, mmap of a shared mapping (id = fd or -1)
 *   shm:detach   {HEX64 addr, U64 size, U32 bt, U32 kind}   shmdt, munmap of it
 *   shm:remove   {S64 id, U32 bt, U32 kind, STRING name}    shm_unlink, IPC_RMID
 *   shm:resize   {S64 id, U64 size, U32 bt, U32 kind, STRING name}
 *                   ftruncate of a POSIX shared memory object (id = the fd,
 *                   name as shm:create's): its size is size now
 *
 * Pagemap snapshots (category mem; rip pagemap reads them): at exit, and on
 * the signal RIP_PAGEMAP_SIGNAL names.  Snapshot seq (1, 2, ... per process)
 * is one mem:mapping per private writable mapping, each followed by the
 * mem:pagemap chunks of its pages, then one mem:pagemap_end:
 *
 *   mem:mapping  {HEX64 start, HEX64 end, U32 seq, U32 prot, U32 flags,
 *                 U32 page_size, STRING path}
 *                   prot: PROT_READ | PROT_WRITE | PROT_EXEC; flags: RIP_PM_*;
 *                   path as /proc/PID/maps shows it ("" anonymous, "[heap]"...)
 *   mem:pagemap  {HEX64 start, U32 seq, U32 npages, HEX64_ARRAY pages}
 *                   npages pages from start, 2 bits each (enum rip_pm_page):
 *                   page i is (pages[i / 32] >> (i % 32 * 2)) & 3; at most
 *                   RIP_PM_CHUNK_PAGES per event; chunks with no page present
 *                   or swapped are left out
 *   mem:pagemap_end {U32 seq, U32 mappings, U32 reason, S32 error}
 *                   the snapshot is complete: mappings mem:mapping events;
 *                   reason RIP_PM_EXIT or RIP_PM_SIGNAL; error 0 or -errno
 *                   (then what came before is partial)
 *
 * Resources of the tracing modules (rip/module.h; category res).  A kind
 * is the type "kind:NAME" of the type table (struct rip_evtype.flags has
 * RIP_EVTYPE_KIND and the kind's flags, .desc its description); the events
 * name it by that type's id, so the trace describes its own kinds:
 *
 *   res:acquire  {HEX64 id, U64 size, U32 bt, U32 kind}   a new resource
 *                   (a refcounted kind's count is 1; an id already live
 *                   is replaced)
 *   res:release  {HEX64 id, U32 bt, U32 kind}     gone, whatever its count
 *   res:ref      {HEX64 id, U32 bt, U32 kind}     one reference more
 *   res:unref    {HEX64 id, U32 bt, U32 kind}     one less; released at 0
 *   res:transfer {HEX64 id, U64 size, U32 bt, U32 kind}
 *                   size bytes moved (a counter kind): nothing stays live
 *
 * The built-in resources are kinds too, described the same way:
 * kind:mem, kind:fd, kind:shm and kind:shm-map (RIP_EVTYPE_BUILTIN), whose
 * events are the mem:, fd: and shm: ones above.
 *
 * bt is a backtrace id (0: none recorded); ids are interned per process, so
 * a stack is stored once however often it allocates.
 */
#ifndef RIP_RESOURCE_H
#define RIP_RESOURCE_H

/* Built-in categories of the resource tracer (see RIP_CAT_USER in abi.h). */
#define RIP_CAT_MEM 1u
#define RIP_CAT_FD 2u
#define RIP_CAT_SHM 3u
#define RIP_CAT_BT 4u /* backtrace definitions: on whenever another of these is */
/*
 * CPU samples (rip run --sample): the rip:sample events of a trace, which
 * the recorder writes from the snap rings (record/samples.h); no program
 * emits them.
 */
#define RIP_CAT_SAMPLE 5u
/* The resources of tracing modules (rip/module.h): res:* events. */
#define RIP_CAT_RES 7u

#define RIP_BT_MAX_DEPTH 64u /* frames kept per backtrace at most (RIP_DEPTH, default 32) */

/* mem:alloc / mem:free kind */
enum rip_mem_kind {
	RIP_MEM_MALLOC = 1,
	RIP_MEM_CALLOC,
	RIP_MEM_REALLOC,
	RIP_MEM_REALLOCARRAY,
	RIP_MEM_POSIX_MEMALIGN,
	RIP_MEM_ALIGNED_ALLOC,
	RIP_MEM_MEMALIGN,
	RIP_MEM_VALLOC,
	RIP_MEM_PVALLOC,
	RIP_MEM_NEW,	   /* operator new, all variants */
	RIP_MEM_NEW_ARRAY, /* operator new[], all variants */
	RIP_MEM_MMAP,	   /* anonymous private mmap */
	RIP_MEM_MREMAP,
	RIP_MEM_FREE,
	RIP_MEM_DELETE, /* operator delete, all variants */
	RIP_MEM_DELETE_ARRAY,
	RIP_MEM_MUNMAP,
	/*
	 * An anonymous private mmap with PROT_NONE: address space reserved, not
	 * memory (a JVM's heap, a Go or V8 arena).  Readers count none of it; a
	 * mapping placed over part of it (MAP_FIXED) or an mprotect that makes
	 * part of it accessible is memory from then.
	 */
	RIP_MEM_RESERVE,
	/* mprotect (pkey_mprotect) to an accessible protection: what it covers of a reservation */
	RIP_MEM_MPROTECT,
};

/*
 * What readers call each kind (rip dump's kind=, rip leaks' sites): X(SUFFIX, "name")
 * for RIP_MEM_SUFFIX.  Their one list: build tables with [RIP_MEM_##SUFFIX] = "name".
 */
#define RIP_MEM_KINDS(X)                                                                           \
	X(MALLOC, "malloc")                                                                        \
	X(CALLOC, "calloc")                                                                        \
	X(REALLOC, "realloc")                                                                      \
	X(REALLOCARRAY, "reallocarray")                                                            \
	X(POSIX_MEMALIGN, "posix_memalign")                                                        \
	X(ALIGNED_ALLOC, "aligned_alloc")                                                          \
	X(MEMALIGN, "memalign")                                                                    \
	X(VALLOC, "valloc")                                                                        \
	X(PVALLOC, "pvalloc")                                                                      \
	X(NEW, "new")                                                                              \
	X(NEW_ARRAY, "new[]")                                                                      \
	X(MMAP, "mmap")                                                                            \
	X(MREMAP, "mremap")                                                                        \
	X(FREE, "free")                                                                            \
	X(DELETE, "delete")                                                                        \
	X(DELETE_ARRAY, "delete[]")                                                                \
	X(MUNMAP, "munmap")                                                                        \
	X(RESERVE, "reserve")                                                                      \
	X(MPROTECT, "mprotect")

/* fd:open / fd:close kind */
enum rip_fd_kind {
	RIP_FD_OPEN = 1,
	RIP_FD_OPENAT,
	RIP_FD_CREAT,
	RIP_FD_DUP,
	RIP_FD_DUP2,
	RIP_FD_DUP3,
	RIP_FD_FCNTL_DUPFD,
	RIP_FD_PIPE,
	RIP_FD_SOCKET,
	RIP_FD_SOCKETPAIR,
	RIP_FD_ACCEPT,
	RIP_FD_EVENTFD,
	RIP_FD_TIMERFD,
	RIP_FD_SIGNALFD,
	RIP_FD_EPOLL,
	RIP_FD_INOTIFY,
	RIP_FD_MEMFD,
	RIP_FD_SCM_RIGHTS, /* received in a message */
	RIP_FD_FOPEN,
	RIP_FD_FDOPEN,
	RIP_FD_FREOPEN,
	RIP_FD_OPENDIR,
	RIP_FD_CLOSE,
	RIP_FD_FCLOSE,
	RIP_FD_CLOSEDIR,
	RIP_FD_REPLACED, /* closed implicitly by dup2/dup3 onto it */
	RIP_FD_PIDFD_OPEN,
	RIP_FD_PIDFD_GETFD, /* a copy of another process's descriptor */
	RIP_FD_CLOSE_RANGE,
	RIP_FD_CLOSEFROM,
	RIP_FD_OPENAT2,	     /* openat2, through syscall(2) (glibc has no wrapper) */
	RIP_FD_IO_URING,     /* io_uring_setup, through syscall(2) */
	RIP_FD_USERFAULTFD,  /* userfaultfd, through syscall(2) */
	RIP_FD_PERF_EVENT,   /* perf_event_open, through syscall(2) */
	RIP_FD_FANOTIFY,     /* fanotify_init, through syscall(2) */
	RIP_FD_MEMFD_SECRET, /* memfd_secret, through syscall(2) (glibc has no wrapper) */
};

/*
 * What readers call each kind (rip dump's kind=, rip leaks' sites): X(SUFFIX, "name")
 * for RIP_FD_SUFFIX.  Their one list: build tables with [RIP_FD_##SUFFIX] = "name".
 */
#define RIP_FD_KINDS(X)                                                                            \
	X(OPEN, "open")                                                                            \
	X(OPENAT, "openat")                                                                        \
	X(CREAT, "creat")                                                                          \
	X(DUP, "dup")                                                                              \
	X(DUP2, "dup2")                                                                            \
	X(DUP3, "dup3")                                                                            \
	X(FCNTL_DUPFD, "fcntl_dupfd")                                                              \
	X(PIPE, "pipe")                                                                            \
	X(SOCKET, "socket")                                                                        \
	X(SOCKETPAIR, "socketpair")                                                                \
	X(ACCEPT, "accept")                                                                        \
	X(EVENTFD, "eventfd")                                                                      \
	X(TIMERFD, "timerfd")                                                                      \
	X(SIGNALFD, "signalfd")                                                                    \
	X(EPOLL, "epoll")                                                                          \
	X(INOTIFY, "inotify")                                                                      \
	X(MEMFD, "memfd")                                                                          \
	X(SCM_RIGHTS, "scm_rights")                                                                \
	X(FOPEN, "fopen")                                                                          \
	X(FDOPEN, "fdopen")                                                                        \
	X(FREOPEN, "freopen")                                                                      \
	X(OPENDIR, "opendir")                                                                      \
	X(CLOSE, "close")                                                                          \
	X(FCLOSE, "fclose")                                                                        \
	X(CLOSEDIR, "closedir")                                                                    \
	X(REPLACED, "replaced")                                                                    \
	X(PIDFD_OPEN, "pidfd_open")                                                                \
	X(PIDFD_GETFD, "pidfd_getfd")                                                              \
	X(CLOSE_RANGE, "close_range")                                                              \
	X(CLOSEFROM, "closefrom")                                                                  \
	X(OPENAT2, "openat2")                                                                      \
	X(IO_URING, "io_uring")                                                                    \
	X(USERFAULTFD, "userfaultfd")                                                              \
	X(PERF_EVENT, "perf_event")                                                                \
	X(FANOTIFY, "fanotify")                                                                    \
	X(MEMFD_SECRET, "memfd_secret")

/* shm:* kind */
enum rip_shm_kind {
	RIP_SHM_OPEN = 1, /* shm_open */
	RIP_SHM_GET,	  /* shmget */
	RIP_SHM_MEMFD,	  /* memfd_create */
	RIP_SHM_AT,	  /* shmat */
	RIP_SHM_MMAP,	  /* mmap MAP_SHARED */
	RIP_SHM_DT,	  /* shmdt */
	RIP_SHM_MUNMAP,
	RIP_SHM_UNLINK,	       /* shm_unlink */
	RIP_SHM_RMID,	       /* shmctl IPC_RMID */
	RIP_SHM_FTRUNCATE,     /* ftruncate, ftruncate64 (shm:resize) */
	RIP_SHM_OPEN_EXISTING, /* shm_open of an object that existed (shm:create) */
	RIP_SHM_GET_EXISTING,  /* shmget of a segment that existed (shm:create) */
};

/*
 * What readers call each kind (rip dump's kind=, rip leaks' sites): X(SUFFIX, "name")
 * for RIP_SHM_SUFFIX.  Their one list: build tables with [RIP_SHM_##SUFFIX] = "name".
 */
#define RIP_SHM_KINDS(X)                                                                           \
	X(OPEN, "shm_open")                                                                        \
	X(GET, "shmget")                                                                           \
	X(MEMFD, "memfd_create")                                                                   \
	X(AT, "shmat")                                                                             \
	X(MMAP, "mmap")                                                                            \
	X(DT, "shmdt")                                                                             \
	X(MUNMAP, "munmap")                                                                        \
	X(UNLINK, "shm_unlink")                                                                    \
	X(RMID, "IPC_RMID")                                                                        \
	X(FTRUNCATE, "ftruncate")                                                                  \
	X(OPEN_EXISTING, "shm_open_existing")                                                      \
	X(GET_EXISTING, "shmget_existing")

/* mem:pagemap: the state of one page, 2 bits */
enum rip_pm_page {
	RIP_PM_ABSENT = 0,  /* neither in memory nor in swap */
	RIP_PM_PRESENT = 1, /* in memory */
	RIP_PM_SWAPPED = 2, /* in swap */
	RIP_PM_ZERO = 3,    /* in memory, and all its bytes are zero */
};

#define RIP_PM_CHUNK_PAGES 8192u /* pages per mem:pagemap at most (RIP_ARRAY_MAX u64) */

/* mem:mapping flags */
#define RIP_PM_ZERO_TESTED 0x1u /* present pages were tested for zero (else none is "zero") */
#define RIP_PM_TRUNCATED 0x2u	/* only the first 2^24 pages are described */

/* mem:pagemap_end reason */
#define RIP_PM_EXIT 1u	 /* the process exited (exit() or return from main) */
#define RIP_PM_SIGNAL 2u /* the RIP_PAGEMAP_SIGNAL signal asked for it */

#endif /* RIP_RESOURCE_H */
