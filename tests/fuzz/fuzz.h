/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz.h - what the libFuzzer harnesses of tests/fuzz/ share: a
 * private directory for the files a harness makes from its input, writing
 * them, and running the readers and every analysis pass over a source the way
 * the commands do (rip dump's walk, rip export's resource follower and its
 * copy of a trace as CTF, rip leaks, report, calltree and pagemap),
 * in-process.
 *
 * The harnesses (one per input kind, FUZZ-NAME.c) define LLVMFuzzerTestOneInput
 * and are linked with libFuzzer and the two archives built with
 * -fsanitize=fuzzer-no-link,address,undefined (make fuzz, tests/fuzz/run.sh).
 * Nothing here prints: a harness that finds a problem crashes or trips a
 * sanitizer, which is what libFuzzer reports.
 */
#ifndef RIP_TESTS_FUZZ_H
#define RIP_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* The harness's own directory (made once, removed at exit): path of NAME in it. */
const char *fz_path(const char *name);
/* Write n bytes of d to path (created 0600, truncated).  0 or -errno. */
int fz_write(const char *path, const uint8_t *d, size_t n);
/* Remove every file of dir (not the directory). */
void fz_clear(const char *dir);
/*
 * Read target (a ring file or a trace directory) as the commands do: a
 * trace copied as CTF (rip export --format=ctf), every event in order
 * (dump), the resources (export), then the passes of leaks, report,
 * calltree and pagemap, each on a source of its own.
 */
void fz_passes(const char *target);

/*
 * What rip ps, snapshot and record read of a ring file: open and check it,
 * the slots, the modules, the event types, a copy of every event ring, then
 * the consumer's pass over them (which writes the consumer's words).  step,
 * when not NULL, is called between the reads (fuzz-live changes the file
 * there).
 */
void fz_ring(const char *path, void (*step)(void *arg), void *arg);

/* Little-endian reads of fuzz input. */
static inline uint32_t fz_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#endif /* RIP_TESTS_FUZZ_H */
