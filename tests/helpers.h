/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/helpers.h - the small harness every C test uses: checks that print
 * both operands, and the exit codes tests/run.sh understands.
 */
#ifndef RIP_TESTS_HELPERS_H
#define RIP_TESTS_HELPERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define T_PASS 0
#define T_FAIL 1
#define T_SKIP 77

static int t_failures;

#define T_CHECK(cond)                                                                              \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
			t_failures++;                                                              \
		}                                                                                  \
	} while (0)

#define T_EQ(a, b)                                                                                 \
	do {                                                                                       \
		long long _a = (long long)(a), _b = (long long)(b);                                \
		if (_a != _b) {                                                                    \
			fprintf(stderr, "%s:%d: %s == %s: %lld != %lld\n", __FILE__, __LINE__, #a, \
				#b, _a, _b);                                                       \
			t_failures++;                                                              \
		}                                                                                  \
	} while (0)

#define T_STREQ(a, b)                                                                              \
	do {                                                                                       \
		const char *_a = (a), *_b = (b);                                                   \
		if (!_a || !_b || strcmp(_a, _b)) {                                                \
			fprintf(stderr, "%s:%d: %s == %s: \"%s\" != \"%s\"\n", __FILE__, __LINE__, \
				#a, #b, _a ? _a : "(null)", _b ? _b : "(null)");                   \
			t_failures++;                                                              \
		}                                                                                  \
	} while (0)

#define T_SKIP_IF(cond, why)                                                                       \
	do {                                                                                       \
		if (cond) {                                                                        \
			printf("skip: %s\n", why);                                                 \
			exit(T_SKIP);                                                              \
		}                                                                                  \
	} while (0)

static inline int t_result(void)
{
	return t_failures ? T_FAIL : T_PASS;
}

/*
 * The parent of child c, which waits for the test to kill it: print
 * "PARENT CHILD" for the test, then wait.  0 when the child died of a
 * signal, 1 otherwise.
 */
static inline int t_parent_of(pid_t c)
{
	int st;

	if (printf("%d %d\n", (int)getpid(), (int)c) < 0 || fflush(stdout))
		return 1;
	if (waitpid(c, &st, 0) != c || !WIFSIGNALED(st))
		return 1;
	return 0;
}

/*
 * Say that the program is ready: its pid, in a line, in the file path
 * (which the test waits for).  0, or -1.
 */
static inline int t_ready(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fprintf(f, "%d\n", (int)getpid());
	return fclose(f) ? -1 : 0;
}

#endif /* RIP_TESTS_HELPERS_H */
