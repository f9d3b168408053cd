/* SPDX-License-Identifier: Apache-2.0 */
/*
 * include/internal/hot.h - static inline RIP_HOT, the readers' forced inlining.
 *
 * The readers' per-event paths (read/evsource.h, analysis/live.h and the
 * passes that call live_run) are inlined into each pass by force, so that
 * each copy is as fast as a loop written for it ("Reading a trace fast" in
 * doc/design.md).  The builds under the sanitizers and libFuzzer check
 * correctness, not speed, and there the forced copies made
 * analysis/report.c one function the compilers took minutes over (clang
 * -O1 with ASan, UBSan and libFuzzer's coverage: 218 s of CPU, 1.8 s
 * without; a tenth of make check's build on two CPUs).  Those builds
 * define RIP_NO_FORCED_INLINE: the same functions, inlined as the compiler
 * sees fit.  Only for code whose inlining changes no behaviour (not the
 * preload library's hooks, whose backtraces count their frames).
 */
#ifndef RIP_INTERNAL_HOT_H
#define RIP_INTERNAL_HOT_H

#ifdef RIP_NO_FORCED_INLINE
#define RIP_HOT
#else
#define RIP_HOT __attribute__((always_inline))
#endif

#endif
